// BM runtime (spec 002, "BM Runtime Library") on a runtime::Device opened from a bm preset:
// devices, contexts, device memory and system <-> device copies over the host link. Also the
// C boundary's error handling and the simulated chip (lmem lanes, device-memory lookup).
#include <cstdlib>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "guard.h"
#include "state.h"
#include "tessera/core/error.h"
#include "tessera/core/log.h"
#include "tessera/targets/bm/api/bm.h"

namespace tessera::bm {
namespace {

struct LastError {
  tessera_bm_error_kind_t kind = TESSERA_BM_OK;
  std::string message;
};
thread_local LastError last_error;

std::uint32_t figure_u32(double v, const char* what, const std::string& preset) {
  if (!(v >= 1) || v > 4294967295.0)
    throw_user_error("preset '{}': {} is {}; a bm preset needs a positive whole number", preset,
                     what, v);
  return static_cast<std::uint32_t>(v);
}

// True when `message` already names `function` as a "name:" prefix of one of its parts (the
// op checks start their messages with the op's name, after a DeviceFault's location).
bool names_function(const std::string& message, const std::string& function) {
  const std::string tag = function + ":";
  for (std::size_t at = message.find(tag); at != std::string::npos;
       at = message.find(tag, at + 1)) {
    const char before = at == 0 ? ' ' : message[at - 1];
    if (before == ' ') return true;
  }
  return false;
}

}  // namespace

void set_last_error(tessera_bm_error_kind_t kind, const std::string& message) {
  last_error.kind = kind;
  last_error.message = message;
}

bmerr_t record_current_exception(const char* function) {
  tessera_bm_error_kind_t kind = TESSERA_BM_INTERNAL_ERROR;
  bmerr_t code = BM_ERR_FAILURE;
  std::string message;
  try {
    throw;
  } catch (const DeviceFault& e) {
    kind = TESSERA_BM_DEVICE_FAULT;
    message = e.what();
  } catch (const UserError& e) {
    kind = TESSERA_BM_USER_ERROR;
    code = BM_ERR_INVALID_ARGUMENT;
    message = e.what();
  } catch (const std::bad_alloc&) {
    code = BM_ERR_NOMEM;
    message = "host memory exhausted";
  } catch (const std::exception& e) {
    message = e.what();
  } catch (...) {
    message = "unknown exception";
  }
  if (!names_function(message, function)) message = fmt::format("{}: {}", function, message);
  set_last_error(kind, message);
  log(LogLevel::err, "bm", "{}", message);
  return code;
}

std::string default_preset() {
  const char* env = std::getenv("TESSERA_BM_PRESET");
  return env && *env ? env : "bm1880";
}

const arch::MachineSpec& default_spec() {
  static const arch::MachineSpec spec = arch::load_machine(default_preset());
  return spec;
}

ChipParams ChipParams::from(const arch::MachineSpec& spec) {
  if (spec.target != "bm")
    throw_user_error("preset '{}' is a {} machine; the bm target runs on presets of the bm family "
                     "(bm1880)",
                     spec.name, spec.target);
  const arch::MemorySpec* lmem = spec.find_memory("lmem");
  if (!lmem) throw_user_error("preset '{}' has no core memory 'lmem'", spec.name);
  ChipParams p;
  p.npu_num = figure_u32(spec.core_count.value, "core_count (npu_num)", spec.name);
  p.eu_num = figure_u32(spec.param("bm.eu_num").value, "params bm.eu_num", spec.name);
  p.lmem_size = figure_u32(lmem->capacity_bytes.value, "lmem capacity_bytes", spec.name);
  p.lmem_banks = figure_u32(lmem->banks.value, "lmem banks", spec.name);
  p.lmem_bank_size = p.lmem_size / p.lmem_banks;
  return p;
}

bmk_chip_info_t ChipParams::info() const {
  bmk_chip_info_t i{};
  i.version = 1880;
  i.npu_num = npu_num;
  i.eu_num = eu_num;
  i.lmem_size = lmem_size;
  i.lmem_banks = lmem_banks;
  i.lmem_bank_size = lmem_bank_size;
  return i;
}

std::string Tl::describe() const {
  if (matrix)
    return fmt::format("{} (matrix {}x{} {} at la 0x{:x})", role, rows, cols,
                       fmt == FMT_I8 ? "i8" : "u8", la);
  return fmt::format("{} (tensor ({}, {}, {}, {}) {} at la 0x{:x}, strides ({}, {}, {}, {}))", role,
                     n, c, h, w, fmt == FMT_I8 ? "i8" : "u8", la, sn, sc, sh, sw);
}

Chip::Chip(std::unique_ptr<runtime::Device> device)
    : owned_(std::move(device)), device_(owned_.get()), params_(ChipParams::from(device_->spec())) {
  make_lanes();
}

Chip::Chip(runtime::Device& device) : device_(&device), params_(ChipParams::from(device.spec())) {
  make_lanes();
}

void Chip::make_lanes() {
  const arch::MemorySpec& lmem = device_->spec().memory("lmem");
  lanes_.reserve(params_.npu_num);
  for (std::uint32_t i = 0; i < params_.npu_num; ++i) {
    sim::Memory& m =
        lanes_.emplace_back(lmem, fmt::format("{}{}", device_->spec().core_name, i),
                            sim::Memory::Backing::host);
    m.set_track_initialisation(true);
    lane_bytes_.push_back(reinterpret_cast<std::uint8_t*>(
        m.bytes(m.base(), m.capacity(), "lmem", sim::AccessKind::write).data()));
  }
}

void Chip::unwritten_read(const Tl& t, std::uint32_t n, std::uint32_t c, std::uint32_t h,
                          std::uint32_t w, const char* op) const {
  const std::uint32_t lane = c % params_.npu_num;
  const std::uint64_t off = offset(t, n, c, h, w);
  throw DeviceFault(
      lanes_[lane].owner(),
      fmt::format("{} reads {} element ({}, {}, {}, {}) at lmem address 0x{:x} (bank {}), which "
                  "no GDMA load or computation wrote; load or compute it before reading it",
                  op, t.describe(), n, c, h, w, off, off / params_.lmem_bank_size));
}

void Chip::read_row(const Tl& t, std::uint32_t n, std::uint32_t c, std::uint32_t h,
                    std::uint8_t* out, const char* op) {
  if (t.sw != 1) {
    for (std::uint32_t w = 0; w < t.w; ++w) out[w] = read(t, n, c, h, w, op);
    return;
  }
  const std::uint32_t lane = c % params_.npu_num;
  const std::uint64_t off = offset(t, n, c, h, 0);
  // capture() checked that the tensor lies inside lmem, so the range is in bounds.
  const std::uint64_t unwritten = lanes_[lane].first_uninitialised(off, t.w);
  if (unwritten != off + t.w)
    unwritten_read(t, n, c, h, static_cast<std::uint32_t>(unwritten - off), op);
  std::memcpy(out, lane_bytes_[lane] + off, t.w);
}

void Chip::write_row(const Tl& t, std::uint32_t n, std::uint32_t c, std::uint32_t h,
                     const std::uint8_t* v) {
  if (t.sw != 1) {
    for (std::uint32_t w = 0; w < t.w; ++w) write(t, n, c, h, w, v[w]);
    return;
  }
  const std::uint32_t lane = c % params_.npu_num;
  const std::uint64_t off = offset(t, n, c, h, 0);
  std::memcpy(lane_bytes_[lane] + off, v, t.w);
  lanes_[lane].mark_initialised(off, t.w);
}

void Chip::add_region(std::uint64_t address, const runtime::Buffer& buffer) {
  regions_[address] = buffer;
}

void Chip::remove_region(std::uint64_t address) { regions_.erase(address); }

std::uint8_t* Chip::gmem(std::uint64_t address, std::uint64_t bytes, const char* op) {
  auto it = regions_.upper_bound(address);
  if (it != regions_.begin()) {
    --it;
    const std::uint64_t start = it->first, end = start + it->second.bytes;
    if (address >= start && address < end) {
      if (bytes > end - address)
        throw DeviceFault("gdma", fmt::format("{} touches gmem [0x{:x}, 0x{:x}), {} past the end "
                                              "of the device memory at 0x{:x} ({}); keep the "
                                              "tensor inside its allocation",
                                              op, address, address + bytes,
                                              sim::format_bytes(address + bytes - end), start,
                                              sim::format_bytes(it->second.bytes)));
      return reinterpret_cast<std::uint8_t*>(device_->data(it->second)) + (address - start);
    }
  }
  throw DeviceFault("gdma", fmt::format("{} touches gmem address 0x{:x}, which is in no device "
                                        "memory allocated with bmmem_device_alloc; pass an "
                                        "address from bmmem_device_addr",
                                        op, address));
}

void LiveHandles::add(const void* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_.insert(handle);
}
bool LiveHandles::remove(const void* handle) {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.erase(handle) != 0;
}
bool LiveHandles::contains(const void* handle) const {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.count(handle) != 0;
}
void LiveHandles::require(const void* handle, const char* what) const {
  if (!handle) throw_user_error("{}: the {} is NULL; {}", what, name_, make_);
  if (!contains(handle))
    throw_user_error("{}: the {} is not live: {} released it (or it was never made); {}", what,
                     name_, released_by_, make_);
}
LiveHandles& live_contexts() {
  static LiveHandles h("BM context", "create one with bm_init", "bm_exit or bm_context_destroy");
  return h;
}
LiveHandles& live_devices() {
  static LiveHandles h("BM device", "open one with bm_device_open", "bm_device_close or bm_exit");
  return h;
}
LiveHandles& live_nets() {
  static LiveHandles h("BMNet handle", "register a network with bmnet_register*", "bmnet_cleanup");
  return h;
}

bm_context* live_context(bmctx_t ctx, const char* what) {
  live_contexts().require(ctx, what);
  return ctx;
}

runtime::Device& device_of(bmctx_t ctx) {
  if (!live_context(ctx, "tessera::bm::device_of")->device)
    throw_user_error("the BM context is not bound to a device");
  return ctx->device->chip->device();
}

}  // namespace tessera::bm

using namespace tessera;
using namespace tessera::bm;

namespace {

bm_device* open_device(int index) {
  if (index != 0)
    throw_user_error("bm_device_open: device index {} does not exist; bm_enum_devices reports "
                     "1 device (index 0)",
                     index);
  auto dev = std::make_unique<bm_device>();
  dev->index = index;
  dev->chip = std::make_unique<Chip>(runtime::Device::open(default_preset()));
  live_devices().add(dev.get());
  return dev.release();
}

bm_device* live_device(bmdev_t dev, const char* what) {
  live_devices().require(dev, what);
  return dev;
}

void close_device(bm_device* dev) {
  if (!dev || !live_devices().remove(dev)) return;
  for (bm_memory* m : dev->memories) delete m;
  delete dev;
}

bm_context* check_ctx(bmctx_t ctx, const char* what) {
  return live_context(ctx, what);
}

// bm_exit and bm_context_destroy: releases a live context (a second release is a UserError).
void release_context(bmctx_t ctx, const char* what) {
  if (!ctx) return;
  live_context(ctx, what);
  if (ctx->kernel) bmruntime_bmkernel_destroy(ctx);
  if (ctx->owns_device) close_device(ctx->device);
  live_contexts().remove(ctx);
  delete ctx;
}

bm_device* bound(bmctx_t ctx, const char* what) {
  check_ctx(ctx, what);
  if (!ctx->device)
    throw_user_error("{}: the BM context is not bound to a device; call bm_bind_device", what);
  if (!live_devices().contains(ctx->device))
    throw_user_error(
        "{}: the device bound to the BM context was closed with bm_device_close; "
        "bind an open one",
        what);
  return ctx->device;
}

bm_memory* check_mem(bm_device* dev, bmmem_device_t mem, const char* what) {
  if (!mem || !dev->memories.count(mem))
    throw_user_error("{}: the device memory handle is not a live allocation of this context's "
                     "device (NULL, freed, or from another device)",
                     what);
  return mem;
}

std::size_t shape_bytes(const bmshape_t* shape) {
  if (!shape) throw_user_error("bmmem_device_alloc: shape is NULL");
  if (shape->dim_size < 1 || shape->dim_size > BM_SHAPE_MAX_DIM)
    throw_user_error("bmmem_device_alloc: dim_size {} is outside 1..{}", shape->dim_size,
                     BM_SHAPE_MAX_DIM);
  static const int bits[BM_FMT_MAX] = {32, 16, 16, 8};
  if (shape->fmt < 0 || shape->fmt >= BM_FMT_MAX)
    throw_user_error("bmmem_device_alloc: fmt {} is not a bmfmt_t", static_cast<int>(shape->fmt));
  std::size_t bytes = static_cast<std::size_t>(bits[shape->fmt] / 8);
  for (int i = 0; i < shape->dim_size; ++i) {
    if (shape->dim[i] <= 0)
      throw_user_error("bmmem_device_alloc: dim[{}] is {}; every dimension must be positive", i,
                       shape->dim[i]);
    // A wrapped product would allocate a few bytes for a shape that needs exabytes.
    if (__builtin_mul_overflow(bytes, static_cast<std::size_t>(shape->dim[i]), &bytes))
      throw_user_error("bmmem_device_alloc: the shape ({}, {}, {}, {}) holds more bytes than any "
                       "device memory (the count overflows 64 bits); check its dimensions",
                       shape->dim[0], shape->dim_size > 1 ? shape->dim[1] : 1,
                       shape->dim_size > 2 ? shape->dim[2] : 1,
                       shape->dim_size > 3 ? shape->dim[3] : 1);
  }
  return bytes;
}

// `what`: the API function allocating, for its messages.
bm_memory* alloc_raw(bmctx_t ctx, std::size_t size, const char* what) {
  bm_device* dev = bound(ctx, what);
  if (size == 0) throw_user_error("{}: size is 0; ask for at least 1 byte", what);
  runtime::Buffer b = dev->chip->device().allocate(size, "bmmem");
  auto m = std::make_unique<bm_memory>();
  m->device = dev;
  m->root = b;
  m->size = size;
  m->is_root = true;
  dev->chip->add_region(b.device_address, b);
  dev->memories.insert(m.get());
  return m.release();
}

bm_memory* prealloc_raw(bmctx_t ctx, bmmem_device_t mem, std::uint64_t offset, std::size_t size,
                        const char* what) {
  bm_device* dev = bound(ctx, what);
  bm_memory* parent = check_mem(dev, mem, what);
  if (size == 0 || offset > parent->size || size > parent->size - offset)
    throw_user_error(
        "{}: [{}, {}) does not fall in the {} bytes of the previously allocated "
        "device memory",
        what, offset, offset + size, parent->size);
  auto m = std::make_unique<bm_memory>();
  m->device = dev;
  m->root = parent->root;
  m->offset = parent->offset + offset;
  m->size = size;
  dev->memories.insert(m.get());
  return m.release();
}

// [offset, offset + size) of a device memory, checked; the root buffer's offset of its start.
std::uint64_t part_of(bm_memory* m, std::uint64_t offset, std::size_t size, const char* op) {
  if (offset > m->size || size > m->size - offset)
    throw_user_error("{}: [{}, {}) is outside the {}-byte device memory; copy inside it", op,
                     offset, offset + size, m->size);
  return m->offset + offset;
}
}  // namespace

extern "C" {

shape_t shape_t4(int n, int c, int h, int w) {
  shape_t s{};
  s.dim = 4;
  s.n = static_cast<u32>(n);
  s.c = static_cast<u32>(c);
  s.h = static_cast<u32>(h);
  s.w = static_cast<u32>(w);
  return s;
}

shape_t shape_t2(int row, int col) {
  shape_t s{};
  s.dim = 2;
  s.row = static_cast<u32>(row);
  s.col = static_cast<u32>(col);
  return s;
}

bool shape_equal(shape_t a, shape_t b) {
  if (a.dim != b.dim) return false;
  if (a.dim == 2) return a.row == b.row && a.col == b.col;
  return a.n == b.n && a.c == b.c && a.h == b.h && a.w == b.w;
}

stride_t stride_t4(int n, int c, int h, int w) {
  stride_t s{};
  s.n = static_cast<u32>(n);
  s.c = static_cast<u32>(c);
  s.h = static_cast<u32>(h);
  s.w = static_cast<u32>(w);
  return s;
}

stride_t stride_t2(int row, int col) {
  stride_t s{};
  s.row = static_cast<u32>(row);
  s.col = static_cast<u32>(col);
  return s;
}

const char* tessera_bm_last_error(void) { return last_error.message.c_str(); }
tessera_bm_error_kind_t tessera_bm_last_error_kind(void) { return last_error.kind; }
void tessera_bm_clear_error(void) { set_last_error(TESSERA_BM_OK, ""); }

bmerr_t bm_init(int index, bmctx_t* ctx) {
  (void)index;  // spec 002 "bm_init": not used now
  return guard_status("bm_init", [&] {
    if (!ctx) throw_user_error("bm_init: ctx is NULL; pass the address of a bmctx_t");
    auto c = std::make_unique<bm_context>();
    c->device = open_device(0);
    c->owns_device = true;
    live_contexts().add(c.get());
    *ctx = c.release();
  });
}

void bm_exit(bmctx_t ctx) {
  guard_void("bm_exit", [&] { release_context(ctx, "bm_exit"); });
}

void bm_enum_devices(int* count, bm_devinfo_t devinfo[]) {
  guard_void("bm_enum_devices", [&] {
    if (!count) throw_user_error("bm_enum_devices: count is NULL");
    *count = 1;
    if (devinfo) devinfo[0] = bmk1880_chip_info();
  });
}

bmerr_t bm_device_open(int index, bmdev_t* dev) {
  return guard_status("bm_device_open", [&] {
    if (!dev) throw_user_error("bm_device_open: dev is NULL; pass the address of a bmdev_t");
    *dev = open_device(index);
  });
}

void bm_device_close(bmdev_t dev) {
  guard_void("bm_device_close", [&] {
    if (dev) close_device(live_device(dev, "bm_device_close"));
  });
}

bmerr_t bm_device_query(bmdev_t dev, int id, void* buf) {
  (void)dev, (void)id, (void)buf;
  return BM_ERR_NOT_SUPPORTED;  // spec 002 "bm_device_query"
}

bmerr_t bm_device_config(bmdev_t dev, int id, void* buf) {
  (void)dev, (void)id, (void)buf;
  return BM_ERR_NOT_SUPPORTED;  // spec 002 "bm_device_config"
}

bm_devinfo_t bm_device_get_info(bmdev_t dev) {
  return guard("bm_device_get_info", bm_devinfo_t{}, [&] {
    live_device(dev, "bm_device_get_info");
    return dev->chip->params().info();
  });
}

int bm_device_get_chip_ver(bmdev_t dev) {
  return guard("bm_device_get_chip_ver", 0, [&] {
    live_device(dev, "bm_device_get_chip_ver");
    return static_cast<int>(dev->chip->params().info().version);
  });
}

u64 bm_device_get_gmem_size(bmdev_t dev) {
  return guard("bm_device_get_gmem_size", u64{0}, [&] {
    live_device(dev, "bm_device_get_gmem_size");
    const tessera::runtime::Device& d = dev->chip->device();
    return static_cast<u64>(d.global_bytes_in_use() + d.global_bytes_free());
  });
}

bmerr_t bm_context_create(bmctx_t* ctx) {
  return guard_status("bm_context_create", [&] {
    if (!ctx) throw_user_error("bm_context_create: ctx is NULL");
    auto c = std::make_unique<bm_context>();
    live_contexts().add(c.get());
    *ctx = c.release();
  });
}

void bm_context_destroy(bmctx_t ctx) {
  guard_void("bm_context_destroy", [&] { release_context(ctx, "bm_context_destroy"); });
}

bmerr_t bm_bind_device(bmctx_t ctx, bmdev_t dev) {
  return guard_status("bm_bind_device", [&] {
    check_ctx(ctx, "bm_bind_device");
    live_device(dev, "bm_bind_device");
    if (ctx->device && ctx->device != dev)
      throw_user_error("bm_bind_device: the context is bound to another device; call "
                       "bm_unbind_device first");
    ctx->device = dev;
  });
}

void bm_unbind_device(bmctx_t ctx) {
  guard_void("bm_unbind_device", [&] {
    check_ctx(ctx, "bm_unbind_device");
    if (ctx->owns_device) close_device(ctx->device);
    ctx->owns_device = false;
    ctx->device = nullptr;
  });
}

bmdev_t bm_get_device(bmctx_t ctx) {
  return guard("bm_get_device", static_cast<bmdev_t>(nullptr), [&] {
    return check_ctx(ctx, "bm_get_device")->device;
  });
}

bmmem_device_t bmmem_device_alloc_raw(bmctx_t ctx, size_t size) {
  return guard("bmmem_device_alloc_raw", static_cast<bmmem_device_t>(nullptr),
               [&] { return alloc_raw(ctx, size, "bmmem_device_alloc_raw"); });
}

bmmem_device_t bmmem_device_prealloc_raw(bmctx_t ctx, bmmem_device_t mem, uint64_t offset,
                                         size_t size) {
  return guard("bmmem_device_prealloc_raw", static_cast<bmmem_device_t>(nullptr),
               [&] { return prealloc_raw(ctx, mem, offset, size, "bmmem_device_prealloc_raw"); });
}

bmmem_device_t bmmem_device_alloc(bmctx_t ctx, bmshape_t* shape) {
  return guard("bmmem_device_alloc", static_cast<bmmem_device_t>(nullptr),
               [&] { return alloc_raw(ctx, shape_bytes(shape), "bmmem_device_alloc"); });
}

bmmem_device_t bmmem_device_prealloc(bmctx_t ctx, bmmem_device_t mem, uint64_t offset,
                                     bmshape_t* shape) {
  return guard("bmmem_device_prealloc", static_cast<bmmem_device_t>(nullptr), [&] {
    return prealloc_raw(ctx, mem, offset, shape_bytes(shape), "bmmem_device_prealloc");
  });
}

void bmmem_device_free(bmctx_t ctx, bmmem_device_t mem) {
  guard_void("bmmem_device_free", [&] {
    bm_device* dev = bound(ctx, "bmmem_device_free");
    bm_memory* m = check_mem(dev, mem, "bmmem_device_free");
    if (m->is_root) {
      // Memories preallocated inside it go with it.
      for (auto it = dev->memories.begin(); it != dev->memories.end();) {
        bm_memory* other = *it;
        if (other != m && other->root.id == m->root.id) {
          it = dev->memories.erase(it);
          delete other;
        } else {
          ++it;
        }
      }
      dev->chip->remove_region(m->root.device_address);
      dev->chip->device().free(m->root);
    }
    dev->memories.erase(m);
    delete m;
  });
}

bmmem_host_t bmmem_host_alloc(bmctx_t ctx, bmshape_t* shape) {
  (void)ctx, (void)shape;
  set_last_error(TESSERA_BM_USER_ERROR,
                 "bmmem_host_alloc: host memory is not supported (spec 002); use system memory "
                 "with bm_memcpy_s2d / bm_memcpy_d2s");
  return nullptr;
}

void bmmem_host_free(bmctx_t ctx, bmmem_host_t mem) {
  (void)ctx, (void)mem;
  set_last_error(TESSERA_BM_USER_ERROR, "bmmem_host_free: host memory is not supported (spec 002)");
}

size_t bmmem_device_size(bmctx_t ctx, bmmem_device_t mem) {
  return guard("bmmem_device_size", std::size_t{0}, [&] {
    return check_mem(bound(ctx, "bmmem_device_size"), mem, "bmmem_device_size")->size;
  });
}

uint64_t bmmem_device_addr(bmctx_t ctx, bmmem_device_t mem) {
  return guard("bmmem_device_addr", std::uint64_t{0}, [&] {
    return check_mem(bound(ctx, "bmmem_device_addr"), mem, "bmmem_device_addr")->address();
  });
}

void* bmmem_host_v_addr(bmctx_t ctx, bmmem_host_t mem) {
  (void)ctx, (void)mem;
  set_last_error(TESSERA_BM_USER_ERROR,
                 "bmmem_host_v_addr: host memory is not supported (spec 002)");
  return nullptr;
}

uint64_t bmmem_host_p_addr(bmctx_t ctx, bmmem_host_t mem) {
  (void)ctx, (void)mem;
  set_last_error(TESSERA_BM_USER_ERROR,
                 "bmmem_host_p_addr: host memory is not supported (spec 002)");
  return 0;
}

bmerr_t bm_memcpy_s2d(bmctx_t ctx, bmmem_device_t dst, uint8_t* src) {
  return guard_status("bm_memcpy_s2d", [&] {
    bm_device* dev = bound(ctx, "bm_memcpy_s2d");
    bm_memory* m = check_mem(dev, dst, "bm_memcpy_s2d");
    if (!src) throw_user_error("bm_memcpy_s2d: src is NULL");
    dev->chip->device().copy_to_device(m->root, src, m->size, m->offset);
  });
}

bmerr_t bm_memcpy_d2s(bmctx_t ctx, uint8_t* dst, bmmem_device_t src) {
  return guard_status("bm_memcpy_d2s", [&] {
    bm_device* dev = bound(ctx, "bm_memcpy_d2s");
    bm_memory* m = check_mem(dev, src, "bm_memcpy_d2s");
    if (!dst) throw_user_error("bm_memcpy_d2s: dst is NULL");
    dev->chip->device().copy_to_host(dst, m->root, m->size, m->offset);
  });
}

bmerr_t bm_memcpy_s2d_ex(bmctx_t ctx, bmmem_device_t dst, uint8_t* src, uint64_t offset,
                         size_t size) {
  return guard_status("bm_memcpy_s2d_ex", [&] {
    bm_device* dev = bound(ctx, "bm_memcpy_s2d_ex");
    bm_memory* m = check_mem(dev, dst, "bm_memcpy_s2d_ex");
    if (!src && size) throw_user_error("bm_memcpy_s2d_ex: src is NULL");
    const std::uint64_t at = part_of(m, offset, size, "bm_memcpy_s2d_ex");
    if (size) dev->chip->device().copy_to_device(m->root, src, size, at);
  });
}

bmerr_t bm_memcpy_d2s_ex(bmctx_t ctx, uint8_t* dst, bmmem_device_t src, uint64_t offset,
                         size_t size) {
  return guard_status("bm_memcpy_d2s_ex", [&] {
    bm_device* dev = bound(ctx, "bm_memcpy_d2s_ex");
    bm_memory* m = check_mem(dev, src, "bm_memcpy_d2s_ex");
    if (!dst && size) throw_user_error("bm_memcpy_d2s_ex: dst is NULL");
    const std::uint64_t at = part_of(m, offset, size, "bm_memcpy_d2s_ex");
    if (size) dev->chip->device().copy_to_host(dst, m->root, size, at);
  });
}

}  // extern "C"

// BMNet runtime (spec 002, bmnet_*) and Tessera's bmodel files. A registered network holds its
// stages (one command buffer per supported input shape), weights in a weight device memory and
// activations in a neuron device memory; running it replays the stage's command buffer with
// CTRL_NEURON / CTRL_WEIGHT addresses relocated to those memories.
#include <libbmruntime/bmruntime_bmnet.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <limits>
#include <optional>
#include <utility>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "guard.h"
#include "state.h"
#include "tessera/core/error.h"
#include "tessera/core/json_integer.h"
#include "tessera/targets/bm/api/bmodel.h"

namespace tessera::bm {
namespace {

constexpr char kMagic[8] = {'T', 'S', 'R', 'B', 'M', 'O', 'D', 'L'};

struct Header {
  char magic[8];
  std::uint32_t version;
  std::uint32_t reserved;
  std::uint64_t json_bytes;
  std::uint64_t blob_bytes;
  std::uint64_t checksum;  // FNV-1a 64 of JSON then blob
};


// Every integer of a bmodel is read through this (core/json_integer.h says why).
template <typename T>
T integer(const nlohmann::json& j, const std::string& name, const char* what, T lowest) {
  if (const std::optional<T> v = json_integer<T>(j); v && *v >= lowest) return *v;
  throw_user_error("bmodel '{}': {} is {}, not a whole number from {} to {}; write the file again "
                   "with tessera::bm::save_bmodel",
                   name, what, j.dump(), lowest, std::numeric_limits<T>::max());
}

nlohmann::json shape_json(const shape_t& s) { return {s.n, s.c, s.h, s.w}; }
shape_t json_shape(const nlohmann::json& j, const std::string& name) {
  if (!j.is_array() || j.size() != 4) throw_user_error("a shape must be [n, c, h, w]");
  auto dim = [&](std::size_t i) { return integer<int>(j[i], name, "a shape's dimension", 1); };
  return shape_t4(dim(0), dim(1), dim(2), dim(3));
}
std::string shape_text(const shape_t& s) {
  return fmt::format("({}, {}, {}, {})", s.n, s.c, s.h, s.w);
}

void check_model(const BModel& m, const std::string& name) {
  if (m.stages.empty()) throw_user_error("bmodel '{}' has no stage (no compiled input shape)", name);
  for (const BModelStage& s : m.stages) {
    if (s.input_size > s.neuron_size || s.output_offset > s.neuron_size ||
        s.output_size > s.neuron_size - s.output_offset)
      throw_user_error("bmodel '{}': the input ({} B at 0) or the output ({} B at {}) lies outside "
                       "the {} B of neuron memory of stage {}",
                       name, s.input_size, s.output_size, s.output_offset, s.neuron_size,
                       shape_text(s.input_shape));
  }
}

}  // namespace

std::vector<std::uint8_t> encode_bmodel(const BModel& m) {
  check_model(m, m.name);
  nlohmann::json j;
  j["name"] = m.name;
  j["chip"] = "bm1880";
  j["output_name"] = m.output_name;
  j["input_threshold"] = m.input_threshold;
  j["output_threshold"] = m.output_threshold;
  j["weight"] = {{"offset", 0}, {"size", m.weight.size()}};
  std::uint64_t at = m.weight.size();
  for (const BModelStage& s : m.stages) {
    j["stages"].push_back({{"input_shape", shape_json(s.input_shape)},
                           {"output_shape", shape_json(s.output_shape)},
                           {"neuron_size", s.neuron_size},
                           {"input_size", s.input_size},
                           {"output_offset", s.output_offset},
                           {"output_size", s.output_size},
                           {"cmdbuf", {{"offset", at}, {"size", s.cmdbuf.size()}}}});
    at += s.cmdbuf.size();
  }
  const std::string text = j.dump();
  std::vector<std::uint8_t> blob(m.weight);
  for (const BModelStage& s : m.stages) blob.insert(blob.end(), s.cmdbuf.begin(), s.cmdbuf.end());
  Header h{};
  std::memcpy(h.magic, kMagic, sizeof kMagic);
  h.version = kBModelFormatVersion;
  h.json_bytes = text.size();
  h.blob_bytes = blob.size();
  h.checksum = fnv1a64(blob.data(), blob.size(),
                       fnv1a64(reinterpret_cast<const std::uint8_t*>(text.data()), text.size()));
  std::vector<std::uint8_t> out(sizeof h + text.size() + blob.size());
  std::memcpy(out.data(), &h, sizeof h);
  std::memcpy(out.data() + sizeof h, text.data(), text.size());
  if (!blob.empty()) std::memcpy(out.data() + sizeof h + text.size(), blob.data(), blob.size());
  return out;
}

void save_bmodel(const BModel& m, const std::string& path) {
  const std::vector<std::uint8_t> bytes = encode_bmodel(m);
  std::ofstream f(path, std::ios::binary);
  if (!f) throw_user_error("cannot write bmodel file '{}'", path);
  f.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  if (!f) throw_user_error("writing bmodel file '{}' failed", path);
}

BModel decode_bmodel(const std::vector<std::uint8_t>& bytes, const std::string& name) {
  Header h{};
  if (bytes.size() < sizeof h || std::memcmp(bytes.data(), kMagic, sizeof kMagic) != 0)
    throw_user_error("'{}' is not a Tessera bmodel file (no TSRBMODL header); write it with "
                     "tessera::bm::save_bmodel",
                     name);
  std::memcpy(&h, bytes.data(), sizeof h);
  if (h.version > kBModelFormatVersion)
    throw_user_error("bmodel '{}' has format version {}; this Tessera reads up to {}", name,
                     h.version, kBModelFormatVersion);
  if (h.json_bytes > bytes.size() - sizeof h || h.blob_bytes != bytes.size() - sizeof h - h.json_bytes)
    throw_user_error("bmodel '{}' is truncated: its header announces {} B, the file has {} B", name,
                     sizeof h + h.json_bytes + h.blob_bytes, bytes.size());
  const std::uint8_t* text = bytes.data() + sizeof h;
  const std::uint8_t* blob = text + h.json_bytes;
  if (fnv1a64(blob, h.blob_bytes, fnv1a64(text, h.json_bytes)) != h.checksum)
    throw_user_error("bmodel '{}' is corrupted: its checksum does not match", name);
  BModel m;
  try {
    const nlohmann::json j =
        nlohmann::json::parse(std::string(reinterpret_cast<const char*>(text), h.json_bytes));
    m.name = j.at("name").get<std::string>();
    m.output_name = j.value("output_name", "output");
    m.input_threshold = j.value("input_threshold", 1.0f);
    m.output_threshold = j.value("output_threshold", 1.0f);
    for (const float t : {m.input_threshold, m.output_threshold})
      if (!(t > 0 && t < std::numeric_limits<float>::infinity()))
        throw_user_error("bmodel '{}': a threshold is {}; the int8 scales of the input and the "
                         "output must be positive and finite",
                         name, t);
    auto slice = [&](const nlohmann::json& s) {
      const auto off = integer<std::uint64_t>(s.at("offset"), name, "a section's offset", 0);
      const auto size = integer<std::uint64_t>(s.at("size"), name, "a section's size", 0);
      if (off > h.blob_bytes || size > h.blob_bytes - off)
        throw_user_error("bmodel '{}': a section [{}, {}) lies outside the {} B blob", name, off,
                         off + size, h.blob_bytes);
      return std::vector<std::uint8_t>(blob + off, blob + off + size);
    };
    m.weight = slice(j.at("weight"));
    for (const nlohmann::json& s : j.at("stages")) {
      BModelStage st;
      st.input_shape = json_shape(s.at("input_shape"), name);
      st.output_shape = json_shape(s.at("output_shape"), name);
      auto byte_count = [&](const char* key) {
        return integer<std::uint64_t>(s.at(key), name, key, 0);
      };
      st.neuron_size = byte_count("neuron_size");
      st.input_size = byte_count("input_size");
      st.output_offset = byte_count("output_offset");
      st.output_size = byte_count("output_size");
      st.cmdbuf = slice(s.at("cmdbuf"));
      m.stages.push_back(std::move(st));
    }
  } catch (const nlohmann::json::exception& e) {
    throw_user_error("bmodel '{}': its JSON section is malformed: {}", name, e.what());
  }
  check_model(m, name);
  return m;
}

BModel load_bmodel(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) throw_user_error("cannot open bmodel file '{}'", path);
  std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(f)),
                                  std::istreambuf_iterator<char>());
  return decode_bmodel(bytes, path);
}

}  // namespace tessera::bm

// A registered network.
struct bmnet_context {
  bmctx_t ctx = nullptr;
  tessera::bm::BModel model;
  std::size_t stage = 0;
  std::uint32_t batch = 1;
  bmmem_device_t weight_mem = nullptr, neuron_mem = nullptr;
  bool owns_weight = false, owns_neuron = false;
  bmmem_device_t input_mem = nullptr, output_mem = nullptr;  // views into the neuron memory
  // bmnet_get_output_info's answer lives here.
  std::string out_name;
  char* out_name_ptr = nullptr;
  shape_t out_shape{};
  float out_threshold = 1.0f;
};

using namespace tessera;
using namespace tessera::bm;

namespace {

bmnet_context* check_net(bmnet_t net, const char* what) {
  live_nets().require(net, what);
  live_context(net->ctx, what);
  return net;
}

const BModelStage& stage_of(const bmnet_context* n) { return n->model.stages[n->stage]; }

std::uint64_t neuron_need(const BModel& m) {
  std::uint64_t need = 0;
  for (const BModelStage& s : m.stages) need = std::max(need, s.neuron_size);
  return need;
}

void drop_views(bmnet_context* n) {
  if (n->input_mem) bmmem_device_free(n->ctx, n->input_mem);
  if (n->output_mem) bmmem_device_free(n->ctx, n->output_mem);
  n->input_mem = n->output_mem = nullptr;
}

// The input and output views of the current stage.
void make_views(bmnet_context* n) {
  drop_views(n);
  if (!n->neuron_mem) return;
  const BModelStage& s = stage_of(n);
  if (s.input_size)
    n->input_mem = bmmem_device_prealloc_raw(n->ctx, n->neuron_mem, 0, s.input_size);
  if (s.output_size)
    n->output_mem =
        bmmem_device_prealloc_raw(n->ctx, n->neuron_mem, s.output_offset, s.output_size);
}

// Makes the stage compiled for `input_shape` current (bmnet_set_input_shape).
void select_stage(bmnet_context* n, const shape_t& input_shape, const char* what) {
  std::string known;
  for (std::size_t i = 0; i < n->model.stages.size(); ++i) {
    const shape_t& s = n->model.stages[i].input_shape;
    if (s.n == input_shape.n && s.c == input_shape.c && s.h == input_shape.h &&
        s.w == input_shape.w) {
      n->stage = i;
      make_views(n);
      return;
    }
    known += (known.empty() ? "" : ", ") + shape_text(s);
  }
  throw_user_error("{}: the network was not compiled for input shape {}; it supports {}", what,
                   shape_text(input_shape), known);
}

bm_memory* mem(bmctx_t ctx, bmmem_device_t m, const char* what) {
  if (!live_contexts().contains(ctx) || !ctx->device || !m || !ctx->device->memories.count(m))
    throw_user_error("{}: the device memory is not a live allocation of the network's context",
                     what);
  return m;
}

// The neuron memory holding [offset, offset + bytes), for a copy to or from `data`.
bm_memory* neuron_range(bmnet_context* n, std::uint64_t offset, std::size_t bytes, const void* data,
                        const char* what) {
  if (!n->neuron_mem)
    throw_user_error("{}: the network has no neuron device memory; import one with "
                     "bmnet_import_neuron_devmem",
                     what);
  bm_memory* m = mem(n->ctx, n->neuron_mem, what);
  if (!data) throw_user_error("{}: the data pointer is NULL", what);
  if (offset > m->size || bytes > m->size - offset)
    throw_user_error("{}: [{}, {}) lies outside the {} B neuron memory", what, offset,
                     offset + bytes, m->size);
  return m;
}

void copy_in(bmnet_context* n, std::uint64_t offset, std::size_t bytes, const std::uint8_t* src,
             const char* what) {
  bm_memory* m = neuron_range(n, offset, bytes, src, what);
  n->ctx->device->chip->device().copy_to_device(m->root, src, bytes, m->offset + offset);
}

void copy_out(bmnet_context* n, std::uint64_t offset, std::size_t bytes, std::uint8_t* dst,
              const char* what) {
  bm_memory* m = neuron_range(n, offset, bytes, dst, what);
  n->ctx->device->chip->device().copy_to_host(dst, m->root, bytes, m->offset + offset);
}

void run(bmnet_context* n) {
  if (!n->weight_mem && !n->model.weight.empty())
    throw_user_error("bmnet_run: the network has no weight device memory; import one with "
                     "bmnet_import_weight_devmem");
  if (!n->neuron_mem)
    throw_user_error("bmnet_run: the network has no neuron device memory; import one with "
                     "bmnet_import_neuron_devmem");
  const BModelStage& s = stage_of(n);
  const std::uint64_t neuron = bmmem_device_addr(n->ctx, n->neuron_mem);
  const std::uint64_t weight = n->weight_mem ? bmmem_device_addr(n->ctx, n->weight_mem) : 0;
  run_cmdbuf(*n->ctx->device->chip, s.cmdbuf.data(), s.cmdbuf.size(), neuron, weight);
}

bmnet_context* make_net(bmctx_t ctx, BModel model, bool alloc) {
  if (!live_context(ctx, "bmnet_register")->device)
    throw_user_error("the BM context is not bound to a device; call bm_init first");
  auto n = std::make_unique<bmnet_context>();
  n->ctx = ctx;
  n->model = std::move(model);
  if (alloc) {
    if (!n->model.weight.empty()) {
      n->weight_mem = bmmem_device_alloc_raw(ctx, n->model.weight.size());
      if (!n->weight_mem) throw DeviceFault("bmnet", tessera_bm_last_error());
      n->owns_weight = true;
      if (bm_memcpy_s2d(ctx, n->weight_mem, n->model.weight.data()) != BM_SUCCESS)
        throw DeviceFault("bmnet", tessera_bm_last_error());
    }
    n->neuron_mem = bmmem_device_alloc_raw(ctx, std::max<std::uint64_t>(1, neuron_need(n->model)));
    if (!n->neuron_mem) throw DeviceFault("bmnet", tessera_bm_last_error());
    n->owns_neuron = true;
    make_views(n.get());
  }
  live_nets().add(n.get());
  return n.release();
}

BModel from_info(const bmnet_info_t* info) {
  if (!info) throw_user_error("bmnet_register: info is NULL");
  if (!info->cmdbuf || info->cmdbuf_size == 0)
    throw_user_error("bmnet_register: info has no cmdbuf; pass the bytes bmk1880_acquire_cmdbuf "
                     "returned");
  if (info->weight_size && !info->weight) throw_user_error("bmnet_register: weight is NULL");
  BModel m;
  m.name = "bmnet";
  if (info->weight_size) m.weight.assign(info->weight, info->weight + info->weight_size);
  BModelStage s;
  const std::uint32_t batch = std::max<std::uint32_t>(1, info->batch_size);
  s.input_shape = shape_t4(static_cast<int>(batch), static_cast<int>(info->input_size / batch), 1, 1);
  s.output_shape =
      shape_t4(static_cast<int>(batch), static_cast<int>(info->output_size / batch), 1, 1);
  s.neuron_size = info->neuron_size;
  s.input_size = info->input_size;
  s.output_offset = info->output_offset;
  s.output_size = info->output_size;
  s.cmdbuf.assign(info->cmdbuf, info->cmdbuf + info->cmdbuf_size);
  m.stages.push_back(std::move(s));
  check_model(m, "bmnet_info_t");
  return m;
}

}  // namespace

extern "C" {

bmerr_t bmnet_register(bmctx_t ctx, bmnet_info_t* info, bmnet_t* net) {
  return guard_status("bmnet_register", [&] {
    if (!net) throw_user_error("bmnet_register: net is NULL");
    *net = make_net(ctx, from_info(info), true);
    (*net)->batch = std::max<std::uint32_t>(1, info->batch_size);
  });
}

bmerr_t bmnet_register_noalloc(bmctx_t ctx, bmnet_info_t* info, bmnet_t* net) {
  return guard_status("bmnet_register_noalloc", [&] {
    if (!net) throw_user_error("bmnet_register_noalloc: net is NULL");
    *net = make_net(ctx, from_info(info), false);
  });
}

bmerr_t bmnet_register_bmodel(bmctx_t ctx, const char* bmodel, bmnet_t* net) {
  return guard_status("bmnet_register_bmodel", [&] {
    if (!net || !bmodel) throw_user_error("bmnet_register_bmodel: {} is NULL", !net ? "net" : "bmodel");
    *net = make_net(ctx, load_bmodel(bmodel), true);
  });
}

bmerr_t bmnet_register_bmodel_data(bmctx_t ctx, uint8_t* bmodel_data, size_t size, bmnet_t* net) {
  return guard_status("bmnet_register_bmodel_data", [&] {
    if (!net || !bmodel_data)
      throw_user_error("bmnet_register_bmodel_data: {} is NULL", !net ? "net" : "bmodel_data");
    *net = make_net(ctx, decode_bmodel({bmodel_data, bmodel_data + size}, "bmodel data in memory"),
                    true);
  });
}

bmerr_t bmnet_set_input_shape2(bmnet_t net, shape_t* shape, int num) {
  return guard_status("bmnet_set_input_shape2", [&] {
    check_net(net, "bmnet_set_input_shape2");
    if (!shape) throw_user_error("bmnet_set_input_shape2: shape is NULL");
    if (num != 1)
      throw_user_error(
          "bmnet_set_input_shape2: {} shapes given; Tessera's networks have one "
          "input, so give one (or call bmnet_set_input_shape)",
          num);
    select_stage(net, shape[0], "bmnet_set_input_shape2");
  });
}

bmerr_t bmnet_load_cmdbuf(bmnet_t net, const uint8_t* cmdbuf, int cmdbuf_size) {
  return guard_status("bmnet_load_cmdbuf", [&] {
    bmnet_context* n = check_net(net, "bmnet_load_cmdbuf");
    if (!cmdbuf || cmdbuf_size <= 0)
      throw_user_error("bmnet_load_cmdbuf: {}; pass the bytes bmk1880_acquire_cmdbuf returned",
                       !cmdbuf ? "cmdbuf is NULL" : fmt::format("cmdbuf_size is {}", cmdbuf_size));
    // Checked command by command when it runs, as a registered buffer is.
    n->model.stages[n->stage].cmdbuf.assign(cmdbuf, cmdbuf + cmdbuf_size);
  });
}

bmerr_t bmnet_inference_once(bmctx_t ctx, uint8_t* input, uint8_t* output, uint32_t batch_size,
                             uint8_t* weight, size_t weight_size, uint8_t* cmdbuf,
                             size_t cmdbuf_size, size_t neuron_size, size_t input_size,
                             uint64_t output_offset, size_t output_size) {
  bmnet_info_t info{batch_size,  weight,     weight_size,   cmdbuf,     cmdbuf_size,
                    neuron_size, input_size, output_offset, output_size};
  bmnet_t net = nullptr;
  bmerr_t err = bmnet_register(ctx, &info, &net);
  if (err != BM_SUCCESS) return err;
  err = bmnet_inference(net, input, output);
  bmnet_cleanup(net);
  return err;
}

bmerr_t bmnet_set_input_shape(bmnet_t net, shape_t input_shape) {
  return guard_status("bmnet_set_input_shape", [&] {
    select_stage(check_net(net, "bmnet_set_input_shape"), input_shape, "bmnet_set_input_shape");
  });
}

bmerr_t bmnet_get_output_info(bmnet_t net, bmnet_output_info_t* output_info) {
  return guard_status("bmnet_get_output_info", [&] {
    bmnet_context* n = check_net(net, "bmnet_get_output_info");
    if (!output_info) throw_user_error("bmnet_get_output_info: output_info is NULL");
    const BModelStage& s = stage_of(n);
    n->out_name = n->model.output_name;
    n->out_name_ptr = n->out_name.data();
    n->out_shape = s.output_shape;
    n->out_threshold = n->model.output_threshold;
    output_info->output_size = s.output_size;
    output_info->output_num = 1;
    output_info->name_array = &n->out_name_ptr;
    output_info->shape_array = &n->out_shape;
    output_info->threshold_array = &n->out_threshold;
  });
}

void bmnet_cleanup(bmnet_t net) {
  guard_void("bmnet_cleanup", [&] {
    if (!net) return;
    live_nets().require(net, "bmnet_cleanup");
    live_nets().remove(net);
    // After bm_exit the device, and the memories with it, are gone already.
    if (live_contexts().contains(net->ctx)) {
      drop_views(net);
      if (net->owns_weight && net->weight_mem) bmmem_device_free(net->ctx, net->weight_mem);
      if (net->owns_neuron && net->neuron_mem) bmmem_device_free(net->ctx, net->neuron_mem);
    }
    delete net;
  });
}

bmerr_t bmnet_run(bmnet_t net) {
  return guard_status("bmnet_run", [&] { run(check_net(net, "bmnet_run")); });
}

bmmem_device_t bmnet_weight_devmem(bmnet_t net) {
  return guard("bmnet_weight_devmem", static_cast<bmmem_device_t>(nullptr),
               [&] { return check_net(net, "bmnet_weight_devmem")->weight_mem; });
}
bmmem_device_t bmnet_neuron_devmem(bmnet_t net) {
  return guard("bmnet_neuron_devmem", static_cast<bmmem_device_t>(nullptr),
               [&] { return check_net(net, "bmnet_neuron_devmem")->neuron_mem; });
}
bmmem_device_t bmnet_input_devmem(bmnet_t net) {
  return guard("bmnet_input_devmem", static_cast<bmmem_device_t>(nullptr),
               [&] { return check_net(net, "bmnet_input_devmem")->input_mem; });
}
bmmem_device_t bmnet_output_devmem(bmnet_t net) {
  return guard("bmnet_output_devmem", static_cast<bmmem_device_t>(nullptr),
               [&] { return check_net(net, "bmnet_output_devmem")->output_mem; });
}

bmerr_t bmnet_import_weight_devmem(bmnet_t net, bmmem_device_t weight_mem) {
  return guard_status("bmnet_import_weight_devmem", [&] {
    bmnet_context* n = check_net(net, "bmnet_import_weight_devmem");
    bm_memory* m = mem(n->ctx, weight_mem, "bmnet_import_weight_devmem");
    if (m->size < n->model.weight.size())
      throw_user_error("bmnet_import_weight_devmem: the device memory has {} B; the weights need "
                       "{} B",
                       m->size, n->model.weight.size());
    if (n->owns_weight && n->weight_mem) bmmem_device_free(n->ctx, n->weight_mem);
    n->weight_mem = weight_mem;
    n->owns_weight = false;
  });
}

bmerr_t bmnet_import_neuron_devmem(bmnet_t net, bmmem_device_t neuron_mem) {
  return guard_status("bmnet_import_neuron_devmem", [&] {
    bmnet_context* n = check_net(net, "bmnet_import_neuron_devmem");
    bm_memory* m = mem(n->ctx, neuron_mem, "bmnet_import_neuron_devmem");
    if (m->size < neuron_need(n->model))
      throw_user_error("bmnet_import_neuron_devmem: the device memory has {} B; the network "
                       "needs {} B of neuron memory",
                       m->size, neuron_need(n->model));
    drop_views(n);
    if (n->owns_neuron && n->neuron_mem) bmmem_device_free(n->ctx, n->neuron_mem);
    n->neuron_mem = neuron_mem;
    n->owns_neuron = false;
    make_views(n);
  });
}

bmerr_t bmnet_load_input(bmnet_t net, uint8_t* input) {
  return guard_status("bmnet_load_input", [&] {
    bmnet_context* n = check_net(net, "bmnet_load_input");
    copy_in(n, 0, stage_of(n).input_size, input, "bmnet_load_input");
  });
}

bmerr_t bmnet_load_neuron(bmnet_t net, uint64_t neuron_offset, int neuron_size, uint8_t* neuron) {
  return guard_status("bmnet_load_neuron", [&] {
    if (neuron_size < 0) throw_user_error("bmnet_load_neuron: neuron_size {} is negative", neuron_size);
    copy_in(check_net(net, "bmnet_load_neuron"), neuron_offset,
            static_cast<std::size_t>(neuron_size), neuron, "bmnet_load_neuron");
  });
}

bmerr_t bmnet_store_output(bmnet_t net, uint8_t* output) {
  return guard_status("bmnet_store_output", [&] {
    bmnet_context* n = check_net(net, "bmnet_store_output");
    copy_out(n, stage_of(n).output_offset, stage_of(n).output_size, output, "bmnet_store_output");
  });
}

bmerr_t bmnet_store_neuron(bmnet_t net, uint64_t neuron_offset, int neuron_size, uint8_t* neuron) {
  return guard_status("bmnet_store_neuron", [&] {
    if (neuron_size < 0)
      throw_user_error("bmnet_store_neuron: neuron_size {} is negative", neuron_size);
    copy_out(check_net(net, "bmnet_store_neuron"), neuron_offset,
             static_cast<std::size_t>(neuron_size), neuron, "bmnet_store_neuron");
  });
}

bmerr_t bmnet_inference(bmnet_t net, uint8_t* input, uint8_t* output) {
  return guard_status("bmnet_inference", [&] {
    bmnet_context* n = check_net(net, "bmnet_inference");
    copy_in(n, 0, stage_of(n).input_size, input, "bmnet_inference");
    run(n);
    copy_out(n, stage_of(n).output_offset, stage_of(n).output_size, output, "bmnet_inference");
  });
}

}  // extern "C"

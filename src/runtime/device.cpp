#include "tessera/runtime/device.h"

#include <algorithm>
#include <cstring>
#include <map>
#include <mutex>
#include <typeindex>
#include <vector>

#include <fmt/format.h>

#include "tessera/core/error.h"
#include "tessera/core/log.h"
#include "tessera/sim/bandwidth.h"
#include "tessera/sim/cache.h"
#include "tessera/sim/cost_model.h"
#include "tessera/sim/dma.h"
#include "tessera/sim/memory.h"
#include "tessera/sim/scheduler.h"
#include "tessera/sim/timeline.h"

namespace tessera::runtime {
namespace {

const arch::MemorySpec& global_spec(const arch::MachineSpec& spec) {
  for (const auto& m : spec.memories)
    if (m.name == spec.global_memory) return m;
  throw_user_error("machine '{}' ({}): global_memory '{}' is not one of its memories", spec.name,
                   spec.origin, spec.global_memory);
}

}  // namespace

struct Device::Impl {
  struct Entry {
    Buffer buffer;
    std::string tag;
    std::vector<std::byte> storage;  // empty until first touched
  };

  explicit Impl(arch::MachineSpec machine)
      : spec(std::move(machine)),
        cost(spec),
        global(global_spec(spec), "device"),
        allocator(global),
        channel(global.name(), global_spec(spec).bandwidth_bytes_per_cycle.value) {
    if (!spec.global_cache.empty()) {
      const arch::MemorySpec& c = spec.memory(spec.global_cache);
      cache = std::make_unique<sim::SharedCache>(
          c.name, static_cast<std::uint64_t>(c.capacity_bytes.value),
          static_cast<std::uint64_t>(c.alignment_bytes.value));
      cache_channel =
          std::make_unique<sim::BandwidthChannel>(c.name, c.bandwidth_bytes_per_cycle.value);
    }
    reset_profile_locked();
  }

  arch::MachineSpec spec;
  sim::PresetCostModel cost;
  sim::Memory global;
  sim::FirstFitAllocator allocator;
  mutable std::mutex mutex;
  std::map<std::uint64_t, Entry> buffers;  // by id
  std::uint64_t next_id = 1;
  std::mutex target_state_mutex;
  std::map<std::type_index, std::shared_ptr<void>> target_states;
  std::map<std::string, std::uint64_t> bytes_by_tag;
  profile::Profile profile;
  std::uint64_t now = 0;  // the end of the latest work: where in-order work starts
  bool trace = false;
  // The device's engines as pipes of one timeline, and the global memory's bandwidth.
  sim::Timeline queues{"device", std::vector<std::string>{"host-link"}};
  std::map<std::string, sim::PipeId, std::less<>> engines;
  sim::BandwidthChannel channel;
  std::unique_ptr<sim::SharedCache> cache;  // the preset's global_cache, if any
  std::unique_ptr<sim::BandwidthChannel> cache_channel;
  std::uint64_t host_floor = 0;  // end of the last host copy: nothing on the device precedes it
  bool scoped = false;
  std::vector<sim::Event> scope_after;
  sim::Event scope_last;

  void reset_profile_locked() {
    profile = profile::Profile{};
    profile.device = spec.name;
    profile.target = spec.target;
    profile.clock_hz = spec.clock_hz.value;
    now = 0;
    host_floor = 0;
    queues = sim::Timeline("device", std::vector<std::string>{"host-link"});
    engines.clear();
    engines.emplace("host-link", 0);
    channel.clear();
    if (cache) {  // a run starts with a cold cache
      cache->clear();
      cache_channel->clear();
    }
    scoped = false;
    scope_after.clear();
    scope_last = {};
    allocator.reset_high_water();
    note_usage_locked();
  }

  void note_usage_locked() {
    auto& marks = profile.memory_high_water["device"];
    for (const auto& [tag, bytes] : bytes_by_tag) marks[tag] = std::max(marks[tag], bytes);
    marks[global.name()] = std::max(marks[global.name()], allocator.stats().high_water);
  }

  Entry& entry(const Buffer& b, std::string_view what) {
    auto it = buffers.find(b.id);
    if (b.id == 0 || it == buffers.end() || it->second.buffer.device_address != b.device_address ||
        it->second.buffer.bytes != b.bytes)
      throw_user_error(
          "{}: buffer #{} (0x{:x}, {} B) is not a live buffer of device '{}' (freed, "
          "never allocated, or from another device)",
          what, b.id, b.device_address, b.bytes, spec.name);
    return it->second;
  }

  std::byte* storage(Entry& e) {
    if (e.storage.size() != e.buffer.bytes) e.storage.resize(e.buffer.bytes);
    return e.storage.data();
  }

  // Host copies are synchronous: they start after all earlier work.
  void advance_host_link_locked(std::string_view name, std::size_t bytes) {
    std::uint64_t cycles = cost.host_link_cycles(bytes);
    if (trace)
      profile.trace.push_back(profile::Interval{"host-link", std::string(name), now, now + cycles});
    profile.pipe_busy_cycles["host-link"] += cycles;
    profile.bytes_moved["host-link"] += bytes;
    queues.issue_at(0, name, now, cycles);
    now += cycles;
    host_floor = now;
    profile.total_cycles = std::max(profile.total_cycles, now);
  }

  sim::PipeId engine_locked(std::string_view name) {
    const std::string_view key = name.empty() ? std::string_view("device") : name;
    auto it = engines.find(key);
    if (it != engines.end()) return it->second;
    const sim::PipeId pipe = queues.add_pipe(std::string(key));
    engines.emplace(std::string(key), pipe);
    return pipe;
  }

  std::vector<sim::Event> deps_locked() const {
    std::vector<sim::Event> deps;
    if (!scoped) return deps;
    deps = scope_after;
    if (scope_last) deps.push_back(scope_last);
    return deps;
  }

  std::uint64_t start_locked(sim::PipeId engine) {
    const auto deps = deps_locked();
    const std::uint64_t ready = std::max(queues.ready_cycle(engine, deps), host_floor);
    return scoped ? ready : std::max(ready, now);
  }

  // Places work that ends at `end` on its engine; returns the stored record.
  const profile::KernelRecord& place_locked(profile::KernelRecord record, sim::PipeId engine,
                                            std::uint64_t start, std::uint64_t end) {
    record.start_cycle = start;
    record.cycles = end - start;
    const sim::Event e = queues.issue_at(engine, record.name, start, record.cycles);
    if (scoped) scope_last = e;
    now = std::max(now, end);
    profile.total_cycles = std::max(profile.total_cycles, now);
    if (!record.engine.empty()) {
      profile.pipe_busy_cycles[record.engine] += record.cycles;
      if (trace) profile.trace.push_back(profile::Interval{record.engine, record.name, start, end});
    }
    profile.kernels.push_back(std::move(record));
    return profile.kernels.back();
  }
};

std::unique_ptr<Device> Device::open(std::string_view preset_or_path) {
  return std::make_unique<Device>(arch::load_machine(preset_or_path));
}

Device::Device(arch::MachineSpec spec) : impl_(std::make_unique<Impl>(std::move(spec))) {
  log(LogLevel::info, "runtime", "opened device '{}' ({}, target {}), global memory {} of {}",
      impl_->spec.name, impl_->spec.origin, impl_->spec.target, impl_->global.name(),
      sim::format_bytes(impl_->global.capacity()));
}

Device::~Device() = default;

const arch::MachineSpec& Device::spec() const {
  return impl_->spec;
}

Buffer Device::allocate(std::size_t bytes, std::string_view tag) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Buffer b;
  b.device_address = impl_->allocator.allocate(bytes);
  b.bytes = bytes;
  b.id = impl_->next_id++;
  std::string t(tag.empty() ? "tensor" : tag);
  impl_->buffers.emplace(b.id, Impl::Entry{b, t, {}});
  impl_->bytes_by_tag[t] += impl_->allocator.size_of(b.device_address);
  impl_->note_usage_locked();
  return b;
}

void Device::free(const Buffer& buffer) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl::Entry& e = impl_->entry(buffer, "free");
  impl_->bytes_by_tag[e.tag] -= impl_->allocator.size_of(buffer.device_address);
  impl_->allocator.free(buffer.device_address);
  if (impl_->cache) impl_->cache->invalidate(buffer.device_address, buffer.bytes);
  impl_->buffers.erase(buffer.id);
}

void Device::copy_to_device(const Buffer& dst, const void* src, std::size_t bytes,
                            std::size_t dst_offset) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl::Entry& e = impl_->entry(dst, "copy_to_device");
  if (dst_offset > dst.bytes || bytes > dst.bytes - dst_offset)
    throw_user_error(
        "copy_to_device: {} B at offset {} does not fit buffer #{} of {} B; copy at most "
        "{} B at that offset",
        bytes, dst_offset, dst.id, dst.bytes, dst_offset > dst.bytes ? 0 : dst.bytes - dst_offset);
  if (bytes > 0 && src == nullptr) throw_user_error("copy_to_device: source pointer is null");
  if (bytes > 0) std::memcpy(impl_->storage(e) + dst_offset, src, bytes);
  if (impl_->cache) impl_->cache->invalidate(dst.device_address + dst_offset, bytes);
  impl_->advance_host_link_locked("copy_to_device", bytes);
}

void Device::copy_to_host(void* dst, const Buffer& src, std::size_t bytes, std::size_t src_offset) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl::Entry& e = impl_->entry(src, "copy_to_host");
  if (src_offset > src.bytes || bytes > src.bytes - src_offset)
    throw_user_error(
        "copy_to_host: {} B at offset {} reads past buffer #{} of {} B; copy at most {} B "
        "at that offset",
        bytes, src_offset, src.id, src.bytes, src_offset > src.bytes ? 0 : src.bytes - src_offset);
  if (bytes > 0 && dst == nullptr) throw_user_error("copy_to_host: destination pointer is null");
  if (bytes > 0) std::memcpy(dst, impl_->storage(e) + src_offset, bytes);
  impl_->advance_host_link_locked("copy_to_host", bytes);
}

std::byte* Device::data(const Buffer& buffer) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->storage(impl_->entry(buffer, "data"));
}

const std::byte* Device::data(const Buffer& buffer) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->storage(impl_->entry(buffer, "data"));
}

sim::DmaEndpoint Device::dma_endpoint(const Buffer& buffer) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  Impl::Entry& e = impl_->entry(buffer, "dma_endpoint");
  return sim::DmaEndpoint{impl_->storage(e), buffer.bytes, impl_->global.name(),
                          buffer.device_address, fmt::format("buffer #{} ({})", buffer.id, e.tag)};
}

const std::string& Device::tag(const Buffer& buffer) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->entry(buffer, "tag").tag;
}

std::size_t Device::live_buffer_count() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->buffers.size();
}

std::uint64_t Device::global_bytes_in_use() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->allocator.stats().used;
}

std::uint64_t Device::global_bytes_free() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->allocator.free_bytes();
}

const profile::KernelRecord& Device::record_kernel(profile::KernelRecord record,
                                                   std::uint64_t global_bytes,
                                                   std::uint64_t setup_cycles) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  const sim::PipeId engine = impl_->engine_locked(record.engine);
  const std::uint64_t start = impl_->start_locked(engine);
  const std::uint64_t streaming = start + setup_cycles;
  const std::uint64_t end = global_bytes > 0
                                ? impl_->channel.reserve(streaming, {global_bytes, record.cycles})
                                : streaming + record.cycles;
  return impl_->place_locked(std::move(record), engine, start, end);
}

void Device::record_interval(profile::Interval interval) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (interval.end_cycle < interval.start_cycle)
    throw_user_error("record_interval '{}' on track '{}': end cycle {} is before start cycle {}",
                     interval.name, interval.track, interval.end_cycle, interval.start_cycle);
  if (impl_->trace) impl_->profile.trace.push_back(std::move(interval));
}

void Device::add_pipe_busy(const std::string& pipe, std::uint64_t cycles) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->profile.pipe_busy_cycles[pipe] += cycles;
}

void Device::add_bytes_moved(const std::string& level, std::uint64_t bytes) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->profile.bytes_moved[level] += bytes;
}

void Device::note_memory_high_water(const std::string& where, const std::string& category,
                                    std::uint64_t bytes) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto& mark = impl_->profile.memory_high_water[where][category];
  mark = std::max(mark, bytes);
}

void Device::record_timeline(const sim::Timeline& timeline, std::uint64_t start_cycle) {
  timeline.finish();  // blocked work would be missing from the profile: report it instead
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto& p = impl_->profile;
  for (sim::PipeId pipe = 0; pipe < timeline.pipe_count(); ++pipe)
    p.pipe_busy_cycles[timeline.pipe_track(pipe)] += timeline.busy_cycles(pipe);
  for (const auto& [level, bytes] : timeline.bytes_moved()) p.bytes_moved[level] += bytes;
  if (impl_->trace)
    for (const auto& iv : timeline.intervals())
      p.trace.push_back(profile::Interval{timeline.pipe_track(iv.pipe), iv.name,
                                          start_cycle + iv.start, start_cycle + iv.end});
}

const profile::KernelRecord& Device::record_kernel(profile::KernelRecord record,
                                                   std::span<sim::Timeline> cores,
                                                   std::span<const std::uint64_t> global_bytes) {
  if (!global_bytes.empty() && global_bytes.size() != cores.size())
    throw_user_error("record_kernel '{}': {} global byte counts for {} cores", record.name,
                     global_bytes.size(), cores.size());
  return record_cores(std::move(record), cores, [&](std::uint64_t start, profile::KernelRecord&) {
    std::vector<sim::ChannelDemand> demands;
    for (std::size_t i = 0; i < cores.size(); ++i)
      demands.push_back({global_bytes.empty() ? 0 : global_bytes[i], cores[i].end_cycle()});
    return impl_->channel.reserve(start, demands);
  });
}

const profile::KernelRecord& Device::record_cores(
    profile::KernelRecord record, std::span<sim::Timeline> cores,
    const std::function<std::vector<std::uint64_t>(std::uint64_t, profile::KernelRecord&)>&
        ends_of) {
  for (const auto& core : cores)
    core.finish();  // before anything is recorded, so a deadlock leaves the profile untouched
  std::uint64_t start = 0;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    const sim::PipeId engine = impl_->engine_locked(record.engine);
    start = impl_->start_locked(engine);
    const std::vector<std::uint64_t> ends = ends_of(start, record);
    record.cycles_per_core.clear();
    std::uint64_t end = start;
    for (std::size_t i = 0; i < cores.size(); ++i) {
      cores[i].extend_to(ends[i] - start);  // waiting on the shared global memory
      record.cycles_per_core.push_back(cores[i].end_cycle());
      end = std::max(end, ends[i]);
    }
    impl_->place_locked(std::move(record), engine, start, end);
  }
  for (const auto& core : cores) record_timeline(core, start);
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->profile.kernels.back();
}

void Device::begin_scope(std::span<const sim::Event> after) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (impl_->scoped)
    throw_user_error("begin_scope: a dependency scope is open already; end it with end_scope");
  impl_->scoped = true;
  impl_->scope_after.assign(after.begin(), after.end());
  impl_->scope_last = {};
}

sim::Event Device::end_scope() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  if (!impl_->scoped) throw_user_error("end_scope without begin_scope");
  impl_->scoped = false;
  if (impl_->scope_last) return impl_->scope_last;
  // Nothing ran on the device in the scope (host work): it completes with its latest
  // dependency.
  sim::Event latest;
  for (const sim::Event& e : impl_->scope_after)
    if (!latest || impl_->queues.end_of(e) > impl_->queues.end_of(latest)) latest = e;
  return latest;
}

std::uint64_t Device::next_start(std::string_view engine) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->start_locked(impl_->engine_locked(engine));
}

sim::BandwidthChannel& Device::global_channel() {
  return impl_->channel;
}

sim::SharedCache* Device::global_cache() {
  return impl_->cache.get();
}

std::shared_ptr<void> Device::target_state(const std::type_info& type,
                                           std::shared_ptr<void> (*make)()) {
  std::lock_guard lock(impl_->target_state_mutex);
  std::shared_ptr<void>& state = impl_->target_states[std::type_index(type)];
  if (!state) state = make();
  return state;
}

const profile::KernelRecord& Device::record_kernel(profile::KernelRecord record,
                                                   std::span<sim::Timeline> cores,
                                                   std::span<const sim::GlobalAccess> accesses) {
  for (const auto& a : accesses)
    if (a.agent >= cores.size())
      throw_user_error("record_kernel '{}': an access names core {} of {}", record.name, a.agent,
                       cores.size());
  if (!impl_->cache) {
    std::vector<std::uint64_t> bytes(cores.size(), 0);
    for (const auto& a : accesses) bytes[a.agent] += a.bytes;
    return record_kernel(std::move(record), cores, bytes);
  }
  return record_cores(
      std::move(record), cores, [&](std::uint64_t start, profile::KernelRecord& rec) {
        const std::vector<sim::CacheTraffic> traffic = impl_->cache->serve(accesses, cores.size());
        // Every byte comes through the cache's bandwidth; what it does not hold, through global
        // memory's as well, no sooner than the cache could deliver it.
        std::vector<sim::ChannelDemand> through_cache, through_global;
        std::uint64_t hit = 0, miss = 0, global = 0;
        for (std::size_t i = 0; i < cores.size(); ++i) {
          const sim::CacheTraffic& t = traffic[i];
          through_cache.push_back(
              {t.hit_bytes + t.miss_bytes + t.write_bytes, cores[i].end_cycle()});
          hit += t.hit_bytes;
          miss += t.miss_bytes;
          global += t.global_bytes;
        }
        const std::vector<std::uint64_t> cache_ends =
            impl_->cache_channel->reserve(start, through_cache);
        for (std::size_t i = 0; i < cores.size(); ++i)
          through_global.push_back({traffic[i].global_bytes, cache_ends[i] - start});
        const std::string& name = impl_->cache->name();
        rec.metrics[name + ".hit_bytes"] = static_cast<double>(hit);
        rec.metrics[name + ".miss_bytes"] = static_cast<double>(miss);
        rec.metrics[name + ".global_bytes"] = static_cast<double>(global);
        impl_->profile.bytes_moved[name] += hit + miss;
        return impl_->channel.reserve(start, through_global);
      });
}

void Device::synchronize() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->profile.total_cycles = std::max(impl_->profile.total_cycles, impl_->now);
  impl_->note_usage_locked();
}

std::uint64_t Device::now_cycles() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->now;
}

const profile::Profile& Device::profile() const {
  return impl_->profile;
}

void Device::reset_profile() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->reset_profile_locked();
}

profile::Profile Device::take_profile() {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  profile::Profile taken = std::move(impl_->profile);
  impl_->reset_profile_locked();
  return taken;
}

void Device::set_trace_enabled(bool enabled) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->trace = enabled;
}

bool Device::trace_enabled() const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  return impl_->trace;
}

sim::WorkScheduler& Device::scheduler() {
  return sim::WorkScheduler::shared();
}

const sim::CostModel& Device::cost_model() const {
  return impl_->cost;
}

}  // namespace tessera::runtime

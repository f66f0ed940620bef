// The Profile of a run: what every target reports, whatever its programming model
// (ARCHITECTURE, "the engine in one page"). Writers turn it into JSON, a text summary and a
// Chrome trace (profile/writers.h).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace tessera::profile {

// One busy interval on a track ("tpc3/vpu", "hbm", "host-link"), in device cycles.
struct Interval {
  std::string track;
  std::string name;
  std::uint64_t start_cycle = 0;
  std::uint64_t end_cycle = 0;
};

// One kernel / vertex type / command launched during the run.
struct KernelRecord {
  std::string name;
  std::uint64_t start_cycle = 0;
  std::uint64_t cycles = 0;                    // start to end on the device
  std::vector<std::uint64_t> cycles_per_core;  // busy cycles of each core
  std::map<std::string, double> metrics;       // e.g. "slot.vpu.utilisation", "members"
  std::uint64_t bytes_read = 0;                // from global memory
  std::uint64_t bytes_written = 0;
  std::string engine;  // the device queue it ran on ("tpc", "mme"); empty: the default queue
};

struct Profile {
  std::string device;  // preset name
  std::string target;  // "tpc", ...
  double clock_hz = 0;
  std::uint64_t total_cycles = 0;
  std::map<std::string, std::uint64_t> pipe_busy_cycles;  // "tpc0/vpu" -> busy cycles
  std::vector<KernelRecord> kernels;
  // core or "device" -> category ("vector-local", "tensors", ...) -> peak bytes
  std::map<std::string, std::map<std::string, std::uint64_t>> memory_high_water;
  std::map<std::string, std::uint64_t> bytes_moved;  // memory level or link -> bytes
  std::vector<Interval> trace;                       // empty unless tracing was asked for

  double modeled_seconds() const {
    return clock_hz > 0 ? static_cast<double>(total_cycles) / clock_hz : 0.0;
  }
};

}  // namespace tessera::profile

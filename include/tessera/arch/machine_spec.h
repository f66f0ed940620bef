// MachineSpec: every number of a modeled machine, loaded from a preset in data/arch/*.json or
// from a user's JSON file (ARCHITECTURE rule 3). Each figure carries the source it came from:
// a spec section, a public vendor figure, or "estimate". Code reads figures from here and never
// hard-codes a preset. The schema is documented in docs/arch.md.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessera::arch {

// One number with the note of where it came from.
struct Figure {
  double value = 0;
  std::string source;
  std::int64_t as_int() const { return static_cast<std::int64_t>(value); }
};

// A memory of the machine. scope "core": one instance per core (local memory, tile memory);
// scope "device": one shared instance (HBM, DDR, OCM).
struct MemorySpec {
  std::string name;
  std::string scope;  // "core" or "device"
  std::string description;
  Figure capacity_bytes;
  Figure base_address;      // 0 when the preset gives none
  Figure alignment_bytes;   // smallest legal access granule / allocation alignment
  Figure banks;             // 1 when not banked
  Figure bank_width_bytes;  // interleaving granule; 0 when not banked
  Figure bandwidth_bytes_per_cycle;
  Figure latency_cycles;
};

// An in-order execution engine of a core (TPC slot, AI Core pipe, BM engine, IPU worker ...).
struct PipeSpec {
  std::string name;
  std::string description;
  Figure latency_cycles;  // typical result latency of an operation on this pipe
};

struct HostLinkSpec {
  Figure bandwidth_bytes_per_second;
  Figure latency_seconds;
};

struct MachineSpec {
  std::string name;  // its "name" field; for a preset, also its file stem
  std::string description;
  std::string target;  // "tpc", "ipu", "bm", "aicore", "epu"
  std::string origin;  // the file it was loaded from
  Figure clock_hz;
  Figure core_count;
  std::string core_name;             // "tpc", "tile", "aicore", "npu", "pe" ...
  std::vector<PipeSpec> pipes;       // per core
  std::vector<MemorySpec> memories;  // core-scope and device-scope memories
  std::string global_memory;         // name of the device memory that holds tensors
  // Optional: name of a device memory that is a cache in front of global_memory, shared by
  // all cores (sim::SharedCache): its capacity, its line (alignment_bytes), its bandwidth and
  // latency. Empty: no cache; every global byte goes to global memory.
  std::string global_cache;
  HostLinkSpec host_link;
  // Target-specific figures with dotted names, e.g. "tpc.vector_bytes", "mme.macs_per_cycle".
  std::map<std::string, Figure> params;

  // Lookups that throw UserError naming the preset and the missing entry.
  const Figure& param(std::string_view key) const;
  double param_or(std::string_view key, double fallback) const;
  const MemorySpec& memory(std::string_view memory_name) const;
  const MemorySpec* find_memory(std::string_view memory_name) const;
  const PipeSpec& pipe(std::string_view pipe_name) const;
  const MemorySpec& global() const { return memory(global_memory); }
  double seconds_from_cycles(double cycles) const { return cycles / clock_hz.value; }
};

// Parses and validates a machine description. Every problem found is reported in one UserError,
// each with its JSON field path ("memories[2].capacity_bytes.source: missing").
MachineSpec parse_machine_spec(std::string_view json_text, std::string_view origin);

// Loads a preset by name ("gaudi") or a JSON file by path ("./my.json", "x/y.json").
MachineSpec load_machine(std::string_view name_or_path);

// Preset names found in the preset directory, sorted.
std::vector<std::string> preset_names();

// The preset directory: $TESSERA_ARCH_PATH, else the source tree's data/arch (in a build tree),
// else the installed share/tessera/arch.
std::string preset_directory();

// A figure's value written with the unit its field name implies, for people to read:
// "*_bytes" -> "80 KiB", "*_hz" -> "1.6 GHz", "*_bytes_per_second" -> "31.5 GB/s",
// "*_bytes_per_cycle" -> "625 B/cycle", "*_cycles" -> "4 cycles", "*_seconds" -> "1 us",
// "base_address" -> "0x10000"; anything else is a plain number ("16,384").
std::string format_figure(std::string_view field_name, double value);

}  // namespace tessera::arch

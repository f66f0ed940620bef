// A small hand-built machine for engine tests: one that exercises every feature of the engine
// (banked local memory, a device memory with a base address, several pipes) without depending
// on a preset's figures.
#pragma once

#include <string>

#include "tessera/arch/machine_spec.h"

namespace tessera::testing {

inline arch::Figure fig(double v) {
  return arch::Figure{v, "test"};
}

inline arch::MemorySpec memory_spec(std::string name, std::string scope, double capacity,
                                    double base, double alignment, double banks, double bank_width,
                                    double bandwidth, double latency) {
  arch::MemorySpec m;
  m.name = std::move(name);
  m.scope = std::move(scope);
  m.capacity_bytes = fig(capacity);
  m.base_address = fig(base);
  m.alignment_bytes = fig(alignment);
  m.banks = fig(banks);
  m.bank_width_bytes = fig(bank_width);
  m.bandwidth_bytes_per_cycle = fig(bandwidth);
  m.latency_cycles = fig(latency);
  return m;
}

inline arch::MachineSpec test_machine() {
  arch::MachineSpec s;
  s.name = "testchip";
  s.description = "engine test machine";
  s.target = "tpc";
  s.origin = "tests/sim/test_machine.h";
  s.clock_hz = fig(1e9);
  s.core_count = fig(4);
  s.core_name = "core";
  s.pipes = {{"ld", "loads", fig(4)},
             {"vec", "vector", fig(2)},
             {"st", "stores", fig(4)},
             {"dma", "dma", fig(10)}};
  // 4 KiB local memory, 4 interleaved banks of 64 B granules.
  s.memories.push_back(memory_spec("local", "core", 4096, 0, 64, 4, 64, 64, 2));
  // 1 MiB device memory at 0x10000000.
  s.memories.push_back(memory_spec("dram", "device", 1 << 20, 0x10000000, 256, 1, 0, 16, 100));
  s.global_memory = "dram";
  s.host_link.bandwidth_bytes_per_second = fig(1e9);  // 1 byte per cycle at 1 GHz
  s.host_link.latency_seconds = fig(1e-6);            // 1000 cycles
  s.params["sync.latency_cycles"] = fig(1);
  return s;
}

}  // namespace tessera::testing

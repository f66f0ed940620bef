// A memory channel shared by every agent of a device (TPC cores, a GEMM engine, DMA engines):
// a fluid model of its bandwidth over time. Work is placed in the order it is issued; each
// piece of work is a group of agents that start together, each with bytes to move and the
// cycles it would take with the channel to itself (its own issue rate caps how fast it can
// draw). Agents of a group share what earlier work left free, max-min fairly; an agent that
// cannot draw at its own rate finishes later. Deterministic, and cheap: the cost is in the
// number of pieces of work, never in bytes.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace tessera::sim {

struct ChannelDemand {
  std::uint64_t bytes = 0;
  std::uint64_t natural_cycles = 0;  // alone on the channel; 0: as fast as the channel allows
};

class BandwidthChannel {
 public:
  // `name` for messages ("hbm"); bandwidth in bytes per cycle, positive and finite.
  BandwidthChannel(std::string name, double bytes_per_cycle);

  const std::string& name() const { return name_; }
  double bytes_per_cycle() const { return bandwidth_; }

  // Places a group of agents starting at `start`; returns each agent's end cycle, never before
  // start + natural_cycles. Later work sees the bandwidth this work took.
  std::vector<std::uint64_t> reserve(std::uint64_t start, std::span<const ChannelDemand> group);
  std::uint64_t reserve(std::uint64_t start, ChannelDemand demand);

  // Bandwidth in use at `cycle` by the work placed so far.
  double used_at(std::uint64_t cycle) const;
  // Bytes placed so far.
  double bytes_placed() const { return bytes_placed_; }
  void clear();

 private:
  void add_usage(double from, double to, double rate);

  std::string name_;
  double bandwidth_;
  double bytes_placed_ = 0;
  // Used bandwidth from each breakpoint to the next; the last entry runs to infinity.
  std::map<double, double> used_;
};

}  // namespace tessera::sim

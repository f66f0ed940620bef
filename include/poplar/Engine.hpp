// Runs a graph's programs on a simulated device (spec 001 §2.2.2): results computed on the host,
// each Execute timed as a BSP superstep (compute, exchange, sync) on Tessera's engine, tile
// memory laid out and checked per spec 001 §7.2, and the profile summary of §8.2.3.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <string>

#include <poplar/Device.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/OptionFlags.hpp>
#include <poplar/ProfileValue.hpp>
#include <poplar/Program.hpp>
#include <pva/pva.hpp>

namespace tessera::profile {
struct Profile;
}

namespace poplar {

// Scratch bytes of a worker (spec 001 §7.3); fixed by the architecture.
inline constexpr unsigned WORKER_SCRATCH_SIZE = 48;

class StreamCallback {
 public:
  enum class Result { Success, NotAvailable };
  virtual ~StreamCallback() = default;
  virtual Result prefetch(void* p) = 0;
  virtual void fetch(void* p) = 0;
  virtual void complete() = 0;
  virtual void invalidatePrefetched() {}
};

class LegacyStreamCallback : public StreamCallback {
 public:
  Result prefetch(void*) override { return Result::NotAvailable; }
  void complete() override {}
};

using StreamCallbackHandle = std::unique_ptr<StreamCallback>;

namespace detail {
struct EngineState;
}

class Engine {
 public:
  Engine(const Graph& graph, const program::Program& prog, const OptionFlags& options = {});
  Engine(const Graph& graph, ArrayRef<program::Program> progs, const OptionFlags& options = {});
  // Runs what compileGraph compiled. `options` may add run-time options (debug.*, profiler.*,
  // autoReport.*) to those it was compiled with.
  explicit Engine(Executable&& exe, const OptionFlags& options = {});
  ~Engine();
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;

  void load(const Device& device);
  void run(unsigned prog = 0, const std::string& debugName = "");

  void writeTensor(StringRef handle, const void* buf, const void* bufEnd);
  void readTensor(StringRef handle, void* buf, void* bufEnd);
  void writeTensor(StringRef handle, const void* buf);
  void readTensor(StringRef handle, void* buf);

  // A replicated graph's host handles move every replica's data, back to back (replica 0 first).
  // A stream connected without a replica index serves every replica: a buffer holds one
  // transfer's data per replica back to back (one in all for a BROADCAST stream), a callback
  // is called once per replica in replica order. A callback connected with a replica index
  // serves that replica only.
  void connectStream(StringRef handle, void* p);
  void connectStream(StringRef handle, void* begin, void* end);  // circular buffer
  // The same, naming the stream by the DataStream that Graph::add*FIFO returned.
  void connectStream(const DataStream& stream, void* p) { connectStream(stream.handle(), p); }
  void connectStream(const DataStream& stream, void* begin, void* end) {
    connectStream(stream.handle(), begin, end);
  }
  void connectStreamToCallback(StringRef handle, StreamCallbackHandle f);
  void connectStreamToCallback(StringRef handle, std::function<void(void*)> f);
  void connectStreamToCallback(StringRef handle, unsigned replicaId, StreamCallbackHandle f);
  void connectStreamToCallback(StringRef handle, unsigned replicaId, std::function<void(void*)> f);

  // Host access to a remote buffer's row `repeatIndex` of replica `replicationIndex`.
  void copyToRemoteBuffer(void* w, StringRef handle, std::uint64_t repeatIndex,
                          unsigned replicationIndex = 0);
  void copyFromRemoteBuffer(StringRef handle, void* w, std::uint64_t repeatIndex,
                            unsigned replicationIndex = 0);

  double getTileClockFrequency() const;
  unsigned getNumTiles() const;

  // The profile summary of spec 001 §8.2.3 (options: "colours", "showExecutionSteps",
  // "showVarStorage", "showPerIpuMemoryUsage").
  void printProfileSummary(std::ostream& out, const OptionFlags& opts = {}) const;
  // The graph profile (target, graph, memory per tile) and the execution profile of the runs
  // so far. With the option autoReport.all (or autoReport.outputGraphProfile /
  // autoReport.outputExecutionProfile) "true", the Engine also saves them as graph.json (at
  // creation) and execution.json (after each run) in autoReport.directory (default ".").
  ProfileValue getGraphProfile() const;
  // Both profiles as libpva's Report (the compilation only, without reportExecution).
  pva::Report getReport(bool reportExecution = true) const;
  ProfileValue getExecutionProfile() const;
  void resetExecutionProfile();

  // Tessera's view of the runs so far: cycles and the engine-wide Profile.
  std::uint64_t tesseraTotalCycles() const;
  const tessera::profile::Profile& tesseraProfile() const;
  // Bytes the graph occupies on a tile (all categories).
  std::uint64_t tesseraTileBytes(unsigned tile) const;

 private:
  std::unique_ptr<detail::EngineState> state_;
};

// The profile summary of spec 001 §8.2.1 from saved or live profiles; the options are those of
// Engine::printProfileSummary.
void printProfileSummary(std::ostream& out, const ProfileValue& graphProfile,
                         const ProfileValue& executionProfile, const OptionFlags& opts = {});
void printGraphSummary(std::ostream& out, const ProfileValue& graphProfile,
                       const OptionFlags& opts = {});
void printExecutionSummary(std::ostream& out, const ProfileValue& executionProfile,
                           const OptionFlags& opts = {});

}  // namespace poplar

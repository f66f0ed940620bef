// The Engine's compiled form of a graph: variable storage, tile memory layout, compute sets
// bound to storage, copies, and the run's BSP schedule and statistics.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <vector>

#include <poplar/Engine.hpp>

#include "profile_tree.h"
#include "state.h"
#include "tessera/runtime/device.h"
#include "tessera/sim/bsp.h"
#include "tessera/sim/memory.h"

namespace poplar::detail {

namespace sim = ::tessera::sim;

// Bytes moved between a variable and a contiguous buffer (staging, host or another variable).
// 24 bytes: a large network's exchange plan holds tens of millions of these.
struct Chunk {
  std::uint64_t var_offset = 0;
  std::uint32_t var = 0;
  std::uint32_t buf_offset = 0;  // in the tensor's bytes (a tensor is under 4 GiB, chunks_of)
  std::uint32_t bytes = 0;
  unsigned tile = 0;  // the tile that holds the variable's bytes
  Chunk() = default;
  Chunk(std::uint32_t v, std::uint64_t var_off, std::uint64_t buf_off, std::uint64_t n, unsigned t)
      : var_offset(var_off), var(v), buf_offset(static_cast<std::uint32_t>(buf_off)),
        bytes(static_cast<std::uint32_t>(n)), tile(t) {}
};

// A field the exchange fills or drains: its buffer lies in its tile's exchange scratch, which
// every compute set reuses (a superstep's buffers are dead after it, spec 001 §7.3).
struct StagedField {
  std::uint64_t offset = 0;         // in the tile's scratch
  abi::EdgeSpan* span = nullptr;    // the field's span, pointed at the buffer once it is placed
  std::byte* data = nullptr;        // the buffer
  std::vector<Chunk> chunks;
  bool in = false, out = false;
};

struct CompiledVertex {
  unsigned id = 0;
  unsigned tile = 0;
  const VertexType* type = nullptr;
  void* object = nullptr;
  std::uint64_t cycles = 0;                             // per worker for a MultiVertex
  std::vector<std::vector<std::byte>> buffers;          // vector state
  std::vector<std::vector<abi::EdgeSpan>> span_arrays;  // rows of 2-D fields
  std::vector<StagedField> staged;
  std::vector<std::pair<const Tensor*, bool>> reads;  // (tensor, field is in) for debug checks
  std::vector<std::pair<unsigned, const Tensor*>> field_tensors;  // field index -> tensor
};

// Cycles and instances per vertex type of one program step, and its thread balance.
struct TypeStats {
  std::map<std::string, std::uint64_t> cycles_by_type;
  std::map<std::string, std::uint64_t> instances_by_type;
  double thread_balance = 1.0;
};

struct CompiledComputeSet : TypeStats {
  std::string name;
  std::vector<unsigned> tiles;                    // tiles with vertices, ascending
  std::vector<std::vector<std::size_t>> by_tile;  // indices into vertices
  std::vector<CompiledVertex> vertices;
  std::vector<std::uint64_t> compute_per_tile;   // all tiles
  std::vector<std::uint64_t> exchange_per_tile;  // all tiles
};

// The on-tile part of a Copy runs as Poplar's built-in copy vertices (builtin_vertices.h), one
// per tile; the rest is exchange.
struct CompiledCopy : TypeStats {
  std::map<unsigned, std::pair<std::string, std::uint64_t>> builtin;  // tile -> (type, runs)
  std::vector<Chunk> src, dst;  // src[i] pairs with dst[i] (same bytes, same buffer offset)
  std::uint64_t bytes = 0;
  bool overlap = false;
  std::vector<std::uint64_t> compute_per_tile, exchange_per_tile;
};

struct StepStats {
  std::string kind;  // OnTileExecute, DoExchange, StreamCopy, Sync, ...
  std::string name;
  std::uint64_t executions = 0;
  std::uint64_t first_start = 0;
  std::uint64_t cycles = 0;  // of the last execution
  std::uint64_t total_cycles = 0;
  unsigned active_tiles = 0;
  double tile_balance = 0, active_tile_balance = 0, thread_balance = 0;
  std::uint64_t data_bytes = 0;
  double data_balance = 0;
  std::uint64_t link_bytes = 0, link_cycles = 0;  // between IPUs, of the last execution
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> by_type;  // instances, cycles
};

// One execution of a timed program on one instrumented tile (the lightweight profiler: the
// Engine options profiler.blocks.* and profiler.programs.filter; see docs/targets/ipu.md).
struct BlockRecord {
  enum class Kind { common, overflow, flush, stream_copy };
  Kind kind = Kind::common;
  std::string program;  // the program's name
  std::string type;     // pva::Program::Type's name: Block, OnTileExecute, StreamCopyBegin, ...
  std::uint64_t from = 0, to = 0;
};

// The block records of one instrumented tile: what its buffer holds until the next flush.
struct BlockBuffer {
  std::uint64_t used = 0;                  // bytes of the buffer in use
  std::optional<std::size_t> overflow;     // the open overflow record, while records are dropped
};

// The lightweight profiler's options, read from the Engine's options.
struct BlockOptions {
  std::optional<std::regex> blocks_filter;    // profiler.blocks.filter: Block programs by name
  std::optional<std::regex> programs_filter;  // profiler.programs.filter: any program by name
  unsigned tile = 0;                          // profiler.blocks.tile, within each IPU
  std::uint64_t buffer_bytes = 1000;          // profiler.blocks.bufferSize
  bool implicit_flush = true;                 // profiler.blocks.implicitFlush
  bool external_exchange = false;             // debug.instrumentExternalExchange
  bool enabled() const { return blocks_filter || programs_filter; }
};

struct TileMemory {
  std::map<std::string, std::uint64_t> by_category;
  std::uint64_t total = 0;
  std::uint64_t region0 = 0, region1 = 0;
  std::uint64_t highest = 0;  // highest allocated address - base (including gaps)
};

struct StreamConnection {
  std::byte* begin = nullptr;
  std::byte* end = nullptr;
  std::size_t position = 0;
  std::unique_ptr<StreamCallback> callback;
};

struct EngineState {
  std::shared_ptr<GraphState> graph;
  std::shared_ptr<const TargetState> target;
  OptionFlags options;
  std::vector<program::Program> programs;
  std::unique_ptr<tessera::runtime::Device> device;
  std::unique_ptr<sim::BspSchedule> bsp;
  bool debug_undefined = false;
  bool loaded = false;
  unsigned tiles = 0;

  std::vector<std::vector<std::byte>> data;        // per variable
  std::vector<std::vector<std::uint8_t>> written;  // per variable element (debug only)
  std::map<unsigned, TileMemory> memory;           // tiles that hold anything
  std::vector<std::string> out_of_memory;          // with debug.allowOutOfMemory

  std::vector<std::unique_ptr<CompiledComputeSet>> compute_sets;
  std::map<unsigned, std::vector<std::byte>> scratch;  // per tile: exchange buffers
  std::map<const program::Node*, CompiledCopy> copies;
  std::map<const program::Node*, std::size_t> step_index;
  std::vector<StepStats> steps;
  // By handle; a connection for one replica of a replicated stream is keyed handle + '\x01' + r.
  std::map<std::string, StreamConnection> streams;
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> type_totals;  // instances, cycles
  std::uint64_t host_cycles = 0, copy_cycles = 0, exchange_cycles = 0, compute_cycles = 0,
                sync_cycles = 0, control_cycles = 0;
  std::uint64_t runs = 0;
  std::uint64_t vertex_state_bytes = 0;
  std::vector<std::unique_ptr<std::string>> field_names;  // stable strings for EdgeSpan::field
  std::vector<std::unique_ptr<std::byte[]>> arenas;       // vertex objects
  std::deque<VertexInstance> replica_vertices;            // one per replica of replicated vertices
  // Remote buffers in the device's global memory (the preset's Streaming Memory), by id:
  // replica-major, then row.
  std::vector<tessera::runtime::Buffer> remote;
  std::uint64_t remote_cycles = 0;
  std::uint64_t link_cycles = 0, link_bytes = 0;  // IPU-Link traffic of cross-replica programs
  BlockOptions block_options;
  std::map<const program::Node*, bool> timed;            // programs the profiler times
  std::map<unsigned, std::vector<BlockRecord>> blocks;   // by tile, as the host received them
  std::map<unsigned, BlockBuffer> block_buffers;         // by instrumented tile

  ~EngineState() {
    for (auto& cs : compute_sets)
      for (auto& v : cs->vertices) v.type->desc.destroy(v.object);
  }
};

void print_profile_summary(const EngineState& e, std::ostream& out, const OptionFlags& opts);
// Reads the lightweight profiler's options into e.block_options; invalid_option when one is
// malformed (a regular expression that does not parse, a tile past an IPU's tiles, ...).
void read_block_options(EngineState& e);
// Compiles `graph` and `progs` into `e` (what Engine creation and compileGraph do).
void build_engine(EngineState& e, std::shared_ptr<GraphState> graph,
                  ArrayRef<program::Program> progs, const OptionFlags& options);
// The graph profile (target, graph, tile memory) and execution profile (cycles, steps) of an
// Engine, as saved by autoReport and read by poplar_profile_summary.
nlohmann::json graph_profile(const EngineState& e);
nlohmann::json execution_profile(const EngineState& e);

}  // namespace poplar::detail

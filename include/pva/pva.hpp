// The PopVision analysis library's report API (libpva, <pva/pva.hpp>) over the profiles a
// Tessera Engine writes: with autoReport.all (or autoReport.outputGraphProfile) the Engine saves
// profile.pop in autoReport.directory, a JSON document of its graph and execution profiles
// (spec 001 §8). openReport reads it; Engine::getReport gives the same report of a live Engine.
// Poplar's own profile.pop files are another format and are refused by name.
#pragma once

#include <cstdint>
#include <iomanip>   // Graphcore's lightweight-profiling examples print blocks with std::cout and
#include <iostream>  // std::setw after including only Poplar's and libpva's headers
#include <memory>
#include <string>
#include <vector>

namespace pva {

namespace detail {
struct ReportData;
}

class Version {
 public:
  Version(unsigned major, unsigned minor, unsigned point, std::string text)
      : major_(major), minor_(minor), point_(point), text_(std::move(text)) {}
  unsigned major() const { return major_; }
  unsigned minor() const { return minor_; }
  unsigned point() const { return point_; }
  const std::string& string() const { return text_; }

 private:
  unsigned major_, minor_, point_;
  std::string text_;
};

class Target {
 public:
  unsigned numIPUs() const;
  unsigned numTiles() const;
  unsigned tilesPerIpu() const;
  unsigned numReplicas() const;
  std::uint64_t bytesPerTile() const;
  std::uint64_t bytesPerIpu() const { return bytesPerTile() * tilesPerIpu(); }
  double clockFrequency() const;  // Hz
  std::string architecture() const;  // "ipu1", "ipu2" or the preset's name

 private:
  friend class Compilation;
  explicit Target(std::shared_ptr<const detail::ReportData> d) : d_(std::move(d)) {}
  std::shared_ptr<const detail::ReportData> d_;
};

class Graph {
 public:
  std::uint64_t numVertices() const;
  std::uint64_t numEdges() const;
  std::uint64_t numVariables() const;
  std::uint64_t numComputeSets() const;

 private:
  friend class Compilation;
  explicit Graph(std::shared_ptr<const detail::ReportData> d) : d_(std::move(d)) {}
  std::shared_ptr<const detail::ReportData> d_;
};

class TileMemory {
 public:
  std::uint64_t total() const { return total_; }           // bytes in use
  std::uint64_t includingGaps() const { return gaps_; }   // up to the highest byte used

 private:
  friend class Compilation;
  TileMemory(std::uint64_t total, std::uint64_t gaps) : total_(total), gaps_(gaps) {}
  std::uint64_t total_, gaps_;
};

class Tile {
 public:
  unsigned number() const { return number_; }
  const TileMemory& memory() const { return memory_; }

 private:
  friend class Compilation;
  Tile(unsigned number, TileMemory m) : number_(number), memory_(m) {}
  unsigned number_;
  TileMemory memory_;
};

class Compilation {
 public:
  Target target() const { return Target(d_); }
  Graph graph() const { return Graph(d_); }
  // The tiles that hold anything, in tile order.
  std::vector<Tile> tiles() const;

 private:
  friend class Report;
  explicit Compilation(std::shared_ptr<const detail::ReportData> d) : d_(std::move(d)) {}
  std::shared_ptr<const detail::ReportData> d_;
};

class Run {
 public:
  unsigned number() const { return number_; }

 private:
  friend class Execution;
  explicit Run(unsigned n) : number_(n) {}
  unsigned number_;
};

// A program as the lightweight profiler names it: the Block (or the program an implicit block
// of profiler.programs.filter wraps), a phase of a stream copy, or the overflow marker.
class Program {
 public:
  enum class Type {
    Unknown,
    Block,
    Sequence,
    Repeat,
    RepeatWhile,
    If,
    Switch,
    Call,
    Sync,
    OnTileExecute,
    DoExchange,
    GlobalExchange,
    StreamCopy,
    StreamCopyBegin,
    StreamCopyMid,
    StreamCopyEnd
  };
  Program(std::string name, Type type) : name_(std::move(name)), type_(type) {}
  const std::string& name() const { return name_; }
  Type type() const { return type_; }

 private:
  std::string name_;
  Type type_;
};

// One execution of a timed program on one tile (the Engine options profiler.blocks.filter,
// profiler.programs.filter; Graphcore's lightweight profiling): its first and last cycle on the
// Engine's clock, which counts from the Engine's creation.
class Block {
 public:
  std::shared_ptr<Program> program() const { return program_; }
  std::uint64_t cyclesFrom() const { return from_; }
  std::uint64_t cyclesTo() const { return to_; }
  unsigned tile() const { return tile_; }
  bool isCommon() const { return kind_ == Kind::common; }      // a Block the user asked for
  bool isOverflow() const { return kind_ == Kind::overflow; }  // records lost: buffer full
  bool isBlockFlush() const { return kind_ == Kind::flush; }   // the buffer's copy to the host
  bool isStreamCopy() const { return kind_ == Kind::flush || kind_ == Kind::streamCopy; }

 private:
  friend class Execution;
  enum class Kind { common, overflow, flush, streamCopy };
  Block(std::shared_ptr<Program> p, std::uint64_t from, std::uint64_t to, unsigned tile, Kind k)
      : program_(std::move(p)), from_(from), to_(to), tile_(tile), kind_(k) {}
  std::shared_ptr<Program> program_;
  std::uint64_t from_, to_;
  unsigned tile_;
  Kind kind_;
};

class Execution {
 public:
  std::vector<Run> runs() const;
  // The block records of `tile` (an instrumented tile, or one a stream copy ran on) in the order
  // they started; empty for other tiles and for a report without execution.
  std::vector<Block> blocks(unsigned tile) const;

 private:
  friend class Report;
  explicit Execution(std::shared_ptr<const detail::ReportData> d) : d_(std::move(d)) {}
  std::shared_ptr<const detail::ReportData> d_;
};

class Report {
 public:
  Compilation compilation() const { return Compilation(d_); }
  Execution execution() const { return Execution(d_); }
  Version version() const;        // of the report format
  Version poplarVersion() const;  // of what wrote it: Tessera's Poplar
  explicit Report(std::shared_ptr<const detail::ReportData> d) : d_(std::move(d)) {}

 private:
  std::shared_ptr<const detail::ReportData> d_;
};

// Reads a profile.pop a Tessera Engine wrote (or the autoReport directory holding it).
// debugFilename (Poplar's debug.cbor) is accepted and not read: Tessera has none.
Report openReport(const std::string& filename, const std::string& debugFilename = "");

}  // namespace pva

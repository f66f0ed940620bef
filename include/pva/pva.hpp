// The PopVision analysis library's report API (libpva, <pva/pva.hpp>) over the profiles a
// Tessera Engine writes: with autoReport.all (or autoReport.outputGraphProfile) the Engine saves
// profile.pop in autoReport.directory, a JSON document of its graph and execution profiles
// (spec 001 §8). openReport reads it; Engine::getReport gives the same report of a live Engine.
// Poplar's own profile.pop files are another format and are refused by name.
#pragma once

#include <cstdint>
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

class Execution {
 public:
  std::vector<Run> runs() const;

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

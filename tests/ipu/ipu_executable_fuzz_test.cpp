// Executable::deserialize on damaged files (fuzz/README.md's rule for loaders): every mutant of a
// few serialized executables (each integer set to boundary values, each key dropped, array
// elements swapped, the byte stream cut short) deserializes or raises parse_error / another
// tessera::UserError (or the DeviceFault of a graph over a tile's memory: deserialize compiles);
// one that deserializes builds an Engine that runs or stops with a UserError
// or DeviceFault. Anything else escaping (std::out_of_range, InternalError) is a finding.
#include <gtest/gtest.h>

#include <cstdlib>
#include <functional>
#include <iostream>
#include <optional>
#include <set>
#include <sstream>
#include <typeinfo>

#include <nlohmann/json.hpp>

#include <gcl/Collectives.hpp>
#include <poplar/CycleCount.hpp>
#include <poplar/Engine.hpp>
#include <poplar/Executable.hpp>
#include <poplar/Graph.hpp>
#include <poplar/IPUModel.hpp>
#include <poplin/MatMul.hpp>
#include <poplin/codelets.hpp>
#include <popops/ElementWise.hpp>
#include <popops/Loop.hpp>
#include <popops/Reduce.hpp>
#include <popops/codelets.hpp>

#include "tessera/core/error.h"

using namespace poplar;
using namespace poplar::program;
using json = nlohmann::json;

namespace {

struct Sample {
  std::string name;
  std::string bytes;
  std::vector<std::string> streams;  // host-to-device and device-to-host handles
};

Device model(unsigned ipus, unsigned tiles) {
  IPUModel m("ipu2");
  m.numIPUs = ipus;
  m.tilesPerIPU = tiles;
  return m.createDevice();
}

std::string serialize(const Graph& g, const std::vector<Program>& programs) {
  std::stringstream out;
  compileGraph(g, programs).serialize(out);
  return out.str();
}

Tensor input(Graph& g, std::vector<std::size_t> shape, float start) {
  Tensor t = g.addVariable(FLOAT, shape, VariableMappingMethod::LINEAR);
  std::vector<float> v(t.numElements());
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = start + float(i);
  g.setInitialValue(t, ArrayRef<float>(v));
  return t;
}

// PopLibs ops on one IPU of 4 tiles: element-wise, a reduction, a matrix product in a counted
// loop, a host read.
Sample poplibs_ops() {
  Device d = model(1, 4);
  Graph g(d.getTarget());
  popops::addCodelets(g);
  poplin::addCodelets(g);
  Tensor a = input(g, {4, 4}, 1), b = input(g, {4, 4}, -3);
  Sequence prog;
  Tensor sum = popops::add(g, a, b, prog);
  Tensor rows = popops::reduce(g, sum, {1}, popops::Operation::ADD, prog);
  prog.add(popops::countedLoop(g, 2, [&](const Tensor&) {
    Sequence body;
    Tensor c = poplin::matMul(g, a, b, body, FLOAT);
    body.add(Copy(c, a));
    return body;
  }));
  g.createHostRead("rows", rows);
  return {"poplibs", serialize(g, {prog}), {}};
}

// Two replicas over two IPUs with no codelets of the test's own: streams both ways, a remote
// buffer read by row offsets, a function called twice, Switch and Repeat, a cross-replica
// all-reduce, a cycle count, host write and read handles.
Sample control_flow() {
  Device d = model(2, 2);
  Graph g(d.getTarget(), replication_factor(2));
  popops::addCodelets(g);
  Tensor x = g.addVariable(FLOAT, {4}, "x");
  g.setTileMapping(x.slice(0, 2), 0);
  g.setTileMapping(x.slice(2, 4), 1);
  Tensor sel = g.addVariable(INT, {1}, "sel");
  g.setTileMapping(sel, 1);
  g.setInitialValue(sel, 1);
  Tensor row = g.addConstant<unsigned>(UNSIGNED_INT, {1}, {1}, "row");
  g.setTileMapping(row, 0);
  auto in = g.addHostToDeviceFIFO("in", FLOAT, 4);
  auto out = g.addDeviceToHostFIFO("out", FLOAT, 4);
  RemoteBuffer rb = g.addRemoteBuffer("rb", FLOAT, 4, 3);
  Sequence twice;
  popops::addInPlace(g, x, x, twice);
  Function f = g.addFunction(twice);
  Sequence prog({Copy(in, x), Call(f), Copy(x, rb, row)});
  prog.add(Switch(sel, {{0, Sequence({WriteUndef(x)})}, {1, Repeat(2, Call(f))}}));
  gcl::allReduceInPlaceCrossReplica(g, x, gcl::CollectiveOperator::ADD, prog);
  cycleCount(g, prog, 0, SyncType::INTERNAL);
  prog.add(Copy(rb, x, row));
  prog.add(Copy(x, out));
  g.createHostWrite("sel", sel);
  g.createHostRead("x", x);
  return {
      "control", serialize(g, {prog, Sequence({Sync(SyncType::GLOBAL), Call(f)})}), {"in", "out"}};
}

// ---- mutations ----

struct Mutant {
  std::string what;
  std::string bytes;
};

std::string cbor(const json& j) {
  auto b = json::to_cbor(j);
  return std::string(b.begin(), b.end());
}

// Every place in the tree: integers, object keys and arrays (by JSON pointer).
void walk(const json& j, const json::json_pointer& at, std::vector<json::json_pointer>& integers,
          std::vector<std::pair<json::json_pointer, std::string>>& keys,
          std::vector<json::json_pointer>& arrays) {
  if (j.is_number_integer()) {
    integers.push_back(at);
  } else if (j.is_object()) {
    for (const auto& [k, v] : j.items()) {
      keys.emplace_back(at, k);
      walk(v, at / k, integers, keys, arrays);
    }
  } else if (j.is_array()) {
    if (j.size() >= 2) arrays.push_back(at);
    for (std::size_t i = 0; i < j.size(); ++i) walk(j[i], at / i, integers, keys, arrays);
  }
}

std::vector<Mutant> mutants(const std::string& bytes) {
  const json root = json::from_cbor(bytes);
  std::vector<json::json_pointer> integers, arrays;
  std::vector<std::pair<json::json_pointer, std::string>> keys;
  walk(root, json::json_pointer(), integers, keys, arrays);
  // Sizes an index may be compared with: the lengths of the top-level arrays, and one more.
  std::set<std::int64_t> sizes;
  for (const auto& [k, v] : root.items())
    if (v.is_array()) sizes.insert({std::int64_t(v.size()), std::int64_t(v.size()) + 1});
  std::vector<Mutant> out;
  for (const auto& p : integers) {
    const json& old = root.at(p);
    std::vector<json> values = {-1,
                                0,
                                std::int64_t{1} << 31,
                                std::uint64_t{1} << 32,
                                std::uint64_t{1} << 40,
                                std::uint64_t{1} << 63,
                                ~std::uint64_t{0}};
    if (old.is_number_unsigned()) {
      values.push_back(old.get<std::uint64_t>() + 1);
      if (old.get<std::uint64_t>() > 0) values.push_back(old.get<std::uint64_t>() - 1);
    }
    for (std::int64_t s : sizes) values.push_back(s);
    for (const auto& v : values) {
      if (v == old) continue;
      json m = root;
      m[p] = v;
      out.push_back({fmt::format("{} = {}", p.to_string(), v.dump()), cbor(m)});
    }
  }
  for (const auto& [p, k] : keys) {
    json m = root;
    m[p].erase(k);
    out.push_back({fmt::format("drop {}/{}", p.to_string(), k), cbor(m)});
  }
  for (const auto& p : arrays) {
    const std::size_t n = root.at(p).size();
    for (std::size_t other = 1; other < n; other += std::max<std::size_t>(1, n - 2)) {
      json m = root;
      std::swap(m[p][0], m[p][other]);
      out.push_back({fmt::format("swap {}[0] and [{}]", p.to_string(), other), cbor(m)});
    }
  }
  // Cut short: every byte of the header, then 200 points through the rest.
  for (std::size_t n = 0; n < std::min<std::size_t>(bytes.size(), 64); ++n)
    out.push_back({fmt::format("first {} B", n), bytes.substr(0, n)});
  for (std::size_t k = 1; k < 200; ++k) {
    std::size_t n = 64 + (bytes.size() - 64) * k / 200;
    out.push_back({fmt::format("first {} B", n), bytes.substr(0, n)});
  }
  // A deterministic sample keeps the test to seconds: every k-th mutant, the same each run.
  constexpr std::size_t kMutants = 4000;
  if (out.size() > kMutants) {
    std::vector<Mutant> sample;
    for (std::size_t i = 0; i < kMutants; ++i)
      sample.push_back(std::move(out[i * out.size() / kMutants]));
    out = std::move(sample);
  }
  return out;
}

// Runs that would only take long (a Repeat of 2^31, a while loop whose predicate a mutation
// fixed) are not what this test looks for: such mutants are loaded and compiled, not run.
bool quick_to_run(const std::string& bytes) {
  json j = json::from_cbor(bytes, true, false);
  if (j.is_discarded() || !j.contains("nodes") || !j["nodes"].is_array()) return false;
  for (const auto& n : j["nodes"]) {
    if (!n.is_object()) return false;
    const json kind = n.value("kind", json()), count = n.value("count", json());
    if (!kind.is_number_integer() || kind.get<std::int64_t>() == 3) return false;
    if (kind.get<std::int64_t>() == 2 &&
        (!count.is_number_unsigned() || count.get<std::uint64_t>() > 16))
      return false;
  }
  return true;
}

std::string describe(const std::exception& e) {
  return fmt::format("{}: {}", typeid(e).name(), e.what());
}

// Empty when the mutant ends as a loader may end; else what escaped.
std::string try_mutant(const Mutant& m, const Sample& s, const Device& device, unsigned& loaded) {
  std::optional<Executable> exe;
  try {
    std::istringstream in(m.bytes);
    exe.emplace(Executable::deserialize(in));
  } catch (const tessera::UserError&) {
    return "";
  } catch (const tessera::DeviceFault&) {
    return "";  // deserialize compiles: a graph over a tile's memory is a
                // graph_memory_allocation_error
  } catch (const std::exception& e) {
    return "deserialize: " + describe(e);
  }
  ++loaded;
  if (!quick_to_run(m.bytes)) return "";
  try {
    Engine e(std::move(*exe));
    for (const auto& h : s.streams) e.connectStreamToCallback(h, [](void*) {});
    e.load(device);
    for (unsigned p = 0; p < 2; ++p) e.run(p);
    std::ostringstream summary;
    e.printProfileSummary(summary, {{"showExecutionSteps", "true"}});
  } catch (const tessera::UserError&) {
  } catch (const tessera::DeviceFault&) {
  } catch (const std::exception& e) {
    return "run: " + describe(e);
  }
  return "";
}

}  // namespace

TEST(IpuExecutableFuzz, EveryMutantLoadsAndRunsOrIsRefused) {
  // A mutant may ask for any size: the host memory limit makes a large one a UserError.
  setenv("TESSERA_HOST_MEMORY_LIMIT", "1G", 1);
  const Device device = model(8, 1472);
  // A mutant may turn a node into a PrintTensor: its output is not what is tested.
  std::ostringstream printed;
  std::streambuf* const cout = std::cout.rdbuf(printed.rdbuf());
  for (const Sample& s : {poplibs_ops(), control_flow()}) {
    {
      std::istringstream in(s.bytes);
      ASSERT_NO_THROW(Executable::deserialize(in)) << s.name << ": the unmutated executable";
    }
    auto all = mutants(s.bytes);
    unsigned loaded = 0, findings = 0;
    for (const auto& m : all) {
      std::string f = try_mutant(m, s, device, loaded);
      if (f.empty()) continue;
      if (++findings <= 20) ADD_FAILURE() << s.name << ": " << m.what << ": " << f;
    }
    std::printf("%s: %zu mutants, %u deserialized, %u findings\n", s.name.c_str(), all.size(),
                loaded, findings);
    EXPECT_EQ(findings, 0u) << s.name;
    EXPECT_GT(loaded, 0u) << s.name << ": no mutant deserialized, so none was run";
  }
  std::cout.rdbuf(cout);
}

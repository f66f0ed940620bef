// The MachineSpec loader: every preset loads and carries the figures the targets code against;
// every kind of bad input is a UserError naming the JSON path, all problems at once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include <unistd.h>

#include <nlohmann/json.hpp>

#include "tessera/arch/machine_spec.h"
#include "tessera/core/error.h"

namespace tessera::arch {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

json fig(double value, const char* source = "estimate") {
  return {{"value", value}, {"source", source}};
}

// The smallest valid machine; tests break one thing at a time.
json minimal() {
  return json{
      {"schema", "tessera.machine/1"},
      {"name", "mini"},
      {"description", "a two-core test machine"},
      {"target", "tpc"},
      {"clock_hz", fig(1e9)},
      {"core_count", fig(2)},
      {"core_name", "core"},
      {"pipes", json::array({{{"name", "alu"}, {"latency_cycles", fig(4)}}})},
      {"memories", json::array({{{"name", "local"},
                                 {"scope", "core"},
                                 {"capacity_bytes", fig(4096)},
                                 {"bandwidth_bytes_per_cycle", fig(64)}},
                                {{"name", "dram"},
                                 {"scope", "device"},
                                 {"capacity_bytes", fig(1 << 20)},
                                 {"bandwidth_bytes_per_cycle", fig(32)}}})},
      {"global_memory", "dram"},
      {"host_link", {{"bandwidth_bytes_per_second", fig(1e9)}, {"latency_seconds", fig(1e-6)}}},
      {"params", {{"tpc.vector_bytes", fig(256, "spec 000 §2.1")}}},
  };
}

MachineSpec parse(const json& j) {
  return parse_machine_spec(j.dump(2), "test.json");
}

// The message of the UserError that parsing `text` raises ("" when it parses).
std::string problem_text(const std::string& text) {
  try {
    parse_machine_spec(text, "test.json");
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}
std::string problem_text(const json& j) {
  return problem_text(j.dump(2));
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE(std::string(haystack).find(needle), std::string::npos) << (haystack)

// ---- presets ----

TEST(Presets, TheSixPresetsAreFound) {
  const std::vector<std::string> expected = {"ascend910", "bm1880",  "chimera-q16",
                                             "gaudi",     "ipu-mk1", "ipu-mk2"};
  const std::vector<std::string> names = preset_names();
  for (const auto& n : expected)
    EXPECT_NE(std::find(names.begin(), names.end(), n), names.end()) << n;
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
}

TEST(Presets, EveryPresetLoadsAndEveryFigureHasASource) {
  for (const std::string& name : preset_names()) {
    SCOPED_TRACE(name);
    const MachineSpec s = load_machine(name);
    EXPECT_EQ(s.name, name);
    EXPECT_FALSE(s.description.empty());
    EXPECT_NE(s.origin.find(name + ".json"), std::string::npos);
    EXPECT_EQ(s.global().scope, "device");
    std::vector<std::pair<std::string, const Figure*>> figures = {
        {"clock_hz", &s.clock_hz},
        {"core_count", &s.core_count},
        {"host_link.bandwidth_bytes_per_second", &s.host_link.bandwidth_bytes_per_second},
        {"host_link.latency_seconds", &s.host_link.latency_seconds}};
    for (const auto& p : s.pipes) figures.push_back({p.name, &p.latency_cycles});
    for (const auto& m : s.memories) {
      figures.push_back({m.name + ".capacity_bytes", &m.capacity_bytes});
      figures.push_back({m.name + ".bandwidth_bytes_per_cycle", &m.bandwidth_bytes_per_cycle});
      figures.push_back({m.name + ".alignment_bytes", &m.alignment_bytes});
    }
    for (const auto& [k, f] : s.params) figures.push_back({k, &f});
    for (const auto& [what, f] : figures) {
      EXPECT_FALSE(f->source.empty()) << what;
      EXPECT_GE(f->value, 0) << what;
    }
    // The required figures must come from the file, never from a default.
    EXPECT_NE(s.clock_hz.source, "default");
    for (const auto& m : s.memories) EXPECT_NE(m.capacity_bytes.source, "default") << m.name;
    // Every parameter belongs to the target's namespace (or a unit of it, like the MME).
    for (const auto& [k, f] : s.params) EXPECT_NE(k.find('.'), std::string::npos) << k;
  }
}

TEST(Presets, GaudiCarriesTheFiguresTheTpcTargetUses) {
  const MachineSpec g = load_machine("gaudi");
  EXPECT_EQ(g.target, "tpc");
  EXPECT_EQ(g.core_name, "tpc");
  EXPECT_EQ(g.core_count.as_int(), 8);
  for (const char* pipe : {"load", "spu", "vpu", "store"}) {
    EXPECT_EQ(g.pipe(pipe).latency_cycles.value, 4) << pipe;
    EXPECT_EQ(g.pipe(pipe).latency_cycles.source, "spec 000 §2.3.1");
  }
  EXPECT_EQ(g.memory("slm").capacity_bytes.as_int(), 1024);
  EXPECT_EQ(g.memory("slm").alignment_bytes.as_int(), 4);
  EXPECT_EQ(g.memory("slm").scope, "core");
  EXPECT_EQ(g.memory("vlm").capacity_bytes.as_int(), 80 * 1024);
  EXPECT_EQ(g.memory("vlm").alignment_bytes.as_int(), 128);
  EXPECT_EQ(g.memory("vlm").capacity_bytes.source, "spec 000 §2.3.3");
  EXPECT_EQ(g.global_memory, "hbm");
  EXPECT_EQ(g.global().capacity_bytes.as_int(), std::int64_t{32} << 30);
  const std::pair<const char*, double> params[] = {{"tpc.vector_bytes", 256},
                                                   {"tpc.vlm_bytes_with_special_functions", 16384},
                                                   {"tpc.max_tensors", 16},
                                                   {"tpc.max_tensors_with_printf", 15},
                                                   {"tpc.max_scalar_param_dwords", 32},
                                                   {"tpc.kernel_name_max_bytes", 64},
                                                   {"tpc.global_access_cycles_per_vector", 4},
                                                   {"tpc.special_function_vpu_cycles", 16},
                                                   {"tpc.reduction_vpu_cycles", 8},
                                                   {"mme.macs_per_cycle_bf16", 16384},
                                                   {"mme.macs_per_cycle_f32", 4096},
                                                   {"mme.setup_cycles", 64}};
  for (const auto& [key, value] : params) EXPECT_EQ(g.param(key).value, value) << key;
  EXPECT_EQ(g.params.size(), std::size(params));
  EXPECT_EQ(g.param("tpc.max_tensors").source, "spec 000 §2.4.2");
}

TEST(Presets, IpuTilesMemoryAndWorkers) {
  const MachineSpec mk1 = load_machine("ipu-mk1");
  EXPECT_EQ(mk1.target, "ipu");
  EXPECT_EQ(mk1.core_count.as_int(), 1216);
  EXPECT_EQ(mk1.clock_hz.value, 1.6e9);
  EXPECT_EQ(mk1.memory("tile").capacity_bytes.as_int(), 256 * 1024);
  EXPECT_EQ(mk1.memory("tile").base_address.as_int(), 0x40000);
  EXPECT_EQ(mk1.param("ipu.worker_contexts").value, 6);
  const MachineSpec mk2 = load_machine("ipu-mk2");
  EXPECT_EQ(mk2.core_count.as_int(), 1472);
  EXPECT_EQ(mk2.memory("tile").capacity_bytes.as_int(), 624 * 1024);
  EXPECT_EQ(mk2.memory("tile").base_address.as_int(), 0x4C000);
  // The populated range ends at 0xE7FFF (spec 001 §7.2.3).
  EXPECT_EQ(mk2.memory("tile").base_address.as_int() + mk2.memory("tile").capacity_bytes.as_int(),
            0xE8000);
  EXPECT_EQ(mk2.param("ipu.region0_bytes").value + mk2.param("ipu.region1_bytes").value,
            mk2.memory("tile").capacity_bytes.value);
  EXPECT_EQ(mk1.param("ipu.region0_bytes").value + mk1.param("ipu.region1_bytes").value,
            mk1.memory("tile").capacity_bytes.value);
}

TEST(Presets, Bm1880AscendAndChimera) {
  const MachineSpec bm = load_machine("bm1880");
  EXPECT_EQ(bm.target, "bm");
  EXPECT_EQ(bm.core_count.as_int(), 32);
  EXPECT_EQ(bm.memory("lmem").capacity_bytes.as_int(), 64 * 1024);
  EXPECT_EQ(bm.param("bm.eu_num").value, 16);
  EXPECT_NO_THROW(bm.pipe("tpu"));
  EXPECT_NO_THROW(bm.pipe("gdma"));

  const MachineSpec a = load_machine("ascend910");
  EXPECT_EQ(a.target, "aicore");
  EXPECT_EQ(a.core_count.as_int(), 32);
  for (const char* p : {"S", "V", "M", "MTE1", "MTE2", "MTE3"}) EXPECT_NO_THROW(a.pipe(p)) << p;
  for (const char* m : {"L1", "L0A", "L0B", "L0C", "UB", "SB"})
    EXPECT_EQ(a.memory(m).scope, "core") << m;
  EXPECT_EQ(a.memory("UB").alignment_bytes.as_int(), 32);
  EXPECT_EQ(a.param("aicore.cube_m").value * a.param("aicore.cube_k").value *
                a.param("aicore.cube_n").value,
            4096);

  const MachineSpec q = load_machine("chimera-q16");
  EXPECT_EQ(q.target, "epu");
  EXPECT_EQ(q.core_count.value, q.param("epu.array_rows").value * q.param("epu.array_cols").value);
  EXPECT_EQ(q.core_count.as_int(), 256);
  EXPECT_EQ(q.memory("localmem").capacity_bytes.as_int(), 4096);
  EXPECT_EQ(q.param("epu.broadcast_register_bytes").value, 8);
  EXPECT_EQ(q.memory("ocm").scope, "device");
  EXPECT_EQ(q.global_memory, "ddr");
}

// ---- parsing and defaults ----

TEST(Parse, MinimalMachineAndOptionalDefaults) {
  const MachineSpec s = parse(minimal());
  EXPECT_EQ(s.name, "mini");
  EXPECT_EQ(s.origin, "test.json");
  EXPECT_EQ(s.core_count.as_int(), 2);
  const MemorySpec& local = s.memory("local");
  EXPECT_EQ(local.base_address.value, 0);
  EXPECT_EQ(local.alignment_bytes.value, 1);
  EXPECT_EQ(local.banks.value, 1);
  EXPECT_EQ(local.bank_width_bytes.value, 0);
  EXPECT_EQ(local.latency_cycles.value, 1);
  EXPECT_EQ(local.alignment_bytes.source, "default");
  EXPECT_EQ(local.capacity_bytes.source, "estimate");
  EXPECT_EQ(s.param("tpc.vector_bytes").source, "spec 000 §2.1");
  EXPECT_DOUBLE_EQ(s.seconds_from_cycles(2e9), 2.0);
}

TEST(Parse, ParamsAreOptional) {
  json j = minimal();
  j.erase("params");
  EXPECT_TRUE(parse(j).params.empty());
}

TEST(Lookups, MissingEntriesAreUserErrorsNamingTheMachine) {
  const MachineSpec s = parse(minimal());
  EXPECT_EQ(s.find_memory("nope"), nullptr);
  EXPECT_EQ(s.param_or("tpc.missing", 7.5), 7.5);
  EXPECT_EQ(s.param_or("tpc.vector_bytes", 7.5), 256);
  try {
    (void)s.param("tpc.missing");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_CONTAINS(e.what(), "machine 'mini'");
    EXPECT_CONTAINS(e.what(), "'tpc.missing'");
    EXPECT_CONTAINS(e.what(), "tpc.vector_bytes");  // lists what it has
  }
  try {
    (void)s.memory("sram");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_CONTAINS(e.what(), "no memory 'sram'");
    EXPECT_CONTAINS(e.what(), "local, dram");
  }
  EXPECT_THROW((void)s.pipe("fpu"), UserError);
}

// ---- errors ----

TEST(Errors, MalformedJsonNamesFileLineAndColumn) {
  const std::string text = "{\n  \"schema\": \"tessera.machine/1\",\n  \"name\": oops\n}\n";
  const std::string msg = problem_text(text);
  EXPECT_CONTAINS(msg, "test.json:3:");
  EXPECT_CONTAINS(msg, "malformed JSON");
}

TEST(Errors, TruncatedJson) {
  EXPECT_CONTAINS(problem_text(std::string("{\"schema\": ")), "malformed JSON");
  EXPECT_CONTAINS(problem_text(std::string("")), "malformed JSON");
}

TEST(Errors, TopLevelMustBeAnObject) {
  EXPECT_CONTAINS(problem_text(std::string("[1, 2]")), "expected an object, got an array");
}

TEST(Errors, FigureWithoutSource) {
  json j = minimal();
  j["memories"][1]["capacity_bytes"].erase("source");
  EXPECT_CONTAINS(problem_text(j),
                  "memories[1].capacity_bytes.source: missing; every figure needs a source");
}

TEST(Errors, BareNumberInsteadOfAFigure) {
  json j = minimal();
  j["clock_hz"] = 1e9;
  const std::string msg = problem_text(j);
  EXPECT_CONTAINS(msg, "clock_hz: expected a figure object");
  EXPECT_CONTAINS(msg, "got a number");
}

TEST(Errors, WrongTypes) {
  json j = minimal();
  j["core_count"]["value"] = "eight";
  j["name"] = 3;
  j["pipes"] = json::object();
  j["params"]["tpc.vector_bytes"]["source"] = 12;
  const std::string msg = problem_text(j);
  EXPECT_CONTAINS(msg, "core_count.value: expected a number, got a string");
  EXPECT_CONTAINS(msg, "name: expected a string, got a number");
  EXPECT_CONTAINS(msg, "pipes: expected an array, got an object");
  EXPECT_CONTAINS(msg, "params.tpc.vector_bytes.source: expected a string, got a number");
}

TEST(Errors, MissingRequiredFields) {
  json j = minimal();
  j.erase("target");
  j.erase("host_link");
  j["memories"][0].erase("capacity_bytes");
  j["pipes"][0].erase("name");
  const std::string msg = problem_text(j);
  EXPECT_CONTAINS(msg, "target: missing");
  EXPECT_CONTAINS(msg, "host_link: missing");
  EXPECT_CONTAINS(msg, "memories[0].capacity_bytes: missing");
  EXPECT_CONTAINS(msg, "pipes[0].name: missing");
}

TEST(Errors, NonPositiveAndFractionalValues) {
  json j = minimal();
  j["clock_hz"]["value"] = 0;
  j["core_count"]["value"] = 2.5;
  j["memories"][0]["capacity_bytes"]["value"] = -4096;
  j["memories"][0]["alignment_bytes"] = fig(48);
  j["host_link"]["latency_seconds"]["value"] = -1;
  const std::string msg = problem_text(j);
  EXPECT_CONTAINS(msg, "clock_hz.value: must be positive, got 0");
  EXPECT_CONTAINS(msg, "core_count.value: must be a whole number, got 2.5");
  EXPECT_CONTAINS(msg, "memories[0].capacity_bytes.value: must be positive, got -4096");
  EXPECT_CONTAINS(msg, "memories[0].alignment_bytes.value: must be a power of two, got 48");
  EXPECT_CONTAINS(msg, "host_link.latency_seconds.value: must not be negative");
}

TEST(Errors, ValuesTooLargeForAnInteger) {
  json j = minimal();
  j["memories"][0]["capacity_bytes"]["value"] = 1e300;
  j["params"]["tpc.huge"] = fig(1e19);
  const std::string msg = problem_text(j);
  EXPECT_CONTAINS(msg, "memories[0].capacity_bytes.value: 1e+300 is too large");
  EXPECT_CONTAINS(msg, "params.tpc.huge.value: 1e+19 is too large");
}

TEST(Errors, UnknownScopeAndTarget) {
  json j = minimal();
  j["memories"][0]["scope"] = "chip";
  j["target"] = "gpu";
  const std::string msg = problem_text(j);
  EXPECT_CONTAINS(msg, "memories[0].scope: unknown scope \"chip\"");
  EXPECT_CONTAINS(msg, "target: unknown target \"gpu\"; expected one of tpc, ipu, bm, aicore, epu");
}

TEST(Errors, GlobalMemoryMustNameADeviceMemory) {
  json j = minimal();
  j["global_memory"] = "local";
  EXPECT_CONTAINS(problem_text(j), "global_memory: names \"local\", whose scope is \"core\"");
  j["global_memory"] = "hbm";
  const std::string msg = problem_text(j);
  EXPECT_CONTAINS(msg, "global_memory: names \"hbm\", which is not in \"memories\"");
  EXPECT_CONTAINS(msg, "dram");  // suggests the device memories there are
}

TEST(Errors, GlobalCacheMustNameAnotherDeviceMemory) {
  json j = minimal();
  j["global_cache"] = "local";
  EXPECT_CONTAINS(problem_text(j), "global_cache: names \"local\"; it must name a device memory");
  j["global_cache"] = "dram";
  EXPECT_CONTAINS(problem_text(j), "other than the global memory");
  j["global_cache"] = "l3";
  EXPECT_CONTAINS(problem_text(j), "global_cache: names \"l3\", which is not in \"memories\"");
  j["memories"].push_back({{"name", "l2"},
                           {"scope", "device"},
                           {"capacity_bytes", fig(65536)},
                           {"alignment_bytes", fig(64)},
                           {"bandwidth_bytes_per_cycle", fig(128)}});
  j["global_cache"] = "l2";
  EXPECT_EQ(parse(j).global_cache, "l2");
  EXPECT_EQ(parse(minimal()).global_cache, "");
}

TEST(Errors, DuplicateNamesAndKeys) {
  json j = minimal();
  j["pipes"].push_back(j["pipes"][0]);
  j["memories"].push_back(j["memories"][0]);
  std::string msg = problem_text(j);
  EXPECT_CONTAINS(msg, "pipes[1].name: duplicate pipe name \"alu\"");
  EXPECT_CONTAINS(msg, "memories[2].name: duplicate memory name \"local\"");

  // A key repeated in one JSON object would otherwise be silently dropped by the parser.
  const std::string text = minimal().dump();
  const std::string dup = text.substr(0, text.size() - 1) +
                          ", \"params\": {\"tpc.a\": {\"value\": 1, \"source\": \"x\"}}}";
  EXPECT_CONTAINS(problem_text(dup), "params: duplicate key");
  std::string inner = minimal().dump();
  const std::string needle = "\"capacity_bytes\":";
  inner.insert(inner.find(needle), "\"capacity_bytes\":{\"value\":1,\"source\":\"x\"},");
  EXPECT_CONTAINS(problem_text(inner), "memories[0].capacity_bytes: duplicate key");
}

TEST(Errors, UnknownKeysAtEveryLevel) {
  json j = minimal();
  j["clock_mhz"] = fig(1000);
  j["memories"][0]["capacity"] = fig(1);
  j["clock_hz"]["unit"] = "Hz";
  const std::string msg = problem_text(j);
  EXPECT_CONTAINS(msg, "clock_mhz: unknown field");
  EXPECT_CONTAINS(msg, "memories[0].capacity: unknown field");
  EXPECT_CONTAINS(msg, "clock_hz.unit: unknown field");
}

TEST(Errors, SchemaParamNamesAndBanks) {
  json j = minimal();
  j["schema"] = "tessera.machine/2";
  j["params"]["VectorBytes"] = fig(1);
  j["memories"][0]["banks"] = fig(4);
  const std::string msg = problem_text(j);
  EXPECT_CONTAINS(msg, "schema: is \"tessera.machine/2\"");
  EXPECT_CONTAINS(msg, "params.VectorBytes: parameter names are lower-case");
  EXPECT_CONTAINS(msg,
                  "memories[0].bank_width_bytes: must be positive when the memory has 4 banks");
}

TEST(Errors, EveryProblemIsReportedAtOnceEachOnItsOwnLine) {
  json j = minimal();
  j["target"] = "gpu";                            // 1
  j["clock_hz"].erase("source");                  // 2
  j["memories"][1]["scope"] = "board";            // 3 (and global_memory: 4)
  j["pipes"][0]["latency_cycles"]["value"] = -1;  // 5
  j["colour"] = "blue";                           // 6
  const std::string msg = problem_text(j);
  EXPECT_CONTAINS(msg, "test.json: invalid machine description (6 problems):");
  EXPECT_CONTAINS(msg, "\n  target: ");
  EXPECT_CONTAINS(msg, "\n  clock_hz.source: ");
  EXPECT_CONTAINS(msg, "\n  memories[1].scope: ");
  EXPECT_CONTAINS(msg, "\n  global_memory: ");
  EXPECT_CONTAINS(msg, "\n  pipes[0].latency_cycles.value: ");
  EXPECT_CONTAINS(msg, "\n  colour: unknown field");
  EXPECT_CONTAINS(msg, "docs/arch.md");
}

// ---- load_machine: names, paths, the preset directory ----

class TempDir : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tessera_arch_test_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    ::unsetenv("TESSERA_ARCH_PATH");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  fs::path write(const std::string& file, const std::string& text) {
    const fs::path p = dir_ / file;
    std::ofstream(p) << text;
    return p;
  }
  fs::path dir_;
};

TEST_F(TempDir, UserFileByPath) {
  json j = minimal();
  j["name"] = "my-gaudi";
  const fs::path p = write("my-gaudi.json", j.dump());
  const MachineSpec s = load_machine(p.string());
  EXPECT_EQ(s.name, "my-gaudi");
  EXPECT_EQ(s.origin, p.string());
}

TEST_F(TempDir, ProblemsInAUserFileNameTheFile) {
  json j = minimal();
  j["core_count"]["value"] = 0;
  const fs::path p = write("broken.json", j.dump());
  try {
    load_machine(p.string());
    FAIL();
  } catch (const UserError& e) {
    EXPECT_CONTAINS(e.what(), p.string() + ": invalid machine description (1 problem):");
    EXPECT_CONTAINS(e.what(), "core_count.value: must be positive");
  }
}

TEST_F(TempDir, MissingFileAndDirectory) {
  EXPECT_THROW(load_machine((dir_ / "absent.json").string()), UserError);
  EXPECT_THROW(load_machine(dir_.string() + "/"), UserError);
  EXPECT_THROW(load_machine(""), UserError);
}

TEST_F(TempDir, ABareNameEndingInJsonIsAPath) {
  const fs::path old = fs::current_path();
  write("local.json", minimal().dump());
  fs::current_path(dir_);
  const MachineSpec s = load_machine("local.json");
  fs::current_path(old);
  EXPECT_EQ(s.name, "mini");
}

TEST_F(TempDir, ArchPathOverridesThePresetDirectory) {
  write("mini.json", minimal().dump());
  write("notes.txt", "not a preset");
  ::setenv("TESSERA_ARCH_PATH", dir_.c_str(), 1);
  EXPECT_EQ(preset_directory(), dir_.string());
  EXPECT_EQ(preset_names(), std::vector<std::string>{"mini"});
  EXPECT_EQ(load_machine("mini").core_count.as_int(), 2);
  try {
    load_machine("gaudi");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_CONTAINS(e.what(), "unknown machine preset 'gaudi'; available presets: mini");
  }
}

TEST_F(TempDir, PresetNameMustMatchItsFile) {
  write("other.json", minimal().dump());  // says "mini" inside
  ::setenv("TESSERA_ARCH_PATH", dir_.c_str(), 1);
  try {
    load_machine("other");
    FAIL();
  } catch (const UserError& e) {
    EXPECT_CONTAINS(e.what(), "preset file is named 'other' but its \"name\" field says 'mini'");
  }
}

TEST(LoadMachine, UnknownPresetListsTheAvailableOnes) {
  try {
    load_machine("gaudi3");
    FAIL();
  } catch (const UserError& e) {
    const std::string msg = e.what();
    EXPECT_CONTAINS(msg, "unknown machine preset 'gaudi3'");
    for (const char* n : {"ascend910", "bm1880", "chimera-q16", "gaudi", "ipu-mk1", "ipu-mk2"})
      EXPECT_CONTAINS(msg, n);
  }
}

// ---- format_figure ----

TEST(FormatFigure, UnitsFollowTheFieldName) {
  EXPECT_EQ(format_figure("capacity_bytes", 81920), "80 KiB");
  EXPECT_EQ(format_figure("capacity_bytes", 34359738368.0), "32 GiB");
  EXPECT_EQ(format_figure("capacity_bytes", 638976), "624 KiB");
  EXPECT_EQ(format_figure("capacity_bytes", 1536), "1.5 KiB");
  EXPECT_EQ(format_figure("alignment_bytes", 128), "128 B");
  EXPECT_EQ(format_figure("clock_hz", 1.6e9), "1.6 GHz");
  EXPECT_EQ(format_figure("clock_hz", 750e6), "750 MHz");
  EXPECT_EQ(format_figure("bandwidth_bytes_per_second", 31.5e9), "31.5 GB/s");
  EXPECT_EQ(format_figure("bandwidth_bytes_per_cycle", 625), "625 B/cycle");
  EXPECT_EQ(format_figure("latency_cycles", 4), "4 cycles");
  EXPECT_EQ(format_figure("latency_cycles", 1), "1 cycle");
  EXPECT_EQ(format_figure("latency_seconds", 1e-6), "1 us");
  EXPECT_EQ(format_figure("latency_seconds", 2.5e-9), "2.5 ns");
  EXPECT_EQ(format_figure("base_address", 0x4C000), "0x4c000");
  EXPECT_EQ(format_figure("tpc.max_tensors", 16), "16");
  EXPECT_EQ(format_figure("mme.macs_per_cycle_bf16", 16384), "16,384");
  EXPECT_EQ(format_figure("bm.winograd_mac_reduction", 2.25), "2.25");
  EXPECT_EQ(format_figure("tpc.vlm_bytes_with_special_functions", 16384), "16 KiB");
}

TEST(Errors, EveryFigureHasASaneRange) {
  struct Case {
    const char* path;
    json::json_pointer where;
    double value;
    const char* range;
  };
  const Case cases[] = {
      {"core_count.value", json::json_pointer("/core_count/value"), 1e6, "1 to 65536"},
      {"core_count.value", json::json_pointer("/core_count/value"), 0x1p52, "1 to 65536"},
      {"clock_hz.value", json::json_pointer("/clock_hz/value"), 1e300, "1000000 to 100000000000"},
      {"memories[1].bandwidth_bytes_per_cycle.value",
       json::json_pointer("/memories/1/bandwidth_bytes_per_cycle/value"), 1e-300,
       "0.0009765625 to 1048576"},
      {"memories[0].capacity_bytes.value", json::json_pointer("/memories/0/capacity_bytes/value"),
       0x1p52, "1 to 1073741824"},
      {"host_link.bandwidth_bytes_per_second.value",
       json::json_pointer("/host_link/bandwidth_bytes_per_second/value"), 1e-300, "1000 to"},
      {"host_link.latency_seconds.value", json::json_pointer("/host_link/latency_seconds/value"),
       1e18, "0 to 1"},
  };
  for (const Case& c : cases) {
    json j = minimal();
    j[c.where] = c.value;
    const std::string msg = problem_text(j);
    EXPECT_CONTAINS(msg, c.path);
    EXPECT_CONTAINS(msg, std::string("allowed range is ") + c.range);
  }
  json rate = minimal();
  rate["params"]["mme.macs_per_cycle_f32"] = fig(1e-300);
  EXPECT_CONTAINS(problem_text(rate), "params.mme.macs_per_cycle_f32.value");
  EXPECT_CONTAINS(
      problem_text(minimal().dump().replace(minimal().dump().find("1000000000.0"), 12, "1e916")),
      "malformed JSON");
}

}  // namespace
}  // namespace tessera::arch

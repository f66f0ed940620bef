// The `tessera` command line, run as a subprocess: output, error messages and exit codes
// (0 success, 2 user error).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace {

namespace fs = std::filesystem;

struct Result {
  int code = -1;
  std::string out;
  std::string err;
};

// Runs `env_prefix TESSERA_BINARY args`, capturing stdout, stderr and the exit code.
Result run(const std::string& args, const std::string& env_prefix = "") {
  const fs::path err_file =
      fs::temp_directory_path() / ("tessera_cli_test_" + std::to_string(::getpid()) + ".err");
  const std::string command = env_prefix + " '" + std::string(TESSERA_BINARY) + "' " + args +
                              " 2>'" + err_file.string() + "'";
  Result r;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return r;
  std::array<char, 4096> buffer{};
  std::size_t n;
  while ((n = std::fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    r.out.append(buffer.data(), n);
  const int status = ::pclose(pipe);
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream in(err_file);
  std::ostringstream s;
  s << in.rdbuf();
  r.err = s.str();
  std::error_code ec;
  fs::remove(err_file, ec);
  return r;
}

std::vector<std::string> lines(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

#define EXPECT_CONTAINS(haystack, needle) \
  EXPECT_NE((haystack).find(needle), std::string::npos) << (haystack)

TEST(TesseraCli, Version) {
  const Result r = run("--version");
  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "tessera " TESSERA_VERSION);
}

TEST(TesseraCli, HelpListsTheArchCommand) {
  const Result r = run("--help");
  EXPECT_EQ(r.code, 0);
  EXPECT_CONTAINS(r.out, "arch");
}

TEST(TesseraCli, ArchListShowsTheSixPresets) {
  const Result r = run("arch list");
  ASSERT_EQ(r.code, 0) << r.err;
  const std::array<std::array<const char*, 3>, 6> expected = {{{"ascend910", "aicore", "32"},
                                                               {"bm1880", "bm", "32"},
                                                               {"chimera-q16", "epu", "256"},
                                                               {"gaudi", "tpc", "8"},
                                                               {"ipu-mk1", "ipu", "1216"},
                                                               {"ipu-mk2", "ipu", "1472"}}};
  int found = 0;
  for (const std::string& line : lines(r.out)) {
    std::istringstream fields(line);
    std::string name, target, cores, core_name, description;
    fields >> name >> target >> cores >> core_name;
    std::getline(fields, description);
    for (const auto& e : expected) {
      if (name != e[0]) continue;
      ++found;
      EXPECT_EQ(target, e[1]) << line;
      EXPECT_EQ(cores, e[2]) << line;
      EXPECT_GT(description.size(), 10u) << line;
    }
  }
  EXPECT_EQ(found, 6) << r.out;
}

// `tessera targets` lists what the registry holds: reference and at least one backend per
// target of cmake/targets.cmake, each with a description and the default device it declares.
TEST(TesseraCli, TargetsListsEveryRegisteredBackendWithItsDefaultDevice) {
  const Result r = run("targets");
  ASSERT_EQ(r.code, 0) << r.err;
  int backends = 0;
  bool reference = false;
  for (const std::string& line : lines(r.out)) {
    ++backends;
    reference = reference || line.rfind("reference ", 0) == 0;
    const auto at = line.rfind("(default device: ");
    ASSERT_NE(at, std::string::npos) << line;
    const std::string device = line.substr(at + 17, line.size() - at - 18);
    EXPECT_FALSE(device.empty()) << line;
    EXPECT_EQ(run("arch show " + device).code, 0) << "default device " << device << " of: " << line;
  }
  EXPECT_TRUE(reference) << r.out;
  EXPECT_GE(backends, TESSERA_TARGET_COUNT + 1) << r.out;
}

TEST(TesseraCli, ArchShowGaudiPrintsEveryFigureWithUnitAndSource) {
  const Result r = run("arch show gaudi");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "gaudi: Habana Gaudi");
  EXPECT_CONTAINS(r.out, "1.6 GHz");
  EXPECT_CONTAINS(r.out, "32 GiB");
  // Every row of the figure table has a field, a value and a source.
  bool in_table = false;
  int rows = 0;
  for (const std::string& line : lines(r.out)) {
    if (line.rfind("FIGURE", 0) == 0) {
      in_table = true;
      continue;
    }
    if (!in_table) continue;
    std::istringstream fields(line);
    std::string field;
    fields >> field;
    EXPECT_FALSE(field.empty()) << line;
    ++rows;
    if (field == "memories.vlm.capacity_bytes") {
      EXPECT_CONTAINS(line, "80 KiB");
      EXPECT_CONTAINS(line, "spec 000 §2.3.3");
    }
    if (field == "params.tpc.max_tensors") {
      EXPECT_CONTAINS(line, "spec 000 §2.4.2");
    }
    if (field == "pipes.vpu.latency_cycles") {
      EXPECT_CONTAINS(line, "4 cycles");
    }
    // A source is present: an 'estimate', a spec section or a public figure.
    const bool sourced = line.find("estimate") != std::string::npos ||
                         line.find("spec 0") != std::string::npos ||
                         line.find("public:") != std::string::npos;
    EXPECT_TRUE(sourced) << line;
  }
  // 2 top-level + 4 pipes + 3 memories x 7 + 2 host link + 12 params.
  EXPECT_GE(rows, 2 + 4 + 21 + 2 + 12) << r.out;
}

TEST(TesseraCli, ArchShowOtherPresets) {
  const Result mk2 = run("arch show ipu-mk2");
  ASSERT_EQ(mk2.code, 0) << mk2.err;
  EXPECT_CONTAINS(mk2.out, "624 KiB");
  EXPECT_CONTAINS(mk2.out, "0x4c000");
  const Result q = run("arch show chimera-q16");
  ASSERT_EQ(q.code, 0) << q.err;
  EXPECT_CONTAINS(q.out, "4 KiB");
}

TEST(TesseraCli, BadPresetNameFailsWithExitCode2AndListsPresets) {
  const Result r = run("arch show gaudi9");
  EXPECT_EQ(r.code, 2);
  EXPECT_TRUE(r.out.empty()) << r.out;
  EXPECT_CONTAINS(r.err, "tessera: error: unknown machine preset 'gaudi9'");
  EXPECT_CONTAINS(r.err, "chimera-q16, chimera-q8, gaudi, ipu-mk1, ipu-mk2");
}

TEST(TesseraCli, UserFilesWorkWhereverPresetsDo) {
  const fs::path dir =
      fs::temp_directory_path() / ("tessera_cli_test_dir_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  {
    std::ifstream in(std::string(TESSERA_SOURCE_DIR_FOR_TESTS) + "/data/arch/gaudi.json");
    std::ostringstream s;
    s << in.rdbuf();
    std::string text = s.str();
    text.replace(text.find("\"gaudi\""), 7, "\"my-gaudi\"");
    std::ofstream(dir / "my-gaudi.json") << text;
    text.replace(text.find("\"value\": 8,"), 11, "\"value\": -8,");
    std::ofstream(dir / "broken.json") << text;
  }
  const Result ok = run("arch show " + (dir / "my-gaudi.json").string());
  EXPECT_EQ(ok.code, 0) << ok.err;
  EXPECT_CONTAINS(ok.out, "my-gaudi:");

  const Result bad = run("arch show " + (dir / "broken.json").string());
  EXPECT_EQ(bad.code, 2);
  EXPECT_CONTAINS(bad.err, "core_count.value: must be positive, got -8");

  // A directory holding a broken preset: list shows it as invalid and fails.
  fs::rename(dir / "broken.json", dir / "my-gaudi.json");
  const Result list = run("arch list", "TESSERA_ARCH_PATH='" + dir.string() + "'");
  EXPECT_EQ(list.code, 2);
  EXPECT_CONTAINS(list.out, "INVALID");
  EXPECT_CONTAINS(list.err, "failed to load: my-gaudi");
  fs::remove_all(dir);
}

TEST(TesseraCli, UsageErrorsExitWith2) {
  EXPECT_EQ(run("").code, 2);
  EXPECT_EQ(run("arch").code, 2);
  EXPECT_EQ(run("arch show").code, 2);
  EXPECT_EQ(run("frobnicate").code, 2);
}

// ---- int8: calibrate, run --int8 --check ----

const std::string kModels = std::string(TESSERA_SOURCE_DIR_FOR_TESTS) + "/examples/models";

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

fs::path scratch(const std::string& name) {
  const fs::path dir =
      fs::temp_directory_path() / ("tessera_cli_" + name + "_" + std::to_string(::getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

// A float32 .npy file of shape (1, 3, 32, 32) with a ramp of values scaled by `scale`.
void write_input_npy(const fs::path& path, float scale) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': (1, 3, 32, 32), }";
  while ((10 + header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  out.write("\x93NUMPY\x01\x00", 8);
  const auto len = static_cast<std::uint16_t>(header.size());
  out.put(static_cast<char>(len & 0xff));
  out.put(static_cast<char>(len >> 8));
  out << header;
  for (int i = 0; i < 3 * 32 * 32; ++i) {
    const float v = scale * static_cast<float>((i * 37) % 200 - 100) / 100.0f;
    out.write(reinterpret_cast<const char*>(&v), sizeof v);
  }
}

// aicore computes convolutions in fp16: --check holds its outputs to a tolerance derived from
// fp16 and the reductions (docs/compiler.md), so conv_pieces' 4,608-term sums that cancel to
// near zero pass (with the f16 tolerance alone thousands of elements failed at cosine 1.0).
TEST(TesseraCli, RunCheckOnAicoreHoldsFp16ReductionsToTheirDerivedTolerance) {
  const Result r = run("run " + kModels + "/conv_pieces.onnx --target aicore --check");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_CONTAINS(r.out, "f16 rounding through 1 reduction(s) of up to 4608 terms");
  EXPECT_CONTAINS(r.out, "f16 rounding through 2 reduction(s) of up to 144 terms");
  EXPECT_EQ(r.out.find("MISMATCH"), std::string::npos) << r.out;
}

TEST(TesseraCliInt8, CalibrateThenRunInt8CheckReportsCosineAndTop1) {
  const fs::path dir = scratch("int8");
  const std::string table = (dir / "mobilenet.table").string();
  const Result cal = run("calibrate " + kModels + "/mobilenet_small.onnx --random 4 -o " + table);
  ASSERT_EQ(cal.code, 0) << cal.err;
  EXPECT_CONTAINS(cal.out, "on 4 samples (method max)");
  EXPECT_CONTAINS(read_file(table), "tessera-calibration 1\n");
  const Result r =
      run("run " + kModels + "/mobilenet_small.onnx --int8 " + table + " --check --top 30");
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  EXPECT_CONTAINS(r.out, "Int8Conv");
  EXPECT_CONTAINS(r.out, "int8 check against the f32 network");
  EXPECT_CONTAINS(r.out, "logits: cosine similarity 0.99");
  EXPECT_CONTAINS(r.out, "top-1 agreement 1/1 rows ok");
  const Result c = run("compile " + kModels + "/mobilenet_small.onnx --int8 " + table + " -o " +
                       (dir / "m.tsm").string());
  ASSERT_EQ(c.code, 0) << c.err;
  EXPECT_CONTAINS(c.out, "int8: 9 nodes quantised, 1 left in f32 on the host");
  fs::remove_all(dir);
}

TEST(TesseraCliInt8, CalibrateFromAnInputsDirectory) {
  const fs::path dir = scratch("int8_inputs");
  fs::create_directories(dir / "samples");
  write_input_npy(dir / "samples" / "a.npy", 1.0f);
  write_input_npy(dir / "samples" / "b.npy", 0.5f);
  const std::string table = (dir / "t").string();
  const Result cal = run("calibrate " + kModels + "/resnet_small.onnx --inputs " +
                         (dir / "samples").string() + " -o " + table);
  ASSERT_EQ(cal.code, 0) << cal.err;
  EXPECT_CONTAINS(cal.out, "on 2 samples (method max)");
  // The input ramp's largest |x| is 1.0 (i*37 mod 200 reaches 0, i.e. -100/100).
  EXPECT_CONTAINS(read_file(table), "\ninput 1\n");
  fs::remove_all(dir);
}

TEST(TesseraCliInt8, BadCalibrationUseIsAUserError) {
  const fs::path dir = scratch("int8_bad");
  const std::string model = kModels + "/resnet_small.onnx";
  const Result none = run("calibrate " + model + " -o " + (dir / "t").string());
  EXPECT_EQ(none.code, 2);
  EXPECT_CONTAINS(none.err, "--inputs DIR or --random N");
  const Result method =
      run("calibrate " + model + " --random 1 --method median -o " + (dir / "t").string());
  EXPECT_EQ(method.code, 2);
  EXPECT_CONTAINS(method.err, "max, kl, percentile");
  std::ofstream(dir / "bad.table") << "tessera-calibration 1\ninput 1\nconv2 -3\n";
  const Result bad = run("run " + model + " --int8 " + (dir / "bad.table").string());
  EXPECT_EQ(bad.code, 2);
  EXPECT_CONTAINS(bad.err, "bad.table:3:");
  EXPECT_CONTAINS(bad.err, "conv2");
  std::ofstream(dir / "short.table") << "tessera-calibration 1\ninput 1\n";
  const Result missing = run("run " + model + " --int8 " + (dir / "short.table").string());
  EXPECT_EQ(missing.code, 2);
  EXPECT_CONTAINS(missing.err, "no threshold for tensor");
  fs::remove_all(dir);
}

// Calibration and the integer executor give the same bytes with 1 and 8 host threads.
TEST(TesseraCliInt8, DeterministicAcrossHostThreads) {
  const fs::path dir = scratch("int8_threads");
  const std::string model = kModels + "/resnet_small.onnx";
  for (const char* threads : {"1", "8"}) {
    const std::string env = std::string("TESSERA_THREADS=") + threads;
    const fs::path sub = dir / threads;
    const Result cal = run(
        "calibrate " + model + " --random 3 --method percentile -o " + (sub.string() + ".table"),
        env);
    ASSERT_EQ(cal.code, 0) << cal.err;
    const Result r = run(
        "run " + model + " --int8 " + sub.string() + ".table --seed 4 --outputs " + sub.string(),
        env);
    ASSERT_EQ(r.code, 0) << r.err;
  }
  EXPECT_EQ(read_file(dir / "1.table"), read_file(dir / "8.table"));
  EXPECT_EQ(read_file(dir / "1" / "logits.npy"), read_file(dir / "8" / "logits.npy"));
  EXPECT_FALSE(read_file(dir / "1" / "logits.npy").empty());
  fs::remove_all(dir);
}

// ---- tessera compare ----

std::vector<std::string> registered_targets() {
  std::vector<std::string> names;
  for (const std::string& line : lines(run("targets").out))
    names.push_back(line.substr(0, line.find(' ')));
  return names;
}

TEST(TesseraCliCompare, CoversEveryRegisteredTargetAndWritesJsonAndHtml) {
  const fs::path dir = scratch("compare");
  const Result r = run("compare " + kModels + "/resnet_small.onnx --json " +
                       (dir / "c.json").string() + " --html " + (dir / "c.html").string());
  ASSERT_EQ(r.code, 0) << r.err << r.out;
  std::vector<std::string> expected;
  for (const auto& t : registered_targets())
    if (t != "reference") expected.push_back(t);
  ASSERT_GE(static_cast<int>(expected.size()), TESSERA_TARGET_COUNT) << r.out;
  for (const auto& t : expected) EXPECT_CONTAINS(r.out, "\n" + t + " ");
  EXPECT_CONTAINS(r.out, "LATENCY");
  EXPECT_CONTAINS(r.out, "MEMORY PEAK");
  EXPECT_CONTAINS(r.out, "top ops by modeled cycles:");

  const auto doc = nlohmann::json::parse(read_file(dir / "c.json"));
  ASSERT_EQ(doc.at("targets").size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto& t = doc.at("targets")[i];
    EXPECT_EQ(t.at("target"), expected[i]);
    ASSERT_EQ(t.at("status"), "ok") << t.dump();
    EXPECT_GT(t.at("memory_peak_bytes").get<double>(), 0) << t.dump();
    EXPECT_EQ(t.at("fallback_count").get<std::size_t>(), t.at("fallbacks").size());
    EXPECT_GT(t.at("cosine_vs_reference").get<double>(), 0.999) << t.dump();
    if (t.at("modeled").get<bool>()) {
      EXPECT_GT(t.at("latency_seconds").get<double>(), 0);
      EXPECT_NEAR(
          t.at("throughput_per_second").get<double>() * t.at("latency_seconds").get<double>(), 1.0,
          1e-9);
      ASSERT_FALSE(t.at("top_ops").empty());
      EXPECT_GE(t.at("top_ops")[0].at("cycles").get<double>(),
                t.at("top_ops").back().at("cycles").get<double>());
    }
  }
  const std::string html = read_file(dir / "c.html");
  EXPECT_CONTAINS(html, "<svg");
  EXPECT_CONTAINS(html, "<rect");
  for (const auto& t : expected) EXPECT_CONTAINS(html, ">" + t + "<");
  // Self-contained: nothing is fetched.
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("src="), std::string::npos);
  EXPECT_EQ(html.find("href="), std::string::npos);
  fs::remove_all(dir);
}

TEST(TesseraCliCompare, ChosenTargetsInOrderAndUnknownOnesRefused) {
  const Result r = run("compare " + kModels + "/mobilenet_small.onnx --targets template,reference");
  ASSERT_EQ(r.code, 0) << r.err;
  const auto t = r.out.find("\ntemplate "), ref = r.out.find("\nreference ");
  ASSERT_NE(t, std::string::npos) << r.out;
  ASSERT_NE(ref, std::string::npos) << r.out;
  EXPECT_LT(t, ref);
  EXPECT_CONTAINS(r.out, "not modeled");  // reference has no device timing
  EXPECT_CONTAINS(r.out, "fallbacks of template:");
  const Result bad = run("compare " + kModels + "/mobilenet_small.onnx --targets reference,nosuch");
  EXPECT_EQ(bad.code, 2);
  EXPECT_CONTAINS(bad.err, "unknown target 'nosuch'");
  const Result empty = run("compare " + kModels + "/mobilenet_small.onnx --targets ,");
  EXPECT_EQ(empty.code, 2);
}

// A target that cannot run the model gets an error row; the others still run.
TEST(TesseraCliCompare, ATargetThatCannotRunGetsAnErrorRow) {
  const fs::path dir = scratch("compare_error");
  const Result r = run("compare " + kModels + "/resnet_small.onnx --targets reference,template " +
                       "--device gaudi --json " + (dir / "c.json").string());
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_CONTAINS(r.out, "template   -             error: target 'template' cannot run on device");
  const auto doc = nlohmann::json::parse(read_file(dir / "c.json"));
  ASSERT_EQ(doc.at("targets").size(), 2u);
  EXPECT_EQ(doc.at("targets")[0].at("status"), "ok");
  EXPECT_EQ(doc.at("targets")[1].at("status"), "error");
  EXPECT_CONTAINS(doc.at("targets")[1].at("error").get<std::string>(), "gaudi");
  fs::remove_all(dir);
}

}  // namespace

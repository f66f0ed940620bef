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

}  // namespace

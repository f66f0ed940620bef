#include "tessera/profile/writers.h"

#include <cstdio>
#include <filesystem>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tessera/core/error.h"

namespace tessera::profile {
namespace {

Profile sample() {
  Profile p;
  p.device = "gaudi";
  p.target = "tpc";
  p.clock_hz = 2e9;
  p.total_cycles = 10000;
  p.pipe_busy_cycles = {{"tpc0/vpu", 5000}, {"tpc0/load", 2500}, {"host-link", 1000}};
  KernelRecord a{"relu_f32", 0, 4000, {4000, 3000}, {{"members", 16}}, 4096, 4096};
  KernelRecord b{"add_f32", 4000, 1000, {1000}, {}, 8192, 4096};
  KernelRecord c{"relu_f32", 5000, 2000, {2000}, {}, 1024, 1024};
  p.kernels = {a, b, c};
  p.memory_high_water = {{"device", {{"tensors", 1 << 20}}}, {"tpc0", {{"vlm", 65536}}}};
  p.bytes_moved = {{"host-link", 3 << 20}, {"hbm->vlm", 12345}};
  p.trace = {{"tpc0/vpu", "vadd", 100, 300},
             {"tpc0/load", "ld", 0, 100},
             {"host-link", "copy_to_device", 0, 50}};
  return p;
}

TEST(ProfileJson, RoundTrips) {
  Profile p = sample();
  Profile q = from_json(to_json(p));
  EXPECT_EQ(q.device, p.device);
  EXPECT_EQ(q.target, p.target);
  EXPECT_EQ(q.clock_hz, p.clock_hz);
  EXPECT_EQ(q.total_cycles, p.total_cycles);
  EXPECT_EQ(q.pipe_busy_cycles, p.pipe_busy_cycles);
  ASSERT_EQ(q.kernels.size(), 3u);
  EXPECT_EQ(q.kernels[0].name, "relu_f32");
  EXPECT_EQ(q.kernels[0].cycles_per_core, (std::vector<std::uint64_t>{4000, 3000}));
  EXPECT_EQ(q.kernels[0].metrics.at("members"), 16.0);
  EXPECT_EQ(q.kernels[1].start_cycle, 4000u);
  EXPECT_EQ(q.kernels[1].bytes_read, 8192u);
  EXPECT_EQ(q.memory_high_water, p.memory_high_water);
  EXPECT_EQ(q.bytes_moved, p.bytes_moved);
  ASSERT_EQ(q.trace.size(), 3u);
  EXPECT_EQ(q.trace[0].track, "tpc0/vpu");
  EXPECT_EQ(q.trace[0].end_cycle, 300u);
  // Deterministic: writing twice gives the same bytes.
  EXPECT_EQ(to_json(p), to_json(q));
}

TEST(ProfileJson, CarriesModeledTime) {
  auto j = nlohmann::json::parse(to_json(sample()));
  EXPECT_EQ(j["format"], "tessera.profile/1");
  EXPECT_DOUBLE_EQ(j["modeled_seconds"].get<double>(), 10000 / 2e9);
}

TEST(ProfileJson, MalformedInputNamesTheField) {
  EXPECT_THROW(from_json("not json"), UserError);
  EXPECT_THROW(from_json("[]"), UserError);
  EXPECT_THROW(from_json(R"({"format": "other/1"})"), UserError);
  auto j = nlohmann::json::parse(to_json(sample()));
  j["kernels"][1].erase("cycles");
  try {
    from_json(j.dump());
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("kernels[1].cycles"), std::string::npos) << e.what();
  }
  j = nlohmann::json::parse(to_json(sample()));
  j["total_cycles"] = "many";
  EXPECT_THROW(from_json(j.dump()), UserError);
}

TEST(ProfileText, SummarisesTheRun) {
  std::string s = text_summary(sample());
  EXPECT_NE(s.find("gaudi"), std::string::npos);
  EXPECT_NE(s.find("10,000"), std::string::npos);    // total cycles
  EXPECT_NE(s.find("5.000 us"), std::string::npos);  // 10,000 cycles at 2 GHz
  EXPECT_NE(s.find("2 GHz"), std::string::npos);
  // relu_f32 (2 launches, 6,000 cycles) ranks above add_f32.
  auto relu = s.find("relu_f32"), add = s.find("add_f32");
  ASSERT_NE(relu, std::string::npos);
  ASSERT_NE(add, std::string::npos);
  EXPECT_LT(relu, add);
  EXPECT_NE(s.find("6,000"), std::string::npos);
  EXPECT_NE(s.find("60.0%"), std::string::npos);
  EXPECT_NE(s.find("tpc0/vpu"), std::string::npos);  // pipe busy
  EXPECT_NE(s.find("50.0%"), std::string::npos);
  EXPECT_NE(s.find("1,048,576"), std::string::npos);  // high-water
  EXPECT_NE(s.find("hbm->vlm"), std::string::npos);   // bytes moved
  // Top-N limit.
  std::string one = text_summary(sample(), 1);
  EXPECT_EQ(one.find("add_f32"), std::string::npos);
}

TEST(ProfileChrome, WritesTraceEventsInMicroseconds) {
  auto j = nlohmann::json::parse(chrome_trace(sample()));
  ASSERT_TRUE(j.contains("traceEvents"));
  std::map<std::string, int> thread_ids;
  int complete = 0;
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") thread_ids[e["args"]["name"]] = e["tid"];
    if (e["ph"] == "X") {
      ++complete;
      EXPECT_TRUE(e.contains("ts"));
      EXPECT_TRUE(e.contains("dur"));
      EXPECT_TRUE(e.contains("pid"));
    }
  }
  EXPECT_EQ(complete, 3 + 3);        // kernels + intervals
  ASSERT_EQ(thread_ids.size(), 4u);  // kernels, host-link, tpc0/load, tpc0/vpu
  EXPECT_EQ(thread_ids["kernels"], 1);
  for (const auto& e : j["traceEvents"]) {
    if (e["ph"] == "X" && e["name"] == "vadd") {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 0.05);  // cycle 100 at 2 GHz
      EXPECT_DOUBLE_EQ(e["dur"].get<double>(), 0.1);
      EXPECT_EQ(e["tid"], thread_ids["tpc0/vpu"]);
    }
    if (e["ph"] == "X" && e["name"] == "add_f32") {
      EXPECT_DOUBLE_EQ(e["ts"].get<double>(), 2.0);
    }
  }
}

TEST(ProfileChrome, NeedsAClock) {
  Profile p = sample();
  p.clock_hz = 0;
  EXPECT_THROW(chrome_trace(p), UserError);
}

TEST(ProfileHtml, IsASelfContainedPage) {
  Profile p = sample();
  p.kernels[0].name = "relu<f32>";
  std::string h = html_report(p);
  EXPECT_EQ(h.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(h.find("</html>"), std::string::npos);
  EXPECT_NE(h.find("relu&lt;f32&gt;"), std::string::npos);  // escaped
  EXPECT_EQ(h.find("relu<f32>"), std::string::npos);
  EXPECT_NE(h.find("10,000"), std::string::npos);
  EXPECT_NE(h.find("<svg"), std::string::npos);  // the trace timeline
  EXPECT_NE(h.find("tpc0/vpu"), std::string::npos);
  EXPECT_EQ(h.find("<script"), std::string::npos);
  p.trace.clear();
  EXPECT_EQ(html_report(p).find("<svg"), std::string::npos);
}

TEST(ProfileFormats, ByName) {
  EXPECT_EQ(format_from_name("json"), Format::json);
  EXPECT_EQ(format_from_name("summary"), Format::text);
  EXPECT_EQ(format_from_name("trace"), Format::chrome);
  EXPECT_EQ(format_from_name("html"), Format::html);
  EXPECT_THROW(format_from_name("pdf"), UserError);
  EXPECT_EQ(render(sample(), Format::text), text_summary(sample()));
}

TEST(ProfileFiles, WriteAndReadBack) {
  auto path = (std::filesystem::temp_directory_path() / "tessera_profile_test.json").string();
  write_text_file(path, to_json(sample()));
  Profile q = from_json(read_text_file(path));
  EXPECT_EQ(q.total_cycles, 10000u);
  std::remove(path.c_str());
  EXPECT_THROW(read_text_file("/nonexistent/dir/profile.json"), UserError);
  EXPECT_THROW(write_text_file("/nonexistent/dir/profile.json", "x"), UserError);
}

}  // namespace
}  // namespace tessera::profile

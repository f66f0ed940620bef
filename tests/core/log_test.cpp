// TESSERA_LOG_LEVEL and TESSERA_LOG_DEST, read by configure_logging_from_env().
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <unistd.h>

#include "tessera/core/log.h"

namespace tessera {
namespace {

std::string read_all(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Restores the default (WARN to stderr) whatever a test did.
class LogEnv : public ::testing::Test {
 protected:
  void TearDown() override {
    ::setenv("TESSERA_LOG_LEVEL", "WARN", 1);
    ::setenv("TESSERA_LOG_DEST", "stderr", 1);
    configure_logging_from_env();
    ::unsetenv("TESSERA_LOG_LEVEL");
    ::unsetenv("TESSERA_LOG_DEST");
    std::error_code ec;
    std::filesystem::remove(file_, ec);
  }
  std::filesystem::path file_ = std::filesystem::temp_directory_path() /
                                ("tessera_log_test_" + std::to_string(::getpid()) + ".log");
};

TEST_F(LogEnv, LevelComesFromTheEnvironment) {
  const std::pair<const char*, LogLevel> cases[] = {
      {"OFF", LogLevel::off},   {"ERR", LogLevel::err},     {"WARN", LogLevel::warn},
      {"INFO", LogLevel::info}, {"DEBUG", LogLevel::debug}, {"TRACE", LogLevel::trace}};
  for (const auto& [name, level] : cases) {
    ::setenv("TESSERA_LOG_LEVEL", name, 1);
    configure_logging_from_env();
    EXPECT_EQ(log_level(), level) << name;
  }
}

TEST_F(LogEnv, UnknownLevelKeepsTheCurrentOne) {
  ::setenv("TESSERA_LOG_LEVEL", "INFO", 1);
  configure_logging_from_env();
  ::setenv("TESSERA_LOG_LEVEL", "LOUD", 1);
  testing::internal::CaptureStderr();
  configure_logging_from_env();
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_EQ(log_level(), LogLevel::info);
  EXPECT_NE(err.find("TESSERA_LOG_LEVEL=LOUD is not one of"), std::string::npos) << err;
  EXPECT_NE(err.find("keeping INFO"), std::string::npos) << err;
}

TEST_F(LogEnv, SetLogLevelOverridesTheEnvironment) {
  ::setenv("TESSERA_LOG_LEVEL", "TRACE", 1);
  configure_logging_from_env();
  set_log_level(LogLevel::err);
  EXPECT_EQ(log_level(), LogLevel::err);
}

TEST_F(LogEnv, MessagesGoToTheFileNamedByLogDest) {
  ::setenv("TESSERA_LOG_LEVEL", "INFO", 1);
  ::setenv("TESSERA_LOG_DEST", file_.c_str(), 1);
  configure_logging_from_env();
  log(LogLevel::warn, "arch", "preset {} loaded", "gaudi");
  log(LogLevel::info, "sim", "{} cycles", 42);
  log(LogLevel::debug, "sim", "hidden at INFO");
  const std::string text = read_all(file_);
  EXPECT_NE(text.find("[tessera WARN] arch: preset gaudi loaded\n"), std::string::npos) << text;
  EXPECT_NE(text.find("[tessera INFO] sim: 42 cycles\n"), std::string::npos) << text;
  EXPECT_EQ(text.find("hidden at INFO"), std::string::npos) << text;
}

TEST_F(LogEnv, OffWritesNothing) {
  ::setenv("TESSERA_LOG_LEVEL", "OFF", 1);
  ::setenv("TESSERA_LOG_DEST", file_.c_str(), 1);
  configure_logging_from_env();
  log(LogLevel::err, "core", "not written");
  EXPECT_EQ(read_all(file_).find("not written"), std::string::npos);
}

TEST_F(LogEnv, UnwritableDestinationFallsBackToStderr) {
  ::setenv("TESSERA_LOG_LEVEL", "WARN", 1);
  ::setenv("TESSERA_LOG_DEST", "/nonexistent-dir/tessera.log", 1);
  testing::internal::CaptureStderr();
  configure_logging_from_env();
  log(LogLevel::warn, "core", "still visible");
  const std::string err = testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("cannot open TESSERA_LOG_DEST"), std::string::npos) << err;
  EXPECT_NE(err.find("[tessera WARN] core: still visible"), std::string::npos) << err;
}

}  // namespace
}  // namespace tessera

#include "tessera/core/log.h"

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

#include <fmt/format.h>

namespace tessera {
namespace {

struct LogState {
  std::atomic<int> level{static_cast<int>(LogLevel::warn)};
  std::mutex mutex;
  std::FILE* dest = stderr;
  bool owns_dest = false;
  ~LogState() {
    if (owns_dest) std::fclose(dest);
  }
};


LogState& raw_state() {
  static LogState instance;
  return instance;
}

constexpr const char* kLevelNames[] = {"OFF", "ERR", "WARN", "INFO", "DEBUG", "TRACE"};

}  // namespace

void configure_logging_from_env() {
  LogState& s = raw_state();
  if (const char* level = std::getenv("TESSERA_LOG_LEVEL")) {
    const std::string wanted(level);
    bool known = false;
    for (int i = 0; i <= 5; ++i)
      if (wanted == kLevelNames[i]) {
        s.level = i;
        known = true;
      }
    if (!known)
      std::fprintf(stderr, "tessera: TESSERA_LOG_LEVEL=%s is not one of OFF, ERR, WARN, INFO, "
                           "DEBUG, TRACE; keeping %s\n", level, kLevelNames[s.level.load()]);
  }
  if (const char* dest = std::getenv("TESSERA_LOG_DEST")) {
    const std::string where(dest);
    std::lock_guard lock(s.mutex);
    if (s.owns_dest) std::fclose(s.dest);
    s.owns_dest = false;
    if (where == "stdout") s.dest = stdout;
    else if (where == "stderr") s.dest = stderr;
    else if (std::FILE* f = std::fopen(where.c_str(), "a")) {
      s.dest = f;
      s.owns_dest = true;
    } else {
      s.dest = stderr;
      std::fprintf(stderr, "tessera: cannot open TESSERA_LOG_DEST=%s for appending; logging to "
                           "stderr\n", dest);
    }
  }
}

LogLevel log_level() {
  static const bool configured = (configure_logging_from_env(), true);
  (void)configured;
  return static_cast<LogLevel>(raw_state().level.load(std::memory_order_relaxed));
}

void set_log_level(LogLevel level) {
  (void)log_level();  // make sure the environment was read first, so it does not override this
  raw_state().level = static_cast<int>(level);
}

void log_message(LogLevel level, std::string_view component, std::string_view message) {
  LogState& s = raw_state();
  std::lock_guard lock(s.mutex);
  fmt::print(s.dest, "[tessera {}] {}: {}\n", kLevelNames[static_cast<int>(level)], component, message);
  std::fflush(s.dest);
}

}  // namespace tessera

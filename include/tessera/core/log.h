// Logging for every layer. TESSERA_LOG_LEVEL picks the level (OFF, ERR, WARN, INFO, DEBUG,
// TRACE; default WARN) and TESSERA_LOG_DEST the destination (stdout, stderr or a file name;
// default stderr), in the manner of Poplar's POPLAR_LOG_LEVEL / POPLAR_LOG_DEST (spec 001 §9).
#pragma once

#include <string_view>
#include <utility>

#include <fmt/format.h>

namespace tessera {

enum class LogLevel { off = 0, err = 1, warn = 2, info = 3, debug = 4, trace = 5 };

LogLevel log_level();
void set_log_level(LogLevel level);
// Re-reads TESSERA_LOG_LEVEL and TESSERA_LOG_DEST (called once on first use).
void configure_logging_from_env();
void log_message(LogLevel level, std::string_view component, std::string_view message);

template <typename... Args>
void log(LogLevel level, std::string_view component, fmt::format_string<Args...> format,
         Args&&... args) {
  if (static_cast<int>(level) > static_cast<int>(log_level())) return;
  log_message(level, component, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace tessera

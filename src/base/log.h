// Logging to stderr, and optionally to a file as well. Messages are formatted with fmt;
// the sinks are spdlog's.
#pragma once

#include <fmt/format.h>

#include <string>
#include <string_view>

#include "base/status.h"

namespace hearth {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

void set_log_level(LogLevel level);
LogLevel log_level();
void log_message(LogLevel level, std::string_view message);

// Also writes every log line to `path`, truncating it (console output continues); a second
// call replaces the previous file. A kIo error when the file cannot be opened. Call it at
// startup, before other threads log: the logger's sink list is not locked.
Status set_log_file(const std::string& path);

template <typename... Args>
void log_debug(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() <= LogLevel::kDebug)
    log_message(LogLevel::kDebug, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_info(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() <= LogLevel::kInfo)
    log_message(LogLevel::kInfo, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_warn(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() <= LogLevel::kWarn)
    log_message(LogLevel::kWarn, fmt::format(f, std::forward<Args>(args)...));
}
template <typename... Args>
void log_error(fmt::format_string<Args...> f, Args&&... args) {
  if (log_level() <= LogLevel::kError)
    log_message(LogLevel::kError, fmt::format(f, std::forward<Args>(args)...));
}

}  // namespace hearth

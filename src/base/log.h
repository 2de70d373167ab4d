// Logging to stderr, and optionally to a file as well. Messages are formatted with fmt;
// the sinks are spdlog's. A line reads like llama-server's: "M.SS.mmm.uuu L message", the
// time since start (minutes.seconds.milliseconds.microseconds), then the level letter
// (I/W/E/D); both parts and their colours are set by set_log_format.
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

// The start of each line. Colours are the reference's ANSI codes: the time blue, the letter
// green/magenta/red/yellow for info/warning/error/debug; a warning's, error's or debug
// message keeps its letter's colour to the end of the line.
struct LogFormat {
  bool prefix = true;      // the level letter
  bool timestamps = true;  // the time since start; written only with the prefix
  bool colors = false;
};
// Call it at startup, before other threads log. Lines in the log file get the same text.
void set_log_format(const LogFormat& format);
LogFormat log_format();
// Whether "auto" colours apply: NO_COLOR unset or empty, TERM not "dumb", and stdout or
// stderr a terminal (the reference's test).
bool terminal_wants_colors();

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

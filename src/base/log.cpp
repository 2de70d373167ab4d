#include "base/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>

namespace hearth {
namespace {

// The line is built by line_for(); spdlog adds only the end of line.
constexpr const char* kPattern = "%v";

constexpr std::string_view kColorReset = "\033[0m";
constexpr std::string_view kColorTime = "\033[34m";  // blue

// Timestamps count from here: static initialisation, as near the process start as the
// reference's logger construction.
const auto g_start = std::chrono::steady_clock::now();

std::atomic<LogLevel> g_level{LogLevel::kWarn};
LogFormat g_format;                                // set_log_format's; written at startup only
std::shared_ptr<spdlog::sinks::sink> g_file_sink;  // set_log_file's sink, if any

spdlog::logger& logger() {
  static auto instance = [] {
    auto l = spdlog::stderr_logger_mt("hearth");
    l->set_pattern(kPattern);
    l->set_level(spdlog::level::trace);
    return l;
  }();
  return *instance;
}

struct LevelLook {
  char letter;
  std::string_view color;
};

LevelLook level_look(LogLevel level) {
  switch (level) {
    case LogLevel::kDebug:
      return {'D', "\033[33m"};  // yellow
    case LogLevel::kInfo:
      return {'I', "\033[32m"};  // green
    case LogLevel::kWarn:
      return {'W', "\033[35m"};  // magenta
    default:
      return {'E', "\033[31m"};  // red
  }
}

// "M.SS.mmm.uuu ": whole minutes are not wrapped into hours, as in the reference.
std::string elapsed_stamp() {
  const auto us = std::chrono::duration_cast<std::chrono::microseconds>(
                      std::chrono::steady_clock::now() - g_start)
                      .count();
  return fmt::format("{}.{:02}.{:03}.{:03} ", us / 60'000'000, us / 1'000'000 % 60,
                     us / 1000 % 1000, us % 1000);
}

std::string line_for(LogLevel level, std::string_view message) {
  const LogFormat& f = g_format;
  if (!f.prefix) return std::string(message);
  const LevelLook look = level_look(level);
  std::string line;
  if (f.timestamps) {
    if (f.colors) line += kColorTime;
    line += elapsed_stamp();
    if (f.colors) line.insert(line.size() - 1, kColorReset);  // the space stays plain
  }
  if (f.colors) line += look.color;
  line += look.letter;
  line += ' ';
  // Info text is plain; the other levels' text keeps the letter's colour (reset at the end).
  const bool tinted = f.colors && level != LogLevel::kInfo;
  if (f.colors && !tinted) line += kColorReset;
  line += message;
  if (tinted) line += kColorReset;
  return line;
}

}  // namespace

void set_log_format(const LogFormat& format) {
  g_format = format;
}
LogFormat log_format() {
  return g_format;
}

bool terminal_wants_colors() {
  if (const char* no_color = std::getenv("NO_COLOR"); no_color && no_color[0] != '\0') {
    return false;
  }
  if (const char* term = std::getenv("TERM"); term && std::string_view(term) == "dumb") {
    return false;
  }
  return isatty(fileno(stdout)) != 0 || isatty(fileno(stderr)) != 0;
}

void set_log_level(LogLevel level) {
  g_level.store(level);
}
LogLevel log_level() {
  return g_level.load(std::memory_order_relaxed);
}

void log_message(LogLevel level, std::string_view message) {
  if (level == LogLevel::kOff) return;
  const std::string line = line_for(level, message);
  switch (level) {
    case LogLevel::kDebug:
      logger().debug("{}", line);
      break;
    case LogLevel::kInfo:
      logger().info("{}", line);
      break;
    case LogLevel::kWarn:
      logger().warn("{}", line);
      break;
    default:
      logger().error("{}", line);
      break;
  }
}

Status set_log_file(const std::string& path) {
  std::shared_ptr<spdlog::sinks::sink> sink;
  try {
    sink = std::make_shared<spdlog::sinks::basic_file_sink_mt>(path, /*truncate=*/true);
  } catch (const spdlog::spdlog_ex& e) {
    return error(ErrorCode::kIo, "cannot open log file '" + path + "': " + e.what());
  }
  sink->set_pattern(kPattern);
  auto& sinks = logger().sinks();
  if (g_file_sink) sinks.erase(std::remove(sinks.begin(), sinks.end(), g_file_sink), sinks.end());
  sinks.push_back(sink);
  g_file_sink = std::move(sink);
  // Every line reaches the file at once, so a crash or kill loses nothing already logged.
  logger().flush_on(spdlog::level::trace);
  return Status::ok();
}

}  // namespace hearth

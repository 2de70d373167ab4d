#include "base/log.h"

#include <spdlog/sinks/basic_file_sink.h>
#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <atomic>
#include <memory>

namespace hearth {
namespace {

constexpr const char* kPattern = "%L %H:%M:%S.%e %v";

std::atomic<LogLevel> g_level{LogLevel::kWarn};
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

}  // namespace

void set_log_level(LogLevel level) {
  g_level.store(level);
}
LogLevel log_level() {
  return g_level.load(std::memory_order_relaxed);
}

void log_message(LogLevel level, std::string_view message) {
  switch (level) {
    case LogLevel::kDebug:
      logger().debug("{}", message);
      break;
    case LogLevel::kInfo:
      logger().info("{}", message);
      break;
    case LogLevel::kWarn:
      logger().warn("{}", message);
      break;
    case LogLevel::kError:
      logger().error("{}", message);
      break;
    case LogLevel::kOff:
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

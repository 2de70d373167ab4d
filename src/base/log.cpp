#include "base/log.h"

#include <spdlog/sinks/stdout_sinks.h>
#include <spdlog/spdlog.h>

#include <atomic>

namespace hearth {
namespace {

std::atomic<LogLevel> g_level{LogLevel::kWarn};

spdlog::logger& logger() {
  static auto instance = [] {
    auto l = spdlog::stderr_logger_mt("hearth");
    l->set_pattern("%L %H:%M:%S.%e %v");
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

}  // namespace hearth

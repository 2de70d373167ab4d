#include "server_env.h"

#include <cstdlib>
#include <optional>
#include <string>

#include "base/log.h"

namespace hearth::server_tool {

namespace {

std::optional<std::string> env(const char* name) {
  const char* value = std::getenv(name);
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

// A whole number in [min, max], or nullopt.
std::optional<uint64_t> whole_number(const std::string& text, uint64_t min, uint64_t max) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  if (value < min || value > max) return std::nullopt;
  return value;
}

std::string with_leading_slash(std::string route) {
  if (route.front() != '/') route.insert(route.begin(), '/');
  return route;
}

}  // namespace

Status apply_vertex_env(server::ServerConfig& config) {
  if (env("AIP_MODE") != "PREDICTION") return Status::ok();
  int port = 8080;
  if (auto text = env("AIP_HTTP_PORT")) {
    auto value = whole_number(*text, 1, 65535);
    if (!value)
      return Status(ErrorCode::kInvalidArgument, "AIP_HTTP_PORT is not a port: '" + *text + "'");
    port = static_cast<int>(*value);
  }
  const std::string predict = with_leading_slash(env("AIP_PREDICT_ROUTE").value_or("/predict"));
  if (server::has_route(predict)) {
    return Status(
        ErrorCode::kInvalidArgument,
        "AIP_PREDICT_ROUTE=" + predict + " conflicts with an existing llama-server route");
  }
  if (config.http.port != port) {
    log_warn("Google Cloud Platform compat: overriding server port {} with AIP_HTTP_PORT {}",
             config.http.port, port);
  }
  config.http.port = port;
  config.vertex_predict_route = predict;
  if (auto health = env("AIP_HEALTH_ROUTE"))
    config.vertex_health_route = with_leading_slash(*health);
  return Status::ok();
}

Status apply_stream_env(server::ServerConfig& config) {
  server::streams::StreamLimits& limits = config.stream_limits;
  struct Knob {
    const char* name;
    uint64_t min;
    uint64_t* value;
  };
  uint64_t ttl_ms = static_cast<uint64_t>(limits.ttl.count());
  uint64_t sessions = limits.max_sessions;
  uint64_t bytes = limits.max_session_bytes;
  for (const Knob& knob :
       {Knob{"HEARTH_STREAM_TTL_MS", 0, &ttl_ms}, Knob{"HEARTH_STREAM_MAX_SESSIONS", 1, &sessions},
        Knob{"HEARTH_STREAM_MAX_BYTES", 1, &bytes}}) {
    auto text = env(knob.name);
    if (!text) continue;
    auto value = whole_number(*text, knob.min, uint64_t{1} << 40);
    if (!value) {
      return Status(ErrorCode::kInvalidArgument,
                    std::string(knob.name) + " is not a whole number >= " +
                        std::to_string(knob.min) + ": '" + *text + "'");
    }
    *knob.value = *value;
  }
  limits.ttl = std::chrono::milliseconds(ttl_ms);
  limits.max_sessions = sessions;
  limits.max_session_bytes = bytes;
  return Status::ok();
}

}  // namespace hearth::server_tool

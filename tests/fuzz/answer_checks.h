// What every fuzz target over the server's routes checks in an answer, as a client would
// read it: a status a client can act on (a client's mistake is never a 500), errors in the
// JSON envelope, JSON bodies that parse, and streams whose every frame is JSON (or [DONE])
// with no server error among them.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace hearth::fuzz {

[[noreturn]] inline void fail(const char* target, const std::string& problem,
                              std::string_view input) {
  std::fprintf(stderr, "%s: %s\ninput: %.*s\n", target, problem.c_str(),
               static_cast<int>(std::min<size_t>(input.size(), 400)), input.data());
  std::abort();
}

inline std::string shared_dir() {
  if (const char* dir = std::getenv("HEARTH_SHARED_DIR")) return dir;
  return HEARTH_DEFAULT_SHARED_DIR;
}

// An error object: {"error": {"code": 4xx, "message": "...", "type": "..."}} (OpenAI) or
// {"type": "error", "error": {"type": ..., "message": ...}} (Anthropic).
inline bool is_error_envelope(const nlohmann::ordered_json& j) {
  if (!j.is_object() || !j.contains("error") || !j["error"].is_object()) return false;
  return j["error"].contains("message") && j["error"]["message"].is_string();
}

inline bool is_server_error(const nlohmann::ordered_json& j) {
  const auto& e = j["error"];
  if (e.contains("code") && e["code"].is_number_integer() && e["code"].get<int>() >= 500) {
    return true;
  }
  return e.value("type", "") == "server_error" || e.value("type", "") == "api_error";
}

// The `data:` payloads of an SSE body; every one must be JSON or [DONE].
inline void check_stream(const char* target, const std::string& body, std::string_view input) {
  size_t at = 0;
  while ((at = body.find("data: ", at)) != std::string::npos) {
    const size_t end = body.find('\n', at);
    const std::string payload = body.substr(at + 6, end == std::string::npos ? end : end - at - 6);
    at = end == std::string::npos ? body.size() : end;
    if (payload == "[DONE]") continue;
    const auto j = nlohmann::ordered_json::parse(payload, nullptr, false);
    if (j.is_discarded()) fail(target, "a stream frame does not parse: " + payload, input);
    if (j.is_object() && j.contains("error")) {
      if (!is_error_envelope(j)) fail(target, "an error frame outside the envelope", input);
      if (is_server_error(j)) fail(target, "a server error frame: " + payload, input);
    }
  }
}

inline void check_answer(const char* target, int status, const std::string& content_type,
                         const std::string& body, bool streamed, std::string_view input) {
  if (status < 100 || status > 599) fail(target, "status " + std::to_string(status), input);
  if (status >= 500) fail(target, "answered " + std::to_string(status) + ": " + body, input);
  if (streamed || content_type.rfind("text/event-stream", 0) == 0) {
    check_stream(target, body, input);
    return;
  }
  if (content_type.rfind("application/json", 0) != 0 || body.empty()) return;
  const auto parsed = nlohmann::ordered_json::parse(body, nullptr, false);
  if (parsed.is_discarded()) fail(target, "the JSON body does not parse: " + body, input);
  if (status >= 400 && !is_error_envelope(parsed)) {
    fail(target, "an error outside the envelope: " + body, input);
  }
}

}  // namespace hearth::fuzz

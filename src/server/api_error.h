// Errors of the HTTP API: llama-server's error types, each with its one HTTP status, and
// the JSON envelope they travel in. Every error body the server sends is built here: the
// handlers', the middleware's, the disabled features', and the transport's own (malformed
// HTTP, limits, timeouts, the connection limit).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "scheduler/task.h"
#include "server/http/http.h"
#include "server/json_util.h"

namespace hearth::server {

enum class ErrorType {
  kInvalidRequest,  // 400 invalid_request_error
  kExceedContext,   // 400 exceed_context_size_error (+ n_prompt_tokens, n_ctx)
  kAuthentication,  // 401 authentication_error
  kPermission,      // 403 permission_error
  kNotFound,        // 404 not_found_error
  kServer,          // 500 server_error
  kNotSupported,    // 501 not_supported_error
  kUnavailable,     // 503 unavailable_error
};

struct ApiError {
  ErrorType type = ErrorType::kServer;
  std::string message;
  int32_t n_prompt_tokens = 0;  // kExceedContext only
  int32_t n_ctx = 0;            // kExceedContext only
  // The HTTP status when it is not the type's own (the transport's 408, 413, 431).
  int status = 0;
  // Further members of the error object (the loading gate's download progress); null: none.
  Json details = nullptr;
};

int http_status(ErrorType type);
const char* error_type_name(ErrorType type);

inline ApiError invalid_request(std::string message) {
  return {ErrorType::kInvalidRequest, std::move(message)};
}
inline ApiError server_error(std::string message) {
  return {ErrorType::kServer, std::move(message)};
}

// A failed Status from a lower layer as the API reports it: a bad argument is the client's
// (400), a full queue or a stopping server is 503, anything else 500.
ApiError from_status(const Status& status);
// A task's error as the scheduler reported it.
ApiError from_task_error(const scheduler::TaskError& error);

// {"error":{"code":..,"message":..,"type":..}} (compact JSON, llama-server's key order).
std::string error_body(const ApiError& error);
http::Response error_response(const ApiError& error);

// The fixed bodies the reference's middleware sends (their key order differs).
http::Response not_found_response();        // 404 File Not Found
http::Response invalid_api_key_response();  // 401 Invalid API Key
// 503 Loading model; `progress` (when set and not null) adds what loading is doing.
http::Response loading_response(const std::function<Json()>& progress = nullptr);
// 403 {"error":{"message":"this feature is disabled","type":"feature_disabled"}}
http::Response feature_disabled_response();

// The transport's own errors (malformed HTTP, limits, timeouts, the connection limit), in
// the standard envelope; the HTTP layer's error renderer.
http::Response transport_error_response(http::TransportError error, std::string_view detail);

}  // namespace hearth::server

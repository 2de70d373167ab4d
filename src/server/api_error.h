// Errors of the HTTP API: llama-server's error types, each with its one HTTP status, and
// the JSON envelope they travel in. Every route reports errors through this file.
#pragma once

#include <cstdint>
#include <string>

#include "server/http/http.h"

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
};

int http_status(ErrorType type);
const char* error_type_name(ErrorType type);

inline ApiError invalid_request(std::string message) {
  return {ErrorType::kInvalidRequest, std::move(message)};
}
inline ApiError server_error(std::string message) {
  return {ErrorType::kServer, std::move(message)};
}

// {"error":{"code":..,"message":..,"type":..}} (compact JSON, llama-server's key order).
std::string error_body(const ApiError& error);
http::Response error_response(const ApiError& error);

// The fixed bodies the reference's middleware sends (their key order differs).
http::Response not_found_response();        // 404 File Not Found
http::Response invalid_api_key_response();  // 401 Invalid API Key
http::Response loading_response();          // 503 Loading model

}  // namespace hearth::server

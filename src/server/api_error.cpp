#include "server/api_error.h"

#include "server/json_util.h"

namespace hearth::server {

int http_status(ErrorType type) {
  switch (type) {
    case ErrorType::kInvalidRequest:
    case ErrorType::kExceedContext:
      return 400;
    case ErrorType::kAuthentication:
      return 401;
    case ErrorType::kPermission:
      return 403;
    case ErrorType::kNotFound:
      return 404;
    case ErrorType::kServer:
      return 500;
    case ErrorType::kNotSupported:
      return 501;
    case ErrorType::kUnavailable:
      return 503;
  }
  return 500;
}

const char* error_type_name(ErrorType type) {
  switch (type) {
    case ErrorType::kInvalidRequest:
      return "invalid_request_error";
    case ErrorType::kExceedContext:
      return "exceed_context_size_error";
    case ErrorType::kAuthentication:
      return "authentication_error";
    case ErrorType::kPermission:
      return "permission_error";
    case ErrorType::kNotFound:
      return "not_found_error";
    case ErrorType::kServer:
      return "server_error";
    case ErrorType::kNotSupported:
      return "not_supported_error";
    case ErrorType::kUnavailable:
      return "unavailable_error";
  }
  return "server_error";
}

std::string error_body(const ApiError& error) {
  Json inner = Json::object();
  inner["code"] = http_status(error.type);
  inner["message"] = error.message;
  inner["type"] = error_type_name(error.type);
  if (error.type == ErrorType::kExceedContext) {
    inner["n_prompt_tokens"] = error.n_prompt_tokens;
    inner["n_ctx"] = error.n_ctx;
  }
  Json body = Json::object();
  body["error"] = std::move(inner);
  return dump_json(body);
}

http::Response error_response(const ApiError& error) {
  http::Response response;
  response.status = http_status(error.type);
  response.body = error_body(error);
  return response;
}

namespace {

http::Response middleware_error(int status, const char* message, const char* type) {
  Json inner = Json::object();
  inner["message"] = message;
  inner["type"] = type;
  inner["code"] = status;
  Json body = Json::object();
  body["error"] = std::move(inner);
  http::Response response;
  response.status = status;
  response.body = dump_json(body);
  return response;
}

}  // namespace

http::Response not_found_response() {
  return middleware_error(404, "File Not Found", "not_found_error");
}

http::Response invalid_api_key_response() {
  return middleware_error(401, "Invalid API Key", "authentication_error");
}

http::Response loading_response() {
  // The loading gate builds its body like the handlers do: code, message, type.
  return error_response({ErrorType::kUnavailable, "Loading model"});
}

}  // namespace hearth::server

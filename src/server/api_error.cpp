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

ApiError from_status(const Status& status) {
  switch (status.code()) {
    case ErrorCode::kInvalidArgument:
    case ErrorCode::kOutOfRange:
      return invalid_request(status.message());
    case ErrorCode::kResourceExhausted:
      return {ErrorType::kUnavailable, status.message()};
    case ErrorCode::kUnsupported:
      return {ErrorType::kNotSupported, status.message()};
    default:
      return server_error(status.message());
  }
}

ApiError from_task_error(const scheduler::TaskError& error) {
  using Kind = scheduler::TaskError::Kind;
  switch (error.kind) {
    case Kind::kInvalidRequest:
      return invalid_request(error.message);
    case Kind::kExceedContext:
      return {ErrorType::kExceedContext, error.message, error.n_prompt_tokens, error.n_ctx};
    case Kind::kUnavailable:
      return {ErrorType::kUnavailable, error.message};
    case Kind::kServer:
      break;
  }
  return server_error(error.message);
}

namespace {

int status_of(const ApiError& error) {
  return error.status != 0 ? error.status : http_status(error.type);
}

}  // namespace

std::string error_body(const ApiError& error) {
  Json inner = Json::object();
  inner["code"] = status_of(error);
  inner["message"] = error.message;
  inner["type"] = error_type_name(error.type);
  if (error.type == ErrorType::kExceedContext) {
    inner["n_prompt_tokens"] = error.n_prompt_tokens;
    inner["n_ctx"] = error.n_ctx;
  }
  if (error.details.is_object())
    for (const auto& [key, value] : error.details.items()) inner[key] = value;
  Json body = Json::object();
  body["error"] = std::move(inner);
  return dump_json(body);
}

http::Response error_response(const ApiError& error) {
  http::Response response;
  response.status = status_of(error);
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

http::Response loading_response(const std::function<Json()>& progress) {
  // The loading gate builds its body like the handlers do: code, message, type.
  ApiError error{ErrorType::kUnavailable, "Loading model"};
  if (progress) {
    if (Json extra = progress(); !extra.is_null()) error.details = {{"progress", std::move(extra)}};
  }
  return error_response(error);
}

http::Response feature_disabled_response() {
  Json inner = Json::object();
  inner["message"] = "this feature is disabled";
  inner["type"] = "feature_disabled";
  Json body = Json::object();
  body["error"] = std::move(inner);
  http::Response response;
  response.status = 403;
  response.body = dump_json(body);
  return response;
}

http::Response transport_error_response(http::TransportError error, std::string_view detail) {
  using http::TransportError;
  ApiError api;
  api.status = http::transport_status(error);
  switch (error) {
    case TransportError::kBadRequest:
      api = {ErrorType::kInvalidRequest, "malformed HTTP request"};
      if (!detail.empty()) api.message += ": " + std::string(detail);
      break;
    case TransportError::kUnknownMethod:
      api = {ErrorType::kInvalidRequest, "unsupported HTTP method"};
      break;
    case TransportError::kHeadersTooLarge:
      api = {ErrorType::kInvalidRequest,
             "request headers too large (at most " + std::to_string(http::kMaxHeaderFields) +
                 " fields and " + std::to_string(http::kMaxHeaderBytes / 1024) + " KiB)"};
      break;
    case TransportError::kBodyTooLarge:
      api = {ErrorType::kInvalidRequest, "request body too large"};
      break;
    case TransportError::kRequestTimeout:
      api = {ErrorType::kInvalidRequest, std::string(detail)};
      break;
    case TransportError::kTooManyConnections:
      api = {ErrorType::kUnavailable, std::string(detail)};
      break;
    case TransportError::kHandlerFailed:
      api = server_error(std::string(detail));
      break;
  }
  api.status = http::transport_status(error);
  http::Response response = error_response(api);
  response.headers.emplace_back("Connection", "close");
  return response;
}

}  // namespace hearth::server

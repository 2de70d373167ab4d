#include "server/request_body.h"

#include <cmath>
#include <vector>

namespace hearth::server {

namespace {

// True when every number in `value` is finite (a literal such as 1e400 parses to infinity).
// The depth is already bounded, so an explicit stack is only for tidiness.
bool all_numbers_finite(const Json& value) {
  std::vector<const Json*> stack{&value};
  while (!stack.empty()) {
    const Json* v = stack.back();
    stack.pop_back();
    if (v->is_number_float() && !std::isfinite(v->get<double>())) return false;
    if (v->is_structured()) {
      for (const Json& child : *v) stack.push_back(&child);
    }
  }
  return true;
}

}  // namespace

int json_depth(std::string_view text, int limit) {
  int depth = 0;
  int deepest = 0;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (in_string) {
      if (c == '\\') {
        ++i;  // the escaped character cannot end the string
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) return deepest;
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

std::optional<ApiError> parse_json_body(std::string_view body, Json& out) {
  if (json_depth(body, kMaxJsonDepth) > kMaxJsonDepth) {
    return invalid_request("Invalid JSON in request body: nested deeper than " +
                           std::to_string(kMaxJsonDepth) + " levels");
  }
  try {
    out = Json::parse(body.begin(), body.end());
  } catch (const Json::exception& e) {
    return invalid_request("Invalid JSON in request body: " + without_library_tags(e.what()));
  }
  if (!all_numbers_finite(out)) {
    return invalid_request("Invalid JSON in request body: a number is too large for a double");
  }
  return std::nullopt;
}

std::optional<ApiError> parse_json_object(std::string_view body, Json& out) {
  if (auto err = parse_json_body(body, out)) return err;
  if (!out.is_object()) {
    return invalid_request(std::string("The request body must be a JSON object, but is ") +
                           out.type_name());
  }
  return std::nullopt;
}

}  // namespace hearth::server

// Reading JSON values with llama-server's validation rules (native-completion.md §3.1):
// numbers from any JSON number or boolean, 32-bit wrap-around of integers, hard ranges
// rejected with the reference's message.
#include <algorithm>
#include <cmath>

#include "server/fields/field.h"

namespace hearth::server::fields {

ApiError type_error(const std::string& used, const char* expected, const Json& value) {
  return invalid_request("Field '" + used + "': type must be " + expected + ", but is " +
                         std::string(value.type_name()));
}

ApiError field_error(const std::string& used, const std::string& why) {
  return invalid_request("Field '" + used + "': " + why);
}

std::optional<ApiError> to_int64(const Json& v, const std::string& used, int64_t& out) {
  if (v.is_boolean()) {
    out = v.get<bool>() ? 1 : 0;
  } else if (v.is_number_unsigned()) {
    out = static_cast<int64_t>(v.get<uint64_t>());
  } else if (v.is_number_integer()) {
    out = v.get<int64_t>();
  } else if (v.is_number_float()) {
    const double d = v.get<double>();
    if (!std::isfinite(d)) {
      out = 0;
    } else {
      const double lim = 9.2e18;
      out = static_cast<int64_t>(std::clamp(std::trunc(d), -lim, lim));
    }
  } else {
    return type_error(used, "number", v);
  }
  return std::nullopt;
}

std::optional<ApiError> to_int32(const Json& v, const std::string& used, int32_t& out) {
  int64_t wide = 0;
  if (auto err = to_int64(v, used, wide)) return err;
  // The reference reads the value into a 32-bit int: wider values wrap modulo 2^32.
  out = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(wide)));
  return std::nullopt;
}

std::optional<ApiError> to_float(const Json& v, const std::string& used, float& out) {
  if (v.is_boolean()) {
    out = v.get<bool>() ? 1.0f : 0.0f;
  } else if (v.is_number()) {
    out = static_cast<float>(v.get<double>());
  } else {
    return type_error(used, "number", v);
  }
  return std::nullopt;
}

std::optional<ApiError> to_bool(const Json& v, const std::string& used, bool& out) {
  if (!v.is_boolean()) return type_error(used, "boolean", v);
  out = v.get<bool>();
  return std::nullopt;
}

std::optional<ApiError> to_string(const Json& v, const std::string& used, std::string& out) {
  if (!v.is_string()) return type_error(used, "string", v);
  out = v.get<std::string>();
  return std::nullopt;
}

namespace {

std::optional<ApiError> out_of_range(const std::string& used, const std::string& lo,
                                     const std::string& hi, const std::string& got) {
  return invalid_request("Field '" + used + "': Value must be between " + lo +
                         " <= value <= " + hi + ", but got " + got);
}

}  // namespace

std::optional<ApiError> check_range(const std::string& used, int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi) return std::nullopt;
  return out_of_range(used, std::to_string(lo), std::to_string(hi), std::to_string(v));
}

std::optional<ApiError> check_range(const std::string& used, float v, float lo, float hi) {
  if (v >= lo && v <= hi) return std::nullopt;
  return out_of_range(used, std::to_string(lo), std::to_string(hi), std::to_string(v));
}

std::optional<ApiError> check_limits(const Json& v, const std::string& used, const Limits& limits) {
  if (limits.max_items > 0 && v.is_array() && v.size() > limits.max_items) {
    return field_error(used, "at most " + std::to_string(limits.max_items) + " items, but got " +
                                 std::to_string(v.size()));
  }
  if (limits.max_bytes == 0) return std::nullopt;
  auto too_long = [&](const Json& s) {
    return s.is_string() && s.get_ref<const std::string&>().size() > limits.max_bytes;
  };
  const bool over = too_long(v) || (v.is_array() && std::any_of(v.begin(), v.end(), too_long));
  if (over) {
    return field_error(used, "strings of at most " + std::to_string(limits.max_bytes) + " bytes");
  }
  return std::nullopt;
}

}  // namespace hearth::server::fields

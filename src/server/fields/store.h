// Row parsers that store a JSON value of one type into a member of a table's target: for
// the tables whose members are strings, booleans, objects and arrays rather than numbers
// (the chat translators' bodies and the objects nested in them).
#pragma once

#include <optional>
#include <string>

#include "server/fields/field.h"

namespace hearth::server::fields {

template <class Out, std::string Out::*member>
std::optional<ApiError> store_string(const Json& v, const std::string& used, Out& out,
                                     const FieldContext&) {
  return to_string(v, used, out.*member);
}

template <class Out, std::optional<std::string> Out::*member>
std::optional<ApiError> store_optional_string(const Json& v, const std::string& used, Out& out,
                                              const FieldContext&) {
  if (!v.is_string()) return type_error(used, "string", v);
  out.*member = v.get<std::string>();
  return std::nullopt;
}

template <class Out, bool Out::*member>
std::optional<ApiError> store_bool(const Json& v, const std::string& used, Out& out,
                                   const FieldContext&) {
  return to_bool(v, used, out.*member);
}

template <class Out, std::optional<bool> Out::*member>
std::optional<ApiError> store_optional_bool(const Json& v, const std::string& used, Out& out,
                                            const FieldContext&) {
  if (!v.is_boolean()) return type_error(used, "boolean", v);
  out.*member = v.get<bool>();
  return std::nullopt;
}

// A JSON object kept as it is (its members are read by whatever it is handed to).
template <class Out, Json Out::*member>
std::optional<ApiError> store_object(const Json& v, const std::string& used, Out& out,
                                     const FieldContext&) {
  if (!v.is_object()) return type_error(used, "object", v);
  out.*member = v;
  return std::nullopt;
}

// A JSON array kept as it is.
template <class Out, Json Out::*member>
std::optional<ApiError> store_array(const Json& v, const std::string& used, Out& out,
                                    const FieldContext&) {
  if (!v.is_array()) return type_error(used, "array", v);
  out.*member = v;
  return std::nullopt;
}

// "'<path>' is required"
inline ApiError required_error(const std::string& path) {
  return invalid_request("'" + path + "' is required");
}

}  // namespace hearth::server::fields

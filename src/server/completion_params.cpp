// Parsing of the native completion fields with llama-server's validation rules
// (native-completion.md §3.1): aliases, JSON null = absent, numbers from any JSON number or
// boolean, 32-bit wrap-around of integers, hard ranges rejected and soft ranges clamped.
#include "server/completion_params.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "server/completion_params_internal.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server {

namespace detail {

const Json* find_field(const Json& body, std::string_view name, std::string& used) {
  const FieldInfo* info = nullptr;
  for (const FieldInfo& f : completion_fields()) {
    if (f.name == name) info = &f;
  }
  auto try_name = [&](std::string_view n) -> const Json* {
    auto it = body.find(std::string(n));
    if (it == body.end() || it->is_null()) return nullptr;
    used = std::string(n);
    return &*it;
  };
  if (const Json* v = try_name(name)) return v;
  if (info != nullptr) {
    for (std::string_view alias : info->aliases) {
      if (const Json* v = try_name(alias)) return v;
    }
  }
  return nullptr;
}

ApiError type_error(const std::string& used, const char* expected, const Json& value) {
  return invalid_request("Field '" + used + "': type must be " + expected + ", but is " +
                         std::string(value.type_name()));
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

std::optional<ApiError> out_of_range(const std::string& used, const std::string& lo,
                                     const std::string& hi, const std::string& got) {
  return invalid_request("Field '" + used + "': Value must be between " + lo +
                         " <= value <= " + hi + ", but got " + got);
}

std::optional<ApiError> check_range(const std::string& used, int64_t v, int64_t lo, int64_t hi) {
  if (v >= lo && v <= hi) return std::nullopt;
  return out_of_range(used, std::to_string(lo), std::to_string(hi), std::to_string(v));
}

std::optional<ApiError> check_range(const std::string& used, float v, float lo, float hi) {
  if (v >= lo && v <= hi) return std::nullopt;
  return out_of_range(used, std::to_string(lo), std::to_string(hi), std::to_string(v));
}

ApiError not_honoured(const std::string& used) {
  for (const FieldInfo& f : completion_fields()) {
    const bool match =
        f.name == used || std::find(f.aliases.begin(), f.aliases.end(), used) != f.aliases.end();
    if (!match) continue;
    if (f.state == FieldState::kDeferred) {
      return invalid_request("Field '" + used +
                             "': not supported by Hearth yet (deferred to issue " +
                             std::to_string(f.issue) + "); only its default value is accepted");
    }
    return invalid_request("Field '" + used +
                           "': not supported by Hearth: " + std::string(f.reason));
  }
  return invalid_request("Field '" + used + "': not supported by Hearth");
}

}  // namespace detail

std::optional<ApiError> parse_completion_settings(const Json& body, const RequestDefaults& defaults,
                                                  const tokenizer::Tokenizer& tok,
                                                  CompletionSettings& out) {
  out = CompletionSettings{};
  out.task.n_predict = defaults.n_predict;
  out.task.cache_prompt = defaults.cache_prompt;
  out.task.sampling = defaults.sampling;  // logit_bias: the server's -l list unless sent
  out.ignore_eos = defaults.ignore_eos;
  out.n_keep = defaults.n_keep;
  out.sse_ping_interval = defaults.sse_ping_interval;
  if (auto err = detail::parse_output_fields(body, out)) return err;
  if (auto err = detail::parse_length_fields(body, defaults, out)) return err;
  if (auto err = detail::parse_cache_fields(body, defaults, out)) return err;
  if (auto err = detail::parse_sampling_fields(body, out)) return err;
  if (auto err = detail::parse_penalty_fields(body, defaults, out)) return err;
  if (auto err = detail::parse_deferred_fields(body)) return err;
  if (auto err = detail::parse_bias_fields(body, tok, out)) return err;
  if (auto err = detail::parse_grammar_fields(body, defaults, tok, out)) return err;
  if (auto err = detail::check_sampler_params(out.task.sampling)) return err;
  if (auto err = detail::parse_misc_fields(body, out)) return err;
  return std::nullopt;
}

}  // namespace hearth::server

// The sampler-order and DRY fields (native-completion.md §3.6-3.7), and the checks the
// reference makes when it builds the sampler chain.
#include <algorithm>
#include <cmath>

#include "server/fields/completion_fields.h"

namespace hearth::server::fields {

std::optional<ApiError> parse_breakers(const Json& v, const std::string& used,
                                       CompletionSettings& out, const FieldContext&) {
  const bool valid = v.is_array() && !v.empty() &&
                     std::all_of(v.begin(), v.end(), [](const Json& b) { return b.is_string(); });
  if (!valid) {
    return field_error(used, "Error: dry_sequence_breakers must be a non-empty array of strings");
  }
  std::vector<std::string>& breakers = out.task.sampling.dry_sequence_breakers;
  breakers.clear();
  for (const Json& b : v) breakers.push_back(b.get<std::string>());
  return std::nullopt;
}

// `samplers`: an array of names, or a string read one letter per sampler. The reference
// skips names and letters it does not know; Hearth refuses them, naming the first.
std::optional<ApiError> parse_samplers(const Json& v, const std::string& used,
                                       CompletionSettings& out, const FieldContext&) {
  std::vector<sampling::SamplerType> samplers;
  if (v.is_array()) {
    for (const Json& n : v) {
      if (!n.is_string()) return type_error(used, "string", n);
      const auto type = sampling::sampler_from_name(n.get_ref<const std::string&>());
      if (!type) {
        return field_error(used, "unknown sampler '" + n.get<std::string>() +
                                     "' (known: penalties, dry, top_n_sigma, top_k, typ_p, "
                                     "top_p, min_p, xtc, temperature, infill, adaptive_p)");
      }
      samplers.push_back(*type);
    }
  } else if (v.is_string()) {
    for (char c : v.get_ref<const std::string&>()) {
      const auto type = sampling::sampler_from_char(c);
      if (!type) {
        return field_error(
            used, std::string("unknown sampler letter '") + c + "' (known: e d s k y p m x t i a)");
      }
      samplers.push_back(*type);
    }
  } else {
    return type_error(used, "array of names or string of letters", v);
  }
  out.task.sampling.samplers = std::move(samplers);
  return std::nullopt;
}

std::optional<ApiError> check_sampler_params(const scheduler::SamplingSettings& s) {
  const auto fail = [](const std::string& why) {
    return invalid_request("Failed to initialize samplers: " + why);
  };
  if (!std::isfinite(s.repeat_penalty) || s.repeat_penalty <= 0.0f ||
      !std::isfinite(1.0f / s.repeat_penalty)) {
    return fail("repeat_penalty must be finite and greater than 0");
  }
  if (!std::isfinite(s.frequency_penalty)) return fail("frequency_penalty must be finite");
  if (!std::isfinite(s.presence_penalty)) return fail("presence_penalty must be finite");
  return std::nullopt;
}

}  // namespace hearth::server::fields

// The repetition-penalty, DRY and sampler-order fields (native-completion.md §3.6-3.7), and
// the checks the reference makes when it builds the sampler chain.
#include <algorithm>
#include <cmath>
#include <limits>

#include "server/completion_params_internal.h"

namespace hearth::server::detail {

namespace {

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

std::optional<ApiError> parse_breakers(const Json& body, scheduler::SamplingSettings& s) {
  auto it = body.find("dry_sequence_breakers");
  if (it == body.end() || it->is_null()) return std::nullopt;
  const bool valid =
      it->is_array() && !it->empty() &&
      std::all_of(it->begin(), it->end(), [](const Json& b) { return b.is_string(); });
  if (!valid) {
    return invalid_request(
        "Field 'dry_sequence_breakers': Error: dry_sequence_breakers must be a non-empty array "
        "of strings");
  }
  s.dry_sequence_breakers.clear();
  for (const Json& b : *it) s.dry_sequence_breakers.push_back(b.get<std::string>());
  return std::nullopt;
}

// `samplers`: an array of names, or a string read one letter per sampler; other types keep
// the default order. Unknown names and letters are skipped, as the reference does.
void parse_samplers(const Json& body, scheduler::SamplingSettings& s) {
  auto it = body.find("samplers");
  if (it == body.end() || it->is_null()) return;
  if (it->is_array()) {
    std::vector<std::string> names;
    for (const Json& n : *it) {
      if (n.is_string()) names.push_back(n.get<std::string>());
    }
    s.samplers = sampling::samplers_from_names(names);
  } else if (it->is_string()) {
    s.samplers = sampling::samplers_from_chars(it->get<std::string>());
  }
}

}  // namespace

std::optional<ApiError> parse_penalty_fields(const Json& body, const RequestDefaults& defaults,
                                             CompletionSettings& out) {
  scheduler::SamplingSettings& s = out.task.sampling;
  if (auto err = opt_int(body, "repeat_last_n", s.repeat_last_n, 0, kIntMax)) return err;
  if (auto err = opt_float(body, "repeat_penalty", s.repeat_penalty)) return err;
  if (auto err = opt_float(body, "frequency_penalty", s.frequency_penalty)) return err;
  if (auto err = opt_float(body, "presence_penalty", s.presence_penalty)) return err;
  if (auto err = opt_float(body, "dry_multiplier", s.dry_multiplier)) return err;
  if (auto err = opt_float(body, "dry_base", s.dry_base)) return err;
  if (s.dry_base < 1.0f) s.dry_base = defaults.sampling.dry_base;
  if (auto err = opt_int(body, "dry_allowed_length", s.dry_allowed_length, 0, kIntMax)) {
    return err;
  }
  if (auto err = opt_int(body, "dry_penalty_last_n", s.dry_penalty_last_n, 0, kIntMax)) {
    return err;
  }
  if (auto err = parse_breakers(body, s)) return err;
  parse_samplers(body, s);
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

}  // namespace hearth::server::detail

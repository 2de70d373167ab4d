// The supported completion fields, group by group, in the reference's schema order.
#include <algorithm>
#include <limits>

#include "server/completion_params_internal.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server::detail {

namespace {

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

}  // namespace

std::optional<ApiError> opt_bool(const Json& body, std::string_view name, bool& out) {
  std::string used;
  const Json* v = find_field(body, name, used);
  return v == nullptr ? std::nullopt : to_bool(*v, used, out);
}

std::optional<ApiError> opt_int(const Json& body, std::string_view name, int32_t& out, int64_t lo,
                                int64_t hi) {
  std::string used;
  const Json* v = find_field(body, name, used);
  if (v == nullptr) return std::nullopt;
  int32_t value = 0;
  if (auto err = to_int32(*v, used, value)) return err;
  if (auto err = check_range(used, value, lo, hi)) return err;
  out = value;
  return std::nullopt;
}

std::optional<ApiError> opt_float(const Json& body, std::string_view name, float& out) {
  std::string used;
  const Json* v = find_field(body, name, used);
  return v == nullptr ? std::nullopt : to_float(*v, used, out);
}

std::optional<ApiError> opt_float_soft(const Json& body, std::string_view name, float& out,
                                       float lo, float hi) {
  std::string used;
  const Json* v = find_field(body, name, used);
  if (v == nullptr) return std::nullopt;
  float value = 0.0f;
  if (auto err = to_float(*v, used, value)) return err;
  out = std::clamp(value, lo, hi);
  return std::nullopt;
}

std::optional<ApiError> parse_output_fields(const Json& body, CompletionSettings& out) {
  if (auto err = opt_bool(body, "stream", out.task.stream)) return err;
  auto options = body.find("stream_options");
  if (options != body.end() && options->is_object()) {
    bool include_usage = false;  // no effect on the native routes
    auto it = options->find("include_usage");
    if (it != options->end() && !it->is_null()) {
      if (auto err = to_bool(*it, "include_usage", include_usage)) return err;
    }
  }
  if (auto err = opt_bool(body, "timings_per_token", out.timings_per_token)) return err;
  if (auto err = opt_bool(body, "return_tokens", out.return_tokens)) return err;
  if (auto err = opt_bool(body, "return_progress", out.task.return_progress)) return err;
  auto fields = body.find("response_fields");
  if (fields != body.end() && fields->is_array() && !fields->empty() &&
      std::all_of(fields->begin(), fields->end(), [](const Json& f) { return f.is_string(); })) {
    out.response_fields.emplace();
    for (const Json& f : *fields) out.response_fields->push_back(f.get<std::string>());
  }
  bool verbose = false;  // accepted, no effect on the native routes (as the reference)
  if (auto err = opt_bool(body, "verbose", verbose)) return err;
  if (auto err = opt_int(body, "sse_ping_interval", out.sse_ping_interval, -1, kIntMax)) {
    return err;
  }
  std::string used;
  if (const Json* v = find_field(body, "n_probs", used)) {
    if (auto err = to_int32(*v, used, out.task.n_probs)) return err;
  }
  return opt_bool(body, "post_sampling_probs", out.task.post_sampling_probs);
}

namespace {

// `stop`: a string or an array of strings; other types fall back to the server list.
std::optional<ApiError> parse_stop(const Json& body, const RequestDefaults& defaults,
                                   CompletionSettings& out) {
  std::vector<std::string> stop;
  auto it = body.find("stop");
  if (it != body.end() && it->is_string()) {
    stop.push_back(it->get<std::string>());
  } else if (it != body.end() && it->is_array()) {
    for (const Json& s : *it) {
      if (!s.is_string()) return type_error("stop", "string", s);
      if (!s.get<std::string>().empty()) stop.push_back(s.get<std::string>());
    }
  }
  out.task.stop = stop.empty() ? defaults.stop : std::move(stop);
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> parse_length_fields(const Json& body, const RequestDefaults& defaults,
                                            CompletionSettings& out) {
  if (auto err = opt_int(body, "n_predict", out.task.n_predict, -1, kIntMax)) return err;
  if (auto err = parse_stop(body, defaults, out)) return err;
  if (auto err = opt_bool(body, "ignore_eos", out.ignore_eos)) return err;
  if (auto err = opt_int(body, "n_indent", out.task.n_indent, 0, kIntMax)) return err;
  std::string used;
  if (const Json* v = find_field(body, "t_max_predict_ms", used)) {
    int64_t ms = 0;
    if (auto err = to_int64(*v, used, ms)) return err;
    if (auto err = check_range(used, ms, -1, std::numeric_limits<int64_t>::max())) return err;
    out.task.t_max_predict_ms = ms;
  }
  return std::nullopt;
}

std::optional<ApiError> parse_cache_fields(const Json& body, const RequestDefaults& defaults,
                                           CompletionSettings& out) {
  if (auto err = opt_bool(body, "cache_prompt", out.task.cache_prompt)) return err;
  int32_t n_cache_reuse = defaults.n_cache_reuse;
  if (auto err = opt_int(body, "n_cache_reuse", n_cache_reuse, 0, kIntMax)) return err;
  if (n_cache_reuse != 0) return not_honoured("n_cache_reuse");
  if (auto err = opt_int(body, "n_keep", out.n_keep, -1, kIntMax)) return err;
  if (auto err = opt_int(body, "n_discard", out.n_discard, 0, kIntMax)) return err;
  return opt_int(body, "n_cmpl", out.n_cmpl, 1, defaults.n_slots);
}

std::optional<ApiError> parse_sampling_fields(const Json& body, CompletionSettings& out) {
  scheduler::SamplingSettings& s = out.task.sampling;
  const float inf = std::numeric_limits<float>::infinity();
  if (auto err = opt_float_soft(body, "temperature", s.temperature, 0.0f, inf)) return err;
  std::string used;
  if (const Json* v = find_field(body, "top_k", used)) {
    if (auto err = to_int32(*v, used, s.top_k)) return err;
    s.top_k = std::max(s.top_k, 0);
  }
  if (auto err = opt_float_soft(body, "top_p", s.top_p, 0.0f, 1.0f)) return err;
  if (auto err = opt_float_soft(body, "min_p", s.min_p, 0.0f, 1.0f)) return err;
  if (const Json* v = find_field(body, "seed", used)) {
    int64_t seed = 0;
    if (auto err = to_int64(*v, used, seed)) return err;
    s.seed = static_cast<uint32_t>(static_cast<uint64_t>(seed));
  }
  if (auto err = opt_int(body, "min_keep", s.min_keep, 0, kIntMax)) return err;
  if (auto err = opt_float(body, "dynatemp_range", s.dynatemp_range)) return err;
  if (auto err = opt_float(body, "dynatemp_exponent", s.dynatemp_exponent)) return err;
  if (auto err = opt_float(body, "top_n_sigma", s.top_n_sigma)) return err;
  if (auto err = opt_float(body, "typical_p", s.typical_p)) return err;
  if (auto err = opt_float_soft(body, "xtc_probability", s.xtc_probability, 0.0f, 1.0f)) {
    return err;
  }
  if (auto err = opt_float_soft(body, "xtc_threshold", s.xtc_threshold, 0.0f, 1.0f)) return err;
  if (const Json* v = find_field(body, "mirostat", used)) {
    if (auto err = to_int32(*v, used, s.mirostat)) return err;
    s.mirostat = std::clamp(s.mirostat, 0, 2);
  }
  if (auto err = opt_float(body, "mirostat_tau", s.mirostat_tau)) return err;
  if (auto err = opt_float(body, "mirostat_eta", s.mirostat_eta)) return err;
  if (auto err = opt_float_soft(body, "adaptive_target", s.adaptive_target,
                                std::numeric_limits<float>::lowest(), 1.0f)) {
    return err;
  }
  if (const Json* v = find_field(body, "adaptive_decay", used)) {
    float decay = 0.0f;
    if (auto err = to_float(*v, used, decay)) return err;
    if (auto err = check_range(used, decay, 0.0f, 0.99f)) return err;
    s.adaptive_decay = decay;
  }
  return opt_bool(body, "backend_sampling", out.backend_sampling);
}

}  // namespace hearth::server::detail

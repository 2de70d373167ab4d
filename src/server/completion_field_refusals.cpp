// Fields Hearth does not honour yet: each is validated as the reference validates it and
// then accepted only when its value is the reference's default (so clients that send the
// full default set keep working); any other value is refused naming the field.
#include <algorithm>
#include <cctype>
#include <limits>

#include "server/completion_params_internal.h"

namespace hearth::server::detail {

namespace {

constexpr int64_t kIntMax = std::numeric_limits<int32_t>::max();

struct IntDefault {
  std::string_view name;
  int32_t value;
  int64_t lo, hi;  // hard range; lo > hi: none
};
struct FloatDefault {
  std::string_view name;
  float value;
};

constexpr IntDefault kIntDefaults[] = {
    {"mirostat", 0, 1, 0},
    {"repeat_last_n", 64, 0, kIntMax},
    {"dry_allowed_length", 2, 0, kIntMax},
    {"dry_penalty_last_n", 64, 0, kIntMax},
    {"chat_format", 0, 1, 0},
    {"reasoning_budget_tokens", -1, -1, kIntMax},
};
constexpr FloatDefault kFloatDefaults[] = {
    {"dynatemp_range", 0.0f},   {"dynatemp_exponent", 1.0f}, {"top_n_sigma", -1.0f},
    {"typical_p", 1.0f},        {"xtc_probability", 0.0f},   {"xtc_threshold", 0.1f},
    {"mirostat_tau", 5.0f},     {"mirostat_eta", 0.1f},      {"adaptive_target", -1.0f},
    {"adaptive_decay", 0.9f},   {"repeat_penalty", 1.0f},    {"frequency_penalty", 0.0f},
    {"presence_penalty", 0.0f}, {"dry_multiplier", 0.0f},    {"dry_base", 1.75f},
};
constexpr std::pair<std::string_view, bool> kBoolDefaults[] = {{"grammar_lazy", false},
                                                               {"parse_tool_calls", true},
                                                               {"echo", false},
                                                               {"reasoning_control", false}};
constexpr std::pair<std::string_view, std::string_view> kStringDefaults[] = {
    {"reasoning_format", "deepseek"},
    {"generation_prompt", ""},
    {"chat_parser", ""},
    {"reasoning_budget_start_tag", ""},
    {"reasoning_budget_message", ""},
    {"grammar_type", ""},
    {"json_schema", ""}};

std::optional<ApiError> check_numeric_defaults(const Json& body) {
  std::string used;
  for (const IntDefault& d : kIntDefaults) {
    const Json* v = find_field(body, d.name, used);
    if (v == nullptr) continue;
    int32_t value = 0;
    if (auto err = to_int32(*v, used, value)) return err;
    if (d.lo <= d.hi) {
      if (auto err = check_range(used, value, d.lo, d.hi)) return err;
    }
    if (value != d.value) return not_honoured(used);
  }
  for (const FloatDefault& d : kFloatDefaults) {
    const Json* v = find_field(body, d.name, used);
    if (v == nullptr) continue;
    float value = 0.0f;
    if (auto err = to_float(*v, used, value)) return err;
    if (d.name == "adaptive_decay") {
      if (auto err = check_range(used, value, 0.0f, 0.99f)) return err;
    }
    if (value != d.value) return not_honoured(used);
  }
  return std::nullopt;
}

std::optional<ApiError> check_other_defaults(const Json& body) {
  std::string used;
  for (const auto& [name, value] : kBoolDefaults) {
    const Json* v = find_field(body, name, used);
    if (v == nullptr) continue;
    bool b = false;
    if (auto err = to_bool(*v, used, b)) return err;
    if (b != value) return not_honoured(used);
  }
  for (const auto& [name, value] : kStringDefaults) {
    const Json* v = find_field(body, name, used);
    if (v == nullptr) continue;
    if (!v->is_string() || v->get<std::string>() != value) return not_honoured(used);
  }
  for (std::string_view name : {"grammar_triggers", "preserved_tokens", "reasoning_budget_end_tags",
                                "reasoning_budget_end_tag"}) {
    auto it = body.find(std::string(name));
    if (it == body.end() || it->is_null()) continue;
    const bool empty = (it->is_array() && it->empty()) || (it->is_string() && it->empty());
    if (!empty) return not_honoured(std::string(name));
  }
  auto cont = body.find("continue_final_message");
  if (cont != body.end() && !cont->is_null() && *cont != Json(false)) {
    return not_honoured("continue_final_message");
  }
  return std::nullopt;
}

// Canonical sampler name of a request spelling; "" for an unknown one (skipped).
std::string canonical_sampler(std::string name) {
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  std::replace(name.begin(), name.end(), '-', '_');
  static const std::pair<std::string_view, std::string_view> kAliases[] = {
      {"penalties", "penalties"},
      {"dry", "dry"},
      {"top_n_sigma", "top_n_sigma"},
      {"topnsigma", "top_n_sigma"},
      {"top_k", "top_k"},
      {"topk", "top_k"},
      {"typ_p", "typ_p"},
      {"typ", "typ_p"},
      {"typical_p", "typ_p"},
      {"typical", "typ_p"},
      {"top_p", "top_p"},
      {"topp", "top_p"},
      {"nucleus", "top_p"},
      {"min_p", "min_p"},
      {"minp", "min_p"},
      {"xtc", "xtc"},
      {"temperature", "temperature"},
      {"temp", "temperature"},
      {"infill", "infill"},
      {"adaptive_p", "adaptive_p"}};
  for (const auto& [alias, canonical] : kAliases) {
    if (name == alias) return std::string(canonical);
  }
  return {};
}

std::optional<ApiError> check_samplers(const Json& body) {
  auto it = body.find("samplers");
  if (it == body.end() || it->is_null()) return std::nullopt;
  std::vector<std::string> names;
  if (it->is_array()) {
    for (const Json& n : *it) {
      if (!n.is_string()) continue;
      std::string c = canonical_sampler(n.get<std::string>());
      if (!c.empty()) names.push_back(c);
    }
  } else if (it->is_string()) {
    static const std::string_view kLetters = "edskypmxtia";
    static const char* kNames[] = {"penalties",   "dry",    "top_n_sigma", "top_k",
                                   "typ_p",       "top_p",  "min_p",       "xtc",
                                   "temperature", "infill", "adaptive_p"};
    for (char c : it->get<std::string>()) {
      size_t k = kLetters.find(c);
      if (k != std::string_view::npos) names.emplace_back(kNames[k]);
    }
  } else {
    return std::nullopt;  // other types keep the default order, as the reference
  }
  static const std::vector<std::string> kDefault = {
      "penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p", "xtc", "temperature"};
  if (names != kDefault) return not_honoured("samplers");
  return std::nullopt;
}

std::optional<ApiError> check_breakers(const Json& body) {
  auto it = body.find("dry_sequence_breakers");
  if (it == body.end() || it->is_null()) return std::nullopt;
  const bool valid =
      it->is_array() && !it->empty() &&
      std::all_of(it->begin(), it->end(), [](const Json& s) { return s.is_string(); });
  if (!valid) {
    return invalid_request(
        "Field 'dry_sequence_breakers': Error: dry_sequence_breakers must be a non-empty array "
        "of strings");
  }
  if (*it != Json::array({"\n", ":", "\"", "*"})) return not_honoured("dry_sequence_breakers");
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> parse_deferred_fields(const Json& body) {
  if (auto err = check_numeric_defaults(body)) return err;
  if (auto err = check_samplers(body)) return err;
  if (auto err = check_breakers(body)) return err;
  auto grammar = body.find("grammar");
  if (grammar != body.end() && !grammar->is_null() &&
      !(grammar->is_string() && grammar->get<std::string>().empty())) {
    return not_honoured("grammar");
  }
  return check_other_defaults(body);
}

}  // namespace hearth::server::detail

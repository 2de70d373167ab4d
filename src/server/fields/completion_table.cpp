// The table of the native generation fields (native-completion.md §3), in the spec's order,
// then response_format. Each row: name and aliases, how the value is read and where it goes,
// size limits, state, and the generation_settings echo (key, place 1..49, shown in /props).
#include <limits>

#include "server/fields/completion_fields.h"

namespace hearth::server {

namespace {

using fields::hard;
using fields::Limits;
using fields::soft;
using S = CompletionSettings;
using F = CompletionField;

constexpr double kIntMax = std::numeric_limits<int32_t>::max();
constexpr double kInt64Max = static_cast<double>(std::numeric_limits<int64_t>::max());
constexpr double kInf = std::numeric_limits<double>::infinity();

// Fields read by the handlers rather than the reference's schema, or whose value needs
// more than a type and a range.
std::optional<ApiError> parse_id_slot(const Json& v, const std::string& used, S& out,
                                      const fields::FieldContext& ctx) {
  if (!v.is_number_integer()) return fields::type_error(used, "integer", v);
  // An unsigned value past int64 would wrap to a negative id.
  const int64_t id =
      v.is_number_unsigned() && v.get<uint64_t>() > INT64_MAX ? INT64_MAX : v.get<int64_t>();
  if (id < -1 || id >= ctx.n_slots) {
    return fields::field_error(used, "slot id " + std::to_string(id) + " is outside -1 (any) .. " +
                                         std::to_string(ctx.n_slots - 1));
  }
  out.id_slot = static_cast<int32_t>(id);
  return std::nullopt;
}

std::optional<ApiError> parse_delimiters(const Json& v, const std::string& used, S&,
                                         const fields::FieldContext&) {
  if (!v.is_array()) return fields::type_error(used, "array", v);
  for (const Json& d : v) {
    const bool ok = d.is_object() && d.contains("role") && d["role"].is_string() &&
                    d.contains("delimiter") && d["delimiter"].is_string();
    if (!ok)
      return fields::field_error(used,
                                 "each item must be {\"role\": string, \"delimiter\": string}");
  }
  return std::nullopt;  // only places KV checkpoints, which Hearth never needs
}

std::optional<ApiError> parse_stream_options(const Json& v, const std::string& used, S&,
                                             const fields::FieldContext&) {
  if (!v.is_object()) return fields::type_error(used, "object", v);
  bool include_usage = false;  // no effect on the native routes (as the reference)
  auto it = v.find("include_usage");
  if (it != v.end() && !it->is_null()) return fields::to_bool(*it, "include_usage", include_usage);
  return std::nullopt;
}

std::optional<ApiError> parse_response_fields(const Json& v, const std::string& used, S& out,
                                              const fields::FieldContext&) {
  if (!v.is_array()) return fields::type_error(used, "array", v);
  std::vector<std::string> paths;
  for (const Json& f : v) {
    if (!f.is_string()) return fields::type_error(used, "string", f);
    paths.push_back(f.get<std::string>());
  }
  // An empty list is the whole object, as the reference.
  if (!paths.empty()) out.response_fields = std::move(paths);
  return std::nullopt;
}

// `stop`: a string or an array of strings (empty strings dropped); an empty result keeps the
// server's list.
std::optional<ApiError> parse_stop(const Json& v, const std::string& used, S& out,
                                   const fields::FieldContext& ctx) {
  std::vector<std::string> stop;
  if (v.is_string()) {
    if (!v.get_ref<const std::string&>().empty()) stop.push_back(v.get<std::string>());
  } else if (v.is_array()) {
    for (const Json& s : v) {
      if (!s.is_string()) return fields::type_error(used, "string", s);
      if (!s.get_ref<const std::string&>().empty()) stop.push_back(s.get<std::string>());
    }
  } else {
    return fields::type_error(used, "string or array of strings", v);
  }
  out.task.stop = stop.empty() ? ctx.defaults->stop : std::move(stop);
  return std::nullopt;
}

std::optional<ApiError> parse_n_cache_reuse(const Json& v, const std::string& used, S&,
                                            const fields::FieldContext&) {
  int32_t n = 0;
  if (auto err = fields::to_int32(v, used, n)) return err;
  if (auto err = fields::check_range(used, n, 0, static_cast<int64_t>(kIntMax))) return err;
  if (n != 0) return fields::not_honoured(used);
  return std::nullopt;
}

std::optional<ApiError> parse_n_cmpl(const Json& v, const std::string& used, S& out,
                                     const fields::FieldContext& ctx) {
  int32_t n = 0;
  if (auto err = fields::to_int32(v, used, n)) return err;
  if (auto err = fields::check_range(used, int64_t{n}, 1, int64_t{ctx.n_slots})) return err;
  out.n_cmpl = n;
  return std::nullopt;
}

// A value below 1 is replaced by the server default, as the reference does.
std::optional<ApiError> parse_dry_base(const Json& v, const std::string& used, S& out,
                                       const fields::FieldContext& ctx) {
  float base = 0.0f;
  if (auto err = fields::to_float(v, used, base)) return err;
  out.task.sampling.dry_base = base < 1.0f ? ctx.defaults->sampling.dry_base : base;
  return std::nullopt;
}

std::optional<ApiError> parse_lora(const Json& v, const std::string& used, S&,
                                   const fields::FieldContext&) {
  if (!v.is_array()) {
    return fields::field_error(
        used, "Error: 'lora' must be an array of objects with 'id' and 'scale' fields");
  }
  if (!v.empty()) return fields::not_honoured(used);
  return std::nullopt;
}

std::optional<ApiError> parse_string_field(const Json& v, const std::string& used, S&,
                                           const fields::FieldContext&) {
  if (!v.is_string()) return fields::type_error(used, "string", v);
  return std::nullopt;
}

Json sampling_echo(const std::vector<sampling::SamplerType>& samplers) {
  Json out = Json::array();
  for (sampling::SamplerType type : samplers) out.push_back(sampling::sampler_name(type));
  return out;
}

Json bias_echo(const S& s) {
  Json out = Json::array();
  for (const auto& [token, value] : s.logit_bias_echo) {
    Json entry = Json::object();
    entry["bias"] = float_json(value);
    entry["token"] = token;
    out.push_back(std::move(entry));
  }
  return out;
}

Json triggers_echo(const S& s) {
  Json out = Json::array();
  for (const scheduler::GrammarTrigger& t : s.task.grammar.triggers) {
    Json entry = Json::object();
    entry["type"] = t.type;
    entry["value"] = t.value;
    if (t.type == 0) entry["token"] = t.token;
    out.push_back(std::move(entry));
  }
  return out;
}

std::vector<F> input_and_output_rows() {
  return {
      // §3.2 input and routing
      // The reference's message is its JSON library's "key 'prompt' not found".
      {.name = "prompt", .target = fields::parse_prompt, .required_on = fields::kCompletion},
      {.name = "id_slot", .target = parse_id_slot},
      {.name = "message_delimiters", .target = parse_delimiters, .limits = {4096, 0}},
      // §3.3 output control
      {.name = "stream",
       .target = +[](S& s) -> bool& { return s.task.stream; },
       .echo_key = "stream",
       .echo_order = 32},
      {.name = "stream_options", .target = parse_stream_options},
      {.name = "stream_options.include_usage",
       .target = std::monostate{}},  // read by stream_options
      {.name = "timings_per_token",
       .target = +[](S& s) -> bool& { return s.timings_per_token; },
       .echo_key = "timings_per_token",
       .echo_order = 46},
      {.name = "return_tokens", .target = +[](S& s) -> bool& { return s.return_tokens; }},
      {.name = "return_progress", .target = +[](S& s) -> bool& { return s.task.return_progress; }},
      {.name = "response_fields", .target = parse_response_fields, .limits = {256, 1024}},
      {.name = "verbose", .target = +[](S& s) -> bool& { return s.verbose; }},
      {.name = "sse_ping_interval",
       .target = +[](S& s) -> int32_t& { return s.sse_ping_interval; },
       .bounds = hard(-1, kIntMax)},
      {.name = "n_probs",
       .aliases = {"logprobs"},
       .target = +[](S& s) -> int32_t& { return s.task.n_probs; },
       .echo_key = "n_probs",
       .echo_order = 34},
      {.name = "post_sampling_probs",
       .target = +[](S& s) -> bool& { return s.task.post_sampling_probs; },
       .echo_key = "post_sampling_probs",
       .echo_order = 47},
      // §3.4 length and stopping
      {.name = "n_predict",
       .aliases = {"max_completion_tokens", "max_tokens"},
       .target = +[](S& s) -> int32_t& { return s.task.n_predict; },
       .bounds = hard(-1, kIntMax),
       .echo_key = "n_predict",
       .echo_order = 28},
      {.name = "stop",
       .target = parse_stop,
       .limits = {128, 4096},
       .echo_key = "stop",
       .echo_order = 26,
       .echo_in_params = false,
       .echo = [](const S& s) { return Json(s.task.stop); }},
      {.name = "ignore_eos",
       .target = +[](S& s) -> bool& { return s.ignore_eos; },
       .echo_key = "ignore_eos",
       .echo_order = 31},
      {.name = "n_indent",
       .target = +[](S& s) -> int32_t& { return s.task.n_indent; },
       .bounds = hard(0, kIntMax)},
      {.name = "t_max_predict_ms",
       .target = +[](S& s) -> int64_t& { return s.task.t_max_predict_ms; },
       .bounds = hard(-1, kInt64Max)},
      // §3.5 cache, slots, multiplicity
      {.name = "cache_prompt", .target = +[](S& s) -> bool& { return s.task.cache_prompt; }},
      {.name = "n_cache_reuse",
       .target = parse_n_cache_reuse,
       .state = FieldState::kDeferred,
       .issue = 37,
       .reason = "reusing KV chunks by shifting their positions is not implemented"},
      {.name = "n_keep",  // acts only with --context-shift, which is off
       .target = +[](S& s) -> int32_t& { return s.n_keep; },
       .bounds = hard(-1, kIntMax),
       .echo_key = "n_keep",
       .echo_order = 29},
      {.name = "n_discard",  // likewise
       .target = +[](S& s) -> int32_t& { return s.n_discard; },
       .bounds = hard(0, kIntMax),
       .echo_key = "n_discard",
       .echo_order = 30},
      {.name = "n_cmpl", .aliases = {"n"}, .target = parse_n_cmpl},
  };
}

std::vector<F> sampling_rows() {
  const double lowest = std::numeric_limits<float>::lowest();
  return {
      {.name = "temperature",
       .target = +[](S& s) -> float& { return s.task.sampling.temperature; },
       .bounds = soft(0, kInf),
       .echo_key = "temperature",
       .echo_order = 2},
      {.name = "dynatemp_range",
       .target = +[](S& s) -> float& { return s.task.sampling.dynatemp_range; },
       .echo_key = "dynatemp_range",
       .echo_order = 3},
      {.name = "dynatemp_exponent",
       .target = +[](S& s) -> float& { return s.task.sampling.dynatemp_exponent; },
       .echo_key = "dynatemp_exponent",
       .echo_order = 4},
      {.name = "top_k",
       .target = +[](S& s) -> int32_t& { return s.task.sampling.top_k; },
       .bounds = soft(0, kIntMax),
       .echo_key = "top_k",
       .echo_order = 5},
      {.name = "top_p",
       .target = +[](S& s) -> float& { return s.task.sampling.top_p; },
       .bounds = soft(0, 1),
       .echo_key = "top_p",
       .echo_order = 6},
      {.name = "min_p",
       .target = +[](S& s) -> float& { return s.task.sampling.min_p; },
       .bounds = soft(0, 1),
       .echo_key = "min_p",
       .echo_order = 7},
      {.name = "top_n_sigma",
       .target = +[](S& s) -> float& { return s.task.sampling.top_n_sigma; },
       .echo_key = "top_n_sigma",
       .echo_order = 8},
      {.name = "typical_p",
       .target = +[](S& s) -> float& { return s.task.sampling.typical_p; },
       .echo_key = "typical_p",
       .echo_order = 11},
      {.name = "xtc_probability",
       .target = +[](S& s) -> float& { return s.task.sampling.xtc_probability; },
       .bounds = soft(0, 1),
       .echo_key = "xtc_probability",
       .echo_order = 9},
      {.name = "xtc_threshold",
       .target = +[](S& s) -> float& { return s.task.sampling.xtc_threshold; },
       .bounds = soft(0, 1),
       .echo_key = "xtc_threshold",
       .echo_order = 10},
      {.name = "mirostat",
       .target = +[](S& s) -> int32_t& { return s.task.sampling.mirostat; },
       .bounds = soft(0, 2),
       .echo_key = "mirostat",
       .echo_order = 21},
      {.name = "mirostat_tau",
       .target = +[](S& s) -> float& { return s.task.sampling.mirostat_tau; },
       .echo_key = "mirostat_tau",
       .echo_order = 22},
      {.name = "mirostat_eta",
       .target = +[](S& s) -> float& { return s.task.sampling.mirostat_eta; },
       .echo_key = "mirostat_eta",
       .echo_order = 23},
      {.name = "adaptive_target",
       .target = +[](S& s) -> float& { return s.task.sampling.adaptive_target; },
       .bounds = soft(lowest, 1),
       .echo_key = "adaptive_target",
       .echo_order = 24},
      {.name = "adaptive_decay",
       .target = +[](S& s) -> float& { return s.task.sampling.adaptive_decay; },
       .bounds = hard(0, 0.99),
       .echo_key = "adaptive_decay",
       .echo_order = 25},
      {.name = "seed",
       .target = +[](S& s) -> uint32_t& { return s.task.sampling.seed; },
       .echo_key = "seed",
       .echo_order = 1},
      {.name = "min_keep",
       .target = +[](S& s) -> int32_t& { return s.task.sampling.min_keep; },
       .bounds = hard(0, kIntMax),
       .echo_key = "min_keep",
       .echo_order = 35},
      {.name = "samplers",
       .target = fields::parse_samplers,
       .limits = {64, 64},
       .echo_key = "samplers",
       .echo_order = 44,
       .echo = [](const S& s) { return sampling_echo(s.task.sampling.samplers); }},
      {.name = "backend_sampling",  // the CPU engine samples in one place either way
       .target = +[](S& s) -> bool& { return s.backend_sampling; },
       .echo_key = "backend_sampling",
       .echo_order = 48},
  };
}

std::vector<F> penalty_rows() {
  return {
      {.name = "repeat_last_n",
       .target = +[](S& s) -> int32_t& { return s.task.sampling.repeat_last_n; },
       .bounds = hard(0, kIntMax),
       .echo_key = "repeat_last_n",
       .echo_order = 12},
      {.name = "repeat_penalty",
       .target = +[](S& s) -> float& { return s.task.sampling.repeat_penalty; },
       .echo_key = "repeat_penalty",
       .echo_order = 13},
      {.name = "frequency_penalty",
       .target = +[](S& s) -> float& { return s.task.sampling.frequency_penalty; },
       .echo_key = "frequency_penalty",
       .echo_order = 15},
      {.name = "presence_penalty",
       .target = +[](S& s) -> float& { return s.task.sampling.presence_penalty; },
       .echo_key = "presence_penalty",
       .echo_order = 14},
      {.name = "dry_multiplier",
       .target = +[](S& s) -> float& { return s.task.sampling.dry_multiplier; },
       .echo_key = "dry_multiplier",
       .echo_order = 16},
      {.name = "dry_base",
       .target = parse_dry_base,
       .echo_key = "dry_base",
       .echo_order = 17,
       .echo = [](const S& s) { return float_json(s.task.sampling.dry_base); }},
      {.name = "dry_allowed_length",
       .target = +[](S& s) -> int32_t& { return s.task.sampling.dry_allowed_length; },
       .bounds = hard(0, kIntMax),
       .echo_key = "dry_allowed_length",
       .echo_order = 18},
      {.name = "dry_penalty_last_n",
       .target = +[](S& s) -> int32_t& { return s.task.sampling.dry_penalty_last_n; },
       .bounds = hard(0, kIntMax),
       .echo_key = "dry_penalty_last_n",
       .echo_order = 19},
      {.name = "dry_sequence_breakers",
       .target = fields::parse_breakers,
       .limits = {128, 1024},
       .echo_key = "dry_sequence_breakers",
       .echo_order = 20,
       .echo_in_params = false,
       .echo = [](const S& s) { return Json(s.task.sampling.dry_sequence_breakers); }},
  };
}

std::vector<F> constraint_rows() {
  return {
      {.name = "json_schema",
       .aliases = {"grammar"},
       .target = fields::check_schema_value,
       .echo_key = "grammar",
       .echo_order = 36,
       .echo_in_params = false,
       .echo = [](const S& s) { return Json(s.task.grammar.text); }},
      {.name = "grammar_type", .target = parse_string_field},
      {.name = "grammar_lazy",
       .target = +[](S& s) -> bool& { return s.task.grammar.config.lazy; },
       .echo_key = "grammar_lazy",
       .echo_order = 37,
       .echo_in_params = false},
      {.name = "grammar_triggers",
       .target = fields::parse_triggers,
       .limits = {1024, 4096},
       .echo_key = "grammar_triggers",
       .echo_order = 38,
       .echo_in_params = false,
       .echo = triggers_echo},
      {.name = "preserved_tokens",
       .target = fields::parse_preserved,
       .limits = {1024, 256},
       .echo_key = "preserved_tokens",
       .echo_order = 39,
       .echo_in_params = false,
       .echo = [](const S& s) { return Json(s.task.grammar.preserved_tokens); }},
      {.name = "logit_bias",
       .target = fields::parse_logit_bias,
       .limits = {65536, 4096},
       .echo_key = "logit_bias",
       .echo_order = 33,
       .echo_in_params = false,
       .echo = bias_echo},
      // §3.9 LoRA
      {.name = "lora",
       .target = parse_lora,
       .state = FieldState::kDeferred,
       .issue = 36,
       .reason = "LoRA adapters are not implemented",
       .echo_key = "lora",
       .echo_order = 49,
       .echo = [](const S&) { return Json::array(); }},
  };
}

std::vector<F> chat_and_infill_rows() {
  return {
      // §3.10 chat parser and reasoning (the chat routes set them; completion_chat.cpp)
      {.name = "chat_format",
       .target = fields::parse_chat_format,
       .echo_key = "chat_format",
       .echo_order = 40,
       .echo = [](const S& s) { return Json(s.chat_format); }},
      {.name = "reasoning_format",
       .target = fields::parse_reasoning_format,
       .echo_key = "reasoning_format",
       .echo_order = 41,
       .echo = [](const S& s) { return Json(s.reasoning_format); }},
      {.name = "generation_prompt",
       .target = fields::parse_generation_prompt,
       .limits = {0, 1 << 20},
       .echo_key = "generation_prompt",
       .echo_order = 43,
       .echo = [](const S& s) { return Json(s.generation_prompt); }},
      {.name = "parse_tool_calls", .target = +[](S& s) -> bool& { return s.parse_tool_calls; }},
      {.name = "chat_parser",
       .target = fields::check_deferred,
       .state = FieldState::kNotApplicable,
       .reason = "it carries the reference's serialized PEG parser; Hearth's chat layer picks "
                 "its output parser from the template (only \"\" is accepted)",
       .default_json = R"("")"},
      {.name = "continue_final_message", .target = fields::parse_continuation},
      {.name = "echo", .target = +[](S& s) -> bool& { return s.echo; }},
      {.name = "reasoning_control", .target = fields::parse_reasoning_control},
      {.name = "reasoning_budget_tokens", .target = fields::parse_budget_tokens},
      {.name = "reasoning_budget_start_tag", .target = fields::parse_budget_text},
      {.name = "reasoning_budget_end_tags",
       .aliases = {"reasoning_budget_end_tag"},
       .target = fields::parse_budget_end_tags},
      {.name = "reasoning_budget_message", .target = fields::parse_budget_text},
      // §3.11 infill
      // Required: the reference means to answer 400 without them but fails later with a
      // 500; Hearth answers the 400 it intended (a recorded difference).
      {.name = "input_prefix",
       .target = fields::parse_infill_text,
       .limits = {0, 0},
       .routes = fields::kInfill,
       .required_on = fields::kInfill},
      {.name = "input_suffix",
       .target = fields::parse_infill_text,
       .routes = fields::kInfill,
       .required_on = fields::kInfill},
      {.name = "input_extra",
       .target = fields::parse_infill_extra,
       .limits = {1024, 0},
       .routes = fields::kInfill},
      // Not a native field: the chat routes' structured-output member, which Hearth
      // honours on the native routes too (differences.json, native-response-format).
      {.name = "response_format", .target = fields::check_response_format},
  };
}

std::vector<F> build_table() {
  std::vector<F> table;
  for (auto part : {input_and_output_rows, sampling_rows, penalty_rows, constraint_rows,
                    chat_and_infill_rows}) {
    for (F& f : part()) table.push_back(std::move(f));
  }
  return table;
}

}  // namespace

const std::vector<CompletionField>& completion_fields() {
  static const std::vector<CompletionField> table = build_table();
  return table;
}

}  // namespace hearth::server

// The generation_settings echo (native-completion.md §6): 49 keys in the reference's order;
// /props and /slots show the 42-key subset as `params`.
#include "server/completion_params.h"

namespace hearth::server {

namespace {

Json bias_json(const std::vector<std::pair<int32_t, float>>& bias) {
  Json out = Json::array();
  for (const auto& [token, value] : bias) {
    Json entry = Json::object();
    entry["bias"] = float_json(value);
    entry["token"] = token;
    out.push_back(std::move(entry));
  }
  return out;
}

// Keys 1-25: sampling. Fields Hearth accepts only at their defaults echo those defaults.
void add_sampling(Json& gs, const CompletionSettings& s, bool full) {
  const scheduler::SamplingSettings& p = s.task.sampling;
  gs["seed"] = p.seed;
  gs["temperature"] = float_json(p.temperature);
  gs["dynatemp_range"] = float_json(0.0f);
  gs["dynatemp_exponent"] = float_json(1.0f);
  gs["top_k"] = p.top_k;
  gs["top_p"] = float_json(p.top_p);
  gs["min_p"] = float_json(p.min_p);
  gs["top_n_sigma"] = float_json(-1.0f);
  gs["xtc_probability"] = float_json(0.0f);
  gs["xtc_threshold"] = float_json(0.1f);
  gs["typical_p"] = float_json(1.0f);
  gs["repeat_last_n"] = 64;
  gs["repeat_penalty"] = float_json(1.0f);
  gs["presence_penalty"] = float_json(0.0f);
  gs["frequency_penalty"] = float_json(0.0f);
  gs["dry_multiplier"] = float_json(0.0f);
  gs["dry_base"] = float_json(1.75f);
  gs["dry_allowed_length"] = 2;
  gs["dry_penalty_last_n"] = 64;
  if (full) gs["dry_sequence_breakers"] = Json::array({"\n", ":", "\"", "*"});
  gs["mirostat"] = 0;
  gs["mirostat_tau"] = float_json(5.0f);
  gs["mirostat_eta"] = float_json(0.1f);
  gs["adaptive_target"] = float_json(-1.0f);
  gs["adaptive_decay"] = float_json(0.9f);
}

}  // namespace

Json generation_settings_json(const CompletionSettings& s, bool full) {
  Json gs = Json::object();
  add_sampling(gs, s, full);
  if (full) gs["stop"] = s.task.stop;
  gs["max_tokens"] = s.task.n_predict;
  gs["n_predict"] = s.task.n_predict;
  gs["n_keep"] = s.n_keep;
  gs["n_discard"] = s.n_discard;
  gs["ignore_eos"] = s.ignore_eos;
  gs["stream"] = s.task.stream;
  if (full) gs["logit_bias"] = bias_json(s.logit_bias_echo);
  gs["n_probs"] = s.task.n_probs;
  gs["min_keep"] = s.task.sampling.min_keep;
  if (full) {
    gs["grammar"] = "";
    gs["grammar_lazy"] = false;
    gs["grammar_triggers"] = Json::array();
    gs["preserved_tokens"] = Json::array();
  }
  gs["chat_format"] = "Content-only";
  gs["reasoning_format"] = s.reasoning_format;
  gs["reasoning_in_content"] = false;
  gs["generation_prompt"] = "";
  gs["samplers"] = Json::array({"penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p",
                                "min_p", "xtc", "temperature"});
  gs["speculative.types"] = "none";
  gs["timings_per_token"] = s.timings_per_token;
  gs["post_sampling_probs"] = s.task.post_sampling_probs;
  gs["backend_sampling"] = s.backend_sampling;
  gs["lora"] = Json::array();
  return gs;
}

}  // namespace hearth::server

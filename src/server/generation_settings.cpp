// The generation_settings echo (native-completion.md §6): 49 keys in the reference's order;
// /props and /slots show the 42-key subset as `params`.
#include "sampling/params.h"
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

// Keys 1-25: sampling.
void add_sampling(Json& gs, const CompletionSettings& s, bool full) {
  const scheduler::SamplingSettings& p = s.task.sampling;
  gs["seed"] = p.seed;
  gs["temperature"] = float_json(p.temperature);
  gs["dynatemp_range"] = float_json(p.dynatemp_range);
  gs["dynatemp_exponent"] = float_json(p.dynatemp_exponent);
  gs["top_k"] = p.top_k;
  gs["top_p"] = float_json(p.top_p);
  gs["min_p"] = float_json(p.min_p);
  gs["top_n_sigma"] = float_json(p.top_n_sigma);
  gs["xtc_probability"] = float_json(p.xtc_probability);
  gs["xtc_threshold"] = float_json(p.xtc_threshold);
  gs["typical_p"] = float_json(p.typical_p);
  gs["repeat_last_n"] = p.repeat_last_n;
  gs["repeat_penalty"] = float_json(p.repeat_penalty);
  gs["presence_penalty"] = float_json(p.presence_penalty);
  gs["frequency_penalty"] = float_json(p.frequency_penalty);
  gs["dry_multiplier"] = float_json(p.dry_multiplier);
  gs["dry_base"] = float_json(p.dry_base);
  gs["dry_allowed_length"] = p.dry_allowed_length;
  gs["dry_penalty_last_n"] = p.dry_penalty_last_n;
  if (full) gs["dry_sequence_breakers"] = p.dry_sequence_breakers;
  gs["mirostat"] = p.mirostat;
  gs["mirostat_tau"] = float_json(p.mirostat_tau);
  gs["mirostat_eta"] = float_json(p.mirostat_eta);
  gs["adaptive_target"] = float_json(p.adaptive_target);
  gs["adaptive_decay"] = float_json(p.adaptive_decay);
}

Json triggers_json(const std::vector<scheduler::GrammarTrigger>& triggers) {
  Json out = Json::array();
  for (const scheduler::GrammarTrigger& t : triggers) {
    Json entry = Json::object();
    entry["type"] = t.type;
    entry["value"] = t.value;
    if (t.type == 0) entry["token"] = t.token;
    out.push_back(std::move(entry));
  }
  return out;
}

Json samplers_json(const std::vector<sampling::SamplerType>& samplers) {
  Json out = Json::array();
  for (sampling::SamplerType type : samplers) out.push_back(sampling::sampler_name(type));
  return out;
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
    const scheduler::GrammarSettings& g = s.task.grammar;
    gs["grammar"] = g.text;
    gs["grammar_lazy"] = g.config.lazy;
    gs["grammar_triggers"] = triggers_json(g.triggers);
    gs["preserved_tokens"] = g.preserved_tokens;
  }
  gs["chat_format"] = "Content-only";
  gs["reasoning_format"] = s.reasoning_format;
  gs["reasoning_in_content"] = false;
  gs["generation_prompt"] = "";
  gs["samplers"] = samplers_json(s.task.sampling.samplers);
  gs["speculative.types"] = "none";
  gs["timings_per_token"] = s.timings_per_token;
  gs["post_sampling_probs"] = s.task.post_sampling_probs;
  gs["backend_sampling"] = s.backend_sampling;
  gs["lora"] = Json::array();
  return gs;
}

}  // namespace hearth::server

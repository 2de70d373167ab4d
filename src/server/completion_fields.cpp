// The table of the 74 native completion fields (native-completion.md §3) and their states.
#include "server/completion_params.h"

namespace hearth::server {

namespace {

constexpr int kChatIssue = 7;  // chat routes, chat parser and reasoning (pin.json)

FieldInfo supported(std::string_view name, std::vector<std::string_view> aliases = {}) {
  return {name, std::move(aliases), FieldState::kSupported, 0, {}};
}
FieldInfo deferred(std::string_view name, int issue, std::vector<std::string_view> aliases = {}) {
  return {name, std::move(aliases), FieldState::kDeferred, issue, {}};
}
FieldInfo refused(std::string_view name, std::string_view reason) {
  return {name, {}, FieldState::kNotApplicable, 0, reason};
}

std::vector<FieldInfo> build_table() {
  return {
      // §3.2 input and routing
      supported("prompt"),
      supported("id_slot"),
      supported("message_delimiters"),  // only places KV checkpoints, which Hearth never needs
      // §3.3 output control
      supported("stream"),
      supported("stream_options"),
      supported("stream_options.include_usage"),
      supported("timings_per_token"),
      supported("return_tokens"),
      supported("return_progress"),
      supported("response_fields"),
      supported("verbose"),
      supported("sse_ping_interval"),
      supported("n_probs", {"logprobs"}),
      supported("post_sampling_probs"),
      // §3.4 length and stopping
      supported("n_predict", {"max_completion_tokens", "max_tokens"}),
      supported("stop"),
      supported("ignore_eos"),
      supported("n_indent"),
      supported("t_max_predict_ms"),
      // §3.5 cache, slots, multiplicity
      supported("cache_prompt"),
      refused("n_cache_reuse", "reusing KV chunks by shifting their positions is not implemented"),
      supported("n_keep"),     // acts only with --context-shift, which is off
      supported("n_discard"),  // likewise
      supported("n_cmpl", {"n"}),
      // §3.6 sampling
      supported("temperature"),
      supported("dynatemp_range"),
      supported("dynatemp_exponent"),
      supported("top_k"),
      supported("top_p"),
      supported("min_p"),
      supported("top_n_sigma"),
      supported("typical_p"),
      supported("xtc_probability"),
      supported("xtc_threshold"),
      supported("mirostat"),
      supported("mirostat_tau"),
      supported("mirostat_eta"),
      supported("adaptive_target"),
      supported("adaptive_decay"),
      supported("seed"),
      supported("min_keep"),
      supported("samplers"),
      supported("backend_sampling"),  // the CPU engine samples in one place either way
      // §3.7 repetition penalties and DRY
      supported("repeat_last_n"),
      supported("repeat_penalty"),
      supported("frequency_penalty"),
      supported("presence_penalty"),
      supported("dry_multiplier"),
      supported("dry_base"),
      supported("dry_allowed_length"),
      supported("dry_penalty_last_n"),
      supported("dry_sequence_breakers"),
      // §3.8 constraints and biases
      supported("json_schema", {"grammar"}),
      supported("grammar_type"),
      supported("grammar_lazy"),
      supported("grammar_triggers"),
      supported("preserved_tokens"),
      supported("logit_bias"),
      // §3.9 LoRA
      refused("lora", "LoRA adapters are not supported"),
      // §3.10 chat parser and reasoning
      deferred("chat_format", kChatIssue),
      deferred("reasoning_format", kChatIssue),
      deferred("generation_prompt", kChatIssue),
      deferred("parse_tool_calls", kChatIssue),
      deferred("chat_parser", kChatIssue),
      deferred("continue_final_message", kChatIssue),
      deferred("echo", kChatIssue),
      deferred("reasoning_control", kChatIssue),
      deferred("reasoning_budget_tokens", kChatIssue),
      deferred("reasoning_budget_start_tag", kChatIssue),
      deferred("reasoning_budget_end_tags", kChatIssue, {"reasoning_budget_end_tag"}),
      deferred("reasoning_budget_message", kChatIssue),
      // §3.11 infill
      supported("input_prefix"),
      supported("input_suffix"),
      supported("input_extra"),
  };
}

}  // namespace

const std::vector<FieldInfo>& completion_fields() {
  static const std::vector<FieldInfo> table = build_table();
  return table;
}

}  // namespace hearth::server

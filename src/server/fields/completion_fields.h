// The native generation request (native-completion.md §3): the table of its 74 fields plus
// response_format (honoured on the native routes too, a recorded difference), the settings
// a request settles, and their generation_settings echo. A field Hearth does not honour yet
// is accepted only with its default value; anything else is refused with a 400 naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "base/serving_defaults.h"
#include "scheduler/task.h"
#include "server/api_error.h"
#include "server/config/request_defaults.h"
#include "server/fields/field.h"
#include "server/json_util.h"

namespace hearth::tokenizer {
class Tokenizer;
}

namespace hearth::server {

using fields::FieldState;

// /infill's own inputs (native-completion.md §13), tokenized.
struct InfillInputs {
  std::vector<int32_t> prefix;
  std::vector<int32_t> suffix;
  std::vector<int32_t> prompt;  // infill's `prompt`: text placed right after the prefix
  std::vector<std::pair<std::string, std::string>> extra;  // (filename, text)
};

// Everything a completion request settles, echoed back as generation_settings.
struct CompletionSettings {
  scheduler::TaskParams task;  // what the scheduler runs
  // Echo-only values (fields accepted with their defaults, or with no effect here).
  bool ignore_eos = false;
  int32_t n_keep = 0;
  int32_t n_discard = 0;
  int32_t n_cmpl = 1;
  bool timings_per_token = false;
  bool return_tokens = false;
  bool verbose = false;
  std::optional<std::vector<std::string>> response_fields;
  int32_t sse_ping_interval = kDefaultSsePingSeconds;
  bool backend_sampling = false;
  std::vector<std::pair<int32_t, float>> logit_bias_echo;  // as sent, incl. EOG bans
  bool logit_bias_sent = false;
  std::vector<scheduler::GrammarTrigger> pending_triggers;  // resolved once every field is read
  int32_t id_slot = -1;
  std::string reasoning_format = "deepseek";  // echo only (/props shows "none")
  std::string spec_types = "none";            // echo only: the server's draft sources
  // Set by the chat layer on the chat routes (echo only): the parser's format name and the
  // generation prompt the output is parsed after.
  std::string chat_format = "Content-only";
  std::string generation_prompt;
  bool parse_tool_calls = true;  // no effect on the native routes (as in the reference)
  bool echo = false;             // the chat parser's echo flag; no effect on native routes
  // What the request generates from; moved into the tasks, not echoed.
  std::vector<std::vector<int32_t>> prompts;
  // The media chunks of each prompt (empty, or one list per prompt): their positions hold
  // placeholders instead of vocabulary ids.
  std::vector<std::vector<scheduler::MediaChunk>> prompt_media;
  // Native prompts given as {"prompt_string", "multimodal_data"}: tokenized with their media
  // when the request runs (prompts[index] is empty until then).
  struct MediaPromptText {
    size_t index = 0;
    std::string text;
    std::vector<std::vector<uint8_t>> files;  // base64-decoded multimodal_data
  };
  std::vector<MediaPromptText> media_prompts;
  InfillInputs infill;
};

using CompletionField = fields::Field<CompletionSettings>;

// The 74 fields in the order of native-completion.md §3, then response_format.
const std::vector<CompletionField>& completion_fields();
// The number of native-completion.md §3 fields at the head of completion_fields().
inline constexpr size_t kNativeFieldCount = 74;

// Parses a /completion (route fields::kCompletion) or /infill (fields::kInfill) body, a JSON
// object. Errors are 400 invalid_request_error with the reference's `Field '<name>': ...`
// messages.
std::optional<ApiError> parse_completion_settings(const Json& body, const RequestDefaults& defaults,
                                                  const tokenizer::Tokenizer& tok,
                                                  CompletionSettings& out,
                                                  uint32_t route = fields::kCompletion);

// The 49-key generation_settings object, or the 42-key `params` of /props and /slots.
Json generation_settings_json(const CompletionSettings& settings, bool full);

// The prompt forms of the native routes (native-completion.md §4): a string, a token array,
// a mixed array of strings and token ids, an object with `prompt_string`, or a list of
// those; tokenized with add_special and parse_special on.
// With `media` null, multimodal_data is refused; otherwise such prompts are recorded there.
std::optional<ApiError> parse_prompts(
    const tokenizer::Tokenizer& tok, const Json& prompt, std::vector<std::vector<int32_t>>& out,
    std::vector<CompletionSettings::MediaPromptText>* media = nullptr);
// A string or a mixed array of strings and ids (ids pass through unchecked); special tokens
// (BOS...) are added only when `add_special` and the content starts with a string. The
// caller has checked the shape.
std::vector<int32_t> tokenize_mixed(const tokenizer::Tokenizer& tok, const Json& content,
                                    bool add_special, bool parse_special);
// True for a string or an array of strings and integers.
bool is_text_or_tokens(const Json& content);

namespace fields {
// Field parsers shared across files of the table (completion_*.cpp).
std::optional<ApiError> parse_prompt(const Json& v, const std::string& used,
                                     CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_infill_text(const Json& v, const std::string& used,
                                          CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_infill_extra(const Json& v, const std::string& used,
                                           CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_samplers(const Json& v, const std::string& used,
                                       CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_breakers(const Json& v, const std::string& used,
                                       CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_logit_bias(const Json& v, const std::string& used,
                                         CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_preserved(const Json& v, const std::string& used,
                                        CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_triggers(const Json& v, const std::string& used,
                                       CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> check_schema_value(const Json& v, const std::string& used,
                                           CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> check_response_format(const Json& v, const std::string& used,
                                              CompletionSettings& out, const FieldContext& ctx);
// response_format's shape (an object; type text, json_object or json_schema; schemas are
// objects), for the generation routes and /apply-template alike.
std::optional<ApiError> validate_response_format(const Json& v, const std::string& used);
// The schema a validated `response_format` (null: absent) asks for (none for "text");
// `has_schema`: the body also sends `json_schema`.
std::optional<Json> response_format_schema(const Json& response_format, bool has_schema);
std::optional<ApiError> check_deferred(const Json& v, const std::string& used,
                                       CompletionSettings& out, const FieldContext& ctx);
// The chat-parser and reasoning fields (completion_chat.cpp).
std::optional<ApiError> parse_chat_format(const Json& v, const std::string& used,
                                          CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_reasoning_format(const Json& v, const std::string& used,
                                               CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_generation_prompt(const Json& v, const std::string& used,
                                                CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_continuation(const Json& v, const std::string& used,
                                           CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_budget_tokens(const Json& v, const std::string& used,
                                            CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_budget_text(const Json& v, const std::string& used,
                                          CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_budget_end_tags(const Json& v, const std::string& used,
                                              CompletionSettings& out, const FieldContext& ctx);
std::optional<ApiError> parse_reasoning_control(const Json& v, const std::string& used,
                                                CompletionSettings& out, const FieldContext& ctx);
void finish_reasoning(CompletionSettings& out);
// After every field: the grammar (text, compiled, triggers), the merged logit bias, the
// checks the reference makes when it builds the sampler chain.
std::optional<ApiError> finish_constraints(const Json& body, const FieldContext& ctx,
                                           CompletionSettings& out);
std::optional<ApiError> finish_bias(const Json& body, const FieldContext& ctx,
                                    CompletionSettings& out);
std::optional<ApiError> check_sampler_params(const scheduler::SamplingSettings& s);
// 400 for a field Hearth does not honour, naming the field and why.
ApiError not_honoured(const std::string& used);
}  // namespace fields

}  // namespace hearth::server

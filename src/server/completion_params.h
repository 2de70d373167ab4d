// The native completion request fields (native-completion.md §3): one table that names
// every field, its aliases, its domain and whether Hearth honours it, and the parser that
// turns a request body into the settings of a task. A field Hearth does not honour yet is
// accepted only with its default value; anything else is refused with a 400 naming it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scheduler/task.h"
#include "server/api_error.h"
#include "server/json_util.h"

namespace hearth::tokenizer {
class Tokenizer;
}

namespace hearth::server {

enum class FieldState { kSupported, kDeferred, kNotApplicable };

struct FieldInfo {
  std::string_view name;
  std::vector<std::string_view> aliases;
  FieldState state = FieldState::kSupported;
  int issue = 0;            // kDeferred: the issue that delivers it
  std::string_view reason;  // kNotApplicable: why it is refused
};

// The 74 fields, in the order of native-completion.md §3.
const std::vector<FieldInfo>& completion_fields();

// Server-wide defaults of request fields (command-line options).
struct RequestDefaults {
  int32_t n_predict = -1;  // -n
  int32_t n_keep = 0;      // --keep
  bool cache_prompt = true;
  int32_t n_cache_reuse = 0;
  scheduler::SamplingSettings sampling;  // every sampling option; logit_bias: the -l list
  bool ignore_eos = false;               // --ignore-eos (its EOG bans are in sampling.logit_bias)
  std::string grammar;                   // --grammar / --grammar-file, or the converted -j schema
  std::vector<std::string> stop;         // -r
  int32_t sse_ping_interval = 30;
  int32_t n_slots = 4;
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
  std::optional<std::vector<std::string>> response_fields;
  int32_t sse_ping_interval = 30;
  bool backend_sampling = false;
  std::vector<std::pair<int32_t, float>> logit_bias_echo;  // as sent, incl. EOG bans
  int32_t id_slot = -1;
  std::string reasoning_format = "deepseek";  // echo only (/props shows "none")
};

// Parses every field except `prompt`. Errors are 400 invalid_request_error with the
// reference's `Field '<name>': ...` messages.
std::optional<ApiError> parse_completion_settings(const Json& body, const RequestDefaults& defaults,
                                                  const tokenizer::Tokenizer& tok,
                                                  CompletionSettings& out);

// The 49-key generation_settings object, or the 42-key `params` of /props and /slots.
Json generation_settings_json(const CompletionSettings& settings, bool full);

}  // namespace hearth::server

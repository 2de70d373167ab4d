// Prompt forms of the native routes (native-completion.md §4): a string, a token array, a
// mixed array of strings and token ids, an object with `prompt_string`, or a list of those.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "server/api_error.h"
#include "server/json_util.h"

namespace hearth::tokenizer {
class Tokenizer;
}

namespace hearth::server {

// A string or a mixed array of strings and ids; ids pass through unvalidated. Special tokens
// (BOS...) are added only when `add_special` and the content starts with a string.
std::vector<int32_t> tokenize_mixed(const tokenizer::Tokenizer& tok, const Json& content,
                                    bool add_special, bool parse_special);

// Every prompt of a /completion body's `prompt` value, tokenized with add_special and
// parse_special on; 400 errors with the reference's messages.
std::optional<ApiError> parse_prompts(const tokenizer::Tokenizer& tok, const Json& prompt,
                                      std::vector<std::vector<int32_t>>& out);

}  // namespace hearth::server

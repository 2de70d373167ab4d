#include "server/prompt_forms.h"

#include <algorithm>

#include "tokenizer/tokenizer.h"

namespace hearth::server {

namespace {

const char* const kBadPrompt =
    "\"prompt\" elements must be a string, a list of tokens, a JSON object containing a prompt "
    "string, or a list of mixed strings & tokens.";

bool is_token_or_text(const Json& v) {
  return v.is_number_integer() || v.is_string();
}

// One prompt in any single form; false when the value is none of them.
bool one_prompt(const tokenizer::Tokenizer& tok, const Json& v, std::vector<int32_t>& out,
                std::optional<ApiError>& error) {
  if (v.is_string() || (v.is_array() && std::all_of(v.begin(), v.end(), is_token_or_text))) {
    out = tokenize_mixed(tok, v, true, true);
    return true;
  }
  if (v.is_object() && v.contains("prompt_string")) {
    if (auto media = v.find("multimodal_data");
        media != v.end() && !media->is_null() && !(media->is_array() && media->empty())) {
      error = invalid_request(
          "Multimodal data provided, but model does not support multimodal requests.");
      return true;
    }
    const Json& text = v["prompt_string"];
    if (text.is_string() ||
        (text.is_array() && std::all_of(text.begin(), text.end(), is_token_or_text))) {
      out = tokenize_mixed(tok, text, true, true);
      return true;
    }
  }
  return false;
}

}  // namespace

std::vector<int32_t> tokenize_mixed(const tokenizer::Tokenizer& tok, const Json& content,
                                    bool add_special, bool parse_special) {
  if (content.is_string())
    return tok.tokenize(content.get<std::string>(), add_special, parse_special);
  std::vector<int32_t> ids;
  bool first = true;
  for (const Json& piece : content) {
    if (piece.is_string()) {
      auto part = tok.tokenize(piece.get<std::string>(), add_special && first, parse_special);
      ids.insert(ids.end(), part.begin(), part.end());
    } else {
      ids.push_back(static_cast<int32_t>(piece.get<int64_t>()));
    }
    first = false;
  }
  return ids;
}

std::optional<ApiError> parse_prompts(const tokenizer::Tokenizer& tok, const Json& prompt,
                                      std::vector<std::vector<int32_t>>& out) {
  out.clear();
  std::optional<ApiError> error;
  if (prompt.is_array() && prompt.empty()) return invalid_request("\"prompt\" must not be empty");
  const bool list_of_prompts =
      prompt.is_array() && std::none_of(prompt.begin(), prompt.end(),
                                        [](const Json& v) { return v.is_number_integer(); });
  if (!list_of_prompts) {
    out.emplace_back();
    if (!one_prompt(tok, prompt, out.back(), error)) return invalid_request(kBadPrompt);
    return error;
  }
  for (const Json& element : prompt) {
    out.emplace_back();
    if (!one_prompt(tok, element, out.back(), error)) return invalid_request(kBadPrompt);
    if (error) return error;
  }
  return std::nullopt;
}

}  // namespace hearth::server

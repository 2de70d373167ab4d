// The prompt fields: /completion's prompt forms (native-completion.md §4) and /infill's
// inputs (§13.1). Every shape is checked; anything else is a 400 naming the field.
#include <algorithm>

#include "base/base64.h"
#include "server/fields/completion_fields.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server {

namespace {

const char* const kBadPrompt =
    "\"prompt\" elements must be a string, a list of tokens, a JSON object containing a prompt "
    "string, or a list of mixed strings & tokens.";

bool is_token_or_text(const Json& v) {
  return v.is_number_integer() || v.is_string();
}

using MediaPrompts = std::vector<CompletionSettings::MediaPromptText>;

// {"prompt_string": text, "multimodal_data": [base64...]}: kept for the run, which encodes
// the media (the text must be a string there, as the reference reads it).
void media_prompt(const Json& v, const Json& data, size_t index, MediaPrompts* media,
                  std::optional<ApiError>& error) {
  if (media == nullptr) {
    error = invalid_request(
        "Multimodal data provided, but model does not support multimodal requests.");
    return;
  }
  const Json& text = v["prompt_string"];
  if (!text.is_string() || !data.is_array()) {
    error = invalid_request(
        "\"prompt_string\" must be a string and \"multimodal_data\" an array of base64 strings");
    return;
  }
  CompletionSettings::MediaPromptText entry{
      .index = index, .text = text.get<std::string>(), .files = {}};
  for (const Json& item : data) {
    if (!item.is_string()) {
      error = invalid_request("\"multimodal_data\" must be an array of base64 strings");
      return;
    }
    entry.files.push_back(base64_decode_prefix(item.get_ref<const std::string&>()));
  }
  media->push_back(std::move(entry));
}

// One prompt in any single form; false when the value is none of them.
bool one_prompt(const tokenizer::Tokenizer& tok, const Json& v, std::vector<int32_t>& out,
                size_t index, MediaPrompts* media, std::optional<ApiError>& error) {
  if (is_text_or_tokens(v)) {
    out = tokenize_mixed(tok, v, true, true);
    return true;
  }
  if (v.is_object() && v.contains("prompt_string")) {
    if (auto data = v.find("multimodal_data");
        data != v.end() && !data->is_null() && !(data->is_array() && data->empty())) {
      media_prompt(v, *data, index, media, error);
      return true;
    }
    const Json& text = v["prompt_string"];
    if (is_text_or_tokens(text)) {
      out = tokenize_mixed(tok, text, true, true);
      return true;
    }
  }
  return false;
}

}  // namespace

bool is_text_or_tokens(const Json& content) {
  return content.is_string() ||
         (content.is_array() && std::all_of(content.begin(), content.end(), is_token_or_text));
}

std::vector<int32_t> tokenize_mixed(const tokenizer::Tokenizer& tok, const Json& content,
                                    bool add_special, bool parse_special) {
  if (content.is_string()) {
    return tok.tokenize(content.get_ref<const std::string&>(), add_special, parse_special);
  }
  std::vector<int32_t> ids;
  bool first = true;
  for (const Json& piece : content) {
    if (piece.is_string()) {
      auto part =
          tok.tokenize(piece.get_ref<const std::string&>(), add_special && first, parse_special);
      ids.insert(ids.end(), part.begin(), part.end());
    } else if (piece.is_number_integer()) {
      // Ids outside int32 are made invalid rather than wrapped into valid ones.
      const int64_t id = piece.get<int64_t>();
      ids.push_back(id < INT32_MIN || id > INT32_MAX ? -1 : static_cast<int32_t>(id));
    }
    first = false;
  }
  return ids;
}

std::optional<ApiError> parse_prompts(const tokenizer::Tokenizer& tok, const Json& prompt,
                                      std::vector<std::vector<int32_t>>& out, MediaPrompts* media) {
  out.clear();
  std::optional<ApiError> error;
  if (prompt.is_array() && prompt.empty()) return invalid_request("\"prompt\" must not be empty");
  const bool list_of_prompts =
      prompt.is_array() && std::none_of(prompt.begin(), prompt.end(),
                                        [](const Json& v) { return v.is_number_integer(); });
  if (!list_of_prompts) {
    out.emplace_back();
    if (!one_prompt(tok, prompt, out.back(), 0, media, error)) return invalid_request(kBadPrompt);
    return error;
  }
  for (const Json& element : prompt) {
    out.emplace_back();
    if (!one_prompt(tok, element, out.back(), out.size() - 1, media, error)) {
      return invalid_request(kBadPrompt);
    }
    if (error) return error;
  }
  return std::nullopt;
}

namespace fields {

std::optional<ApiError> parse_prompt(const Json& v, const std::string& used,
                                     CompletionSettings& out, const FieldContext& ctx) {
  if (ctx.route == kInfill) {
    // /infill's prompt: text placed right after the prefix.
    if (!v.is_string()) return type_error(used, "string", v);
    out.infill.prompt = ctx.tok->tokenize(v.get_ref<const std::string&>(), false, true);
    return std::nullopt;
  }
  // A list of many prompts is many tasks: no more than the scheduler can queue at once.
  if (v.is_array() && v.size() > static_cast<size_t>(ctx.defaults->max_prompts) &&
      std::none_of(v.begin(), v.end(), [](const Json& e) { return e.is_number_integer(); })) {
    return field_error(
        used, "at most " + std::to_string(ctx.defaults->max_prompts) + " prompts in one request");
  }
  return parse_prompts(*ctx.tok, v, out.prompts, &out.media_prompts);
}

std::optional<ApiError> parse_infill_text(const Json& v, const std::string& used,
                                          CompletionSettings& out, const FieldContext& ctx) {
  if (!is_text_or_tokens(v)) {
    return field_error(used, "must be a string or an array of strings and token ids");
  }
  std::vector<int32_t> tokens = tokenize_mixed(*ctx.tok, v, false, false);
  (used == "input_prefix" ? out.infill.prefix : out.infill.suffix) = std::move(tokens);
  return std::nullopt;
}

std::optional<ApiError> parse_infill_extra(const Json& v, const std::string&,
                                           CompletionSettings& out, const FieldContext&) {
  if (!v.is_array()) {
    return invalid_request(
        "\"input_extra\" must be an array of {\"filename\": string, \"text\": string}");
  }
  for (const Json& chunk : v) {
    if (!chunk.is_object() || !chunk.contains("text") || !chunk["text"].is_string()) {
      return invalid_request(
          "extra_context chunk must contain a \"text\" field with a string value");
    }
    std::string filename = "tmp";
    if (chunk.contains("filename")) {
      if (!chunk["filename"].is_string()) {
        return invalid_request("extra_context chunk's \"filename\" field must be a string");
      }
      filename = chunk["filename"].get<std::string>();
    }
    out.infill.extra.emplace_back(std::move(filename), chunk["text"].get<std::string>());
  }
  return std::nullopt;
}

}  // namespace fields

}  // namespace hearth::server

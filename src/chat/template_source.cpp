#include "chat/template_source.h"

namespace hearth::chat {

// The reference writes this template as a C string literal, so the "\n" inside its Jinja
// string literals are real newlines; /props shows them that way.
const std::string_view kChatmlTemplateSource =
    "{%- for message in messages -%}\n"
    "  {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "  {{- '<|im_start|>assistant\n' -}}\n"
    "{%- endif -%}";

namespace {

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (size_t pos = text.find(from); pos != std::string::npos; pos = text.find(from, pos)) {
    text.replace(pos, from.size(), to);
    pos += to.size();
  }
}

bool contains(const std::string& text, std::string_view part) {
  return text.find(part) != std::string::npos;
}

// GPT-OSS templates raise when a message's content holds channel markers; the reference
// disables that check because it feeds channel text back through the history.
constexpr std::string_view kGptOssContentCheck =
    "{%- if \"<|channel|>analysis<|message|>\" in message.content or "
    "\"<|channel|>final<|message|>\" in message.content %}";

// Mistral templates raise on an assistant message with neither content nor tool calls.
constexpr std::string_view kMistralEmptyAssistantCheck =
    "{%- if (message['content'] is none or message['content'] == '' or "
    "message['content']|length == 0) and (message['tool_calls'] is not defined or "
    "message['tool_calls'] is none or message['tool_calls']|length == 0) %}";

constexpr std::string_view kDisabledCheck = "{%- if false %}";

}  // namespace

std::string patch_template_source(std::string source) {
  if (contains(source, "<|channel|>") && contains(source, "in message.content or")) {
    replace_all(source, kGptOssContentCheck, kDisabledCheck);
  }
  if (contains(source, "[TOOL_CALLS]") && contains(source, "if (message['content'] is none or")) {
    replace_all(source, kMistralEmptyAssistantCheck, kDisabledCheck);
  }
  return source;
}

std::string normalize_template_text(std::string_view source) {
  std::string text;
  text.reserve(source.size());
  for (size_t i = 0; i < source.size(); ++i) {
    if (source[i] != '\r') {
      text += source[i];
    } else if (i + 1 >= source.size() || source[i + 1] != '\n') {
      text += '\n';  // a lone CR; a CR before LF is dropped
    }
  }
  // Only a text that ends with LF loses it (a final lone CR stays a newline), as the
  // reference decides on the original text.
  if (!source.empty() && source.back() == '\n') text.pop_back();
  return text;
}

TemplateSources select_template_sources(const TemplateOrigin& origin) {
  std::string default_source;
  std::string tool_use_source;
  if (!origin.override_text.empty()) {
    default_source = origin.override_text;
  } else {
    if (origin.model_default) {
      default_source = *origin.model_default;
    } else if (origin.vocab_pre == "tekken" && origin.n_layer == 40) {
      default_source = "mistral-v7-tekken";
    }
    if (origin.model_tool_use) tool_use_source = *origin.model_tool_use;
  }
  if (default_source.empty() || default_source == "chatml") {
    default_source = tool_use_source.empty() ? std::string(kChatmlTemplateSource) : tool_use_source;
  }
  TemplateSources out;
  out.default_source = normalize_template_text(patch_template_source(std::move(default_source)));
  if (!tool_use_source.empty()) out.tool_use_source = normalize_template_text(tool_use_source);
  return out;
}

}  // namespace hearth::chat

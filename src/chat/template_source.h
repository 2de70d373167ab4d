// Where the chat template comes from (chat-templates.md §2): the command line, the GGUF
// metadata or the built-in ChatML, with the reference's source patches and text
// normalization applied.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace hearth::chat {

// llama-server's built-in ChatML template (also what the word "chatml" selects).
extern const std::string_view kChatmlTemplateSource;

struct TemplateOrigin {
  // --chat-template TEXT or the contents of --chat-template-file; empty when not given.
  std::string override_text;
  // GGUF tokenizer.chat_template and tokenizer.chat_template.tool_use.
  std::optional<std::string> model_default;
  std::optional<std::string> model_tool_use;
  // A model with no template whose vocabulary pre-tokenizer is "tekken" and which has 40
  // layers (Mistral-Small-2503) reports the name "mistral-v7-tekken" instead.
  std::string vocab_pre;
  int n_layer = 0;
};

struct TemplateSources {
  std::string default_source;   // never empty
  std::string tool_use_source;  // empty when there is none
};

// Priority: the override, else the model's templates; "chatml" or nothing selects the
// tool-use variant when there is one, else ChatML. Patches and normalization applied.
TemplateSources select_template_sources(const TemplateOrigin& origin);

// The reference's exact-substring fixes for templates that would otherwise raise (GPT-OSS
// content checks, Mistral's empty-assistant check).
std::string patch_template_source(std::string source);

// CRLF and CR become LF; one trailing newline of the whole text is dropped.
std::string normalize_template_text(std::string_view source);

}  // namespace hearth::chat

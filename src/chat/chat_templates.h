// A server's chat templates: the default and the optional tool-use variant, parsed once,
// probed for their capabilities, and applied to conversations (chat-templates.md §2, §5-§7)
// with the Jinja engine or, with --no-jinja, the built-in formats (§3).
#pragma once

#include <ctime>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/status.h"
#include "chat/chat_types.h"
#include "chat/output_parser.h"
#include "chat/template_source.h"

namespace hearth::chat {

using Json = nlohmann::ordered_json;

// What /props reports as chat_template_caps. Hearth's engine does not record which inputs
// a template reads, so each capability is probed by rendering a synthetic conversation
// and looking for marker texts in the output (caps.cpp says how, per capability).
struct TemplateCaps {
  bool supports_object_arguments = false;
  bool supports_parallel_tool_calls = false;
  bool supports_preserve_reasoning = false;
  bool supports_reasoning_effort = false;
  bool supports_string_content = true;
  bool supports_system_role = true;
  bool supports_tool_calls = false;
  bool supports_tools = false;
  bool supports_typed_content = false;

  Json to_json() const;  // the nine keys, sorted
};

// The vocabulary's special-token texts and BOS/EOS rules.
struct VocabText {
  std::string bos;  // "" when the vocabulary has no BOS
  std::string eos;
  bool add_bos = false;  // the tokenizer adds BOS itself: a leading BOS text is removed
  bool add_eos = false;
};

struct ChatInputs {
  std::vector<Message> messages;
  std::vector<Tool> tools;  // non-empty selects the tool-use variant
  bool add_generation_prompt = true;
  Continuation continuation = Continuation::kNone;
  std::optional<bool> enable_thinking;  // unset: the template's default (supports_thinking)
  Json kwargs = Json::object();         // chat_template_kwargs, server's merged with request's
  std::optional<std::time_t> now;       // the clock for datetime and strftime_now; unset: now
};

struct ChatPrompt {
  std::string prompt;
  // The assistant header the template adds (what follows the rendered conversation),
  // plus the continued message's text when continuing.
  std::string generation_prompt;
  // The continued message's content when continuing it (already in generation_prompt):
  // the start of the answer, which a grammar for the answer must read first.
  std::string continued_answer;
  // How the model's output is read back: the template's thinking tags and tool-call
  // family, the prefix and its literal part. The server sets what the request decides
  // (reasoning format, whether tool calls are parsed).
  OutputSyntax syntax;
  // Stop strings the template's model needs besides its end-of-generation tokens, added
  // to the request's stop list (chat-templates.md §7: Laguna's "</assistant>").
  std::vector<std::string> additional_stops;
  // The reference builds this template's parser with its differential autoparser (no
  // dedicated handler): an unusable schema is then reported with the autoparser's lead-in.
  bool autoparsed = false;
};

struct ChatTemplatesConfig {
  bool use_jinja = true;
  TemplateSources sources;
  VocabText vocab;
};

struct ParsedTemplate;  // one template: source, program and capabilities

class ChatTemplates {
 public:
  // Parses and probes. kInvalidArgument with the engine's message when the default
  // template does not parse; a tool-use variant that does not parse is dropped (logged).
  static Result<std::shared_ptr<const ChatTemplates>> create(const ChatTemplatesConfig& config);

  ChatTemplates(const ChatTemplates&) = delete;
  ChatTemplates& operator=(const ChatTemplates&) = delete;
  ~ChatTemplates();

  bool use_jinja() const { return use_jinja_; }
  const std::string& default_source() const;
  const std::string& tool_use_source() const;  // empty when there is none
  // The capabilities of the tool-use variant when there is one, else the default's.
  const TemplateCaps& caps() const;
  // How the tool-use variant's (else the default's) model writes calls: the family's name
  // in the table of chat-templates.md §9, "derived" when found by rendering the template
  // (§8.1 step 3), "none" when the template has no tool-call syntax Hearth can read.
  const std::string& tool_call_family() const;
  // Whether the default template renders differently with enable_thinking false: the
  // default of enable_thinking (the reference's "template supports thinking", simplified).
  bool supports_thinking() const { return supports_thinking_; }

  // The prompt for a conversation. Any error is a server-side failure (HTTP 500): the
  // template raised or failed (the engine's message), or the legacy format is unknown.
  Result<ChatPrompt> apply(const ChatInputs& inputs) const;

 private:
  ChatTemplates();

  bool use_jinja_ = true;
  VocabText vocab_;
  std::unique_ptr<ParsedTemplate> default_;
  std::unique_ptr<ParsedTemplate> tool_use_;
  bool supports_thinking_ = false;
};

// The server's start-up selection: sources chosen and patched, templates parsed, then the
// reference's example conversation rendered once with the server's kwargs; a template
// that cannot render it is replaced by ChatML (logged as the reference does).
Result<std::shared_ptr<const ChatTemplates>> load_chat_templates(const TemplateOrigin& origin,
                                                                 bool use_jinja,
                                                                 const VocabText& vocab,
                                                                 const Json& default_kwargs);

// --chat-template / --chat-template-file validation: the text is selected as an override
// (no model) and one user message "test" is rendered. The error carries the reason.
Status verify_chat_template(const std::string& text, bool use_jinja);

}  // namespace hearth::chat

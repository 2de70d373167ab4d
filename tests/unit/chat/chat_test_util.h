// Helpers shared by the chat tests: templates from source text, messages in one line.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "chat/chat_templates.h"
#include "chat/render.h"

namespace hearth::chat::test {

inline std::shared_ptr<const ChatTemplates> make_templates(const std::string& source,
                                                           const std::string& tool_use = "",
                                                           VocabText vocab = {},
                                                           bool use_jinja = true) {
  TemplateOrigin origin;
  origin.override_text = source;
  TemplateSources sources = select_template_sources(origin);
  if (!tool_use.empty()) sources.tool_use_source = tool_use;
  Result<std::shared_ptr<const ChatTemplates>> t =
      ChatTemplates::create({use_jinja, sources, std::move(vocab)});
  EXPECT_TRUE(t.is_ok()) << t.status().message();
  return t.is_ok() ? *t : nullptr;
}

// One template parsed and probed as the server does, without the family table's syntax.
inline std::unique_ptr<ParsedTemplate> parsed_template(const std::string& source) {
  jinja::ParseOptions options;
  options.keep_trailing_newline = true;
  Result<jinja::Template> program = jinja::Template::parse(source, options);
  EXPECT_TRUE(program.is_ok()) << program.status().message();
  if (!program.is_ok()) return nullptr;
  auto t = std::make_unique<ParsedTemplate>(
      ParsedTemplate{source, std::move(*program), {}, {}, {}, "none"});
  t->caps = probe_caps(*t, VocabText{});
  return t;
}

inline Message msg(const std::string& role, const std::string& content) {
  Message m;
  m.role = role;
  m.content = content;
  return m;
}

// The prompt, or "ERROR: <message>".
inline std::string prompt_of(const ChatTemplates& t, const ChatInputs& inputs) {
  Result<ChatPrompt> out = t.apply(inputs);
  return out.is_ok() ? out->prompt : "ERROR: " + out.status().message();
}

inline ChatInputs conversation(std::vector<Message> messages, bool add_generation_prompt = true) {
  ChatInputs inputs;
  inputs.messages = std::move(messages);
  inputs.add_generation_prompt = add_generation_prompt;
  inputs.now = 1767225600;  // 2026-01-01 00:00:00 UTC
  return inputs;
}

}  // namespace hearth::chat::test

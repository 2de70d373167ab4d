// Internal: one parsed template and the Jinja render of a prepared conversation
// (chat-templates.md §5): the context variables, and the BOS/EOS texts removed again when
// the tokenizer adds those tokens itself.
#pragma once

#include <ctime>
#include <optional>
#include <string>
#include <utility>

#include "chat/chat_templates.h"
#include "jinja/template.h"

namespace hearth::chat {

struct ParsedTemplate {
  std::string source;
  jinja::Template program;
  TemplateCaps caps;
  // The thinking block's markers as the template writes them around an assistant message's
  // reasoning, whitespace included ("<think>\n", "\n</think>\n\n"); the bare tags when the
  // template does not render reasoning; unset when it has no thinking tags.
  std::optional<std::pair<std::string, std::string>> reasoning_markers;
  // How its model writes tool calls: the family's syntax (output_syntax.cpp), else the one
  // derived from the template (tool_syntax_probe.cpp); style kNone when neither.
  ToolCallFormat tool_format;
  std::string tool_family = "none";  // the family's name, or "derived"
};

struct RenderRequest {
  Json messages = Json::array();  // already in the template's shape (§6)
  Json tools;                     // null, or a non-empty array
  bool add_generation_prompt = false;
  bool enable_thinking = true;
  Json extra = Json::object();  // datetime, date_string, then chat_template_kwargs
  std::optional<std::time_t> now;
};

// The variables every render gets besides the conversation: datetime ("%b %d %Y") and
// date_string ("%d %b %Y") of the local clock, then `kwargs` over them.
Json extra_context(const Json& kwargs, std::optional<std::time_t> now);

Result<std::string> render_template(const ParsedTemplate& tmpl, const VocabText& vocab,
                                    const RenderRequest& request);

// What the template appends for an assistant turn: the part of the render with the
// generation prompt after the longest prefix it shares with the render without it.
std::string generation_suffix(const std::string& without, const std::string& with);

// Probes the capabilities of a parsed template (caps.cpp).
TemplateCaps probe_caps(const ParsedTemplate& tmpl, const VocabText& vocab);

}  // namespace hearth::chat

// Internal: the tool-call syntax of a template outside the family table, derived from the
// template itself (chat-templates.md §8.1 step 3). Conversations that differ in one aspect
// (content or a call; one call or two) are rendered and diffed; the text of a call is then
// classified as the reference's autoparser does: the whole call in JSON (JSON_NATIVE), the
// name in tags with JSON arguments (TAG_WITH_JSON), or name and arguments in tags
// (TAG_WITH_TAGGED). A derived syntax is kept only when it reads the rendered calls back.
#pragma once

#include <optional>

#include "chat/output_parser.h"
#include "chat/render.h"

namespace hearth::chat {

// The syntax, or nullopt when the template renders no call this analysis can read back.
std::optional<ToolCallFormat> derive_tool_call_format(const ParsedTemplate& tmpl,
                                                      const VocabText& vocab);

}  // namespace hearth::chat

// Internal: the message rewrites applied before a Jinja render (chat-templates.md §6),
// each decided by the template's source or capabilities.
#pragma once

#include <vector>

#include "chat/chat_templates.h"

namespace hearth::chat {

// Messages in the content form the template accepts: strings only -> parts flattened;
// arrays only -> a string becomes [{"type":"text","text":...}]; otherwise as given.
Json shape_messages(const std::vector<Message>& messages, const TemplateCaps& caps);

// developer -> system, except for templates with their own developer role (<|channel|>).
void map_developer_to_system(Json& messages);

// Without a system role, a leading system message is merged into the next one as
// "system\nnext" (both contents must be strings), or dropped when it is alone.
Status merge_system_message(Json& messages);

// Tool-call messages without a content key get content "".
void add_empty_tool_call_content(Json& messages);

// Tool-call arguments given as JSON text become objects. Error: "Failed to parse tool call
// arguments as JSON: <reason>".
Status parse_tool_call_arguments(Json& messages);

}  // namespace hearth::chat

#include "server/openai/chat_output.h"

#include "server/openai/oai_common.h"

namespace hearth::server::openai {

ChatOutput::Choice& ChatOutput::state(int32_t index) {
  Choice& c = choices_[index];
  if (!c.primed) {
    c.primed = true;
    if (primed_) c.parsed = chat::parse_output(syntax_, "", true);
  }
  return c;
}

bool ChatOutput::begin(int32_t index) {
  Choice& c = state(index);
  const bool first = !c.started;
  c.started = true;
  return first;
}

chat::MessageDelta ChatOutput::step(int32_t index, const std::string& piece) {
  Choice& c = state(index);
  if (piece.empty()) return {};
  c.generated += piece;
  chat::ParsedMessage now = chat::parse_output(syntax_, c.generated, true);
  chat::MessageDelta d = chat::diff_messages(c.parsed, now);
  c.parsed = std::move(now);
  return d;
}

chat::MessageDelta ChatOutput::finish(int32_t index) {
  Choice& c = state(index);
  chat::ParsedMessage now = chat::parse_output(syntax_, c.generated, false);
  chat::MessageDelta d = chat::diff_messages(c.parsed, now);
  // A call the final parse no longer sees stays as streamed; the rest is the final parse.
  if (now.tool_calls.size() < c.parsed.tool_calls.size()) {
    now.tool_calls.insert(now.tool_calls.end(),
                          c.parsed.tool_calls.begin() + static_cast<long>(now.tool_calls.size()),
                          c.parsed.tool_calls.end());
  }
  c.parsed = std::move(now);
  return d;
}

std::string ChatOutput::call_id(int32_t index, size_t call, const std::string& model_id) {
  Choice& c = state(index);
  if (c.ids.size() <= call) c.ids.resize(call + 1);
  if (c.ids[call].empty()) c.ids[call] = model_id.empty() ? random_id() : model_id;
  return c.ids[call];
}

std::vector<AnsweredCall> ChatOutput::answered_calls(int32_t index,
                                                     const chat::ParsedMessage& message) {
  std::vector<AnsweredCall> out;
  for (size_t i = 0; i < message.tool_calls.size(); ++i) {
    const chat::ParsedToolCall& call = message.tool_calls[i];
    out.push_back({call.name, call.arguments, call_id(index, i, call.id)});
  }
  return out;
}

}  // namespace hearth::server::openai

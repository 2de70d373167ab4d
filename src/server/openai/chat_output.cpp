#include "server/openai/chat_output.h"

#include "server/openai/oai_common.h"

namespace hearth::server::openai {

ChatOutput::Choice& ChatOutput::state(int32_t index) {
  auto it = choices_.find(index);
  if (it == choices_.end()) it = choices_.emplace(index, Choice(syntax_)).first;
  Choice& c = it->second;
  if (!c.primed) {
    c.primed = true;
    // A continuation starts from the parse of its prefix (shown already, not streamed).
    if (primed_) c.stream.step("");
  }
  return c;
}

const chat::ParsedMessage& ChatOutput::parsed(int32_t index) {
  Choice& c = state(index);
  return c.finished ? c.final : c.stream.parsed();
}

bool ChatOutput::begin(int32_t index) {
  Choice& c = state(index);
  const bool first = !c.started;
  c.started = true;
  return first;
}

chat::MessageDelta ChatOutput::step(int32_t index, const std::string& piece) {
  Choice& c = state(index);
  if (piece.empty() || c.finished) return {};
  return c.stream.step(piece);
}

chat::MessageDelta ChatOutput::finish(int32_t index) {
  Choice& c = state(index);
  const chat::ParsedMessage& before = parsed(index);
  const std::string_view generated = c.stream.generated();
  chat::ParsedMessage now = chat::parse_output(syntax_, generated, false);
  chat::MessageDelta d = chat::diff_messages(before, now);
  // A call the final parse no longer sees stays as streamed; the rest is the final parse.
  if (now.tool_calls.size() < before.tool_calls.size()) {
    now.tool_calls.insert(now.tool_calls.end(),
                          before.tool_calls.begin() + static_cast<long>(now.tool_calls.size()),
                          before.tool_calls.end());
  }
  c.final = std::move(now);
  c.finished = true;
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

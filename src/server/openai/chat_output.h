// The model output of a chat request read back per choice (chat-templates.md §8): parsed
// whole for a non-streamed answer; streamed, parsed incrementally as tokens arrive (each
// token costs the part that can still change, not the answer so far), with the diffs as
// deltas. Shared by the chat, Messages and Responses shapes.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "chat/output_parser.h"
#include "chat/stream_parser.h"

namespace hearth::server::openai {

// A tool call as answered: the parsed call with its id settled.
struct AnsweredCall {
  std::string name;
  std::string arguments;
  std::string id;
};

class ChatOutput {
 public:
  // `primed`: the stream starts after the prefix's own text (explicit continuation without
  // echo), so a continued message is not streamed again.
  ChatOutput(chat::OutputSyntax syntax, bool primed)
      : syntax_(std::move(syntax)), primed_(primed) {}

  // Something that must live as long as the answer (the completion's control entry).
  void keep_alive(std::shared_ptr<const void> object) { kept_ = std::move(object); }
  // Every result is in: what was kept alive for the answer goes.
  void finished() { kept_.reset(); }

  const chat::OutputSyntax& syntax() const { return syntax_; }

  // Non-streaming: the whole output of a choice.
  chat::ParsedMessage parse_final(const std::string& generated) const {
    return chat::parse_output(syntax_, generated, false);
  }

  // Streaming: the text a token released (possibly empty), and the new parts it shows.
  chat::MessageDelta step(int32_t index, const std::string& piece);
  // Streaming, at the end: what the final parse adds (text held back as a possible marker).
  chat::MessageDelta finish(int32_t index);
  // The parse of a choice so far (final once finish() ran).
  const chat::ParsedMessage& parsed(int32_t index);
  // Whether the choice already produced its first event.
  bool begin(int32_t index);

  // The id of call `call` of choice `index`: the model's when it wrote one, else random
  // and then stable.
  std::string call_id(int32_t index, size_t call, const std::string& model_id);
  std::vector<AnsweredCall> answered_calls(int32_t index, const chat::ParsedMessage& message);

 private:
  struct Choice {
    explicit Choice(const chat::OutputSyntax& syntax) : stream(syntax) {}
    chat::StreamParser stream;  // the parse while streaming
    chat::ParsedMessage final;  // the parse once finish() ran
    bool finished = false;
    std::vector<std::string> ids;
    bool started = false;
    bool primed = false;
  };
  Choice& state(int32_t index);

  chat::OutputSyntax syntax_;
  bool primed_;
  std::map<int32_t, Choice> choices_;
  std::shared_ptr<const void> kept_;
};

}  // namespace hearth::server::openai

// ChatOutput's stream (step, then finish) against what it did before it parsed incrementally:
// the whole output parsed again after each token and diffed, then the final parse. Deltas,
// the parse between tokens and the parse after finish() must be the same, for continued
// (primed) answers too, and where the final parse releases held-back text or drops a call.
#include <gtest/gtest.h>

#include <random>

#include "chat/output_syntax.h"
#include "server/openai/chat_output.h"

namespace hearth::server::openai {
namespace {

// The reference: ChatOutput's per-choice stream as it was.
struct ReparseOutput {
  chat::OutputSyntax syntax;
  std::string generated;
  chat::ParsedMessage parsed;

  chat::MessageDelta step(const std::string& piece) {
    if (piece.empty()) return {};
    generated += piece;
    chat::ParsedMessage now = chat::parse_output(syntax, generated, true);
    chat::MessageDelta d = chat::diff_messages(parsed, now);
    parsed = std::move(now);
    return d;
  }
  chat::MessageDelta finish() {
    chat::ParsedMessage now = chat::parse_output(syntax, generated, false);
    chat::MessageDelta d = chat::diff_messages(parsed, now);
    if (now.tool_calls.size() < parsed.tool_calls.size()) {
      now.tool_calls.insert(now.tool_calls.end(),
                            parsed.tool_calls.begin() + static_cast<long>(now.tool_calls.size()),
                            parsed.tool_calls.end());
    }
    parsed = std::move(now);
    return d;
  }
};

std::string show(const chat::MessageDelta& d) {
  std::string out = "r[" + d.reasoning + "] c[" + d.content + "]";
  for (const chat::ToolCallDelta& t : d.tool_calls) {
    out += " " + std::to_string(t.index) + (t.is_new ? "+" : " ") + t.name + "|" + t.arguments;
  }
  return out;
}

std::string show(const chat::ParsedMessage& m) {
  std::string out = "r[" + m.reasoning + "] c[" + m.content + "]";
  for (const auto& c : m.tool_calls) out += " " + c.name + "|" + c.id + "|" + c.arguments;
  return out;
}

chat::OutputSyntax qwen() {
  chat::OutputSyntax s;
  s.literal = s.prefix = "<|im_start|>assistant\n";
  s.reasoning_start = "<think>\n";
  s.reasoning_end = "\n</think>\n\n";
  s.tools = chat::tool_call_format("{{ '<tool_call>' }}");
  s.parse_tool_calls = true;
  return s;
}

// Streams `text` in random pieces of up to `longest` bytes through both.
void expect_same_stream(const chat::OutputSyntax& syntax, bool primed, const std::string& text,
                        size_t longest, std::mt19937& rng) {
  SCOPED_TRACE(text);
  ChatOutput output(syntax, primed);
  ReparseOutput reference{syntax, "", {}};
  if (primed) reference.parsed = chat::parse_output(syntax, "", true);
  EXPECT_EQ(show(output.parsed(0)), show(reference.parsed));
  std::uniform_int_distribution<size_t> size(1, longest);
  for (size_t at = 0; at < text.size();) {
    const std::string piece = text.substr(at, size(rng));
    at += piece.size();
    ASSERT_EQ(show(output.step(0, piece)), show(reference.step(piece))) << "at " << at;
    ASSERT_EQ(show(output.parsed(0)), show(reference.parsed)) << "at " << at;
  }
  EXPECT_EQ(show(output.finish(0)), show(reference.finish()));
  EXPECT_EQ(show(output.parsed(0)), show(reference.parsed));
}

TEST(ChatOutputStream, StepsAndFinishAsTheWholeReparse) {
  std::mt19937 rng(7);
  const std::vector<std::string> texts = {
      "<think>\nLet me see.\n</think>\n\nSure <tool_call>\n{\"name\": \"f\", \"arguments\": "
      "{\"a\": [1, 2]}}\n</tool_call>\n<tool_call>\n{\"name\": \"g\", \"arguments\": {\"b\"",
      "Let me check. <tool_call>\nnot json at all\n</tool_call>",
      "<think>\nunfinished thought\n</thi", "Plain answer with a trailing partial marker <tool_c"};
  chat::OutputSyntax continued = qwen();
  continued.prefix += "<think>\nSo far I th";  // a continued message (no echo): primed
  chat::OutputSyntax schema;
  schema.json_output = true;
  for (size_t longest : {1, 5, 17}) {
    for (const std::string& text : texts) {
      expect_same_stream(qwen(), false, text, longest, rng);
      expect_same_stream(continued, true, text, longest, rng);
    }
    expect_same_stream(schema, false, "```json\n{\"a\": 1, \"b\": -3000", longest, rng);
  }
}

}  // namespace
}  // namespace hearth::server::openai

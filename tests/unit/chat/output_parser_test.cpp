// The output parser on hand-made outputs: reasoning separation (forced-open, whitespace-only,
// reasoning_format none), held-back markers, calls that cannot be read, schema answers.
#include <gtest/gtest.h>

#include "chat/output_parser.h"
#include "chat/output_syntax.h"

namespace hearth::chat {
namespace {

OutputSyntax qwen(const std::string& prefix = "<|im_start|>assistant\n") {
  OutputSyntax s;
  s.literal = "<|im_start|>assistant\n";
  s.prefix = prefix;
  s.reasoning_start = "<think>\n";
  s.reasoning_end = "\n</think>\n\n";
  s.tools = tool_call_format("{{ '<tool_call>' }}");
  return s;
}

TEST(OutputParser, ReasoningThenContent) {
  ParsedMessage m = parse_output(qwen(), "<think>\nabc\n</think>\n\nhello", false);
  EXPECT_EQ(m.reasoning, "abc");
  EXPECT_EQ(m.content, "hello");
  // A forced-open block (QwQ): the output starts inside it; unfinished, all is reasoning.
  OutputSyntax forced = qwen("<|im_start|>assistant\n<think>\n");
  forced.reasoning_start = "<think>";
  forced.reasoning_end = "</think>";
  m = parse_output(forced, "\"Here\" she said", false);
  EXPECT_EQ(m.reasoning, "\n\"Here\" she said");
  EXPECT_EQ(m.content, "");
  m = parse_output(forced, "x</think>answer", false);
  EXPECT_EQ(m.reasoning, "\nx");
  EXPECT_EQ(m.content, "answer");
  // Whitespace-only thinking (thinking off) is dropped.
  m = parse_output(qwen("<|im_start|>assistant\n<think>\n\n</think>\n\n"), "hi", false);
  EXPECT_EQ(m.reasoning, "");
  EXPECT_EQ(m.content, "hi");
  // reasoning_format none: the raw text, tags included.
  forced.extract_reasoning = false;
  EXPECT_EQ(parse_output(forced, "x</think>answer", false).content, "<think>\nx</think>answer");
}

TEST(OutputParser, MarkersBeingGeneratedAreHeldBack) {
  OutputSyntax s = qwen();
  EXPECT_EQ(parse_output(s, "<thi", true).content, "");
  EXPECT_EQ(parse_output(s, "<thi", false).content, "<thi");
  EXPECT_EQ(parse_output(s, "<think>\nab\n</thi", true).reasoning, "ab");
  s.parse_tool_calls = true;
  EXPECT_EQ(parse_output(s, "Sure <tool_c", true).content, "Sure");
  EXPECT_EQ(parse_output(s, "Sure <tool_c", false).content, "Sure <tool_c");
  // A call appears once its name is complete; its arguments grow.
  ParsedMessage m =
      parse_output(s, "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1", true);
  ASSERT_EQ(m.tool_calls.size(), 1u);
  EXPECT_EQ(m.tool_calls[0].name, "f");
  EXPECT_EQ(m.tool_calls[0].arguments, "{\"a\": 1");
  EXPECT_TRUE(parse_output(s, "<tool_call>\n{\"name\": \"f", true).tool_calls.empty());
}

// Qwen3-Coder's models may leave out the opening <tool_call> (chat-templates.md §9).
TEST(OutputParser, QwenCoderCallsWithoutTheirOpeningTag) {
  OutputSyntax s;
  s.tools = tool_call_format("{{ '<tool_call>' }}<function=<parameter=");
  s.tools.string_params["get_weather"] = {"city"};
  s.parse_tool_calls = true;
  const std::string call =
      "<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n</function>";
  for (const std::string& output : {"Sure.\n" + call, "Sure.\n" + call + "\n</tool_call>",
                                    "Sure.\n<tool_call>\n" + call + "\n" + call}) {
    SCOPED_TRACE(output);
    ParsedMessage m = parse_output(s, output, false);
    EXPECT_EQ(m.content, "Sure.");
    ASSERT_FALSE(m.tool_calls.empty());
    EXPECT_EQ(m.tool_calls[0].name, "get_weather");
    EXPECT_EQ(m.tool_calls[0].arguments, R"({"city":"Paris"})");
  }
  EXPECT_EQ(parse_output(s, "Sure.\n" + call + "\n" + call, false).tool_calls.size(), 2u);
  // While streaming, the start of either marker is held back.
  EXPECT_EQ(parse_output(s, "Sure.\n<func", true).content, "Sure.");
  EXPECT_EQ(parse_output(s, "Sure.\n<tool_c", true).content, "Sure.");
}

TEST(OutputParser, ACallThatCannotBeReadIsContent) {
  OutputSyntax s = qwen();
  s.parse_tool_calls = true;
  const std::string text = "Let me check. <tool_call>\nnot json at all\n</tool_call>";
  ParsedMessage m = parse_output(s, text, false);
  EXPECT_TRUE(m.tool_calls.empty());
  EXPECT_EQ(m.content, text);
  // While streaming it was held back; the final parse releases it whole.
  ParsedMessage partial = parse_output(s, text, true);
  EXPECT_EQ(partial.content, "Let me check.");
  MessageDelta d = diff_messages(partial, m);
  EXPECT_EQ(d.content, " <tool_call>\nnot json at all\n</tool_call>");
}

TEST(OutputParser, SchemaAnswersAreTheJsonValue) {
  OutputSyntax s;
  s.json_output = true;
  EXPECT_EQ(parse_output(s, "```json\n{\"a\": 1}\n```", false).content, "{\"a\": 1}");
  EXPECT_EQ(parse_output(s, " {\"a\": [1, 2]} trailing", false).content, "{\"a\": [1, 2]}");
  // Cut by the token limit: a member whose number may still grow is left out (measured on
  // the reference: `{ "name" : "It's a spect", ` for 48 tokens ending in `"age" : -3000`).
  EXPECT_EQ(parse_output(s, "{ \"name\" : \"It's a spect\", \"age\" : -3000", false).content,
            "{ \"name\" : \"It's a spect\", ");
}

TEST(OutputParser, HarmonyChannels) {
  OutputSyntax s;
  s.literal = s.prefix = "<|start|>assistant";
  s.harmony = true;
  s.parse_tool_calls = true;
  const std::string text =
      "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final<|message|>"
      "Done.<|return|>";
  ParsedMessage m = parse_output(s, text, false);
  EXPECT_EQ(m.reasoning, "Think.");
  EXPECT_EQ(m.content, "Done.");
  m = parse_output(s, " to=functions.f<|channel|>commentary json<|message|>{\"a\": 1}<|call|>",
                   false);
  ASSERT_EQ(m.tool_calls.size(), 1u);
  EXPECT_EQ(m.tool_calls[0].name, "f");
  EXPECT_EQ(m.tool_calls[0].arguments, "{\"a\": 1}");
  // Streaming: a terminator being written is held back; a header being written shows nothing.
  EXPECT_EQ(parse_output(s, "<|channel|>analysis<|message|>Thi<|e", true).reasoning, "Thi");
  EXPECT_EQ(parse_output(s, "<|channel|>analys", true).reasoning, "");
  s.extract_reasoning = false;  // reasoning_format none: the raw text
  EXPECT_EQ(parse_output(s, text, false).content, text);
}

TEST(OutputParser, DiffsAreAppendedTextAndNewCalls) {
  ParsedMessage before{"ab", "", {{"f", "{\"x\"", ""}}};
  ParsedMessage now{"abc", "hi", {{"f", "{\"x\": 1}", ""}, {"g", "{}", "id7"}}};
  MessageDelta d = diff_messages(before, now);
  EXPECT_EQ(d.reasoning, "c");
  EXPECT_EQ(d.content, "hi");
  ASSERT_EQ(d.tool_calls.size(), 2u);
  EXPECT_FALSE(d.tool_calls[0].is_new);
  EXPECT_EQ(d.tool_calls[0].arguments, ": 1}");
  EXPECT_TRUE(d.tool_calls[1].is_new);
  EXPECT_EQ(d.tool_calls[1].name, "g");
  EXPECT_EQ(d.tool_calls[1].id, "id7");
  EXPECT_TRUE(diff_messages(now, now).empty());
}

}  // namespace
}  // namespace hearth::chat

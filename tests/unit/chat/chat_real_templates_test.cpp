// Real model templates (../shared/templates, the reference's models/templates) through the
// whole chat pipeline: selection, probes, normalization, render, continuation. Expected
// prompt endings are the reference's (chat-templates.md §5.1, §7).
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "chat/output_syntax.h"
#include "support/test_paths.h"
#include "unit/chat/chat_test_util.h"

namespace hearth::chat {
namespace {

using test::conversation;
using test::msg;
using test::prompt_of;

std::shared_ptr<const ChatTemplates> load(const std::string& name, VocabText vocab = {}) {
  TemplateOrigin origin;
  origin.model_default = hearth::test::read_file(hearth::test::shared_path("templates/" + name));
  Result<std::shared_ptr<const ChatTemplates>> t =
      load_chat_templates(origin, true, vocab, Json::object());
  EXPECT_TRUE(t.is_ok()) << name << ": " << t.status().message();
  if (!t.is_ok()) return nullptr;
  EXPECT_NE((*t)->default_source(), kChatmlTemplateSource) << name << " fell back to ChatML";
  return *t;
}

bool ends_with(const std::string& text, const std::string& tail) {
  return text.size() >= tail.size() &&
         text.compare(text.size() - tail.size(), tail.size(), tail) == 0;
}

// Streamed a byte at a time, the deltas add up to the whole parse and no marker ("<|")
// ever shows in the content.
void expect_stream_adds_up(const OutputSyntax& syntax, const std::string& generated,
                           const ParsedMessage& whole) {
  ParsedMessage before;
  std::string reasoning, content;
  for (size_t n = 1; n <= generated.size(); ++n) {
    ParsedMessage now = parse_output(syntax, generated.substr(0, n), n < generated.size());
    MessageDelta d = diff_messages(before, now);
    reasoning += d.reasoning;
    content += d.content;
    EXPECT_EQ(now.content.find("<|"), std::string::npos) << now.content;
    before = now;
  }
  EXPECT_EQ(reasoning, whole.reasoning);
  EXPECT_EQ(content, whole.content);
}

TEST(ChatRealTemplates, Qwen3ThinkingSwitch) {
  auto t = load("Qwen-Qwen3-0.6B.jinja");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(t->supports_thinking());
  ChatInputs inputs = conversation({msg("user", "Hi")});
  EXPECT_TRUE(
      ends_with(prompt_of(*t, inputs), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"));
  inputs.enable_thinking = false;
  EXPECT_TRUE(ends_with(prompt_of(*t, inputs), "<|im_start|>assistant\n<think>\n\n</think>\n\n"));
  inputs.enable_thinking.reset();
  inputs.kwargs = {{"enable_thinking", false}};  // a kwarg reaches the template too
  EXPECT_TRUE(ends_with(prompt_of(*t, inputs), "<think>\n\n</think>\n\n"));
  EXPECT_TRUE(t->caps().supports_tools);
  EXPECT_TRUE(t->caps().supports_tool_calls);
}

TEST(ChatRealTemplates, ForcedThinkingTemplates) {
  auto qwq = load("Qwen-QwQ-32B.jinja");
  ASSERT_NE(qwq, nullptr);
  EXPECT_TRUE(ends_with(prompt_of(*qwq, conversation({msg("user", "Hi")})),
                        "<|im_start|>assistant\n<think>\n"));
  auto r1 = load("deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja", {"<s>", "</s>", true, false});
  ASSERT_NE(r1, nullptr);
  // The tokenizer adds BOS, so the template's leading BOS text is removed.
  EXPECT_EQ(prompt_of(*r1, conversation({msg("user", "Hi")})),
            "<｜User｜>Hi<｜Assistant｜><think>\n");
}

TEST(ChatRealTemplates, CommandR7bToolUse) {
  auto t = load("CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja");
  ASSERT_NE(t, nullptr);
  EXPECT_TRUE(ends_with(prompt_of(*t, conversation({msg("user", "Hi")})),
                        "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"));
}

TEST(ChatRealTemplates, Gemma2MergesTheSystemPrompt) {
  auto t = load("google-gemma-2-2b-it.jinja", {"<bos>", "<eos>", true, false});
  ASSERT_NE(t, nullptr);
  EXPECT_FALSE(t->caps().supports_system_role);
  EXPECT_EQ(prompt_of(*t, conversation({msg("system", "Be brief."), msg("user", "Hi")})),
            "<start_of_turn>user\nBe brief.\nHi<end_of_turn>\n<start_of_turn>model\n");
}

TEST(ChatRealTemplates, Llama31DateAndContinuation) {
  setenv("TZ", "UTC", 1);
  tzset();
  auto t = load("meta-llama-Llama-3.1-8B-Instruct.jinja",
                {"<|begin_of_text|>", "<|eot_id|>", true, false});
  ASSERT_NE(t, nullptr);
  ChatInputs inputs = conversation({msg("user", "Write"), msg("assistant", "Whill")}, false);
  inputs.continuation = Continuation::kAuto;
  const std::string prompt = prompt_of(*t, inputs);
  EXPECT_NE(prompt.find("Today Date: 01 Jan 2026"), std::string::npos) << prompt;
  EXPECT_TRUE(ends_with(prompt, "<|start_header_id|>assistant<|end_header_id|>\n\nWhill"))
      << prompt;
  EXPECT_EQ(prompt.rfind("<|begin_of_text|>", 0), std::string::npos);
}

TEST(ChatRealTemplates, MistralNemoRaisesOnLongToolCallIds) {
  auto t = load("mistralai-Mistral-Nemo-Instruct-2407.jinja");
  ASSERT_NE(t, nullptr);
  Message call = msg("assistant", "");
  call.tool_calls = {{"get", "{}", "0123456789abcdef0123456789abcdef"}};
  const std::string out = prompt_of(*t, conversation({msg("user", "W"), call}));
  EXPECT_NE(out.find("Tool call IDs should be alphanumeric strings with length 9!"),
            std::string::npos)
      << out;
  call.tool_calls[0].id = "abcdef123";
  EXPECT_EQ(prompt_of(*t, conversation({msg("user", "W"), call})).rfind("ERROR", 0),
            std::string::npos);
}

TEST(ChatRealTemplates, Qwen3RendersToolCallsAndResults) {
  auto t = load("Qwen-Qwen3-0.6B.jinja");
  ASSERT_NE(t, nullptr);
  Message call = msg("assistant", "");
  call.tool_calls = {{"get", "{\"city\": \"Paris\"}", "x"}};
  Message result = msg("tool", "sunny");
  result.tool_call_id = "x";
  ChatInputs inputs = conversation({msg("user", "Weather?"), call, result});
  inputs.tools = {{"get", "", Json{{"type", "object"}}}};
  const std::string prompt = prompt_of(*t, inputs);
  EXPECT_NE(
      prompt.find("<tools>\n{\"type\": \"function\", \"function\": {\"name\": \"get\", "
                  "\"description\": \"\", \"parameters\": {\"type\": \"object\"}}}\n</tools>"),
      std::string::npos)
      << prompt;
  EXPECT_NE(prompt.find("<tool_call>\n{\"name\": \"get\", \"arguments\": {\"city\": \"Paris\"}}\n"
                        "</tool_call>"),
            std::string::npos)
      << prompt;
  EXPECT_NE(prompt.find("<tool_response>\nsunny\n</tool_response>"), std::string::npos) << prompt;
}

// Which templates the reference reads with a handler of its own (their grammar errors are
// bare) and which with its autoparser (the errors carry its lead-in).
TEST(ChatRealTemplates, DedicatedParsersAsTheReferenceDetectsThem) {
  const char* const dedicated[] = {"openai-gpt-oss-120b.jinja",
                                   "Qwen3-Coder.jinja",
                                   "Qwen3.5-4B.jinja",
                                   "google-gemma-4-31B-it.jinja",
                                   "deepseek-ai-DeepSeek-V3.2.jinja",
                                   "deepseek-ai-DeepSeek-V4.jinja",
                                   "moonshotai-Kimi-K2.jinja",
                                   "Kimi-K3.jinja",
                                   "MiniMax-M3.jinja",
                                   "muse-glimmer.jinja",
                                   "LFM2.5-8B-A1B.jinja",
                                   "openbmb-MiniCPM5-1B.jinja",
                                   "meetkai-functionary-medium-v3.2.jinja",
                                   "mistralai-Ministral-3-14B-Reasoning-2512.jinja",
                                   "Cohere2MoE.jinja",
                                   "GigaChat3-10B-A1.8B.jinja"};
  const char* const autoparsed[] = {
      "Qwen-Qwen3-0.6B.jinja", "meta-llama-Llama-3.1-8B-Instruct.jinja",
      "GLM-4.6.jinja",         "Mistral-Small-3.2-24B-Instruct-2506.jinja",
      "MiniMax-M2.jinja",      "deepseek-ai-DeepSeek-V3.1.jinja",
      "Qwen-QwQ-32B.jinja",    "GigaChat3.1-10B-A1.8B.jinja"};
  for (const char* name : dedicated) {
    EXPECT_TRUE(reference_has_dedicated_parser(
        hearth::test::read_file(hearth::test::shared_path(std::string("templates/") + name))))
        << name;
  }
  for (const char* name : autoparsed) {
    EXPECT_FALSE(reference_has_dedicated_parser(
        hearth::test::read_file(hearth::test::shared_path(std::string("templates/") + name))))
        << name;
  }
  auto t = load("Qwen-Qwen3-0.6B.jinja");
  ASSERT_NE(t, nullptr);
  Result<ChatPrompt> p = t->apply(conversation({msg("user", "Hi")}));
  ASSERT_TRUE(p.is_ok());
  EXPECT_TRUE(p->autoparsed);
}

// Kimi K3 wraps its answer in tags: the thinking block, the response, the message's
// closers. None of them reaches the reasoning or the content, streamed or not.
TEST(ChatRealTemplates, KimiK3AnswerWithoutItsTags) {
  auto t = load("Kimi-K3.jinja");
  ASSERT_NE(t, nullptr);
  Result<ChatPrompt> p = t->apply(conversation({msg("user", "Hi")}));
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  ASSERT_TRUE(ends_with(p->generation_prompt, "<|open|>think<|sep|>")) << p->generation_prompt;
  const std::string generated =
      "Greet back.<|close|>think<|sep|><|open|>response<|sep|>Hello there!"
      "<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>";
  ParsedMessage whole = parse_output(p->syntax, generated, false);
  EXPECT_EQ(whole.reasoning, "Greet back.");
  EXPECT_EQ(whole.content, "Hello there!");
  expect_stream_adds_up(p->syntax, generated, whole);
}

// MiniMax M3's template writes nested arguments as elements (its to_xml macro); the reader
// gives back the JSON the call carried.
TEST(ChatRealTemplates, MiniMaxM3NestedArgumentsReadBack) {
  auto t = load("MiniMax-M3.jinja");
  ASSERT_NE(t, nullptr);
  const std::string args =
      R"({"title":"Trip 1","stops":[{"town":"Oslo","nights":2},{"town":"Rome"}],"fast":true})";
  Message turn = msg("assistant", "");
  turn.tool_calls = {{"plan", args, "call_1"}};
  ChatInputs history = conversation({msg("user", "Plan it"), turn});
  history.add_generation_prompt = false;
  Result<ChatPrompt> rendered = t->apply(history);
  ASSERT_TRUE(rendered.is_ok()) << rendered.status().message();
  const size_t from = rendered->prompt.find("]<]minimax[>[<tool_call>");
  const size_t to = rendered->prompt.find("[e~[", from);
  ASSERT_NE(from, std::string::npos) << rendered->prompt;
  const std::string written = rendered->prompt.substr(from, to - from);
  Result<ChatPrompt> p = t->apply(conversation({msg("user", "Plan it")}));
  ASSERT_TRUE(p.is_ok());
  OutputSyntax syntax = p->syntax;
  syntax.parse_tool_calls = true;
  syntax.tools.string_params["plan"] = {"title"};
  ParsedMessage parsed = parse_output(syntax, "</mm:think>" + written, false);
  ASSERT_EQ(parsed.tool_calls.size(), 1u) << written;
  EXPECT_EQ(parsed.tool_calls[0].name, "plan");
  EXPECT_EQ(Json::parse(parsed.tool_calls[0].arguments), Json::parse(args));
  EXPECT_EQ(parsed.content, "");
  EXPECT_EQ(parsed.reasoning, "");
}

// Muse Glimmer answers in messages: to=self is reasoning, to=user the content; headers and
// terminators never reach either, streamed or not. Text that never becomes a message is
// content in the end, not lost.
TEST(ChatRealTemplates, GlimmerMessages) {
  auto t = load("muse-glimmer.jinja");
  ASSERT_NE(t, nullptr);
  Result<ChatPrompt> p = t->apply(conversation({msg("user", "Hi")}));
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  ASSERT_TRUE(ends_with(p->generation_prompt, "<|start|>assistant")) << p->generation_prompt;
  const std::string generated =
      " to=self<|message|>Greet back.<|eom|><|start|>assistant to=user<|message|>Hello there!"
      "<|eot|>";
  ParsedMessage whole = parse_output(p->syntax, generated, false);
  EXPECT_EQ(whole.reasoning, "Greet back.");
  EXPECT_EQ(whole.content, "Hello there!");
  expect_stream_adds_up(p->syntax, generated, whole);
  EXPECT_EQ(parse_output(p->syntax, "Once upon a time", true).content, "");
  EXPECT_EQ(parse_output(p->syntax, "Once upon a time", false).content, "Once upon a time");
}

}  // namespace
}  // namespace hearth::chat

// Rendering a conversation with the Jinja engine: the context variables (§5), the message
// normalization (§6), BOS/EOS texts, the generation prompt and continuation (§7).
#include <gtest/gtest.h>

#include <cstdlib>
#include <ctime>

#include "base/json_parse.h"
#include "chat/openai_messages.h"
#include "unit/chat/chat_test_util.h"

namespace hearth::chat {
namespace {

using test::conversation;
using test::make_templates;
using test::msg;
using test::prompt_of;

TEST(ChatRender, ChatmlAsTheGoldenCapture) {
  auto t = make_templates("chatml");
  EXPECT_EQ(prompt_of(*t, conversation({msg("user", "Hi")})),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  EXPECT_EQ(prompt_of(*t, conversation({msg("user", "Hi")}, false)),
            "<|im_start|>user\nHi<|im_end|>\n");
}

TEST(ChatRender, ContextVariables) {
  setenv("TZ", "UTC", 1);
  tzset();
  auto t = make_templates(
      "{{ add_generation_prompt is defined }}|{{ tools is defined }}|{{ bos_token }}|{{ eos_token "
      "}}"
      "|{{ enable_thinking }}|{{ datetime }}|{{ date_string }}|{{ strftime_now('%Y') }}|{{ k }}",
      "", VocabText{"<s>", "</s>", false, false});
  ChatInputs inputs = conversation({msg("user", "x")});
  // enable_thinking defaults to true: the output depends on it.
  EXPECT_EQ(prompt_of(*t, inputs), "True|False|<s>|</s>|True|Jan 01 2026|01 Jan 2026|2026|");
  inputs.add_generation_prompt = false;
  inputs.enable_thinking = false;
  inputs.kwargs = {{"k", "v"}, {"datetime", "overridden"}};
  inputs.tools = {{"f", "", Json::object()}};
  EXPECT_EQ(prompt_of(*t, inputs), "False|True|<s>|</s>|False|overridden|01 Jan 2026|2026|v");
}

TEST(ChatRender, GenerationPromptWinsOverAKwargOfTheSameName) {
  auto t = make_templates("{{ add_generation_prompt }}");
  ChatInputs inputs = conversation({msg("user", "x")});
  inputs.kwargs = {{"add_generation_prompt", false}};
  EXPECT_EQ(prompt_of(*t, inputs), "True");
  inputs.add_generation_prompt = false;
  EXPECT_EQ(prompt_of(*t, inputs), "False");  // then the kwarg is what the template sees
}

TEST(ChatRender, ReasoningSwitchesFanOut) {
  auto t = make_templates(
      "{{ reasoning_effort }}/{{ reasoning_strength }}/{{ preserve_thinking }}/{{ clear_thinking "
      "}}");
  ChatInputs inputs = conversation({msg("user", "x")});
  inputs.kwargs = {{"reasoning_effort", "high"}, {"preserve_reasoning", true}};
  EXPECT_EQ(prompt_of(*t, inputs), "high/high/True/False");
}

TEST(ChatRender, BosAndEosTextsRemovedWhenTheTokenizerAddsThem) {
  const std::string source = "{{ bos_token }}{{ messages[0].content }}{{ eos_token }}";
  auto adds = make_templates(source, "", VocabText{"<s>", "</s>", true, true});
  EXPECT_EQ(prompt_of(*adds, conversation({msg("user", "x")})), "x");
  auto keeps = make_templates(source, "", VocabText{"<s>", "</s>", false, false});
  EXPECT_EQ(prompt_of(*keeps, conversation({msg("user", "x")})), "<s>x</s>");
}

TEST(ChatRender, DeveloperBecomesSystemExceptForChannelTemplates) {
  const std::string roles = "{% for m in messages %}{{ m.role }}:{{ m.content }};{% endfor %}";
  EXPECT_EQ(prompt_of(*make_templates(roles), conversation({msg("developer", "d")})), "system:d;");
  EXPECT_EQ(
      prompt_of(*make_templates(roles + "<|channel|>"), conversation({msg("developer", "d")})),
      "developer:d;<|channel|>");
}

TEST(ChatRender, SystemMergedIntoTheNextMessageWithoutASystemRole) {
  // Gemma-style: raises on a system message, so the probe finds no system role.
  auto t = make_templates(
      "{% if messages and messages[0].role == 'system' %}"
      "{{ raise_exception('System role not supported') }}"
      "{% endif %}{% for m in messages %}[{{ m.role }}:{{ m.content }}]{% endfor %}");
  EXPECT_FALSE(t->caps().supports_system_role);
  EXPECT_EQ(prompt_of(*t, conversation({msg("system", "S"), msg("user", "U")})), "[user:S\nU]");
  EXPECT_EQ(prompt_of(*t, conversation({msg("system", "S")})), "");  // alone: dropped
}

TEST(ChatRender, ContentFormFollowsTheTemplate) {
  Message parts = msg("user", "");
  parts.content_parts = {{"text", "a"}, {"text", "b"}};
  // ChatML concatenates strings: parts are flattened with "\n".
  EXPECT_EQ(prompt_of(*make_templates("chatml"), conversation({parts}, false)),
            "<|im_start|>user\na\nb<|im_end|>\n");
  // A template that only reads parts gets arrays, strings included.
  auto typed = make_templates(
      "{% for m in messages %}{% for p in m.content %}({{ p.text }}){% endfor %}{% endfor %}");
  EXPECT_TRUE(typed->caps().supports_typed_content);
  EXPECT_FALSE(typed->caps().supports_string_content);
  EXPECT_EQ(prompt_of(*typed, conversation({parts, msg("user", "c")})), "(a)(b)(c)");
}

TEST(ChatRender, ToolCallsAsTheTemplateReadsThem) {
  Message call = msg("assistant", "");
  call.tool_calls = {{"get", "{\"city\": \"Paris\"}", "call00001"}};
  // String arguments for a template that prints them.
  auto strings = make_templates(
      "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.name }}"
      "{{ c.function.arguments }}{% endfor %}{% endfor %}");
  EXPECT_TRUE(strings->caps().supports_tool_calls);
  EXPECT_FALSE(strings->caps().supports_object_arguments);
  EXPECT_EQ(prompt_of(*strings, conversation({msg("user", "u"), call})),
            "get{\"city\": \"Paris\"}");
  // Objects for a template that iterates them.
  auto objects = make_templates(
      "{% for m in messages %}{% for c in m.tool_calls or [] %}{{ c.function.name }}"
      "{% for k, v in c.function.arguments.items() %}({{ k }}={{ v }}){% endfor %}{% endfor %}"
      "{% endfor %}");
  EXPECT_TRUE(objects->caps().supports_object_arguments);
  EXPECT_EQ(prompt_of(*objects, conversation({msg("user", "u"), call})), "get(city=Paris)");
  call.tool_calls[0].arguments = "not json";
  EXPECT_EQ(prompt_of(*objects, conversation({msg("user", "u"), call}))
                .rfind("ERROR: Failed to parse tool call arguments as JSON: ", 0),
            0u);
}

TEST(ChatRender, ToolUseVariantWhenTheRequestHasTools) {
  auto t = make_templates("DEFAULT", "TOOLS{% for t in tools %} {{ t.function.name }}{% endfor %}");
  ChatInputs inputs = conversation({msg("user", "x")});
  EXPECT_EQ(prompt_of(*t, inputs), "DEFAULT");
  inputs.tools = {{"lookup", "", Json::object()}};
  EXPECT_EQ(prompt_of(*t, inputs), "TOOLS lookup");
  EXPECT_TRUE(t->caps().supports_tools);  // /props reports the tool-use variant's caps
}

// A tool's schema reaches the template as the request wrote it: its keys in their order,
// its numbers with their kinds (-0.0, 1e2 and 1.0 stay floats, int64's extremes integers;
// the engine prints a uint64 as a float), byte for byte what it rendered as when the
// schema was kept as text and parsed back for each render.
TEST(ChatRender, ToolSchemaRendersAsTheRequestWroteIt) {
  const std::string body =
      R"([{"type":"function","function":{"parameters":{"required":["z","a"],"type":"object",)"
      R"("properties":{"z":{"type":"number","maximum":1e2,"minimum":-0.0,"default":0.1},)"
      R"("a":{"type":"integer","maximum":18446744073709551615,)"
      R"("minimum":-9223372036854775808,"multipleOf":1.0,)"
      R"("examples":[1.5e-7,12345678901234567,3.141592653589793,"\u00e9"]}}},)"
      R"("name":"f","description":"d"}}])";
  Result<Json> parsed = parse_json(body);
  ASSERT_TRUE(parsed.is_ok());
  Result<std::vector<Tool>> tools = parse_openai_tools(*parsed);
  ASSERT_TRUE(tools.is_ok());
  EXPECT_EQ((*tools)[0].parameters.dump(), (*parsed)[0]["function"]["parameters"].dump());
  auto t = make_templates(
      "{{ tools | tojson }}|{% for k in tools[0].function.parameters.properties %}{{ k }} "
      "{% endfor %}|{{ tools[0].function.parameters.properties.a.maximum }}");
  ChatInputs inputs = conversation({msg("user", "x")});
  inputs.tools = *tools;
  const std::string prompt = prompt_of(*t, inputs);
  EXPECT_EQ(prompt,
            R"([{"type": "function", "function": {"name": "f", "description": "d", )"
            R"("parameters": {"required": ["z", "a"], "type": "object", "properties": )"
            R"({"z": {"type": "number", "maximum": 100.0, "minimum": -0.0, "default": 0.1}, )"
            R"("a": {"type": "integer", "maximum": 1.8446744073709552e+19, )"
            R"("minimum": -9223372036854775808, "multipleOf": 1.0, "examples": [1.5e-07, )"
            R"(12345678901234567, 3.141592653589793, "é"]}}}}}]|z a |1.8446744073709552e+19)");
  // The text form it replaced: printed, then parsed back.
  for (Tool& tool : inputs.tools) tool.parameters = *parse_json(tool.parameters.dump());
  EXPECT_EQ(prompt_of(*t, inputs), prompt);
}

TEST(ChatRender, TemplateErrorsCarryTheEngineMessage) {
  auto t = make_templates(
      "{% if messages[0].content == 'boom' %}{{ raise_exception('no booms') }}{% endif %}ok");
  EXPECT_EQ(prompt_of(*t, conversation({msg("user", "fine")})), "ok");
  const std::string failure = prompt_of(*t, conversation({msg("user", "boom")}));
  EXPECT_EQ(failure.rfind("ERROR: ", 0), 0u);
  EXPECT_NE(failure.find("no booms"), std::string::npos) << failure;
}

TEST(ChatRender, ContinuationOfTheLastMessage) {
  auto t = make_templates("chatml");
  ChatInputs inputs =
      conversation({msg("user", "Hi"), msg("assistant", "Once upon a time")}, false);
  inputs.continuation = Continuation::kAuto;
  Result<ChatPrompt> out = t->apply(inputs);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->prompt, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nOnce upon a time");
  EXPECT_EQ(out->generation_prompt, "<|im_start|>assistant\nOnce upon a time");
  // Content parts are joined with a blank line in the continued message.
  Message parts = msg("assistant", "");
  parts.content_parts = {{"text", "a"}, {"text", "b"}};
  inputs.messages = {msg("user", "Hi"), parts};
  EXPECT_EQ(prompt_of(*t, inputs), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\na\n\nb");
}

TEST(ChatRender, ContinuationLikeLlama3) {
  auto t = make_templates(
      "{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n{{ m.content }}"
      "<|eot_id|>{% endfor %}{% if add_generation_prompt %}<|start_header_id|>assistant"
      "<|end_header_id|>\n\n{% endif %}");
  ChatInputs inputs = conversation({msg("user", "Write"), msg("assistant", "Whill")}, false);
  inputs.continuation = Continuation::kContent;
  EXPECT_EQ(prompt_of(*t, inputs),
            "<|start_header_id|>user<|end_header_id|>\n\nWrite<|eot_id|><|start_header_id|>"
            "assistant<|end_header_id|>\n\nWhill");
}

TEST(ChatRender, ContinuationAfterARecipientLine) {
  // Functionary v3.2-like: the header ends with ">>>", content follows ">>>all\n".
  auto t = make_templates(
      "{% for m in messages %}<|start_header_id|>{{ m.role }}<|end_header_id|>\n\n"
      "{% if m.role == 'assistant' %}>>>all\n{% endif %}{{ m.content }}<|eot_id|>{% endfor %}"
      "{% if add_generation_prompt %}<|start_header_id|>assistant<|end_header_id|>\n\n>>>"
      "{% endif %}{# >>>${recipient} #}");
  ChatInputs inputs = conversation({msg("user", "Write"), msg("assistant", "Whill")}, false);
  inputs.continuation = Continuation::kContent;
  Result<ChatPrompt> out = t->apply(inputs);
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  EXPECT_EQ(out->generation_prompt,
            "<|start_header_id|>assistant<|end_header_id|>\n\n>>>all\nWhill");
  // The parse reads the continued text and the output as the message's content.
  EXPECT_EQ(parse_output(out->syntax, " the", false).content, "Whill the");
  inputs = conversation({msg("user", "Write")});
  out = t->apply(inputs);
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(parse_output(out->syntax, "all\nHello", false).content, "Hello");
}

TEST(ChatRender, ReasoningContinuationInsideTheThinkingTags) {
  // Qwen3-like: thinking off pre-fills an empty think block.
  auto t = make_templates(
      "{% for m in messages %}<|im_start|>{{ m.role }}\n{{ m.content }}<|im_end|>\n{% endfor %}"
      "{% if add_generation_prompt %}<|im_start|>assistant\n{% if not enable_thinking %}"
      "<think>\n\n</think>\n\n{% endif %}{% endif %}");
  EXPECT_TRUE(t->supports_thinking());
  Message last = msg("assistant", "");
  last.reasoning_content = "Let me";
  ChatInputs inputs = conversation({msg("user", "Q"), last}, false);
  inputs.continuation = Continuation::kAuto;  // reasoning only: continue the reasoning
  EXPECT_EQ(prompt_of(*t, inputs),
            "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>Let me");
  last.content = "Answer";
  inputs.messages.back() = last;
  EXPECT_EQ(prompt_of(*t, inputs),
            "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>Let me</think>Answer");
  // Thinking off and no reasoning: the header before its think block, then an empty block
  // (the reference's autoparser path always writes it when the template has thinking tags),
  // then the content.
  last.reasoning_content.clear();
  inputs.messages.back() = last;
  inputs.enable_thinking = false;
  EXPECT_EQ(prompt_of(*t, inputs),
            "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think></think>Answer");
}

TEST(ChatRender, ContinuationWritesTheThinkingBlockAsTheTemplateDoes) {
  // Reasoning rendered as Qwen3 renders it: the markers carry the template's newlines.
  auto t = make_templates(
      "{% for m in messages %}<|im_start|>{{ m.role }}\n{% if m.reasoning_content %}"
      "<think>\n{{ m.reasoning_content }}\n</think>\n\n{% endif %}{{ m.content }}<|im_end|>\n"
      "{% endfor %}{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}");
  ChatInputs inputs = conversation({msg("user", "Q"), msg("assistant", "Once upon")}, false);
  inputs.continuation = Continuation::kAuto;
  EXPECT_EQ(
      prompt_of(*t, inputs),
      "<|im_start|>user\nQ<|im_end|>\n<|im_start|>assistant\n<think>\n\n</think>\n\nOnce upon");
}

TEST(ChatRender, LegacyModeJoinsPartsAndClosesAContinuedMessage) {
  auto t = make_templates("chatml", "", {}, /*use_jinja=*/false);
  Message parts = msg("user", "");
  parts.content_parts = {{"text", "a"}, {"text", "b"}};
  EXPECT_EQ(prompt_of(*t, conversation({parts})),
            "<|im_start|>user\na\nb<|im_end|>\n<|im_start|>assistant\n");
  ChatInputs inputs = conversation({msg("user", "Hi"), msg("assistant", "Yo")}, false);
  inputs.continuation = Continuation::kAuto;
  EXPECT_EQ(prompt_of(*t, inputs),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n");
  auto named = make_templates("llama3", "", {}, false);
  EXPECT_EQ(prompt_of(*named, conversation({msg("user", " Hi ")})),
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant"
            "<|end_header_id|>\n\n");
  auto unknown = make_templates("{{ messages }}", "", {}, false);
  EXPECT_EQ(prompt_of(*unknown, conversation({msg("user", "x")})),
            "ERROR: this custom template is not supported, try using --jinja");
}

}  // namespace
}  // namespace hearth::chat

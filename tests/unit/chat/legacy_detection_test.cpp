// Detection of a built-in format from a template source: exact names first, then the
// marker rules in the reference's order (src/llama-chat.cpp llm_chat_detect_template).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "chat/legacy_templates.h"

namespace hearth::chat {
namespace {

std::string detected(std::string_view source) {
  const LegacyFormat* format = detect_legacy_format(source);
  if (format == nullptr) return "<none>";
  return format->name.empty() ? "<dots1>" : std::string(format->name);
}

TEST(LegacyDetection, ExactNamesWin) {
  for (std::string_view name : legacy_template_names()) EXPECT_EQ(detected(name), name);
  // A name is only a name when it is the whole text.
  EXPECT_EQ(detected(" llama3"), "<none>");
}

TEST(LegacyDetection, EveryMarkerRule) {
  struct Case {
    std::string source;
    std::string format;
  };
  const std::vector<Case> cases = {
      {"{{ '<|im_start|>' + role }}", "chatml"},
      {"<|im_start|>{{ role }}<|im_sep|>", "phi4"},
      {"<|im_start|>User:<end_of_utterance>", "smolvlm"},
      {"mistral template", "llama2"},
      {"{{ '[INST] ' + content }}", "llama2"},
      {"[INST] [SYSTEM_PROMPT]", "mistral-v7"},
      {"{{ ' [INST] ' + system_message }}", "mistral-v1"},
      {"[AVAILABLE_TOOLS]{{ \"[INST]\" }}", "mistral-v3-tekken"},
      {"[AVAILABLE_TOOLS]{{ '[INST]' }}", "mistral-v3"},
      {"[INST] {{ content.strip() }}", "llama2-sys-strip"},
      {"{{ bos_token + '[INST] ' }}", "llama2-sys-bos"},
      {"[INST] <<SYS>>", "llama2-sys"},
      {"<|assistant|> <|end|>", "phi3"},
      {"[gMASK]<sop><|user|>", "chatglm4"},
      {"<|assistant|><|user|><|tool_declare|>", "exaone-moe"},
      {"<|assistant|><|user|></s>", "falcon3"},
      {"<|assistant|><|user|>", "glmedge"},
      {"<|{{ item['role'] }}|><|begin_of_image|>", "glmedge"},
      {"<|user|><|endoftext|>", "zephyr"},
      {"{{ bos_token + message['role'] }}", "monarch"},
      {"<start_of_turn>user", "gemma"},
      {"{{ '\\n\\nAssistant: ' + eos_token }}", "orion"},
      {"GPT4 Correct User", "openchat"},
      {"USER: ASSISTANT: ", "vicuna"},
      {"SYSTEM: USER: ASSISTANT: ", "vicuna-orca"},
      {"### Instruction:<|EOT|>", "deepseek"},
      {"<|START_OF_TURN_TOKEN|><|USER_TOKEN|>", "command-r"},
      {"<|start_header_id|>x<|end_header_id|>", "llama3"},
      {"[gMASK]sop<|user|>\n", "chatglm3"},
      {"<用户>", "minicpm"},
      {"{{ 'Assistant: ' + message['content'] + eos_token }}", "deepseek2"},
      {"<｜User｜><｜Assistant｜><｜end▁of▁sentence｜>", "deepseek3"},
      {"[|system|][|assistant|][|endofturn|]", "exaone3"},
      {"[|system|][|assistant|][|endofturn|][|tool|]", "exaone4"},
      {"rwkv-world", "rwkv-world"},
      {"{{- 'User: ' + message['content']|trim + '\\n\\n' -}}", "rwkv-world"},
      {"<|start_of_role|>", "granite"},
      {"<|start_of_role|><tool_call>", "granite-4.1"},
      {"<|start_of_role|><tools>g4_default_system_message", "granite-4.0"},
      {"{{ message['role'] + additional_special_tokens[0] + message['content'] + "
       "additional_special_tokens[1] }}",
       "gigachat"},
      {"<|role_start|>", "megrez"},
      {" Ассистент:", "yandex"},
      {"<role>ASSISTANT</role>'HUMAN'", "bailing"},
      {"<role>ASSISTANT</role>\"HUMAN\"<think>", "bailing-think"},
      {"<role>ASSISTANT</role><role>HUMAN</role><|role_end|>", "bailing2"},
      {"<|header_start|><|header_end|>", "llama4"},
      {"<|endofuserprompt|>", "<dots1>"},
      {"<|extra_0|><|extra_4|>", "hunyuan-moe"},
      {"<|start|><|channel|>", "gpt-oss"},
      {"<｜hy_Assistant｜><｜hy_begin▁of▁sentence｜>", "hunyuan-vl"},
      {"<｜hy_Assistant｜><｜hy_place▁holder▁no▁3｜>", "hunyuan-dense"},
      {"<|im_assistant|>assistant<|im_middle|>", "kimi-k2"},
      {"<seed:bos>", "seed_oss"},
      {"{{ 'Assistant: '  + message['content'] + '<|separator|>' }}", "grok-2"},
      {"[unused9]系统：[unused10]", "pangu-embedded"},
      {"<|begin|><|content|><|end|>", "solar-open"},
  };
  for (const Case& c : cases) EXPECT_EQ(detected(c.source), c.format) << c.source;
}

TEST(LegacyDetection, EarlierRulesWin) {
  // ChatML markers beat everything after them; [INST] beats the Phi-3 markers.
  EXPECT_EQ(detected("<|im_start|>[INST]<|start_header_id|><|end_header_id|>"), "chatml");
  EXPECT_EQ(detected("[INST]<|assistant|><|end|>"), "llama2");
  EXPECT_EQ(detected("<|assistant|><|end|><|user|>"), "phi3");
}

TEST(LegacyDetection, UnknownTemplatesAreRefused) {
  EXPECT_EQ(detected("INVALID TEMPLATE"), "<none>");
  EXPECT_EQ(detected(""), "<none>");
  Result<std::string> out = apply_legacy_template("{{ messages }}", {}, true);
  ASSERT_FALSE(out.is_ok());
  EXPECT_EQ(out.status().message(), "this custom template is not supported, try using --jinja");
}

TEST(LegacyDetection, ApplyUsesTheDetectedFormat) {
  const std::vector<LegacyMessage> chat = {{"user", "Hi"}};
  Result<std::string> out =
      apply_legacy_template("{% for m in messages %}<|im_start|>", chat, true);
  ASSERT_TRUE(out.is_ok());
  EXPECT_EQ(*out, "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

}  // namespace
}  // namespace hearth::chat

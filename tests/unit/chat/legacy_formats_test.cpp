// Every built-in format (--no-jinja) on one fixed conversation. The expected strings follow
// llama.cpp's src/llama-chat.cpp (and, for the formats it covers, the outputs listed in
// its tests/test-chat-template.cpp for the same conversation).
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "chat/legacy_templates.h"

namespace hearth::chat {
namespace {

const std::vector<LegacyMessage> kConversation = {
    {"system", "You are a helpful assistant"},
    {"user", "Hello"},
    {"assistant", "Hi there"},
    {"user", "Who are you"},
    {"assistant", "   I am an assistant   "},
    {"user", "Another question"},
};

std::string render(std::string_view name, const std::vector<LegacyMessage>& chat = kConversation,
                   bool add = true) {
  Result<std::string> out = apply_legacy_template(name, chat, add);
  EXPECT_TRUE(out.is_ok()) << name << ": " << out.status().message();
  return out.is_ok() ? *out : std::string();
}

// Expected output per name, generation prompt requested: the older formats (most of them
// listed with this conversation in the reference's test)...
const std::map<std::string, std::string> kListedOutputs = {
    {"chatml",
     "<|im_start|>system\nYou are a helpful "
     "assistant<|im_end|>\n<|im_start|>user\nHello<|im_end|>"
     "\n<|im_start|>assistant\nHi there<|im_end|>\n<|im_start|>user\nWho are you<|im_end|>\n"
     "<|im_start|>assistant\n   I am an assistant   <|im_end|>\n<|im_start|>user\nAnother "
     "question<|im_end|>\n<|im_start|>assistant\n"},
    {"llama2",
     "[INST] You are a helpful assistant\nHello [/INST]Hi there</s>[INST] Who are you [/INST]   "
     "I "
     "am an assistant   </s>[INST] Another question [/INST]"},
    {"llama2-sys",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] "
     "Who "
     "are you [/INST]   I am an assistant   </s>[INST] Another question [/INST]"},
    {"llama2-sys-bos",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi "
     "there</s><s>[INST] "
     "Who are you [/INST]   I am an assistant   </s><s>[INST] Another question [/INST]"},
    {"llama2-sys-strip",
     "[INST] <<SYS>>\nYou are a helpful assistant\n<</SYS>>\n\nHello [/INST]Hi there</s>[INST] "
     "Who "
     "are you [/INST]I am an assistant</s>[INST] Another question [/INST]"},
    {"mistral-v1",
     " [INST] You are a helpful assistant\n\nHello [/INST] Hi there</s> [INST] Who are you "
     "[/INST] "
     "   I am an assistant   </s> [INST] Another question [/INST]"},
    {"mistral-v3",
     "[INST] You are a helpful assistant\n\nHello[/INST] Hi there</s>[INST] Who are you[/INST] I "
     "am an assistant</s>[INST] Another question[/INST]"},
    {"mistral-v3-tekken",
     "[INST]You are a helpful assistant\n\nHello[/INST]Hi there</s>[INST]Who are you[/INST]   I "
     "am "
     "an assistant   </s>[INST]Another question[/INST]"},
    {"mistral-v7",
     "[SYSTEM_PROMPT] You are a helpful assistant[/SYSTEM_PROMPT][INST] Hello[/INST] Hi "
     "there</s>[INST] Who are you[/INST]    I am an assistant   </s>[INST] Another "
     "question[/INST]"},
    {"mistral-v7-tekken",
     "[SYSTEM_PROMPT]You are a helpful assistant[/SYSTEM_PROMPT][INST]Hello[/INST]Hi "
     "there</s>[INST]Who are you[/INST]   I am an assistant   </s>[INST]Another question[/INST]"},
    {"phi3",
     "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi "
     "there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   "
     "<|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"},
    {"phi4",
     "<|im_start|>system<|im_sep|>You are a helpful assistant<|im_end|><|im_start|>user<|im_sep|>"
     "Hello<|im_end|><|im_start|>assistant<|im_sep|>Hi there<|im_end|><|im_start|>user<|im_sep|>"
     "Who are you<|im_end|><|im_start|>assistant<|im_sep|>   I am an assistant   "
     "<|im_end|><|im_start|>user<|im_sep|>Another question<|im_end|><|im_start|>assistant"
     "<|im_sep|>"},
    {"falcon3",
     "<|system|>\nYou are a helpful assistant\n<|user|>\nHello\n<|assistant|>\nHi "
     "there\n<|user|>\nWho are you\n<|assistant|>\n   I am an assistant   \n<|user|>\nAnother "
     "question\n<|assistant|>\n"},
    {"zephyr",
     "<|system|>\nYou are a helpful assistant<|endoftext|>\n<|user|>\nHello<|endoftext|>\n"
     "<|assistant|>\nHi there<|endoftext|>\n<|user|>\nWho are you<|endoftext|>\n<|assistant|>\n"
     "   I am an assistant   <|endoftext|>\n<|user|>\nAnother question<|endoftext|>\n"
     "<|assistant|>\n"},
    {"monarch",
     "system\nYou are a helpful assistant</s>\n<s>user\nHello</s>\n<s>assistant\nHi "
     "there</s>\n<s>user\nWho are you</s>\n<s>assistant\n   I am an assistant   "
     "</s>\n<s>user\nAnother question</s>\n<s>assistant\n"},
    {"gemma",
     "<start_of_turn>user\nYou are a helpful assistant\n\nHello<end_of_turn>\n<start_of_turn>"
     "model\nHi there<end_of_turn>\n<start_of_turn>user\nWho are you<end_of_turn>\n"
     "<start_of_turn>model\nI am an assistant<end_of_turn>\n<start_of_turn>user\nAnother "
     "question<end_of_turn>\n<start_of_turn>model\n"},
    {"orion",
     "Human: You are a helpful assistant\n\nHello\n\nAssistant: </s>Hi there</s>Human: Who are "
     "you\n\nAssistant: </s>   I am an assistant   </s>Human: Another question\n\nAssistant: "
     "</s>"},
    {"openchat",
     "You are a helpful assistant<|end_of_turn|>GPT4 Correct User: Hello<|end_of_turn|>GPT4 "
     "Correct Assistant: Hi there<|end_of_turn|>GPT4 Correct User: Who are "
     "you<|end_of_turn|>GPT4 Correct Assistant:    I am an assistant   <|end_of_turn|>GPT4 "
     "Correct User: Another question<|end_of_turn|>GPT4 Correct Assistant:"},
    {"vicuna",
     "You are a helpful assistant\n\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are "
     "you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:"},
    {"vicuna-orca",
     "SYSTEM: You are a helpful assistant\nUSER: Hello\nASSISTANT: Hi there</s>\nUSER: Who are "
     "you\nASSISTANT:    I am an assistant   </s>\nUSER: Another question\nASSISTANT:"},
    {"deepseek",
     "You are a helpful assistant### Instruction:\nHello\n### Response:\nHi there\n<|EOT|>\n### "
     "Instruction:\nWho are you\n### Response:\n   I am an assistant   \n<|EOT|>\n### "
     "Instruction:\nAnother question\n### Response:\n"},
    {"deepseek2",
     "You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi "
     "there<｜end▁of▁sentence｜>User: "
     "Who are you\n\nAssistant:    I am an assistant   <｜end▁of▁sentence｜>User: Another "
     "question\n\nAssistant:"},
    {"deepseek3",
     "You are a helpful assistant\n\n<｜User｜>Hello<｜Assistant｜>Hi "
     "there<｜end▁of▁sentence｜><｜User｜>Who are you<｜Assistant｜>   I am an assistant   "
     "<｜end▁of▁sentence｜><｜User｜>Another question<｜Assistant｜>"},
    {"deepseek-ocr",
     "You are a helpful assistantHelloHi thereWho are you   I am an assistant   Another "
     "question"},
    {"command-r",
     "<|START_OF_TURN_TOKEN|><|SYSTEM_TOKEN|>You are a helpful assistant<|END_OF_TURN_TOKEN|>"
     "<|START_OF_TURN_TOKEN|><|USER_TOKEN|>Hello<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|>"
     "<|CHATBOT_TOKEN|>Hi there<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Who are "
     "you<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>I am an "
     "assistant<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|USER_TOKEN|>Another "
     "question<|END_OF_TURN_TOKEN|><|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>"},
    {"llama3",
     "<|start_header_id|>system<|end_header_id|>\n\nYou are a helpful assistant<|eot_id|>"
     "<|start_header_id|>user<|end_header_id|>\n\nHello<|eot_id|><|start_header_id|>assistant"
     "<|end_header_id|>\n\nHi there<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nWho are "
     "you<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\nI am an "
     "assistant<|eot_id|><|start_header_id|>user<|end_header_id|>\n\nAnother "
     "question<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n"},
    {"chatglm3",
     "[gMASK]sop<|system|>\n You are a helpful assistant<|user|>\n Hello<|assistant|>\n Hi "
     "there<|user|>\n Who are you<|assistant|>\n    I am an assistant   <|user|>\n Another "
     "question<|assistant|>"},
    {"chatglm4",
     "[gMASK]<sop><|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi "
     "there<|user|>\nWho are you<|assistant|>\n   I am an assistant   <|user|>\nAnother "
     "question<|assistant|>\n"},
    {"glmedge",
     "<|system|>\nYou are a helpful assistant<|user|>\nHello<|assistant|>\nHi there<|user|>\nWho "
     "are you<|assistant|>\n   I am an assistant   <|user|>\nAnother question<|assistant|>"},
    {"minicpm",
     "You are a helpful assistant<用户>Hello<AI>Hi there<用户>Who are you<AI>I am an "
     "assistant<用户>Another question<AI>"},
};

// ...and the others, derived from their formatter's strings.
const std::map<std::string, std::string> kDerivedOutputs = {
    {"exaone3",
     "[|system|]You are a helpful assistant[|endofturn|]\n[|user|]Hello\n[|assistant|]Hi "
     "there[|endofturn|]\n[|user|]Who are you\n[|assistant|]I am an "
     "assistant[|endofturn|]\n[|user|]Another question\n[|assistant|]"},
    {"exaone4",
     "[|system|]You are a helpful assistant[|endofturn|]\n[|user|]Hello\n[|assistant|]Hi "
     "there[|endofturn|]\n[|user|]Who are you\n[|assistant|]I am an "
     "assistant[|endofturn|]\n[|user|]Another question\n[|assistant|]"},
    {"exaone-moe",
     "<|system|>\nYou are a helpful assistant<|endofturn|>\n<|user|>\nHello<|endofturn|>\n"
     "<|assistant|>\nHi there<|endofturn|>\n<|user|>\nWho are you<|endofturn|>\n<|assistant|>\nI "
     "am an assistant<|endofturn|>\n<|user|>\nAnother question<|endofturn|>\n<|assistant|>\n"},
    {"rwkv-world",
     "System: You are a helpful assistant\n\nUser: Hello\n\nAssistant: Hi there\n\nUser: Who are "
     "you\n\nAssistant: I am an assistant\n\nUser: Another question\n\nAssistant:"},
    {"granite",
     "<|start_of_role|>system<|end_of_role|>You are a helpful assistant<|end_of_text|>\n"
     "<|start_of_role|>user<|end_of_role|>Hello<|end_of_text|>\n<|start_of_role|>assistant"
     "<|end_of_role|>Hi there<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Who are "
     "you<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>   I am an assistant   "
     "<|end_of_text|>\n<|start_of_role|>user<|end_of_role|>Another "
     "question<|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>"},
    {"gigachat",
     "<s>You are a helpful assistant<|message_sep|>user<|role_sep|>Hello<|message_sep|>available "
     "functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>Hi "
     "there<|message_sep|>user<|role_sep|>Who are you<|message_sep|>available "
     "functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>   I am an assistant   "
     "<|message_sep|>user<|role_sep|>Another question<|message_sep|>available "
     "functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>"},
    {"megrez",
     "<|role_start|>system<|role_end|>You are a helpful "
     "assistant<|turn_end|><|role_start|>user<|role_end|>Hello<|turn_end|><|role_start|>"
     "assistant<|role_end|>Hi there<|turn_end|><|role_start|>user<|role_end|>Who are "
     "you<|turn_end|><|role_start|>assistant<|role_end|>   I am an assistant   "
     "<|turn_end|><|role_start|>user<|role_end|>Another "
     "question<|turn_end|><|role_start|>assistant<|role_end|>"},
    {"yandex",
     " Пользователь: Hello\n\n Ассистент: Hi there\n\n Пользователь: Who are you\n\n Ассистент:  "
     "  I "
     "am an assistant   \n\n Пользователь: Another question\n\n Ассистент:[SEP]"},
    {"bailing",
     "<role>SYSTEM</role>You are a helpful assistant<role>HUMAN</role>Hello<role>ASSISTANT</"
     "role>Hi there<role>HUMAN</role>Who are you<role>ASSISTANT</role>   I am an assistant   "
     "<role>HUMAN</role>Another question<role>ASSISTANT</role>"},
    {"bailing-think",
     "<role>SYSTEM</role>You are a helpful assistant<role>HUMAN</role>Hello<role>ASSISTANT</"
     "role>Hi there<role>HUMAN</role>Who are you<role>ASSISTANT</role>   I am an assistant   "
     "<role>HUMAN</role>Another question<role>ASSISTANT</role><think>"},
    {"bailing2",
     "<role>SYSTEM</role>You are a helpful "
     "assistant<|role_end|><role>HUMAN</role>Hello<|role_end|>"
     "<role>ASSISTANT</role>Hi there<|role_end|><role>HUMAN</role>Who are you<|role_end|><role>"
     "ASSISTANT</role>   I am an assistant   <|role_end|><role>HUMAN</role>Another "
     "question<|role_end|><role>ASSISTANT</role>"},
    {"llama4",
     "<|header_start|>system<|header_end|>\n\nYou are a helpful assistant<|eot|><|header_start|>"
     "user<|header_end|>\n\nHello<|eot|><|header_start|>assistant<|header_end|>\n\nHi "
     "there<|eot|><|header_start|>user<|header_end|>\n\nWho are "
     "you<|eot|><|header_start|>assistant<|header_end|>\n\nI am an "
     "assistant<|eot|><|header_start|>user<|header_end|>\n\nAnother "
     "question<|eot|><|header_start|>assistant<|header_end|>\n\n"},
    {"smolvlm",
     "<|im_start|>You are a helpful assistant\n\nUser: Hello<end_of_utterance>\nAssistant: Hi "
     "there<end_of_utterance>\nUser: Who are you<end_of_utterance>\nAssistant:    I am an "
     "assistant   <end_of_utterance>\nUser: Another question<end_of_utterance>\nAssistant:"},
    {"hunyuan-moe",
     "<|startoftext|>You are a helpful assistant<|extra_4|><|startoftext|>Hello<|extra_0|>Hi "
     "there<|eos|><|startoftext|>Who are you<|extra_0|>   I am an assistant   "
     "<|eos|><|startoftext|>Another question<|extra_0|>"},
    {"gpt-oss",
     "<|start|>system<|message|>You are a helpful "
     "assistant<|end|><|start|>user<|message|>Hello<|end|><|start|>assistant<|message|>Hi "
     "there<|return|><|start|>user<|message|>Who are you<|end|><|start|>assistant<|message|>   I "
     "am an assistant   <|return|><|start|>user<|message|>Another "
     "question<|end|><|start|>assistant"},
    {"hunyuan-dense",
     "You are a helpful assistant<｜hy_place▁holder▁no▁3｜><｜hy_User｜>Hello<｜hy_Assistant｜>"
     "<｜hy_Assistant｜>Hi there<｜hy_place▁holder▁no▁2｜><｜hy_User｜>Who are "
     "you<｜hy_Assistant｜><｜hy_Assistant｜>   I am an assistant   "
     "<｜hy_place▁holder▁no▁2｜><｜hy_User｜>Another question<｜hy_Assistant｜>"},
    {"hunyuan-vl",
     "<｜hy_begin▁of▁sentence｜>You are a helpful assistant<｜hy_place▁holder▁no▁3｜>Hello"
     "<｜hy_User｜>Hi there<｜hy_Assistant｜>Who are you<｜hy_User｜>   I am an assistant   "
     "<｜hy_Assistant｜>Another question<｜hy_User｜>"},
    {"kimi-k2",
     "<|im_system|>system<|im_middle|>You are a helpful "
     "assistant<|im_end|><|im_user|>user<|im_middle|>Hello<|im_end|><|im_assistant|>assistant"
     "<|im_middle|>Hi there<|im_end|><|im_user|>user<|im_middle|>Who are "
     "you<|im_end|><|im_assistant|>assistant<|im_middle|>   I am an assistant   "
     "<|im_end|><|im_user|>user<|im_middle|>Another "
     "question<|im_end|><|im_assistant|>assistant<|im_middle|>"},
    {"seed_oss",
     "<seed:bos>system\nYou are a helpful assistant<seed:eos><seed:bos>user\nHello<seed:eos>"
     "<seed:bos>assistant\nHi there<seed:eos><seed:bos>user\nWho are "
     "you<seed:eos><seed:bos>assistant\nI am an assistant<seed:eos><seed:bos>user\nAnother "
     "question<seed:eos><seed:bos>assistant\n"},
    {"grok-2",
     "System: You are a helpful assistant<|separator|>\n\nHuman: "
     "Hello<|separator|>\n\nAssistant: "
     "Hi there<|separator|>\n\nHuman: Who are you<|separator|>\n\nAssistant:    I am an "
     "assistant   <|separator|>\n\nHuman: Another question<|separator|>\n\nAssistant:"},
    {"pangu-embedded",
     "[unused9]系统：You are a helpful assistant[unused10][unused9]用户：Hello[unused10]"
     "[unused9]助手：Hi there[unused10][unused9]用户：Who are you[unused10][unused9]助手：   I "
     "am an assistant   [unused10][unused9]用户：Another question[unused10][unused9]助手："},
    {"solar-open",
     "<|begin|>system<|content|>You are a helpful assistant<|end|><|begin|>user<|content|>Hello"
     "<|end|><|begin|>assistant<|content|>Hi there<|end|><|begin|>user<|content|>Who are "
     "you<|end|><|begin|>assistant<|content|>   I am an assistant   <|end|><|begin|>user"
     "<|content|>Another question<|end|><|begin|>assistant"},
};

TEST(LegacyFormats, FiftyFourBuiltInNamesInAlphabeticalOrder) {
  std::vector<std::string_view> names = legacy_template_names();
  EXPECT_EQ(names.size(), 54u);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(legacy_template_name_list().rfind("bailing, bailing-think, bailing2, chatglm3", 0), 0u);
  EXPECT_EQ(names.back(), "zephyr");
}

TEST(LegacyFormats, EveryFormatOnTheFixedConversation) {
  std::map<std::string, std::string> expected = kListedOutputs;
  for (const auto& [name, text] : kDerivedOutputs) expected[name] = text;
  expected["granite-4.0"] = expected["granite"];  // no assistant_tool_call turn here
  expected["granite-4.1"] = expected["granite"];
  for (std::string_view name : legacy_template_names()) {
    SCOPED_TRACE(std::string(name));
    auto it = expected.find(std::string(name));
    ASSERT_NE(it, expected.end()) << "no expected output for " << name;
    EXPECT_EQ(render(name), it->second);
  }
  // dots1 has no name; it is reached by its marker.
  EXPECT_EQ(render("{{ '<|endofuserprompt|>' }}"),
            "<|system|>You are a helpful assistant<|endofsystem|><|userprompt|>Hello"
            "<|endofuserprompt|><|response|>Hi there<|endofresponse|><|userprompt|>Who are you"
            "<|endofuserprompt|><|response|>   I am an assistant   <|endofresponse|><|userprompt|>"
            "Another question<|endofuserprompt|><|response|>");
}

TEST(LegacyFormats, GenerationPromptOnlyWhereTheFormatHasOne) {
  EXPECT_EQ(render("chatml", {{"user", "Hi"}}, false), "<|im_start|>user\nHi<|im_end|>\n");
  EXPECT_EQ(render("llama3", {{"user", "Hi"}}, false),
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>");
  // Formats that never open an assistant turn ignore the flag.
  EXPECT_EQ(render("orion", {{"user", "Hi"}}, false), render("orion", {{"user", "Hi"}}, true));
  EXPECT_EQ(render("mistral-v7", {{"user", "Hi"}}, true), "[INST] Hi[/INST]");
}

TEST(LegacyFormats, RoleSpecificRules) {
  // Granite 4 maps the tool-call role onto the assistant header; 3.x keeps it literal.
  const std::vector<LegacyMessage> call = {{"assistant_tool_call", "[x]"}};
  EXPECT_EQ(render("granite-4.1", call, false),
            "<|start_of_role|>assistant<|end_of_role|><|tool_call|>[x]<|end_of_text|>\n");
  EXPECT_EQ(render("granite", call, false),
            "<|start_of_role|>assistant_tool_call<|end_of_role|><|tool_call|>[x]<|end_of_text|>\n");
  // EXAONE 4 and Kimi K2 render tool turns; EXAONE 3 drops them.
  EXPECT_EQ(render("exaone4", {{"tool", " r "}}, false), "[|tool|]r[|endofturn|]\n");
  EXPECT_EQ(render("exaone3", {{"tool", "r"}}, false), "");
  EXPECT_EQ(render("kimi-k2", {{"tool", "r"}}, false), "<|im_system|>tool<|im_middle|>r<|im_end|>");
  // Without a system message some formats add their own.
  EXPECT_EQ(render("bailing2", {{"user", "Hi"}}, false),
            "<role>SYSTEM</role>detailed thinking off<|role_end|><role>HUMAN</role>Hi<|role_end|>");
  EXPECT_EQ(render("pangu-embedded", {{"user", "Hi"}}, false),
            "[unused9]系统：[unused10][unused9]用户：Hi[unused10]");
  EXPECT_EQ(render("gigachat", {{"user", "Hi"}}, true),
            "<s>user<|role_sep|>Hi<|message_sep|>available "
            "functions<|role_sep|>[]<|message_sep|>assistant<|role_sep|>");
  // Open Chat capitalizes any role; RWKV opens the assistant turn after a final user turn.
  EXPECT_EQ(render("openchat", {{"tool", "x"}}, false), "GPT4 Correct Tool: x<|end_of_turn|>");
  EXPECT_EQ(render("rwkv-world", {{"user", "Hi"}}, false), "User: Hi\n\nAssistant:");
}

}  // namespace
}  // namespace hearth::chat

// Internal: the formatter of each built-in chat format (legacy_formats*.cpp). Each takes
// the whole chat and whether to open an assistant turn; formats that never open one ignore
// the flag, as the reference does.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "chat/legacy_templates.h"

namespace hearth::chat::legacy {

using Chat = std::span<const LegacyMessage>;

// Leading and trailing ASCII whitespace removed (isspace on unsigned bytes).
std::string trim(std::string_view text);

std::string chatml(Chat chat, bool add);
std::string mistral_v7(Chat chat, bool add);
std::string mistral_v7_tekken(Chat chat, bool add);
std::string mistral_v1(Chat chat, bool add);
std::string mistral_v3(Chat chat, bool add);
std::string mistral_v3_tekken(Chat chat, bool add);
std::string llama2(Chat chat, bool add);
std::string llama2_sys(Chat chat, bool add);
std::string llama2_sys_bos(Chat chat, bool add);
std::string llama2_sys_strip(Chat chat, bool add);
std::string phi3(Chat chat, bool add);
std::string phi4(Chat chat, bool add);
std::string falcon3(Chat chat, bool add);
std::string zephyr(Chat chat, bool add);
std::string monarch(Chat chat, bool add);
std::string gemma(Chat chat, bool add);
std::string orion(Chat chat, bool add);
std::string openchat(Chat chat, bool add);
std::string vicuna(Chat chat, bool add);
std::string vicuna_orca(Chat chat, bool add);
std::string deepseek(Chat chat, bool add);
std::string command_r(Chat chat, bool add);
std::string llama3(Chat chat, bool add);
std::string chatglm3(Chat chat, bool add);
std::string chatglm4(Chat chat, bool add);
std::string glmedge(Chat chat, bool add);
std::string minicpm(Chat chat, bool add);
std::string deepseek2(Chat chat, bool add);
std::string deepseek3(Chat chat, bool add);
std::string deepseek_ocr(Chat chat, bool add);
std::string exaone3(Chat chat, bool add);
std::string exaone4(Chat chat, bool add);
std::string exaone_moe(Chat chat, bool add);
std::string rwkv_world(Chat chat, bool add);
std::string granite(Chat chat, bool add);
std::string granite_4(Chat chat, bool add);  // granite-4.0 and granite-4.1 format alike
std::string gigachat(Chat chat, bool add);
std::string megrez(Chat chat, bool add);
std::string yandex(Chat chat, bool add);
std::string bailing(Chat chat, bool add);
std::string bailing_think(Chat chat, bool add);
std::string bailing2(Chat chat, bool add);
std::string llama4(Chat chat, bool add);
std::string smolvlm(Chat chat, bool add);
std::string dots1(Chat chat, bool add);
std::string hunyuan_moe(Chat chat, bool add);
std::string gpt_oss(Chat chat, bool add);
std::string hunyuan_dense(Chat chat, bool add);
std::string hunyuan_vl(Chat chat, bool add);
std::string kimi_k2(Chat chat, bool add);
std::string seed_oss(Chat chat, bool add);
std::string grok2(Chat chat, bool add);
std::string pangu_embedded(Chat chat, bool add);
std::string solar_open(Chat chat, bool add);

}  // namespace hearth::chat::legacy

// Built-in chat formats, part 1: ChatML, Mistral, Llama 2/3, Phi, Gemma and the older
// instruction formats. The strings are llama.cpp b10621's (src/llama-chat.cpp).
#include <cctype>

#include "chat/legacy_formats.h"

namespace hearth::chat::legacy {

std::string trim(std::string_view text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin])) != 0) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1])) != 0) --end;
  return std::string(text.substr(begin, end - begin));
}

std::string chatml(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat)
    out += "<|im_start|>" + m.role + "\n" + m.content + "<|im_end|>\n";
  if (add) out += "<|im_start|>assistant\n";
  return out;
}

namespace {

// v7 puts the system prompt in its own block; the tekken variant drops the spaces.
std::string mistral_v7_family(Chat chat, const std::string& space) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      out += "[SYSTEM_PROMPT]" + space + m.content + "[/SYSTEM_PROMPT]";
    } else if (m.role == "user") {
      out += "[INST]" + space + m.content + "[/INST]";
    } else {
      out += space + m.content + "</s>";
    }
  }
  return out;
}

// v1, v3 and v3-tekken differ in the spaces around [INST] and in trimming replies; the
// system prompt opens the first instruction.
std::string mistral_v1_family(Chat chat, const std::string& leading, const std::string& trailing,
                              bool trim_replies) {
  std::string out;
  bool in_turn = false;
  for (const LegacyMessage& m : chat) {
    if (!in_turn) {
      out += leading + "[INST]" + trailing;
      in_turn = true;
    }
    if (m.role == "system") {
      out += m.content + "\n\n";
    } else if (m.role == "user") {
      out += m.content + leading + "[/INST]";
    } else {
      out += trailing + (trim_replies ? trim(m.content) : m.content) + "</s>";
      in_turn = false;
    }
  }
  return out;
}

struct Llama2Variant {
  bool system_block;  // <<SYS>> around the system prompt
  bool bos_in_history;
  bool strip;
};

std::string llama2_family(Chat chat, Llama2Variant v) {
  std::string out = "[INST] ";
  bool in_turn = true;  // the first [INST] is already open; the tokenizer adds BOS
  for (const LegacyMessage& m : chat) {
    const std::string content = v.strip ? trim(m.content) : m.content;
    if (!in_turn) {
      in_turn = true;
      out += v.bos_in_history ? "<s>[INST] " : "[INST] ";
    }
    if (m.role == "system") {
      out += v.system_block ? "<<SYS>>\n" + content + "\n<</SYS>>\n\n" : content + "\n";
    } else if (m.role == "user") {
      out += content + " [/INST]";
    } else {
      out += content + "</s>";
      in_turn = false;
    }
  }
  return out;
}

}  // namespace

std::string mistral_v7(Chat chat, bool) {
  return mistral_v7_family(chat, " ");
}
std::string mistral_v7_tekken(Chat chat, bool) {
  return mistral_v7_family(chat, "");
}
std::string mistral_v1(Chat chat, bool) {
  return mistral_v1_family(chat, " ", " ", false);
}
std::string mistral_v3(Chat chat, bool) {
  return mistral_v1_family(chat, "", " ", true);
}
std::string mistral_v3_tekken(Chat chat, bool) {
  return mistral_v1_family(chat, "", "", false);
}
std::string llama2(Chat chat, bool) {
  return llama2_family(chat, {false, false, false});
}
std::string llama2_sys(Chat chat, bool) {
  return llama2_family(chat, {true, false, false});
}
std::string llama2_sys_bos(Chat chat, bool) {
  return llama2_family(chat, {true, true, false});
}
std::string llama2_sys_strip(Chat chat, bool) {
  return llama2_family(chat, {true, false, true});
}

std::string phi3(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) out += "<|" + m.role + "|>\n" + m.content + "<|end|>\n";
  if (add) out += "<|assistant|>\n";
  return out;
}

std::string phi4(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    out += "<|im_start|>" + m.role + "<|im_sep|>" + m.content + "<|im_end|>";
  }
  if (add) out += "<|im_start|>assistant<|im_sep|>";
  return out;
}

std::string falcon3(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) out += "<|" + m.role + "|>\n" + m.content + "\n";
  if (add) out += "<|assistant|>\n";
  return out;
}

std::string zephyr(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) out += "<|" + m.role + "|>\n" + m.content + "<|endoftext|>\n";
  if (add) out += "<|assistant|>\n";
  return out;
}

std::string monarch(Chat chat, bool add) {
  std::string out;
  for (size_t i = 0; i < chat.size(); ++i) {
    // Every turn but the first starts with BOS text; the tokenizer adds the first.
    out += (i == 0 ? "" : "<s>") + chat[i].role + "\n" + chat[i].content + "</s>\n";
  }
  if (add) out += "<s>assistant\n";
  return out;
}

std::string gemma(Chat chat, bool add) {
  // Gemma has no system turn: system text is carried into the next user turn.
  std::string system_prompt;
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      system_prompt += trim(m.content);
      continue;
    }
    const std::string role = m.role == "assistant" ? "model" : m.role;
    out += "<start_of_turn>" + role + "\n";
    if (!system_prompt.empty() && role != "model") {
      out += system_prompt + "\n\n";
      system_prompt.clear();
    }
    out += trim(m.content) + "<end_of_turn>\n";
  }
  if (add) out += "<start_of_turn>model\n";
  return out;
}

std::string orion(Chat chat, bool) {
  std::string system_prompt;
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      system_prompt += m.content;
    } else if (m.role == "user") {
      out += "Human: ";
      if (!system_prompt.empty()) {
        out += system_prompt + "\n\n";
        system_prompt.clear();
      }
      out += m.content + "\n\nAssistant: </s>";
    } else {
      out += m.content + "</s>";
    }
  }
  return out;
}

std::string openchat(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      out += m.content + "<|end_of_turn|>";
      continue;
    }
    std::string role = m.role;
    if (!role.empty())
      role[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(role[0])));
    out += "GPT4 Correct " + role + ": " + m.content + "<|end_of_turn|>";
  }
  if (add) out += "GPT4 Correct Assistant:";
  return out;
}

namespace {

std::string vicuna_family(Chat chat, bool add, bool orca) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      out += orca ? "SYSTEM: " + m.content + "\n" : m.content + "\n\n";
    } else if (m.role == "user") {
      out += "USER: " + m.content + "\n";
    } else if (m.role == "assistant") {
      out += "ASSISTANT: " + m.content + "</s>\n";
    }
  }
  if (add) out += "ASSISTANT:";
  return out;
}

}  // namespace

std::string vicuna(Chat chat, bool add) {
  return vicuna_family(chat, add, false);
}
std::string vicuna_orca(Chat chat, bool add) {
  return vicuna_family(chat, add, true);
}

std::string deepseek(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      out += m.content;
    } else if (m.role == "user") {
      out += "### Instruction:\n" + m.content + "\n";
    } else if (m.role == "assistant") {
      out += "### Response:\n" + m.content + "\n<|EOT|>\n";
    }
  }
  if (add) out += "### Response:\n";
  return out;
}

std::string command_r(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    const char* token = m.role == "system"      ? "<|SYSTEM_TOKEN|>"
                        : m.role == "user"      ? "<|USER_TOKEN|>"
                        : m.role == "assistant" ? "<|CHATBOT_TOKEN|>"
                                                : nullptr;
    if (token == nullptr) continue;
    out +=
        std::string("<|START_OF_TURN_TOKEN|>") + token + trim(m.content) + "<|END_OF_TURN_TOKEN|>";
  }
  if (add) out += "<|START_OF_TURN_TOKEN|><|CHATBOT_TOKEN|>";
  return out;
}

std::string llama3(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    out +=
        "<|start_header_id|>" + m.role + "<|end_header_id|>\n\n" + trim(m.content) + "<|eot_id|>";
  }
  if (add) out += "<|start_header_id|>assistant<|end_header_id|>\n\n";
  return out;
}

std::string chatglm3(Chat chat, bool add) {
  std::string out = "[gMASK]sop";
  for (const LegacyMessage& m : chat) out += "<|" + m.role + "|>\n " + m.content;
  if (add) out += "<|assistant|>";
  return out;
}

std::string chatglm4(Chat chat, bool add) {
  std::string out = "[gMASK]<sop>";
  for (const LegacyMessage& m : chat) out += "<|" + m.role + "|>\n" + m.content;
  if (add) out += "<|assistant|>\n";
  return out;
}

std::string glmedge(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) out += "<|" + m.role + "|>\n" + m.content;
  if (add) out += "<|assistant|>";
  return out;
}

std::string minicpm(Chat chat, bool) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    out += m.role == "user" ? "<用户>" + trim(m.content) + "<AI>" : trim(m.content);
  }
  return out;
}

}  // namespace hearth::chat::legacy

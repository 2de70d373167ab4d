// Built-in chat formats, part 2: DeepSeek, EXAONE, Granite, GigaChat and the newer model
// families. The strings are llama.cpp b10621's (src/llama-chat.cpp).
#include <cctype>

#include "chat/legacy_formats.h"

namespace hearth::chat::legacy {

std::string deepseek2(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      out += m.content + "\n\n";
    } else if (m.role == "user") {
      out += "User: " + m.content + "\n\n";
    } else if (m.role == "assistant") {
      out += "Assistant: " + m.content + "<｜end▁of▁sentence｜>";
    }
  }
  if (add) out += "Assistant:";
  return out;
}

std::string deepseek3(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      out += m.content + "\n\n";
    } else if (m.role == "user") {
      out += "<｜User｜>" + m.content;
    } else if (m.role == "assistant") {
      out += "<｜Assistant｜>" + m.content + "<｜end▁of▁sentence｜>";
    }
  }
  if (add) out += "<｜Assistant｜>";
  return out;
}

std::string deepseek_ocr(Chat chat, bool) {
  std::string out;  // no turn markup at all: the contents back to back
  for (const LegacyMessage& m : chat) out += m.content;
  return out;
}

namespace {

// EXAONE 3 and 4: the user turn has no end marker; EXAONE 4 adds a tool role.
std::string exaone_family(Chat chat, bool add, bool tool_role) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      out += "[|system|]" + trim(m.content) + "[|endofturn|]\n";
    } else if (m.role == "user") {
      out += "[|user|]" + trim(m.content) + "\n";
    } else if (m.role == "assistant") {
      out += "[|assistant|]" + trim(m.content) + "[|endofturn|]\n";
    } else if (tool_role && m.role == "tool") {
      out += "[|tool|]" + trim(m.content) + "[|endofturn|]\n";
    }
  }
  if (add) out += "[|assistant|]";
  return out;
}

bool is_exaone_moe_role(const std::string& role) {
  return role == "system" || role == "user" || role == "assistant" || role == "tool";
}

}  // namespace

std::string exaone3(Chat chat, bool add) {
  return exaone_family(chat, add, false);
}
std::string exaone4(Chat chat, bool add) {
  return exaone_family(chat, add, true);
}

std::string exaone_moe(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (!is_exaone_moe_role(m.role)) continue;
    out += "<|" + m.role + "|>\n" + trim(m.content) + "<|endofturn|>\n";
  }
  if (add) out += "<|assistant|>\n";
  return out;
}

std::string rwkv_world(Chat chat, bool) {
  // "\n\n" ends a turn for this model; the assistant prefix follows a final user turn.
  std::string out;
  for (size_t i = 0; i < chat.size(); ++i) {
    const LegacyMessage& m = chat[i];
    if (m.role == "system") {
      out += "System: " + trim(m.content) + "\n\n";
    } else if (m.role == "user") {
      out += "User: " + trim(m.content) + "\n\n";
      if (i + 1 == chat.size()) out += "Assistant:";
    } else if (m.role == "assistant") {
      out += "Assistant: " + trim(m.content) + "\n\n";
    }
  }
  return out;
}

std::string granite(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    out += "<|start_of_role|>" + m.role + "<|end_of_role|>";
    if (m.role == "assistant_tool_call") out += "<|tool_call|>";
    out += m.content + "<|end_of_text|>\n";
  }
  if (add) out += "<|start_of_role|>assistant<|end_of_role|>";
  return out;
}

std::string granite_4(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "assistant_tool_call") {
      out += "<|start_of_role|>assistant<|end_of_role|><|tool_call|>";
    } else {
      out += "<|start_of_role|>" + m.role + "<|end_of_role|>";
    }
    out += m.content + "<|end_of_text|>\n";
  }
  if (add) out += "<|start_of_role|>assistant<|end_of_role|>";
  return out;
}

std::string gigachat(Chat chat, bool add) {
  const bool has_system = !chat.empty() && chat[0].role == "system";
  std::string out = has_system ? "<s>" + chat[0].content + "<|message_sep|>" : "<s>";
  for (size_t i = has_system ? 1 : 0; i < chat.size(); ++i) {
    const LegacyMessage& m = chat[i];
    if (m.role == "user") {
      out += "user<|role_sep|>" + m.content + "<|message_sep|>" +
             "available functions<|role_sep|>[]<|message_sep|>";
    } else if (m.role == "assistant") {
      out += "assistant<|role_sep|>" + m.content + "<|message_sep|>";
    }
  }
  if (add) out += "assistant<|role_sep|>";
  return out;
}

std::string megrez(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    out += "<|role_start|>" + m.role + "<|role_end|>" + m.content + "<|turn_end|>";
  }
  if (add) out += "<|role_start|>assistant<|role_end|>";
  return out;
}

std::string yandex(Chat chat, bool add) {
  std::string out;  // "\n\n" is the end-of-turn token; system turns are not rendered
  for (const LegacyMessage& m : chat) {
    if (m.role == "user") {
      out += " Пользователь: " + m.content + "\n\n";
    } else if (m.role == "assistant") {
      out += " Ассистент: " + m.content + "\n\n";
    }
  }
  if (add) out += " Ассистент:[SEP]";
  return out;
}

namespace {

// Bailing role names: user becomes HUMAN, every other role is upper-cased.
std::string bailing_role(const std::string& role) {
  if (role == "user") return "HUMAN";
  std::string upper = role;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return upper;
}

std::string bailing_family(Chat chat, bool add, bool think) {
  std::string out;
  for (const LegacyMessage& m : chat)
    out += "<role>" + bailing_role(m.role) + "</role>" + m.content;
  if (add) out += think ? "<role>ASSISTANT</role><think>" : "<role>ASSISTANT</role>";
  return out;
}

}  // namespace

std::string bailing(Chat chat, bool add) {
  return bailing_family(chat, add, false);
}
std::string bailing_think(Chat chat, bool add) {
  return bailing_family(chat, add, true);
}

std::string bailing2(Chat chat, bool add) {
  std::string out;
  if (chat.empty() || chat[0].role != "system") {
    out += "<role>SYSTEM</role>detailed thinking off<|role_end|>";
  }
  for (const LegacyMessage& m : chat) {
    out += "<role>" + bailing_role(m.role) + "</role>" + m.content + "<|role_end|>";
  }
  if (add) out += "<role>ASSISTANT</role>";
  return out;
}

std::string llama4(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    out += "<|header_start|>" + m.role + "<|header_end|>\n\n" + trim(m.content) + "<|eot|>";
  }
  if (add) out += "<|header_start|>assistant<|header_end|>\n\n";
  return out;
}

std::string smolvlm(Chat chat, bool add) {
  std::string out = "<|im_start|>";  // SmolVLM's BOS text; the turns are not ChatML
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      out += m.content + "\n\n";
    } else if (m.role == "user") {
      out += "User: " + m.content + "<end_of_utterance>\n";
    } else {
      out += "Assistant: " + m.content + "<end_of_utterance>\n";
    }
  }
  if (add) out += "Assistant:";
  return out;
}

std::string dots1(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      out += "<|system|>" + m.content + "<|endofsystem|>";
    } else if (m.role == "user") {
      out += "<|userprompt|>" + m.content + "<|endofuserprompt|>";
    } else {
      out += "<|response|>" + m.content + "<|endofresponse|>";
    }
  }
  if (add) out += "<|response|>";
  return out;
}

std::string hunyuan_moe(Chat chat, bool) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      out += "<|startoftext|>" + m.content + "<|extra_4|>";
    } else if (m.role == "assistant") {
      out += m.content + "<|eos|>";
    } else {
      out += "<|startoftext|>" + m.content + "<|extra_0|>";
    }
  }
  return out;
}

std::string gpt_oss(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    out += "<|start|>" + m.role + "<|message|>" + m.content;
    out += m.role == "assistant" ? "<|return|>" : "<|end|>";
  }
  if (add) out += "<|start|>assistant";
  return out;
}

std::string hunyuan_dense(Chat chat, bool) {
  std::string out;
  for (size_t i = 0; i < chat.size(); ++i) {
    const LegacyMessage& m = chat[i];
    if (i == 0 && m.role == "system") out += m.content + "<｜hy_place▁holder▁no▁3｜>";
    if (m.role == "assistant") {
      out += "<｜hy_Assistant｜>" + m.content + "<｜hy_place▁holder▁no▁2｜>";
    } else if (m.role == "user") {
      out += "<｜hy_User｜>" + m.content + "<｜hy_Assistant｜>";
    }
  }
  return out;
}

std::string hunyuan_vl(Chat chat, bool) {
  std::string out = "<｜hy_begin▁of▁sentence｜>";
  for (size_t i = 0; i < chat.size(); ++i) {
    const LegacyMessage& m = chat[i];
    if (i == 0 && m.role == "system") {
      out += m.content + "<｜hy_place▁holder▁no▁3｜>";
    } else if (m.role == "user") {
      out += m.content + "<｜hy_User｜>";
    } else if (m.role == "assistant") {
      out += m.content + "<｜hy_Assistant｜>";
    }
  }
  return out;
}

std::string kimi_k2(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      out += "<|im_system|>system<|im_middle|>";
    } else if (m.role == "user") {
      out += "<|im_user|>user<|im_middle|>";
    } else if (m.role == "assistant") {
      out += "<|im_assistant|>assistant<|im_middle|>";
    } else if (m.role == "tool") {
      out += "<|im_system|>tool<|im_middle|>";
    }
    out += m.content + "<|im_end|>";
  }
  if (add) out += "<|im_assistant|>assistant<|im_middle|>";
  return out;
}

std::string seed_oss(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    const std::string content = m.role == "assistant" ? trim(m.content) : m.content;
    out += "<seed:bos>" + m.role + "\n" + content + "<seed:eos>";
  }
  if (add) out += "<seed:bos>assistant\n";
  return out;
}

std::string grok2(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    if (m.role == "system") {
      out += "System: " + trim(m.content) + "<|separator|>\n\n";
    } else if (m.role == "user") {
      out += "Human: " + trim(m.content) + "<|separator|>\n\n";
    } else if (m.role == "assistant") {
      out += "Assistant: " + m.content + "<|separator|>\n\n";
    }
  }
  if (add) out += "Assistant:";
  return out;
}

namespace {

// openPangu role labels; nullptr for roles the format drops.
const char* pangu_label(const std::string& role) {
  if (role == "system") return "系统";
  if (role == "user") return "用户";
  if (role == "assistant") return "助手";
  if (role == "tool") return "工具";
  if (role == "function") return "方法";
  return nullptr;
}

}  // namespace

std::string pangu_embedded(Chat chat, bool add) {
  std::string out;
  for (size_t i = 0; i < chat.size(); ++i) {
    const LegacyMessage& m = chat[i];
    if (i == 0 && m.role != "system") out += "[unused9]系统：[unused10]";
    if (const char* label = pangu_label(m.role)) {
      out += std::string("[unused9]") + label + "：" + m.content + "[unused10]";
    }
  }
  if (add) out += "[unused9]助手：";
  return out;
}

std::string solar_open(Chat chat, bool add) {
  std::string out;
  for (const LegacyMessage& m : chat) {
    out += "<|begin|>" + m.role + "<|content|>" + m.content + "<|end|>";
  }
  if (add) out += "<|begin|>assistant";
  return out;
}

}  // namespace hearth::chat::legacy

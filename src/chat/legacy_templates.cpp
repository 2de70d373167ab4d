// The one table of built-in chat formats, and the detection of a format from a template
// source (the marker rules and their order are llama.cpp b10621's).
#include "chat/legacy_templates.h"

#include "chat/legacy_formats.h"

namespace hearth::chat {

namespace {

namespace L = legacy;

// Named formats in alphabetical order, then the ones only detection reaches.
constexpr LegacyFormat kFormats[] = {
    {"bailing", L::bailing},
    {"bailing-think", L::bailing_think},
    {"bailing2", L::bailing2},
    {"chatglm3", L::chatglm3},
    {"chatglm4", L::chatglm4},
    {"chatml", L::chatml},
    {"command-r", L::command_r},
    {"deepseek", L::deepseek},
    {"deepseek-ocr", L::deepseek_ocr},
    {"deepseek2", L::deepseek2},
    {"deepseek3", L::deepseek3},
    {"exaone-moe", L::exaone_moe},
    {"exaone3", L::exaone3},
    {"exaone4", L::exaone4},
    {"falcon3", L::falcon3},
    {"gemma", L::gemma},
    {"gigachat", L::gigachat},
    {"glmedge", L::glmedge},
    {"gpt-oss", L::gpt_oss},
    {"granite", L::granite},
    {"granite-4.0", L::granite_4},
    {"granite-4.1", L::granite_4},
    {"grok-2", L::grok2},
    {"hunyuan-dense", L::hunyuan_dense},
    {"hunyuan-moe", L::hunyuan_moe},
    {"hunyuan-vl", L::hunyuan_vl},
    {"kimi-k2", L::kimi_k2},
    {"llama2", L::llama2},
    {"llama2-sys", L::llama2_sys},
    {"llama2-sys-bos", L::llama2_sys_bos},
    {"llama2-sys-strip", L::llama2_sys_strip},
    {"llama3", L::llama3},
    {"llama4", L::llama4},
    {"megrez", L::megrez},
    {"minicpm", L::minicpm},
    {"mistral-v1", L::mistral_v1},
    {"mistral-v3", L::mistral_v3},
    {"mistral-v3-tekken", L::mistral_v3_tekken},
    {"mistral-v7", L::mistral_v7},
    {"mistral-v7-tekken", L::mistral_v7_tekken},
    {"monarch", L::monarch},
    {"openchat", L::openchat},
    {"orion", L::orion},
    {"pangu-embedded", L::pangu_embedded},
    {"phi3", L::phi3},
    {"phi4", L::phi4},
    {"rwkv-world", L::rwkv_world},
    {"seed_oss", L::seed_oss},
    {"smolvlm", L::smolvlm},
    {"solar-open", L::solar_open},
    {"vicuna", L::vicuna},
    {"vicuna-orca", L::vicuna_orca},
    {"yandex", L::yandex},
    {"zephyr", L::zephyr},
    {"", L::dots1},  // dots.llm1: detected from its markers, not selectable by name
};

const LegacyFormat* by_name(std::string_view name) {
  for (const LegacyFormat& f : kFormats) {
    if (!f.name.empty() && f.name == name) return &f;
  }
  return nullptr;
}

bool has(std::string_view source, std::string_view marker) {
  return source.find(marker) != std::string_view::npos;
}

// Mistral and Llama 2 templates: named "mistral..." or using [INST].
bool inst_family(std::string_view s) {
  return s.starts_with("mistral") || has(s, "[INST]");
}
// The official Mistral v1/v3/v3-tekken templates.
bool official_mistral(std::string_view s) {
  return inst_family(s) && (has(s, "' [INST] ' + system_message") || has(s, "[AVAILABLE_TOOLS]"));
}
bool assistant_and_user(std::string_view s) {
  return has(s, "<|assistant|>") && has(s, "<|user|>");
}
bool exaone_turns(std::string_view s) {
  return has(s, "[|system|]") && has(s, "[|assistant|]") && has(s, "[|endofturn|]");
}
bool granite_tools(std::string_view s) {
  return has(s, "<|start_of_role|>") && (has(s, "<tool_call>") || has(s, "<tools>"));
}

struct DetectionRule {
  std::string_view format;  // a name, or "" for dots1
  bool (*matches)(std::string_view source);
};

// First match wins. Families with sub-cases are spelled out as consecutive rules: a later
// rule of a family only runs when the earlier, more specific ones did not match.
constexpr DetectionRule kRules[] = {
    {"phi4", [](std::string_view s) { return has(s, "<|im_start|>") && has(s, "<|im_sep|>"); }},
    {"smolvlm",
     [](std::string_view s) { return has(s, "<|im_start|>") && has(s, "<end_of_utterance>"); }},
    {"chatml", [](std::string_view s) { return has(s, "<|im_start|>"); }},
    {"mistral-v7", [](std::string_view s) { return inst_family(s) && has(s, "[SYSTEM_PROMPT]"); }},
    {"mistral-v1", [](std::string_view s) { return official_mistral(s) && has(s, " [INST]"); }},
    {"mistral-v3-tekken",
     [](std::string_view s) { return official_mistral(s) && has(s, "\"[INST]\""); }},
    {"mistral-v3", official_mistral},
    {"llama2-sys-strip",
     [](std::string_view s) { return inst_family(s) && has(s, "content.strip()"); }},
    {"llama2-sys-bos",
     [](std::string_view s) { return inst_family(s) && has(s, "bos_token + '[INST]"); }},
    {"llama2-sys", [](std::string_view s) { return inst_family(s) && has(s, "<<SYS>>"); }},
    {"llama2", inst_family},
    {"phi3", [](std::string_view s) { return has(s, "<|assistant|>") && has(s, "<|end|>"); }},
    {"chatglm4", [](std::string_view s) { return has(s, "[gMASK]<sop>"); }},
    {"exaone-moe",
     [](std::string_view s) { return assistant_and_user(s) && has(s, "<|tool_declare|>"); }},
    {"falcon3", [](std::string_view s) { return assistant_and_user(s) && has(s, "</s>"); }},
    {"glmedge", assistant_and_user},
    {"glmedge",
     [](std::string_view s) {
       return has(s, "<|{{ item['role'] }}|>") && has(s, "<|begin_of_image|>");
     }},
    {"zephyr", [](std::string_view s) { return has(s, "<|user|>") && has(s, "<|endoftext|>"); }},
    {"monarch", [](std::string_view s) { return has(s, "bos_token + message['role']"); }},
    {"gemma", [](std::string_view s) { return has(s, "<start_of_turn>"); }},
    {"orion", [](std::string_view s) { return has(s, "'\\n\\nAssistant: ' + eos_token"); }},
    {"openchat", [](std::string_view s) { return has(s, "GPT4 Correct "); }},
    {"vicuna-orca",
     [](std::string_view s) {
       return has(s, "USER: ") && has(s, "ASSISTANT: ") && has(s, "SYSTEM: ");
     }},
    {"vicuna", [](std::string_view s) { return has(s, "USER: ") && has(s, "ASSISTANT: "); }},
    {"deepseek",
     [](std::string_view s) { return has(s, "### Instruction:") && has(s, "<|EOT|>"); }},
    {"command-r",
     [](std::string_view s) {
       return has(s, "<|START_OF_TURN_TOKEN|>") && has(s, "<|USER_TOKEN|>");
     }},
    {"llama3",
     [](std::string_view s) {
       return has(s, "<|start_header_id|>") && has(s, "<|end_header_id|>");
     }},
    {"chatglm3", [](std::string_view s) { return has(s, "[gMASK]sop"); }},
    {"minicpm", [](std::string_view s) { return has(s, "<用户>"); }},
    {"deepseek2",
     [](std::string_view s) { return has(s, "'Assistant: ' + message['content'] + eos_token"); }},
    {"deepseek3",
     [](std::string_view s) {
       return has(s, "<｜Assistant｜>") && has(s, "<｜User｜>") && has(s, "<｜end▁of▁sentence｜>");
     }},
    {"exaone4", [](std::string_view s) { return exaone_turns(s) && has(s, "[|tool|]"); }},
    {"exaone3", exaone_turns},
    {"rwkv-world",
     [](std::string_view s) {
       return has(s, "rwkv-world") ||
              has(s, "{{- 'User: ' + message['content']|trim + '\\n\\n' -}}");
     }},
    {"granite-4.0",
     [](std::string_view s) { return granite_tools(s) && has(s, "g4_default_system_message"); }},
    {"granite-4.1", granite_tools},
    {"granite", [](std::string_view s) { return has(s, "<|start_of_role|>"); }},
    {"gigachat",
     [](std::string_view s) {
       return has(s,
                  "message['role'] + additional_special_tokens[0] + message['content'] + "
                  "additional_special_tokens[1]");
     }},
    {"megrez", [](std::string_view s) { return has(s, "<|role_start|>"); }},
    {"yandex", [](std::string_view s) { return has(s, " Ассистент:"); }},
    {"bailing",
     [](std::string_view s) { return has(s, "<role>ASSISTANT</role>") && has(s, "'HUMAN'"); }},
    {"bailing-think",
     [](std::string_view s) {
       return has(s, "<role>ASSISTANT</role>") && has(s, "\"HUMAN\"") && has(s, "<think>");
     }},
    {"bailing2",
     [](std::string_view s) {
       return has(s, "<role>ASSISTANT</role>") && has(s, "<role>HUMAN</role>") &&
              has(s, "<|role_end|>");
     }},
    {"llama4",
     [](std::string_view s) { return has(s, "<|header_start|>") && has(s, "<|header_end|>"); }},
    {"", [](std::string_view s) { return has(s, "<|endofuserprompt|>"); }},
    {"hunyuan-moe",
     [](std::string_view s) { return has(s, "<|extra_0|>") && has(s, "<|extra_4|>"); }},
    {"gpt-oss", [](std::string_view s) { return has(s, "<|start|>") && has(s, "<|channel|>"); }},
    {"hunyuan-vl",
     [](std::string_view s) {
       return has(s, "<｜hy_Assistant｜>") && has(s, "<｜hy_begin▁of▁sentence｜>");
     }},
    {"hunyuan-dense",
     [](std::string_view s) {
       return has(s, "<｜hy_Assistant｜>") && has(s, "<｜hy_place▁holder▁no▁3｜>");
     }},
    {"kimi-k2",
     [](std::string_view s) { return has(s, "<|im_assistant|>assistant<|im_middle|>"); }},
    {"seed_oss", [](std::string_view s) { return has(s, "<seed:bos>"); }},
    {"grok-2",
     [](std::string_view s) {
       return has(s, "'Assistant: '  + message['content'] + '<|separator|>");
     }},
    {"pangu-embedded", [](std::string_view s) { return has(s, "[unused9]系统：[unused10]"); }},
    {"solar-open",
     [](std::string_view s) {
       return has(s, "<|begin|>") && has(s, "<|end|>") && has(s, "<|content|>");
     }},
};

const LegacyFormat* format_of_rule(const DetectionRule& rule) {
  if (!rule.format.empty()) return by_name(rule.format);
  for (const LegacyFormat& f : kFormats) {
    if (f.name.empty()) return &f;
  }
  return nullptr;
}

}  // namespace

std::span<const LegacyFormat> legacy_formats() {
  return kFormats;
}

std::vector<std::string_view> legacy_template_names() {
  std::vector<std::string_view> names;
  for (const LegacyFormat& f : kFormats) {
    if (!f.name.empty()) names.push_back(f.name);
  }
  return names;
}

std::string legacy_template_name_list() {
  std::string list;
  for (std::string_view name : legacy_template_names()) {
    if (!list.empty()) list += ", ";
    list += name;
  }
  return list;
}

const LegacyFormat* detect_legacy_format(std::string_view source) {
  if (const LegacyFormat* named = by_name(source)) return named;
  for (const DetectionRule& rule : kRules) {
    if (rule.matches(source)) return format_of_rule(rule);
  }
  return nullptr;
}

Result<std::string> apply_legacy_template(std::string_view source,
                                          std::span<const LegacyMessage> chat, bool add_assistant) {
  const LegacyFormat* format = detect_legacy_format(source);
  if (format == nullptr) {
    return error(ErrorCode::kUnsupported,
                 "this custom template is not supported, try using --jinja");
  }
  return format->format(chat, add_assistant);
}

}  // namespace hearth::chat

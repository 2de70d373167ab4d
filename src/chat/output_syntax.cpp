#include "chat/output_syntax.h"

#include <initializer_list>
#include <string_view>
#include <vector>

#include "chat/openai_messages.h"

namespace hearth::chat {

namespace {

// One family: the substrings of its template source (all present, none of `without`), and
// its markers. The first matching row wins, so specific families come before general ones.
struct Family {
  const char* name;
  std::vector<std::string_view> needs;
  std::vector<std::string_view> without;
  ToolCallFormat format;
};

ToolCallFormat json_object(std::string start, std::string end, std::string args_key = "arguments") {
  ToolCallFormat f;
  f.style = ToolCallStyle::kJsonObject;
  f.call_start = std::move(start);
  f.call_end = std::move(end);
  f.args_key = std::move(args_key);
  return f;
}

ToolCallFormat json_array(std::string start, std::string end) {
  ToolCallFormat f;
  f.style = ToolCallStyle::kJsonArray;
  f.section_start = std::move(start);
  f.section_end = std::move(end);
  return f;
}

ToolCallFormat name_then_json(std::string start, std::string name_end, std::string end) {
  ToolCallFormat f;
  f.style = ToolCallStyle::kNameThenJson;
  f.call_start = std::move(start);
  f.name_end = std::move(name_end);
  f.call_end = std::move(end);
  return f;
}

// Families whose parameters are written in tags.
void add_tagged_families(std::vector<Family>& t) {
  {
    // GPT-OSS (harmony): a message to=functions.f on the commentary channel.
    ToolCallFormat f;
    f.style = ToolCallStyle::kHarmony;
    f.call_start = " to=functions.";
    t.push_back({"gpt-oss", {"<|channel|>"}, {}, f});
  }
  {
    // MiniCPM5: <function name="f"><param name="k">v</param></function>.
    ToolCallFormat f;
    f.style = ToolCallStyle::kInvokeTags;
    f.call_start = "<function name=\"";
    f.call_end = "</function>";
    f.param_open = "<param name=\"";
    f.param_close = "</param>";
    t.push_back({"minicpm5", {"<function name=\"", "<param name="}, {}, f});
  }
  {
    // Hy3: GLM-like key/value tags carrying a ":opensource" suffix, an explicit name end.
    ToolCallFormat f;
    f.style = ToolCallStyle::kKeyValueTags;
    f.section_start = "<tool_calls:opensource>";
    f.section_end = "</tool_calls:opensource>";
    f.call_start = "<tool_call:opensource>";
    f.call_end = "</tool_call:opensource>";
    f.name_end = "<tool_sep:opensource>";
    f.key_open = "<arg_key:opensource>";
    f.key_close = "</arg_key:opensource>";
    f.value_open = "<arg_value:opensource>";
    f.value_close = "</arg_value:opensource>";
    t.push_back({"hy3", {"tool_sep{}>", ":opensource"}, {}, f});
  }
  {
    // Kimi K3: XTML tags, <|open|>tag attrs<|sep|> ... <|close|>tag<|sep|>; all calls in one
    // tools section, each call numbered, each argument with its JSON type.
    ToolCallFormat f;
    f.style = ToolCallStyle::kInvokeTags;
    f.section_start = "<|open|>tools<|sep|>";
    f.section_end = "<|close|>tools<|sep|>";
    f.name_prefix = "<|open|>call tool=\"";
    f.call_end = "<|close|>call<|sep|>";
    f.param_open = "<|open|>argument key=\"";
    f.param_close = "<|close|>argument<|sep|>";
    f.tag_end = "<|sep|>";
    f.indexed_calls = true;
    f.typed_params = true;
    t.push_back({"kimi-k3", {"<|open|>", "<|close|>", "<|end_of_msg|>"}, {}, f});
  }
  {
    // Muse Glimmer: a message to the function (its header, see OutputSyntax::recipients)
    // holding <atem:function_calls><atem:invoke name="f"><atem:parameter name="k">v...
    ToolCallFormat f;
    f.style = ToolCallStyle::kInvokeTags;
    f.section_start = "<atem:function_calls>";
    f.section_end = "</atem:function_calls>";
    f.name_prefix = "<atem:invoke name=\"";
    f.call_end = "</atem:invoke>";
    f.param_open = "<atem:parameter name=\"";
    f.param_close = "</atem:parameter>";
    t.push_back({"muse-glimmer", {"<atem:function_calls>", "<|eom|>"}, {}, f});
  }
  {
    // MiniMax M3: every tag led by its namespace token; an element per argument.
    const std::string ns = "]<]minimax[>[";
    ToolCallFormat f;
    f.style = ToolCallStyle::kXmlElements;
    f.section_start = ns + "<tool_call>";
    f.section_end = ns + "</tool_call>";
    f.name_prefix = ns + "<invoke name=\"";
    f.call_end = ns + "</invoke>";
    f.param_open = ns + "<";
    f.param_close = ns + "</";
    t.push_back({"minimax-m3", {"]<]minimax[>[", "<invoke name="}, {}, f});
  }
  {
    // Invoke tags inside a section: MiniMax M2, and DSML (DeepSeek V3.2's function_calls,
    // V4's tool_calls).
    auto invoke = [](const std::string& prefix, const std::string& section) {
      ToolCallFormat f;
      f.style = ToolCallStyle::kInvokeTags;
      f.section_start = "<" + section + ">";
      f.section_end = "</" + section + ">";
      f.name_prefix = "<" + prefix + "invoke name=\"";
      f.call_end = "</" + prefix + "invoke>";
      f.param_open = "<" + prefix + "parameter name=\"";
      f.param_close = "</" + prefix + "parameter>";
      return f;
    };
    t.push_back({"minimax-m2",
                 {"<minimax:tool_call>", "<invoke name="},
                 {},
                 invoke("", "minimax:tool_call")});
    t.push_back({"deepseek-v3.2-dsml",
                 {"｜DSML｜", "'function_calls>"},
                 {},
                 invoke("｜DSML｜", "｜DSML｜function_calls")});
    t.push_back({"deepseek-v4-dsml",
                 {"｜DSML｜", "'tool_calls>"},
                 {},
                 invoke("｜DSML｜", "｜DSML｜tool_calls")});
  }
  {
    ToolCallFormat f;
    f.style = ToolCallStyle::kXmlParameters;
    f.call_start = "<seed:tool_call>";
    f.call_end = "</seed:tool_call>";
    t.push_back({"seed-oss", {"<seed:tool_call>", "<function="}, {}, f});
  }
  {
    ToolCallFormat f;
    f.style = ToolCallStyle::kXmlParameters;
    f.call_start = "<tool_call>";
    f.call_end = "</tool_call>";
    f.bare_call_start = "<function=";  // chat-templates.md §9: <tool_call> may be missing
    t.push_back({"qwen3-coder", {"<tool_call>", "<function=", "<parameter="}, {}, f});
  }
  {
    ToolCallFormat f;
    f.style = ToolCallStyle::kKeyValueTags;
    f.call_start = "<tool_call>";
    f.call_end = "</tool_call>";
    f.key_open = "<arg_key>";
    f.key_close = "</arg_key>";
    f.value_open = "<arg_value>";
    f.value_close = "</arg_value>";
    t.push_back({"glm-4.5", {"<tool_call>", "<arg_key>"}, {}, f});
  }
  {
    ToolCallFormat f =
        name_then_json("<|tool_call_begin|>", "<|tool_call_argument_begin|>", "<|tool_call_end|>");
    f.section_start = "<|tool_calls_section_begin|>";
    f.section_end = "<|tool_calls_section_end|>";
    f.name_is_kimi_id = true;
    t.push_back({"kimi-k2", {"<|tool_calls_section_begin|>"}, {}, f});
  }
}

// Families whose arguments are JSON (with or without a wrapper around the name).
void add_json_families(std::vector<Family>& t) {
  {
    // LFM2 / LFM2.5: a Python list of calls, f(k="v", n=1).
    ToolCallFormat f;
    f.style = ToolCallStyle::kPythonCalls;
    f.section_start = "<|tool_call_start|>[";
    f.section_end = "]<|tool_call_end|>";
    t.push_back({"lfm2", {"<|tool_call_start|>"}, {}, f});
  }
  {
    // Gemma 4: call:f{k:<|"|>v<|"|>} between its tool-call tags.
    ToolCallFormat f;
    f.style = ToolCallStyle::kGemmaCalls;
    f.call_start = "<|tool_call>call:";
    f.call_end = "<tool_call|>";
    t.push_back({"gemma-4", {"<|tool_call>call:"}, {}, f});
  }
  {
    // R1 distills write the type before the separator and fence the arguments.
    ToolCallFormat f = name_then_json("<｜tool▁call▁begin｜>", "\n", "<｜tool▁call▁end｜>");
    f.name_prefix = "function<｜tool▁sep｜>";
    f.section_start = "<｜tool▁calls▁begin｜>";
    f.section_end = "<｜tool▁calls▁end｜>";
    t.push_back({"deepseek-r1", {"<｜tool▁calls▁begin｜>", "tool['type']"}, {}, f});
    ToolCallFormat r1 = f;
    t.push_back({"deepseek-r1", {"<｜tool▁calls▁begin｜>", "tc['type']"}, {}, r1});
  }
  {
    ToolCallFormat f =
        name_then_json("<｜tool▁call▁begin｜>", "<｜tool▁sep｜>", "<｜tool▁call▁end｜>");
    f.section_start = "<｜tool▁calls▁begin｜>";
    f.section_end = "<｜tool▁calls▁end｜>";
    t.push_back({"deepseek-v3", {"<｜tool▁calls▁begin｜>"}, {}, f});
  }
  {
    ToolCallFormat f = name_then_json("[TOOL_CALLS]", "[CALL_ID]", "");
    f.id_end = "[ARGS]";
    t.push_back({"mistral-call-id", {"[TOOL_CALLS]", "[CALL_ID]"}, {}, f});
    t.push_back({"mistral-args",
                 {"[TOOL_CALLS]", "[ARGS]"},
                 {},
                 name_then_json("[TOOL_CALLS]", "[ARGS]", "")});
    ToolCallFormat nemo = json_array("[TOOL_CALLS]", "");
    nemo.id_key = "id";
    t.push_back({"mistral-nemo", {"[TOOL_CALLS]"}, {}, nemo});
  }
  {
    ToolCallFormat f = json_array("<|START_ACTION|>", "<|END_ACTION|>");
    f.name_key = "tool_name";
    f.args_key = "parameters";
    f.id_key = "tool_call_id";
    t.push_back({"command-r7b", {"<|START_ACTION|>"}, {}, f});
  }
  t.push_back({"nemotron-v2", {"<TOOLCALL>"}, {}, json_array("<TOOLCALL>", "</TOOLCALL>")});
  t.push_back({"granite-3", {"<|tool_call|>"}, {}, json_array("<|tool_call|>", "")});
  t.push_back({"apriel", {"<tool_calls>["}, {}, json_array("<tool_calls>", "</tool_calls>")});
  {
    // MiniMax M1: one JSON object per line inside <tool_calls>...</tool_calls>.
    ToolCallFormat f = json_object("", "");
    f.section_start = "<tool_calls>";
    f.section_end = "</tool_calls>";
    t.push_back({"minimax-m1", {"<tool_calls>", "name=assistant"}, {}, f});
  }
  {
    // Apertus: [{"f": {arguments}}] between its tools tags.
    ToolCallFormat f = json_array("<|tools_prefix|>", "<|tools_suffix|>");
    f.name_is_key = true;
    t.push_back({"apertus", {"<|tools_prefix|>"}, {}, f});
  }
  // GigaChat 3.1: <|function_call|>{"name": ..., "arguments": ...}.
  t.push_back({"gigachat3.1", {"<|function_call|>"}, {}, json_object("<|function_call|>", "")});
  // GigaChat 3: a "function call" turn holding {"name": ..., "arguments": ...}.
  t.push_back({"gigachat3",
               {"<|role_sep|>", "function call"},
               {},
               json_object("<|message_sep|>\n\nfunction call<|role_sep|>\n", "")});
  {
    // Solar Open: the id, then the name, then the JSON arguments, each after its tag.
    ToolCallFormat f =
        name_then_json("<|tool_call:begin|>", "<|tool_call:args|>", "<|tool_call:end|>");
    f.section_start = "<|tool_calls|>";
    f.section_end = "<|calls|>";
    f.id_first = true;
    f.id_end = "<|tool_call:name|>";
    t.push_back({"solar-open", {"<|tool_call:begin|>"}, {}, f});
  }
  // MiniMax M3 writes <tool_call> around an <invoke> syntax of its own (its row above).
  t.push_back(
      {"hermes", {"<tool_call>"}, {"]<]minimax[>["}, json_object("<tool_call>", "</tool_call>")});
  // Functionary v3.2: each message starts with its recipient, ">>>f\n{...}" for a call
  // (">>>all\n" and text for the user: content_start()).
  t.push_back(
      {"functionary-v3.2", {">>>all", ">>>${recipient}"}, {}, name_then_json(">>>", "\n", "")});
  t.push_back(
      {"functionary-v3.1", {"<function="}, {}, name_then_json("<function=", ">", "</function>")});
  // Llama 3.x: a bare object {"name": ..., "parameters": ...}, no markers.
  t.push_back({"llama-3",
               {"\"parameters\": ", "<|start_header_id|>"},
               {},
               json_object("", "", "parameters")});
}

const std::vector<Family>& families() {
  static const std::vector<Family> table = [] {
    std::vector<Family> t;
    add_tagged_families(t);
    add_json_families(t);
    return t;
  }();
  return table;
}

const Family* family_of(const std::string& source) {
  for (const Family& f : families()) {
    bool match = true;
    for (std::string_view s : f.needs) match = match && source.find(s) != std::string::npos;
    for (std::string_view s : f.without) match = match && source.find(s) == std::string::npos;
    if (match) return &f;
  }
  return nullptr;
}

}  // namespace

std::optional<ThinkingTags> thinking_tags(const std::string& source) {
  struct Known {
    ThinkingTags tags;
    std::string_view built_by;  // a template that builds the tags with a macro says this
  };
  static const Known kKnown[] = {
      {{"<|open|>think<|sep|>", "<|close|>think<|sep|>"}, "open_tag('think')"},  // Kimi K3
      {{"<seed:think>", "</seed:think>"}, ""},
      {{"<mm:think>", "</mm:think>"}, ""},  // MiniMax M3
      {{"<think>", "</think>"}, ""},
      {{"[THINK]", "[/THINK]"}, ""},
      {{"<|START_THINKING|>", "<|END_THINKING|>"}, ""},
      {{"<|channel>thought", "<channel|>"}, ""},  // Gemma 4
  };
  for (const Known& k : kKnown) {
    if (source.find(k.tags.start) != std::string::npos ||
        (!k.built_by.empty() && source.find(k.built_by) != std::string::npos)) {
      return k.tags;
    }
  }
  return std::nullopt;
}

namespace {

bool is_kimi_k3(const std::string& source) {
  return source.find("<|open|>") != std::string::npos &&
         source.find("<|close|>") != std::string::npos &&
         source.find("<|end_of_msg|>") != std::string::npos;
}

}  // namespace

std::string content_start(const std::string& source) {
  if (is_kimi_k3(source)) return "<|open|>response<|sep|>";
  return source.find(">>>all") != std::string::npos ? ">>>all\n" : "";
}

std::string content_end(const std::string& source) {
  return is_kimi_k3(source) ? "<|close|>response<|sep|>" : "";
}

std::vector<std::string> message_end(const std::string& source) {
  if (is_kimi_k3(source)) return {"<|close|>message<|sep|>", "<|end_of_msg|>"};
  return {};
}

std::vector<std::string> additional_stops(const std::string& source) {
  if (source.find("laguna_glm_thinking") != std::string::npos) return {"</assistant>"};
  return {};
}

bool writes_recipient_messages(const std::string& source) {
  return source.find("<atem:function_calls>") != std::string::npos &&
         source.find("<|eom|>") != std::string::npos;
}

ToolCallFormat tool_call_format(const std::string& source) {
  const Family* f = family_of(source);
  return f != nullptr ? f->format : ToolCallFormat{};
}

std::string tool_call_family(const std::string& source) {
  const Family* f = family_of(source);
  return f != nullptr ? f->name : "none";
}

bool reference_has_dedicated_parser(const std::string& source) {
  auto has = [&](std::string_view text) { return source.find(text) != std::string::npos; };
  // The reference's detections, in its order; each names the texts its family's template
  // is recognized by.
  const bool ministral3 =
      has("[SYSTEM_PROMPT]") && has("[TOOL_CALLS]") && has("[ARGS]") && !has("[CALL_ID]");
  const bool functionary32 = has(">>>all") && has(">>>${recipient}");
  const bool kimi_k2 = has("<|tool_calls_section_begin|>") && has("<|tool_call_begin|>");
  const bool cohere2_moe = has("<|START_TEXT|>") && has("<|START_ACTION|>");
  const bool lfm2 = (has("<|tool_list_start|>") && has("<|tool_list_end|>")) ||
                    (has("List of tools: [") && !has("<|tool_list_start|>"));
  const bool gigachat3 = has("<|role_sep|>") && has("<|message_sep|>") && !has("<|function_call|>");
  const bool minimax_m3 = has("]<]minimax[>[") && has("<tool_call>") && has("<invoke name=");
  const bool dsml =
      has("dsml_token") && has("DSML") && (has("function_calls") || has("tool_calls"));
  const bool gemma4 = has("'<|tool_call>call:'");
  const bool minicpm5 =
      has("Tool usage guidelines:") && has("<function name=\"") && has("<param name=\"");
  const bool qwen3_coder = has("<tool_call>") && has("<function=") && has("<parameter=");
  return ministral3 || has("<|channel|>") || writes_recipient_messages(source) || functionary32 ||
         kimi_k2 || is_kimi_k3(source) || cohere2_moe || lfm2 || gigachat3 || minimax_m3 || dsml ||
         gemma4 || minicpm5 || qwen3_coder;
}

void add_string_params(const std::vector<Tool>& tools, ToolCallFormat& format) {
  for (const Tool& tool : tools) {
    const Json& schema = tool_schema(tool);
    if (!schema.contains("properties") || !schema.at("properties").is_object()) continue;
    for (const auto& [key, property] : schema.at("properties").items()) {
      if (property.is_object() && property.value("type", Json()) == "string") {
        format.string_params[tool.name].insert(key);
      }
    }
  }
}

}  // namespace hearth::chat

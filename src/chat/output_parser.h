// Model output split into reasoning, content and tool calls (chat-templates.md §8-§9).
// The syntax is chosen per request from the template (output_syntax.cpp); parse_output()
// reads "generation prompt + generated text" as the reference's parser does, either
// leniently (partial: streaming, after each token) or finally. No HTTP here: the server
// turns ParsedMessage into JSON and ParsedMessage diffs into stream deltas.
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::chat {

// How a family writes a tool call in its output.
enum class ToolCallStyle {
  kNone,           // the template has no tool-call syntax: nothing is parsed back
  kJsonObject,     // {"name": "f", "arguments": {...}} (Hermes, Qwen, Granite 4, Llama 3.x)
  kJsonArray,      // [{"name": "f", "arguments": {...}, "id": "..."}, ...] (Mistral Nemo)
  kNameThenJson,   // f<name_end>{...} (DeepSeek V3, Mistral Small 3.2, Functionary 3.1, Kimi)
  kXmlParameters,  // <function=f><parameter=k>v</parameter></function> (Qwen3-Coder)
  kKeyValueTags,   // f<arg_key>k</arg_key><arg_value>v</arg_value> (GLM 4.5+)
  kHarmony,        // GPT-OSS channels: to=functions.f<|channel|>commentary json<|message|>{...}
  kInvokeTags,     // <invoke name="f"><parameter name="k">v</parameter></invoke> (MiniMax
                   // M2, DeepSeek V3.2/V4 DSML, whose string="true|false" says how v is read;
                   // Kimi K3's <|open|>call tool="f" index="1"<|sep|>, its arguments typed)
  kPythonCalls,    // [f(k="v", n=1), g()] (LFM2, LFM2.5)
  kGemmaCalls,     // call:f{k:<|"|>v<|"|>,n:1} (Gemma 4: strings between <|"|>, bare keys)
  kXmlElements,    // <invoke name="f"><k>v</k><o><a>1</a></o><l><item>x</item></l></invoke>:
                   // each argument an element named after it, objects and lists nested
                   // (MiniMax M3, every tag led by its namespace token "]<]minimax[>[")
};

// The markers of one family (empty strings: the format has no such marker).
struct ToolCallFormat {
  ToolCallStyle style = ToolCallStyle::kNone;
  std::string section_start;  // before all calls
  std::string section_end;
  std::string call_start;  // before each call
  std::string call_end;
  std::string name_prefix;  // kNameThenJson: text before the name inside a call
  std::string name_end;     // kNameThenJson / kKeyValueTags: text after the name
  std::string name_key = "name";
  std::string args_key = "arguments";
  std::string id_key;  // JSON member carrying the model's call id ("" when none)
  // kNameThenJson: the id is written between name_end and id_end (Mistral [CALL_ID]).
  std::string id_end;
  // The name written as "functions.<name>:<n>", which is also the id (Kimi K2).
  bool name_is_kimi_id = false;
  // kInvokeTags: the text before a parameter's name, and the parameter's closing tag.
  // kXmlElements: what opens an element before its name, and what closes one before it.
  // kKeyValueTags: the four key/value tags (GLM's <arg_key>...</arg_value> when empty).
  std::string param_open;
  std::string param_close;
  // kInvokeTags: what closes an opening tag after its attributes ("<|sep|>" for Kimi K3),
  // and whether calls carry index="N" and parameters type="string|number|..." (Kimi K3's
  // attributes, which its grammar writes).
  std::string tag_end = ">";
  bool indexed_calls = false;
  bool typed_params = false;
  std::string key_open, key_close, value_open, value_close;
  // kNameThenJson: the id comes first, up to id_end, then the name (Solar Open).
  bool id_first = false;
  // Where a call begins when the model leaves out call_start (Qwen3-Coder's models may
  // write "<function=f>" without the "<tool_call>" before it); "" when it may not.
  std::string bare_call_start;
  // kJsonObject / kJsonArray: a call is {"<name>": {arguments}} (Apertus).
  bool name_is_key = false;
  // Tagged formats, per request: the parameters whose schema type is "string", by tool.
  // Their values are text (made JSON strings); other values are read as JSON.
  std::map<std::string, std::set<std::string>> string_params;
};

struct OutputSyntax {
  std::string format_name = "Content-only";  // generation_settings.chat_format
  // The text before the generated output (the generation prompt, plus the continued
  // message when continuing), and its leading part consumed as a literal: the assistant
  // header up to the thinking start tag. The rest of it is parsed like output.
  std::string prefix;
  std::string literal;
  std::string reasoning_start;  // thinking tags; "" when the template has none
  std::string reasoning_end;
  bool extract_reasoning = true;  // reasoning_format != none
  bool parse_tool_calls = false;  // tools given, tool_choice != none, the format has a syntax
  bool parallel_tool_calls = true;
  // A JSON-schema constraint: the content is the JSON value, optionally fenced in
  // ```json ... ```; an unfinished value ends before a member whose value may still grow.
  bool json_output = false;
  // GPT-OSS's harmony messages: the analysis channel is reasoning, final (and commentary
  // without a recipient) is content, a message to=functions.f is a call.
  bool harmony = false;
  // Muse Glimmer's messages, each <|start|>assistant to=RECIPIENT<|message|>body<|eom|>:
  // to=self is reasoning, to=user (or no recipient) content, any other recipient a call
  // written in the family's invoke tags.
  bool recipients = false;
  // Text the model writes before its answer's content (Functionary v3.2's ">>>all\n",
  // the recipient line of a message to the user); not part of the content.
  std::string content_start;
  // What closes the content (Kimi K3's "<|close|>response<|sep|>") and the message
  // ("<|close|>message<|sep|>", then "<|end_of_msg|>"); neither is part of the content.
  std::string content_end;
  std::vector<std::string> message_end;
  ToolCallFormat tools;
};

struct ParsedToolCall {
  std::string name;
  std::string arguments;  // JSON text
  std::string id;         // the model's id when the format carries one, else ""
};

struct ParsedMessage {
  std::string reasoning;
  std::string content;
  std::vector<ParsedToolCall> tool_calls;
};

// Parses syntax.prefix + generated. Partial parses hold back a marker that is only partly
// generated, report unfinished reasoning and calls so far, and never fail. A final parse
// releases held-back text; a call that cannot be read is returned as content.
ParsedMessage parse_output(const OutputSyntax& syntax, std::string_view generated, bool partial);

// One step of a stream: what `now` adds to `before` (chat-templates.md §8.3).
struct ToolCallDelta {
  size_t index = 0;
  bool is_new = false;  // first delta of the call: carries id and name
  std::string name;
  std::string id;
  std::string arguments;  // appended argument text
};
struct MessageDelta {
  std::string reasoning;  // appended reasoning text
  std::string content;    // appended content text
  std::vector<ToolCallDelta> tool_calls;
  bool empty() const { return reasoning.empty() && content.empty() && tool_calls.empty(); }
};
MessageDelta diff_messages(const ParsedMessage& before, const ParsedMessage& now);

// `text` without the whitespace around it (a thinking marker's bare tag: "\n</think>\n\n"
// is "</think>").
std::string_view trim_space(std::string_view text);

// The end of the JSON value starting at `pos` (after whitespace), or npos when the text
// ends before the value does. `start` receives where the value begins.
size_t json_value_end(std::string_view text, size_t pos, size_t* start = nullptr);

}  // namespace hearth::chat

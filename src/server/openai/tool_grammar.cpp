#include "server/openai/tool_grammar.h"

#include <set>

#include "chat/openai_messages.h"
#include "json_schema/json_schema.h"
#include "server/json_util.h"

namespace hearth::server::openai {

namespace {

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
         c == '_';
}

// The end of the quoted literal or character class starting at i (its closing char + 1).
size_t skip_quoted(const std::string& s, size_t i, char close) {
  for (size_t j = i + 1; j < s.size(); ++j) {
    if (s[j] == '\\') {
      ++j;
    } else if (s[j] == close) {
      return j + 1;
    }
  }
  return s.size();
}

std::string rename_body(const std::string& body, const std::set<std::string>& names,
                        const std::string& prefix) {
  std::string out;
  size_t i = 0;
  while (i < body.size()) {
    const char c = body[i];
    // Literals, character classes and repetition counts ({0,15}) hold no rule names, even
    // when a rule is named "0" (a schema property "0" gives one).
    if (c == '"' || c == '[' || c == '{') {
      const size_t end = skip_quoted(body, i, c == '"' ? '"' : (c == '[' ? ']' : '}'));
      out.append(body, i, end - i);
      i = end;
    } else if (is_name_char(c)) {
      size_t end = i;
      while (end < body.size() && is_name_char(body[end])) ++end;
      const std::string word = body.substr(i, end - i);
      out += names.count(word) ? prefix + word : word;
      i = end;
    } else {
      out += c;
      ++i;
    }
  }
  return out;
}

// One tool's arguments as a rule: its parameters schema converted, rules prefixed.
std::optional<ApiError> arguments_rule(const chat::Tool& tool, const std::string& prefix,
                                       std::string& rules) {
  static const Json kAnyObject = {{"type", "object"}};
  const Json& schema = chat::tool_schema(tool);
  Result<json_schema::Conversion> converted =
      json_schema::convert(schema.empty() ? kAnyObject : schema);
  if (!converted.is_ok()) {
    return invalid_request(converted.status().message());
  }
  rules += prefix_rules(bounded_numbers(converted->gbnf), prefix);
  return std::nullopt;
}

// A JSON object member "key": value, with the converter's optional space around it.
std::string member(const std::string& key, const std::string& value_rule) {
  return gbnf_literal(Json(key).dump()) + " space \":\" space " + value_rule;
}

// One call of tool i in the family's syntax.
std::string call_body(const chat::ToolCallFormat& f, const chat::Tool& tool,
                      const std::string& args) {
  const std::string name = gbnf_literal(Json(tool.name).dump());
  switch (f.style) {
    case chat::ToolCallStyle::kJsonObject:
    case chat::ToolCallStyle::kJsonArray: {
      if (f.name_is_key) return "\"{\" space " + member(tool.name, args) + " space \"}\"";
      std::string body = "\"{\" space ";
      if (f.id_key == "tool_call_id") {
        body += member(f.id_key, "tool-id") + " \",\" space ";
      }
      body += gbnf_literal(Json(f.name_key).dump()) + " space \":\" space " + name;
      body += " \",\" space " + member(f.args_key, args);
      if (!f.id_key.empty() && f.id_key != "tool_call_id") {
        body += " \",\" space " + member(f.id_key, "tool-id");
      }
      return body + " space \"}\"";
    }
    case chat::ToolCallStyle::kHarmony:
      return gbnf_literal(tool.name + "<|channel|>commentary json<|message|>") + " " + args;
    case chat::ToolCallStyle::kNameThenJson: {
      // Solar Open writes the id first: <id><|tool_call:name|><name><|tool_call:args|>.
      const std::string id_first =
          f.id_first ? "[a-zA-Z0-9]{1,32} " + gbnf_literal(f.id_end) + " " : "";
      std::string body =
          id_first +
          gbnf_literal(f.name_prefix + (f.name_is_kimi_id ? "functions." : "") + tool.name) +
          (f.name_is_kimi_id ? " \":\" [0-9]+ " : " ") + gbnf_literal(f.name_end);
      if (!f.id_end.empty() && !f.id_first) body += " [a-zA-Z0-9]{9} " + gbnf_literal(f.id_end);
      if (!f.name_prefix.empty()) return body + " \"```json\\n\" " + args + " \"\\n```\"";
      return body + " " + args;
    }
    default:
      return "";
  }
}

bool tagged(const chat::ToolCallFormat& f) {
  return f.style == chat::ToolCallStyle::kXmlParameters ||
         f.style == chat::ToolCallStyle::kKeyValueTags ||
         f.style == chat::ToolCallStyle::kInvokeTags;
}

std::string call_line(const chat::ToolCallFormat& f) {
  // Each call with its own markers; the separators the families write between them.
  std::string call = "tool-call";
  if (f.style == chat::ToolCallStyle::kHarmony) {
    return gbnf_literal(f.call_start) + " " + call + " " + gbnf_literal("<|call|>");
  }
  if (f.style == chat::ToolCallStyle::kInvokeTags) {
    // The call's body holds its own end tag; a start tag (MiniCPM5's <function name=")
    // comes before the name.
    return f.call_start.empty() ? call : gbnf_literal(f.call_start) + " " + call;
  }
  if (tagged(f) && !f.call_start.empty()) {
    // Tagged calls: optional newlines inside the markers (Qwen3-Coder, Seed-OSS, GLM).
    call = gbnf_literal(f.call_start) + " tag-space " + call;
    if (!f.call_end.empty()) call += " tag-space " + gbnf_literal(f.call_end);
    return call;
  }
  if (!f.call_start.empty()) {
    // Hermes writes <tool_call>\n{...}\n</tool_call>.
    const bool newline = f.call_start == "<tool_call>";
    call = gbnf_literal(f.call_start + (newline ? "\n" : "")) + " " + call;
    if (!f.call_end.empty()) call += " " + gbnf_literal((newline ? "\n" : "") + f.call_end);
  }
  return call;
}

// The text before the output that is parsed with it: the generation prompt past the
// assistant header (an opened thinking block, Functionary v3.2's ">>>").
std::string opened_text(const chat::OutputSyntax& syntax) {
  return syntax.prefix.substr(std::min(syntax.literal.size(), syntax.prefix.size()));
}

// The calls as the family strings them together, inside its section.
std::string root_rule(const chat::OutputSyntax& syntax, bool required) {
  const chat::ToolCallFormat& f = syntax.tools;
  if (syntax.recipients) {
    // Muse Glimmer: each call is a message of its own (section included), the next one
    // opened by the assistant's header.
    return "tool-call" + std::string(syntax.parallel_tool_calls
                                         ? " ( \"<|eom|><|start|>assistant\" tool-call )*"
                                         : "");
  }
  const std::string one = call_line(f);
  std::string calls;
  if (f.style == chat::ToolCallStyle::kJsonArray) {
    // [TOOL_CALLS][{...}, {...}] — the section holds one JSON array.
    calls = "\"[\" space tool-call " +
            std::string(syntax.parallel_tool_calls ? "( \",\" space tool-call )* " : "") +
            "space \"]\"";
  } else if (f.style == chat::ToolCallStyle::kPythonCalls) {
    // <|tool_call_start|>[f(...), g(...)]<|tool_call_end|> — a Python list of calls.
    calls =
        "tool-call" + std::string(syntax.parallel_tool_calls ? " ( \",\" space tool-call )*" : "");
  } else {
    // A forced call whose start marker the generation prompt already wrote (Functionary
    // v3.2's ">>>") begins with the call itself.
    const bool started = required && f.section_start.empty() && !f.call_start.empty() &&
                         opened_text(syntax) == f.call_start;
    calls = (started ? std::string("tool-call") : one) +
            (syntax.parallel_tool_calls ? " ( space " + one + " )*" : "");
  }
  std::string root = calls;
  if (!f.section_start.empty()) {
    const std::string gap = tagged(f) ? " tag-space " : " space ";
    root = gbnf_literal(f.section_start) + gap + root;
    if (!f.section_end.empty()) root += gap + gbnf_literal(f.section_end);
  }
  return root;
}

// Muse Glimmer's call message: the header naming the function, then its section.
std::string recipient_message(const chat::ToolCallFormat& f, const std::string& name,
                              const std::string& call) {
  return gbnf_literal(" to=" + name + "<|message|>" + f.section_start) + " tag-space " + call +
         " tag-space " + gbnf_literal(f.section_end);
}

// A regular expression matching `text` literally.
std::string regex_literal(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

// Muse Glimmer's lazy trigger: a message header to one of the tools (not to self or user).
std::string recipient_trigger(const std::vector<chat::Tool>& tools) {
  std::string names;
  for (const chat::Tool& t : tools) names += (names.empty() ? "" : "|") + regex_literal(t.name);
  return "( to=(?:" + names + ")<\\|message\\|>)";
}

}  // namespace

bool opens_thinking(const chat::OutputSyntax& syntax) {
  if (syntax.reasoning_start.empty() || !syntax.extract_reasoning) return false;
  const std::string opened = opened_text(syntax);
  const size_t start = opened.rfind(std::string(chat::trim_space(syntax.reasoning_start)));
  return start != std::string::npos &&
         opened.find(std::string(chat::trim_space(syntax.reasoning_end)), start) ==
             std::string::npos;
}

std::string bounded_numbers(std::string gbnf) {
  static const std::string kExponent = "([eE] [-+]? integral-part)?";
  for (size_t at = gbnf.find(kExponent); at != std::string::npos; at = gbnf.find(kExponent, at)) {
    gbnf.replace(at, kExponent.size(), "([eE] [-+]? [0-9]{1,2})?");
  }
  return gbnf;
}

std::string gbnf_literal(const std::string& text) {
  std::string out = "\"";
  for (char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        out += c;
    }
  }
  return out + "\"";
}

std::string prefix_rules(const std::string& gbnf, const std::string& prefix) {
  std::set<std::string> names;
  size_t pos = 0;
  while (pos < gbnf.size()) {
    size_t eol = gbnf.find('\n', pos);
    if (eol == std::string::npos) eol = gbnf.size();
    const size_t sep = gbnf.find(" ::= ", pos);
    if (sep != std::string::npos && sep < eol) names.insert(gbnf.substr(pos, sep - pos));
    pos = eol + 1;
  }
  std::string out;
  pos = 0;
  while (pos < gbnf.size()) {
    size_t eol = gbnf.find('\n', pos);
    if (eol == std::string::npos) eol = gbnf.size();
    const std::string line = gbnf.substr(pos, eol - pos);
    const size_t sep = line.find(" ::= ");
    if (sep != std::string::npos) {
      out += prefix + line.substr(0, sep) +
             " ::= " + rename_body(line.substr(sep + 5), names, prefix) + "\n";
    }
    pos = eol + 1;
  }
  return out;
}

std::optional<ApiError> build_tool_grammar(const chat::OutputSyntax& syntax,
                                           const std::vector<chat::Tool>& tools, bool required,
                                           std::optional<ToolGrammar>& out) {
  out.reset();
  const chat::ToolCallFormat& f = syntax.tools;
  const bool supported =
      f.style == chat::ToolCallStyle::kJsonObject || f.style == chat::ToolCallStyle::kJsonArray ||
      f.style == chat::ToolCallStyle::kNameThenJson || f.style == chat::ToolCallStyle::kHarmony ||
      f.style == chat::ToolCallStyle::kPythonCalls || f.style == chat::ToolCallStyle::kGemmaCalls ||
      f.style == chat::ToolCallStyle::kXmlElements || tagged(f);
  if (!supported || tools.empty()) return std::nullopt;
  std::string rules;
  std::string alternatives;
  for (size_t i = 0; i < tools.size(); ++i) {
    const std::string prefix = "t" + std::to_string(i) + "-";
    std::string body;
    if (tagged(f)) {
      if (auto err = tagged_call_rule(f, tools[i], prefix, rules, body)) return err;
    } else if (f.style == chat::ToolCallStyle::kPythonCalls) {
      if (auto err = python_call_rule(tools[i], prefix, rules, body)) return err;
    } else if (f.style == chat::ToolCallStyle::kGemmaCalls) {
      if (auto err = gemma_call_rule(tools[i], prefix, rules, body)) return err;
    } else if (f.style == chat::ToolCallStyle::kXmlElements) {
      if (auto err = element_call_rule(f, tools[i], prefix, rules, body)) return err;
    } else {
      if (auto err = arguments_rule(tools[i], prefix, rules)) return err;
      body = call_body(f, tools[i], prefix + "root");
    }
    if (syntax.recipients) body = recipient_message(f, tools[i].name, body);
    rules += "tool-call-" + std::to_string(i) + " ::= " + body + "\n";
    alternatives += (i == 0 ? "" : " | ") + std::string("tool-call-") + std::to_string(i);
  }
  if (f.style == chat::ToolCallStyle::kGemmaCalls) rules += gemma_value_rules();
  rules += "tag-space ::= [ \\n]{0,2}\n";
  rules += "tool-call ::= " + alternatives + "\n";
  rules += "tool-id ::= \"\\\"\" [a-zA-Z0-9]{1,32} \"\\\"\"\n";
  rules += "space ::= | \" \" | \"\\n\"{1,2} [ \\t]{0,20}\n";
  // After a generation prompt that opened a thinking block, the chat layer starts the
  // grammar once the block is closed (GrammarConfig::after_reasoning).
  ToolGrammar g;
  g.gbnf = "root ::= " + root_rule(syntax, required) + "\n" + rules;
  g.lazy = !required;
  g.trigger = f.section_start.empty() ? f.call_start : f.section_start;
  if (syntax.recipients) {
    g.trigger.clear();
    g.trigger_pattern = recipient_trigger(tools);
  }
  if (g.lazy && g.trigger.empty() && g.trigger_pattern.empty()) {
    return std::nullopt;  // bare JSON: parsed, not constrained
  }
  out = std::move(g);
  return std::nullopt;
}

}  // namespace hearth::server::openai

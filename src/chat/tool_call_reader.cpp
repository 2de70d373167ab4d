#include "chat/tool_call_reader.h"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "base/json_parse.h"

namespace hearth::chat {

namespace {

using Json = nlohmann::ordered_json;
constexpr size_t npos = std::string_view::npos;

size_t skip_space(std::string_view s, size_t i) {
  while (i < s.size() && is_space(s[i])) ++i;
  return i;
}

bool starts_at(std::string_view s, size_t i, std::string_view what) {
  return s.substr(i, what.size()) == what;
}

// The end of the string literal whose opening quote is at i, or npos.
size_t string_end(std::string_view s, size_t i) {
  for (size_t j = i + 1; j < s.size(); ++j) {
    if (s[j] == '\\') {
      ++j;
    } else if (s[j] == '"') {
      return j + 1;
    }
  }
  return npos;
}

std::optional<std::string> decode_string(std::string_view literal) {
  auto v = parse_json(literal);
  if (!v.is_ok() || !v->is_string()) return std::nullopt;
  return v->get<std::string>();
}

// One member of an object being read: its key and its value's text.
struct Member {
  std::string key;
  std::string_view value;
  bool complete = false;
};

// Reads the object at s[i] == '{': its members so far; the end after '}', or npos.
size_t read_object(std::string_view s, size_t i, std::vector<Member>& members) {
  ++i;
  while (true) {
    i = skip_space(s, i);
    if (i >= s.size()) return npos;
    if (s[i] == '}') return i + 1;
    if (s[i] == ',') {
      ++i;
      continue;
    }
    if (s[i] != '"') return npos;
    const size_t key_end = string_end(s, i);
    if (key_end == npos) return npos;
    std::optional<std::string> key = decode_string(s.substr(i, key_end - i));
    if (!key) return npos;
    i = skip_space(s, key_end);
    if (i >= s.size() || s[i] != ':') return npos;
    size_t start = 0;
    const size_t end = json_value_end(s, i + 1, &start);
    if (end == npos) {
      if (start < s.size()) members.push_back({*key, rtrim(s.substr(start)), false});
      return npos;
    }
    members.push_back({*key, s.substr(start, end - start), true});
    i = end;
  }
}

// A call being read: the call so far and where the text after it begins (npos: unfinished).
struct CallRead {
  ParsedToolCall call;
  bool named = false;  // the name is complete
  size_t end = npos;
};

CallRead read_json_call(const ToolCallFormat& f, std::string_view s, size_t i) {
  CallRead r;
  std::vector<Member> members;
  r.end = read_object(s, i, members);
  if (f.name_is_key) {
    // {"name": {arguments}}: the one member's key is the name once its value started.
    if (!members.empty()) {
      r.call.name = members.front().key;
      r.named = true;
      r.call.arguments = std::string(members.front().value);
    }
    if (r.end != npos && members.size() != 1) r.end = npos;
    return r;
  }
  bool has_args = false;
  for (const Member& m : members) {
    if (m.key == f.name_key && m.complete) {
      if (auto name = decode_string(m.value)) {
        r.call.name = *name;
        r.named = true;
      }
    } else if (m.key == f.args_key) {
      r.call.arguments = std::string(m.value);
      has_args = m.complete;
    } else if (!f.id_key.empty() && m.key == f.id_key && m.complete) {
      if (auto id = decode_string(m.value)) r.call.id = *id;
    }
  }
  if (r.end != npos && !r.named) r.end = npos;  // a finished object that is not a call
  if (r.end != npos && !has_args && r.call.arguments.empty()) r.call.arguments = "{}";
  return r;
}

// Text up to `marker` from i: the text and the index after the marker (npos when absent).
std::string_view until(std::string_view s, size_t i, std::string_view marker, size_t& after) {
  const size_t at = s.find(marker, i);
  if (at == npos) {
    after = npos;
    return s.substr(std::min(i, s.size()));
  }
  after = at + marker.size();
  return s.substr(i, at - i);
}

void apply_kimi_name(ParsedToolCall& call) {
  // "functions.get_weather:0": the id is the whole text, the name between '.' and ':'.
  call.id = call.name;
  const size_t dot = call.name.find('.');
  const size_t colon = call.name.rfind(':');
  if (dot != std::string::npos && colon != std::string::npos && colon > dot) {
    call.name = call.name.substr(dot + 1, colon - dot - 1);
  }
}

CallRead read_name_then_json(const ToolCallFormat& f, std::string_view s, size_t i) {
  CallRead r;
  if (!f.name_prefix.empty()) {
    if (!starts_at(s, i, f.name_prefix)) return r;
    i += f.name_prefix.size();
  }
  size_t after = 0;
  if (f.id_first) {
    std::string_view id = until(s, i, f.id_end, after);
    if (after == npos) return r;
    r.call.id = std::string(id);
    i = after;
  }
  std::string_view name = until(s, i, f.name_end, after);
  if (after == npos) return r;
  r.call.name = std::string(name);
  r.named = !r.call.name.empty();
  if (f.name_is_kimi_id) apply_kimi_name(r.call);
  i = after;
  if (!f.id_end.empty() && !f.id_first) {
    std::string_view id = until(s, i, f.id_end, after);
    if (after == npos) return r;
    r.call.id = std::string(id);
    i = after;
  }
  i = skip_space(s, i);
  // DeepSeek-R1 distills fence the arguments: ```json\n{...}\n```
  static constexpr std::string_view kFence = "```json";
  const std::string_view tail = s.substr(std::min(i, s.size()));
  if (tail.size() < kFence.size() && kFence.substr(0, tail.size()) == tail && !tail.empty()) {
    return r;  // the fence is still being written
  }
  const bool fenced = starts_at(s, i, kFence);
  if (fenced) i = skip_space(s, i + 7);
  size_t start = 0;
  const size_t end = json_value_end(s, i, &start);
  if (end == npos) {
    if (start < s.size()) r.call.arguments = std::string(rtrim(s.substr(start)));
    return r;
  }
  r.call.arguments = std::string(s.substr(start, end - start));
  r.end = end;
  if (fenced) {
    const size_t close = skip_space(s, end);
    if (!starts_at(s, close, "```")) {
      r.end = npos;
      return r;
    }
    r.end = close + 3;
  }
  return r;
}

// A tagged parameter value as JSON: JSON as written (Python's True/False/None and
// single-quoted strings normalized), anything else a string.
Json tagged_value(std::string_view raw) {
  if (raw == "True") return true;
  if (raw == "False") return false;
  if (raw == "None") return nullptr;
  // Model output, so the bounded parser (a model can be steered into nesting deeply).
  if (auto v = parse_json(raw); v.is_ok()) return std::move(v.value());
  if (raw.size() >= 2 && raw.front() == '\'' && raw.back() == '\'') {
    return std::string(raw.substr(1, raw.size() - 2));
  }
  return std::string(raw);
}

std::string_view strip_one_newline(std::string_view v) {
  if (!v.empty() && v.front() == '\n') v.remove_prefix(1);
  if (!v.empty() && v.back() == '\n') v.remove_suffix(1);
  return v;
}

// Compact JSON arguments synthesized from tagged parameters: "{" + members so far; the
// closing brace is added once the call is finished.
// A string parameter's value is its text; any other is read as JSON.
void add_member(std::string& args, const std::string& key, std::string_view raw, bool as_string) {
  args += args.empty() ? "{" : ",";
  const std::string_view value = strip_one_newline(raw);
  args +=
      Json(key).dump() + ":" + (as_string ? Json(std::string(value)) : tagged_value(value)).dump();
}

bool string_param(const ToolCallFormat& f, const std::string& tool, const std::string& key) {
  auto it = f.string_params.find(tool);
  return it != f.string_params.end() && it->second.count(key) > 0;
}

// Parameters written as open tag + key + key end + value + close tag, until `call_close`.
struct TagSyntax {
  std::string_view key_open, key_close, value_open, value_close, call_close;
};

CallRead read_tagged_params(const ToolCallFormat& f, const TagSyntax& t, std::string_view s,
                            size_t i, CallRead r) {
  std::string args;
  while (true) {
    i = skip_space(s, i);
    if (starts_at(s, i, t.call_close)) {
      r.call.arguments = args.empty() ? "{}" : args + "}";
      r.end = i + t.call_close.size();
      return r;
    }
    r.call.arguments = args;
    if (!starts_at(s, i, t.key_open)) return r;
    size_t after = 0;
    const std::string key(until(s, i + t.key_open.size(), t.key_close, after));
    if (after == npos) return r;
    i = skip_space(s, after);
    if (!t.value_open.empty()) {
      if (!starts_at(s, i, t.value_open)) return r;
      i += t.value_open.size();
    }
    std::string_view value = until(s, i, t.value_close, after);
    if (after == npos) return r;
    add_member(args, key, value, string_param(f, r.call.name, key));
    i = after;
  }
}

CallRead read_xml_call(const ToolCallFormat& f, std::string_view s, size_t i) {
  CallRead r;
  if (!starts_at(s, i, "<function=")) return r;
  size_t after = 0;
  r.call.name = std::string(until(s, i + 10, ">", after));
  if (after == npos) return r;
  r.named = !r.call.name.empty();
  static constexpr TagSyntax kXml{"<parameter=", ">", "", "</parameter>", "</function>"};
  return read_tagged_params(f, kXml, s, after, std::move(r));
}

CallRead read_key_value_call(const ToolCallFormat& f, std::string_view s, size_t i) {
  CallRead r;
  const TagSyntax kv{f.key_open, f.key_close, f.value_open, f.value_close, f.call_end};
  size_t name_end = npos;
  size_t params = npos;
  if (!f.name_end.empty()) {
    // An explicit separator after the name (Hy3's <tool_sep>).
    name_end = s.find(f.name_end, i);
    if (name_end == npos) return r;
    params = name_end + f.name_end.size();
  } else {
    // The name runs to the first newline, key tag or call end, whichever comes first.
    name_end = s.find('\n', i);
    for (std::string_view stop : {kv.key_open, kv.call_close}) {
      const size_t at = s.find(stop, i);
      if (at != npos && (name_end == npos || at < name_end)) name_end = at;
    }
    if (name_end == npos) return r;
    params = name_end;
  }
  r.call.name = std::string(rtrim(s.substr(i, name_end - i)));
  r.named = !r.call.name.empty();
  return read_tagged_params(f, kv, s, params, std::move(r));
}

// <invoke name="f"> then <parameter name="k" [string="true|false"]>v</parameter>...</invoke>.
CallRead read_invoke_call(const ToolCallFormat& f, std::string_view s, size_t i) {
  CallRead r;
  if (!starts_at(s, i, f.name_prefix)) return r;
  size_t after = 0;
  r.call.name = std::string(until(s, i + f.name_prefix.size(), "\"", after));
  if (after == npos) return r;
  until(s, after, f.tag_end, after);  // the call's other attributes (Kimi K3's index)
  if (after == npos) return r;
  r.named = !r.call.name.empty();
  std::string args;
  i = after;
  while (true) {
    i = skip_space(s, i);
    if (starts_at(s, i, f.call_end)) {
      r.call.arguments = args.empty() ? "{}" : args + "}";
      r.end = i + f.call_end.size();
      return r;
    }
    r.call.arguments = args;
    if (!starts_at(s, i, f.param_open)) return r;
    const std::string key(until(s, i + f.param_open.size(), "\"", after));
    if (after == npos) return r;
    const std::string_view attributes = until(s, after, f.tag_end, after);
    if (after == npos) return r;
    const std::string_view value = until(s, after, f.param_close, after);
    if (after == npos) return r;
    args += args.empty() ? "{" : ",";
    args += Json(key).dump() + ":";
    // DSML says string="true|false", Kimi K3 type="string|number|...", else the schema.
    const bool text =
        attributes.find("string=\"true\"") != std::string_view::npos ||
        attributes.find("type=\"string\"") != std::string_view::npos ||
        (attributes.find("string=") == std::string_view::npos &&
         attributes.find("type=") == std::string_view::npos && string_param(f, r.call.name, key));
    args += (text ? Json(std::string(value)) : tagged_value(value)).dump();
    i = after;
  }
}

// The end of a Python argument value at i (a JSON value, a single-quoted string, or a
// literal up to ',' or ')'), or npos while it may still grow.
size_t python_value_end(std::string_view s, size_t pos, size_t* start) {
  const size_t i = skip_space(s, pos);
  *start = i;
  if (i >= s.size()) return npos;
  if (s[i] == '\'') {
    for (size_t j = i + 1; j < s.size(); ++j) {
      if (s[j] == '\\') {
        ++j;
      } else if (s[j] == '\'') {
        return j + 1;
      }
    }
    return npos;
  }
  if (s[i] == '"' || s[i] == '{' || s[i] == '[') return json_value_end(s, i);
  for (size_t j = i; j < s.size(); ++j) {
    if (s[j] == ',' || s[j] == ')' || is_space(s[j])) return j;
  }
  return npos;
}

// f(k=v, k2=v2): values JSON or Python literals.
CallRead read_python_call(std::string_view s, size_t i) {
  CallRead r;
  size_t after = 0;
  const std::string_view name = until(s, i, "(", after);
  if (after == npos) return r;
  r.call.name = std::string(rtrim(name));
  r.named = !r.call.name.empty() && r.call.name.find_first_of(" \n,[]()") == std::string::npos;
  if (!r.named) return r;
  std::string args;
  i = after;
  while (true) {
    i = skip_space(s, i);
    if (i < s.size() && s[i] == ')') {
      r.call.arguments = args.empty() ? "{}" : args + "}";
      r.end = i + 1;
      return r;
    }
    r.call.arguments = args;
    if (i < s.size() && s[i] == ',') i = skip_space(s, i + 1);
    const std::string key(rtrim(until(s, i, "=", after)));
    if (after == npos || key.empty()) return r;
    size_t start = 0;
    const size_t end = python_value_end(s, after, &start);
    if (end == npos) return r;
    args += args.empty() ? "{" : ",";
    args += Json(key).dump() + ":" + tagged_value(s.substr(start, end - start)).dump();
    i = end;
  }
}

// Gemma 4's literal: {key:value,...}, [value,...], <|"|>text<|"|>, numbers, true/false/null.
constexpr std::string_view kGemmaQuote = "<|\"|>";

std::optional<Json> gemma_value(std::string_view s, size_t& i, int depth = 0) {
  i = skip_space(s, i);
  if (i >= s.size() || depth > 64) return std::nullopt;
  if (starts_at(s, i, kGemmaQuote)) {
    const size_t close = s.find(kGemmaQuote, i + kGemmaQuote.size());
    if (close == npos) return std::nullopt;
    Json text = std::string(s.substr(i + kGemmaQuote.size(), close - i - kGemmaQuote.size()));
    i = close + kGemmaQuote.size();
    return text;
  }
  const char open = s[i];
  if (open == '{' || open == '[') {
    const char close = open == '{' ? '}' : ']';
    Json out = open == '{' ? Json::object() : Json::array();
    ++i;
    while (true) {
      i = skip_space(s, i);
      if (i >= s.size()) return std::nullopt;
      if (s[i] == close) {
        ++i;
        return out;
      }
      if (s[i] == ',') {
        ++i;
        continue;
      }
      if (open == '{') {
        size_t colon = 0;
        const std::string key(rtrim(until(s, i, ":", colon)));
        if (colon == npos) return std::nullopt;
        i = colon;
        std::optional<Json> v = gemma_value(s, i, depth + 1);
        if (!v) return std::nullopt;
        out[key] = std::move(*v);
      } else {
        std::optional<Json> v = gemma_value(s, i, depth + 1);
        if (!v) return std::nullopt;
        out.push_back(std::move(*v));
      }
    }
  }
  size_t j = i;
  while (j < s.size() && s[j] != ',' && s[j] != '}' && s[j] != ']' && !is_space(s[j])) ++j;
  if (j >= s.size()) return std::nullopt;  // a number may still grow
  Json v = tagged_value(s.substr(i, j - i));
  i = j;
  return v;
}

// call:f{...}: the name up to '{', then the literal object.
CallRead read_gemma_call(std::string_view s, size_t i) {
  CallRead r;
  size_t brace = 0;
  const std::string_view name = until(s, i, "{", brace);
  if (brace == npos) return r;
  r.call.name = std::string(rtrim(name));
  r.named = !r.call.name.empty();
  size_t at = brace - 1;
  std::optional<Json> args = gemma_value(s, at);
  if (!args || !args->is_object()) return r;  // arguments appear once the object is whole
  r.call.arguments = args->dump();
  r.end = at;
  return r;
}

// One element at i (f.param_open + tag + ">" value f.param_close + tag + ">") with its
// value: nested elements make an object, or a list when all are <item>; text is a string
// when `as_string`, else read as JSON where it is JSON. `end` is set when it is whole.
struct Element {
  std::string tag;
  Json value;
  size_t end = npos;
};

Element read_element(const ToolCallFormat& f, std::string_view s, size_t i, bool as_string,
                     int depth = 0) {
  Element e;
  if (!starts_at(s, i, f.param_open) || depth > 64) return e;
  size_t after = 0;
  e.tag = std::string(until(s, i + f.param_open.size(), ">", after));
  if (after == npos) return e;
  const std::string close = f.param_close + e.tag + ">";
  size_t j = skip_space(s, after);
  if (starts_at(s, j, f.param_open) && !starts_at(s, j, f.param_close)) {
    Json object = Json::object(), list = Json::array();
    bool all_items = true;
    while (starts_at(s, j, f.param_open) && !starts_at(s, j, f.param_close)) {
      Element child = read_element(f, s, j, false, depth + 1);
      if (child.end == npos) return e;
      all_items = all_items && child.tag == "item";
      list.push_back(child.value);
      object[child.tag] = std::move(child.value);
      j = skip_space(s, child.end);
    }
    if (!starts_at(s, j, close)) return e;
    e.value = all_items ? std::move(list) : std::move(object);
    e.end = j + close.size();
    return e;
  }
  const std::string_view text = until(s, after, close, after);
  if (after == npos) return e;
  e.value = as_string ? Json(std::string(text)) : tagged_value(text);
  e.end = after;
  return e;
}

// name_prefix + name + '">', then one element per argument until call_end. The arguments
// appear once the call is whole (a nested value cannot be shown in part).
CallRead read_element_call(const ToolCallFormat& f, std::string_view s, size_t i) {
  CallRead r;
  if (!starts_at(s, i, f.name_prefix)) return r;
  size_t after = 0;
  r.call.name = std::string(until(s, i + f.name_prefix.size(), "\">", after));
  if (after == npos) return r;
  r.named = !r.call.name.empty();
  Json args = Json::object();
  i = skip_space(s, after);
  while (!starts_at(s, i, f.call_end)) {
    Element e = read_element(f, s, i, false);
    if (e.end == npos) return r;
    if (string_param(f, r.call.name, e.tag) && e.value.is_primitive() && !e.value.is_string()) {
      e = read_element(f, s, i, true);  // a string parameter keeps its text as written
    }
    args[e.tag] = std::move(e.value);
    i = skip_space(s, e.end);
  }
  r.call.arguments = args.dump();
  r.end = i + f.call_end.size();
  return r;
}

CallRead read_one(const ToolCallFormat& f, std::string_view s, size_t i) {
  switch (f.style) {
    case ToolCallStyle::kJsonObject:
    case ToolCallStyle::kJsonArray:
      if (i < s.size() && s[i] == '{') return read_json_call(f, s, i);
      return {};
    case ToolCallStyle::kNameThenJson:
      return read_name_then_json(f, s, i);
    case ToolCallStyle::kXmlParameters:
      return read_xml_call(f, s, i);
    case ToolCallStyle::kKeyValueTags:
      return read_key_value_call(f, s, i);
    case ToolCallStyle::kInvokeTags:
      return read_invoke_call(f, s, i);
    case ToolCallStyle::kPythonCalls:
      return read_python_call(s, i);
    case ToolCallStyle::kGemmaCalls:
      return read_gemma_call(s, i);
    case ToolCallStyle::kXmlElements:
      return read_element_call(f, s, i);
    case ToolCallStyle::kNone:
    case ToolCallStyle::kHarmony:  // read by the harmony parser (output_parser.cpp)
      break;
  }
  return {};
}

// Where the first call of a section begins (after the section marker and, for a JSON
// array, its '['), or npos when the text is not a section of calls.
size_t sequence_start(const ToolCallFormat& f, std::string_view s) {
  size_t i = f.section_start.size();
  if (f.style != ToolCallStyle::kJsonArray) return i;
  i = skip_space(s, i);
  if (i >= s.size() || s[i] != '[') return npos;
  return i + 1;
}

// How a read of calls stopped: at the end of the calls, inside a call whose name is read,
// or at a call that cannot be read (yet).
enum class SequenceStop { kEnd, kOpenCall, kUnread };

// Reads calls from `at` on, appending each call read whole to `calls` and moving `at` past
// it; an unfinished call that has its name goes to `open`.
SequenceStop read_calls_from(const ToolCallFormat& f, std::string_view s, SequenceCursor& at,
                             size_t max_calls, std::vector<ParsedToolCall>& calls,
                             ParsedToolCall* open) {
  const bool array = f.style == ToolCallStyle::kJsonArray;
  size_t i = at.pos;
  bool after_call = at.after_call;
  while (true) {
    if (after_call) {
      // What follows a call: its end marker where the call's reader did not take it.
      i = skip_space(s, i);
      if (!f.call_end.empty() && f.style != ToolCallStyle::kKeyValueTags &&
          f.style != ToolCallStyle::kInvokeTags) {
        if (starts_at(s, i, f.call_end)) i += f.call_end.size();
      }
    }
    if (max_calls != 0 && calls.size() >= max_calls) return SequenceStop::kEnd;
    i = skip_space(s, i);
    const bool listed = array || f.style == ToolCallStyle::kPythonCalls;
    if (listed && i < s.size() && s[i] == ',') i = skip_space(s, i + 1);
    if (i >= s.size()) return SequenceStop::kEnd;
    if (!f.call_start.empty()) {
      if (starts_at(s, i, f.call_start)) {
        i = skip_space(s, i + f.call_start.size());
      } else if (f.bare_call_start.empty() || !starts_at(s, i, f.bare_call_start)) {
        return SequenceStop::kEnd;
      }
    }
    CallRead r = read_one(f, s, i);
    if (r.end == npos) {
      if (open != nullptr && r.named) *open = std::move(r.call);
      return r.named ? SequenceStop::kOpenCall : SequenceStop::kUnread;
    }
    calls.push_back(std::move(r.call));
    i = r.end;
    after_call = true;
    at = {i, true};
  }
}

}  // namespace

CallReadResult read_tool_calls(const ToolCallFormat& format, std::string_view text, bool partial,
                               size_t max_calls) {
  CallReadResult out;
  SequenceCursor at{sequence_start(format, text), false};
  if (at.pos == npos) {
    out.ok = partial;
    return out;
  }
  ParsedToolCall open;
  const SequenceStop stop = read_calls_from(format, text, at, max_calls, out.calls, &open);
  if (stop != SequenceStop::kEnd) {
    if (partial && stop == SequenceStop::kOpenCall) out.calls.push_back(std::move(open));
    if (!partial) out.ok = out.calls.empty() ? false : out.ok;
    return out;
  }
  if (!partial && out.calls.empty()) out.ok = false;
  return out;
}

void CallStreamReader::read(const ToolCallFormat& format, std::string_view text, size_t max_calls,
                            std::vector<ParsedToolCall>& open) {
  open.clear();
  if (!started_) {
    // Until a call is read whole, the section is read from its start.
    at_ = {sequence_start(format, text), false};
    if (at_.pos == npos) return;
  }
  const size_t from = at_.pos;
  ParsedToolCall call;
  const SequenceStop stop = read_calls_from(format, text, at_, max_calls, done_, &call);
  scanned_ += text.size() - std::min(from, text.size());
  started_ = !done_.empty();
  if (stop == SequenceStop::kOpenCall) open.push_back(std::move(call));
}

size_t json_value_end(std::string_view s, size_t pos, size_t* start) {
  size_t i = skip_space(s, pos);
  if (start != nullptr) *start = i;
  if (i >= s.size()) return npos;
  const char c = s[i];
  if (c == '"') return string_end(s, i);
  if (c == '{' || c == '[') {
    int depth = 0;
    for (size_t j = i; j < s.size(); ++j) {
      const char d = s[j];
      if (d == '"') {
        j = string_end(s, j);
        if (j == npos) return npos;
        --j;
      } else if (d == '{' || d == '[') {
        ++depth;
      } else if ((d == '}' || d == ']') && --depth == 0) {
        return j + 1;
      }
    }
    return npos;
  }
  // A number or literal ends at a delimiter; at the end of the text it may still grow.
  for (size_t j = i; j < s.size(); ++j) {
    const char d = s[j];
    if (d == ',' || d == '}' || d == ']' || is_space(d)) return j;
  }
  return npos;
}

}  // namespace hearth::chat

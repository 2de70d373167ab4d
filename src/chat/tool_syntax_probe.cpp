#include "chat/tool_syntax_probe.h"

#include <algorithm>
#include <string_view>
#include <vector>

#include "base/json_parse.h"
#include "chat/normalize.h"
#include "chat/openai_messages.h"
#include "chat/tool_call_reader.h"

namespace hearth::chat {

namespace {

constexpr size_t npos = std::string_view::npos;

// The probe conversation's texts: names, argument names and values, and ids that occur
// nowhere else in a template, so each is found where the template wrote it.
constexpr std::string_view kFirstName = "probe_alpha";
constexpr std::string_view kSecondName = "probe_beta";
constexpr std::string_view kArgOne = "arg_one";
constexpr std::string_view kArgTwo = "arg_two";
constexpr std::string_view kValueOne = "VALUE_X1";
constexpr std::string_view kValueTwo = "VALUE_Y2";
constexpr std::string_view kFirstId = "call00001";
constexpr std::string_view kContent = "HearthProbeAnswer";

const Json& probe_arguments() {
  static const Json args = {{"arg_one", "VALUE_X1"}, {"arg_two", "VALUE_Y2"}};
  return args;
}

std::vector<Tool> probe_tools() {
  const Json params = {
      {"type", "object"},
      {"properties", {{"arg_one", {{"type", "string"}}}, {"arg_two", {{"type", "string"}}}}},
      {"required", Json::array()}};
  return {{std::string(kFirstName), "First probe function", params},
          {std::string(kSecondName), "Second probe function", params}};
}

// A user question, then `turn`; no generation prompt. nullopt when the template raises.
std::optional<std::string> render_turn(const ParsedTemplate& tmpl, const VocabText& vocab,
                                       const Message& turn) {
  Message user;
  user.role = "user";
  user.content = "Hearth probe question";
  RenderRequest request;
  request.tools = tools_to_json(probe_tools());
  request.messages = Json::array({message_to_json(user, true), message_to_json(turn, true)});
  request.extra = extra_context(Json::object(), std::nullopt);
  add_empty_tool_call_content(request.messages);
  if (tmpl.caps.supports_object_arguments && !parse_tool_call_arguments(request.messages).is_ok()) {
    return std::nullopt;
  }
  Result<std::string> text = render_template(tmpl, vocab, request);
  if (!text.is_ok()) return std::nullopt;
  return *text;
}

Message assistant_turn(size_t calls) {
  Message m;
  m.role = "assistant";
  const std::string args = probe_arguments().dump();
  if (calls == 0) m.content = kContent;
  if (calls >= 1) m.tool_calls.push_back({std::string(kFirstName), args, std::string(kFirstId)});
  if (calls >= 2) m.tool_calls.push_back({std::string(kSecondName), args, "call00002"});
  return m;
}

// The part of `with` that differs from `without`, widened so that it neither starts nor
// ends inside a <tag> or [TAG] the two renders share a piece of.
std::string_view differing(std::string_view without, std::string_view with) {
  size_t p = 0;
  while (p < without.size() && p < with.size() && without[p] == with[p]) ++p;
  size_t q = 0;
  while (q < without.size() - p && q < with.size() - p &&
         without[without.size() - 1 - q] == with[with.size() - 1 - q]) {
    ++q;
  }
  size_t begin = p;
  size_t end = with.size() - q;
  for (auto [open, close] : {std::pair{'<', '>'}, std::pair{'[', ']'}}) {
    const size_t last_open = with.rfind(open, begin == 0 ? 0 : begin - 1);
    const size_t last_close = with.rfind(close, begin == 0 ? 0 : begin - 1);
    if (begin > 0 && last_open != npos && (last_close == npos || last_close < last_open)) {
      begin = last_open;
    }
    const size_t next_close = with.find(close, end);
    const size_t next_open = with.find(open, end);
    if (next_close != npos && (next_open == npos || next_close < next_open)) end = next_close + 1;
  }
  return with.substr(begin, end - begin);
}

std::string trimmed(std::string_view s) {
  return std::string(rtrim(ltrim(s)));
}

// The JSON object around position `at` of `text` that starts first (the outermost), at or
// after `from`.
struct JsonSpan {
  size_t start = 0;
  size_t end = 0;
  Json value;
};
std::optional<JsonSpan> object_around(std::string_view text, size_t at, size_t from = 0) {
  for (size_t i = from; i < at && i < text.size(); ++i) {
    if (text[i] != '{') continue;
    const size_t end = json_value_end(text, i);
    if (end == npos || end <= at) continue;
    auto v = parse_json(text.substr(i, end - i));
    if (v.is_ok() && v->is_object()) return JsonSpan{i, end, std::move(v.value())};
  }
  return std::nullopt;
}

bool is_arguments(const Json& v) {
  if (v == probe_arguments()) return true;
  if (!v.is_string()) return false;
  auto parsed = parse_json(v.get<std::string>());
  return parsed.is_ok() && parsed.value() == probe_arguments();
}

// JSON_NATIVE: {"name": ..., "arguments": ...} (or {"<name>": {...}}), maybe in an array.
std::optional<ToolCallFormat> json_native(std::string_view call, const JsonSpan& object) {
  ToolCallFormat f;
  f.style = ToolCallStyle::kJsonObject;
  const Json& o = object.value;
  if (o.size() == 1 && o.contains(kFirstName) && is_arguments(o[std::string(kFirstName)])) {
    f.name_is_key = true;
  } else {
    bool named = false;
    bool with_args = false;
    for (const auto& [key, value] : o.items()) {
      if (value == kFirstName) {
        f.name_key = key;
        named = true;
      } else if (is_arguments(value)) {
        f.args_key = key;
        with_args = true;
      } else if (value == kFirstId) {
        f.id_key = key;
      }
    }
    if (!named || !with_args) return std::nullopt;  // nested objects: not read
  }
  const std::string_view before = rtrim(call.substr(0, object.start));
  const std::string_view after = ltrim(call.substr(object.end));
  if (!before.empty() && before.back() == '[') {
    if (after.empty() || after.front() != ']') return std::nullopt;
    f.style = ToolCallStyle::kJsonArray;
    f.section_start = trimmed(before.substr(0, before.size() - 1));
    f.section_end = trimmed(after.substr(1));
    return f;
  }
  f.call_start = trimmed(before);
  f.call_end = trimmed(after);
  return f;
}

// TAG_WITH_JSON: start marker, name, separator (and the id), JSON arguments, end marker.
std::optional<ToolCallFormat> tag_with_json(std::string_view call, size_t name_at,
                                            const JsonSpan& args) {
  ToolCallFormat f;
  f.style = ToolCallStyle::kNameThenJson;
  f.call_start = trimmed(call.substr(0, name_at));
  std::string_view between =
      call.substr(name_at + kFirstName.size(), args.start - name_at - kFirstName.size());
  const size_t id_at = between.find(kFirstId);
  if (id_at != npos) {
    f.id_end = trimmed(between.substr(id_at + kFirstId.size()));
    between = between.substr(0, id_at);
  }
  f.name_end = trimmed(between);
  if (f.name_end.empty()) f.name_end = std::string(between);
  f.call_end = trimmed(call.substr(args.end));
  if (f.call_start.empty() || f.name_end.empty()) return std::nullopt;
  return f;
}

// The longest common suffix of two texts.
size_t common_suffix(std::string_view a, std::string_view b) {
  size_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) ++n;
  return n;
}

// TAG_WITH_TAGGED: name in tags, then per argument a key tag and a value tag; read with
// the key/value reader, every marker explicit.
std::optional<ToolCallFormat> tag_with_tagged(std::string_view call, size_t name_at) {
  const size_t key_one = call.find(kArgOne, name_at);
  const size_t value_one = call.find(kValueOne, key_one);
  const size_t key_two = call.find(kArgTwo, value_one);
  const size_t value_two = call.find(kValueTwo, key_two);
  if (key_one == npos || value_one == npos || key_two == npos || value_two == npos) {
    return std::nullopt;
  }
  auto span = [&](size_t from, size_t to) { return call.substr(from, to - from); };
  const std::string_view head = span(name_at + kFirstName.size(), key_one);  // name_end+key_open
  const std::string_view key_value = span(key_one + kArgOne.size(), value_one);
  const std::string_view between = span(value_one + kValueOne.size(), key_two);
  const std::string_view tail = call.substr(value_two + kValueTwo.size());
  // The key's start marker: what the head and the text between two arguments end with,
  // from a tag's start or a space on (a shared '>' of different tags is not part of it).
  size_t shared = common_suffix(head, between);
  const std::string_view tail_of_head = head.substr(head.size() - shared);
  for (size_t cut = 0; cut < tail_of_head.size(); ++cut) {
    const char c = tail_of_head[cut];
    if (c == '<' || c == '[' || is_space(c)) {
      shared -= cut;
      break;
    }
  }
  ToolCallFormat f;
  f.style = ToolCallStyle::kKeyValueTags;
  f.call_start = trimmed(call.substr(0, name_at));
  f.key_open = trimmed(head.substr(head.size() - shared));
  f.name_end = trimmed(head.substr(0, head.size() - shared));
  f.value_close = trimmed(between.substr(0, between.size() - shared));
  // The text between key and value: a key end and a value start when whitespace parts them.
  const std::string kv = trimmed(key_value);
  const size_t gap = kv.find_first_of(" \n\t");
  f.key_close = gap == npos ? kv : kv.substr(0, gap);
  f.value_open = gap == npos ? "" : trimmed(std::string_view(kv).substr(gap));
  const std::string_view rest = ltrim(tail);
  if (f.call_start.empty() || f.key_open.empty() || f.key_close.empty() || f.value_close.empty() ||
      rest.substr(0, f.value_close.size()) != f.value_close) {
    return std::nullopt;
  }
  f.call_end = trimmed(rest.substr(f.value_close.size()));
  if (f.call_end.empty()) return std::nullopt;
  return f;
}

// Whether `text`, read with `f` as model output, gives back the probe's calls.
bool reads_back(const ToolCallFormat& f, std::string_view text, size_t calls) {
  OutputSyntax syntax;
  syntax.parse_tool_calls = true;
  syntax.tools = f;
  for (std::string_view name : {kFirstName, kSecondName}) {
    syntax.tools.string_params[std::string(name)] = {std::string(kArgOne), std::string(kArgTwo)};
  }
  const ParsedMessage m = parse_output(syntax, text, false);
  if (m.tool_calls.size() != calls || !ltrim(m.content).empty()) return false;
  for (size_t i = 0; i < calls; ++i) {
    if (m.tool_calls[i].name != (i == 0 ? kFirstName : kSecondName)) return false;
    auto arguments = parse_json(m.tool_calls[i].arguments);
    if (!arguments.is_ok() || arguments.value() != probe_arguments()) return false;
  }
  return true;
}

// Where a marker may be cut in two: at its ends, at a tag's start, after a tag or space.
std::vector<size_t> cut_points(std::string_view marker) {
  std::vector<size_t> cuts = {0};
  for (size_t i = 1; i < marker.size(); ++i) {
    const char c = marker[i];
    const char before = marker[i - 1];
    if (c == '<' || c == '[' || before == '>' || before == ']' || is_space(before)) {
      cuts.push_back(i);
    }
  }
  cuts.push_back(marker.size());
  return cuts;
}

// One call's start and end markers may hold the markers of the section around all calls:
// the split under which the two-call render reads back (the per-call parts as long as
// possible: a marker repeated per call is never taken for the section's).
std::optional<ToolCallFormat> split_section(const ToolCallFormat& f, std::string_view two) {
  if (f.style == ToolCallStyle::kJsonArray) {
    return reads_back(f, two, 2) ? std::optional(f) : std::nullopt;
  }
  const std::vector<size_t> starts = cut_points(f.call_start);
  const std::vector<size_t> ends = cut_points(f.call_end);
  for (size_t s : starts) {
    for (auto e = ends.rbegin(); e != ends.rend(); ++e) {
      ToolCallFormat g = f;
      g.section_start = trimmed(std::string_view(f.call_start).substr(0, s));
      g.call_start = trimmed(std::string_view(f.call_start).substr(s));
      g.call_end = trimmed(std::string_view(f.call_end).substr(0, *e));
      g.section_end = trimmed(std::string_view(f.call_end).substr(*e));
      // The key/value reader ends a call at its end marker: it cannot be empty.
      if (g.style == ToolCallStyle::kKeyValueTags && g.call_end.empty()) continue;
      // Calls need a marker to start at, unless they are bare JSON objects (Llama 3.x).
      const bool bare = g.style == ToolCallStyle::kJsonObject;
      if (g.call_start.empty() && g.section_start.empty() && !bare) continue;
      if (reads_back(g, two, 2)) return g;
    }
  }
  return std::nullopt;
}

// The format of one call's text, by where the name and the arguments stand.
std::optional<ToolCallFormat> classify(std::string_view call) {
  const size_t name_at = call.find(kFirstName);
  if (name_at == npos) return std::nullopt;
  if (name_at > 0 && call[name_at - 1] == '"') {
    if (auto object = object_around(call, name_at)) return json_native(call, *object);
  }
  const size_t arg_at = call.find("\"" + std::string(kArgOne) + "\"", name_at);
  if (arg_at != npos) {
    auto args = object_around(call, arg_at, name_at + kFirstName.size());
    if (args && args->value == probe_arguments()) return tag_with_json(call, name_at, *args);
  }
  return tag_with_tagged(call, name_at);
}

}  // namespace

std::optional<ToolCallFormat> derive_tool_call_format(const ParsedTemplate& tmpl,
                                                      const VocabText& vocab) {
  const std::optional<std::string> content = render_turn(tmpl, vocab, assistant_turn(0));
  const std::optional<std::string> one = render_turn(tmpl, vocab, assistant_turn(1));
  if (!content || !one) return std::nullopt;
  const std::string_view call = differing(*content, *one);
  std::optional<ToolCallFormat> f = classify(call);
  if (!f || !reads_back(*f, call, 1)) return std::nullopt;
  // Two calls: which parts of the markers belong to each call, which to the section.
  const std::optional<std::string> two = render_turn(tmpl, vocab, assistant_turn(2));
  if (!two || two->find(kSecondName) == npos) return f;  // one call per turn
  const std::string_view calls = differing(*content, *two);
  if (std::optional<ToolCallFormat> split = split_section(*f, calls)) return split;
  return std::nullopt;
}

}  // namespace hearth::chat

// The Responses body's field tables (openai-compat.md §7.1): the Responses members, the
// input items (their kind told by role and type, as the reference tells them) and their
// content parts, each read by a table of the same rows. The reference's own errors keep
// their texts; a member it silently ignores or drops when of the wrong type (a tool or a
// part that is not an object, a non-string instructions, a reasoning that is not an
// object) is a 400 naming its path (differences.json responses-wrong-types-400).
#include "server/openai/responses_request.h"
#include "server/fields/store.h"

namespace hearth::server::openai {

namespace {

using fields::FieldContext;
using Check = std::optional<ApiError>;

constexpr uint32_t bit(ItemKind kind) {
  return static_cast<uint32_t>(kind);
}

ApiError unknown_item() {
  return invalid_request("Cannot determine type of 'item'");
}

// --- Content parts -----------------------------------------------------------------------

// A part's rows: its type first; then, by the type, its text, image_url or refusal.
struct PartFields {
  std::string type;
  std::optional<std::string> text;
  std::optional<std::string> image_url;
  std::optional<std::string> refusal;
};
using PartField = fields::Field<PartFields>;
constexpr uint32_t kPartType = 1u << 0;
constexpr uint32_t kPartText = 1u << 1;
constexpr uint32_t kPartImage = 1u << 2;
constexpr uint32_t kPartRefusal = 1u << 3;

const std::vector<PartField>& part_fields() {
  using P = PartFields;
  static const std::vector<PartField> table = {
      {.name = "type", .target = fields::store_string<P, &P::type>, .routes = kPartType},
      {.name = "text", .target = fields::store_optional_string<P, &P::text>, .routes = kPartText},
      {.name = "image_url",
       .target = fields::store_optional_string<P, &P::image_url>,
       .routes = kPartImage},
      {.name = "refusal",
       .target = fields::store_optional_string<P, &P::refusal>,
       .routes = kPartRefusal},
  };
  return table;
}

// The part's type, then the rows `rows` picks for it.
template <class PickRows>
Check read_part(const Json& v, const std::string& path, PartFields& part, PickRows rows) {
  if (!v.is_object()) return fields::type_error(path, "object", v);
  if (auto err = fields::parse_nested_fields(part_fields(), v, path, part, {.route = kPartType})) {
    return err;
  }
  const uint32_t picked = rows(part.type);
  if (picked == 0) return std::nullopt;
  return fields::parse_nested_fields(part_fields(), v, path, part, {.route = picked});
}

// A user, system or developer message's part: input_text, input_image (input_file refused).
Check user_part(const Json& v, const std::string& path, ResponsesPart& out) {
  PartFields part;
  auto rows = [](const std::string& type) {
    return type == "input_text" ? kPartText : type == "input_image" ? kPartImage : 0u;
  };
  if (auto err = read_part(v, path, part, rows)) return err;
  if (part.type == "input_text") {
    out = {ResponsesPart::Kind::kText, part.text.value_or("")};
  } else if (part.type == "input_image") {
    if (!part.image_url) return invalid_request("'image_url' is required");
    out = {ResponsesPart::Kind::kImage, *part.image_url};
  } else if (part.type == "input_file") {
    return invalid_request("'input_file' is not supported by llamacpp at this moment");
  } else {
    return invalid_request("'type' must be one of 'input_text', 'input_image', or 'input_file'");
  }
  return std::nullopt;
}

// An assistant message's part: output_text (or input_text), refusal.
Check assistant_part(const Json& v, const std::string& path, ResponsesPart& out) {
  PartFields part;
  auto rows = [](const std::string& type) {
    return type == "output_text" || type == "input_text" ? kPartText
           : type == "refusal"                           ? kPartRefusal
                                                         : 0u;
  };
  if (auto err = read_part(v, path, part, rows)) return err;
  if (part.type == "output_text" || part.type == "input_text") {
    if (!part.text) return invalid_request("'text' is required");
    out = {ResponsesPart::Kind::kText, *part.text};
  } else if (part.type == "refusal") {
    if (!part.refusal) return invalid_request("'Refusal' requires 'refusal'");
    out = {ResponsesPart::Kind::kRefusal, *part.refusal};
  } else {
    return invalid_request("'type' must be one of 'output_text' or 'refusal'");
  }
  return std::nullopt;
}

// A function call output's part: input_text only.
Check output_part(const Json& v, const std::string& path, ResponsesPart& out) {
  PartFields part;
  auto rows = [](const std::string& type) { return type == "input_text" ? kPartText : 0u; };
  if (auto err = read_part(v, path, part, rows)) return err;
  if (part.type != "input_text") {
    return invalid_request("Output of tool call should be 'Input text'");
  }
  out = {ResponsesPart::Kind::kText, part.text.value_or("")};
  return std::nullopt;
}

using PartReader = Check (*)(const Json&, const std::string&, ResponsesPart&);

Check read_parts(const Json& v, const std::string& used, PartReader read,
                 std::vector<ResponsesPart>& out) {
  out.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (auto err = read(v[i], fields::item_path(used, i), out[i])) return err;
  }
  return std::nullopt;
}

// --- Input items -------------------------------------------------------------------------

// An item's role and type (read first: they tell its kind).
constexpr uint32_t kItemHead = 1u << 8;

using ItemField = fields::Field<ResponsesItem>;
using I = ResponsesItem;

// A message's content: a string (one text part) or parts of its role's kinds.
Check read_content(const Json& v, const std::string& used, I& out, const FieldContext& ctx) {
  if (v.is_string()) {
    out.content = std::vector<ResponsesPart>{{ResponsesPart::Kind::kText, v.get<std::string>()}};
    return std::nullopt;
  }
  if (!v.is_array()) return fields::type_error(used, "string or array", v);
  const bool user = ctx.route == bit(ItemKind::kMessage);
  out.content.emplace();
  return read_parts(v, used, user ? user_part : assistant_part, *out.content);
}

Check read_output(const Json& v, const std::string& used, I& out, const FieldContext&) {
  if (v.is_string()) {
    out.output = v.get<std::string>();
    return std::nullopt;
  }
  if (!v.is_array()) return fields::type_error(used, "string or array", v);
  out.output_parts.emplace();
  return read_parts(v, used, output_part, *out.output_parts);
}

Check read_summary(const Json& v, const std::string& used, I& out, const FieldContext&) {
  if (!v.is_array()) return fields::type_error(used, "array", v);
  out.summary_given = true;
  return std::nullopt;
}

// A reasoning item's content: its first part's text (an empty list, or a first part
// without text, tells no kind).
Check read_reasoning(const Json& v, const std::string& used, I& out, const FieldContext&) {
  if (!v.is_array()) return fields::type_error(used, "array", v);
  if (v.empty()) return std::nullopt;
  const std::string first = fields::item_path(used, 0);
  if (!v[0].is_object()) return fields::type_error(first, "object", v[0]);
  PartFields part;
  if (auto err =
          fields::parse_nested_fields(part_fields(), v[0], first, part, {.route = kPartText})) {
    return err;
  }
  out.reasoning = part.text;
  return std::nullopt;
}

const std::vector<ItemField>& item_fields() {
  constexpr uint32_t kMessages = bit(ItemKind::kMessage) | bit(ItemKind::kAssistantMessage);
  constexpr uint32_t kCalls = bit(ItemKind::kFunctionCall) | bit(ItemKind::kFunctionCallOutput);
  static const std::vector<ItemField> table = {
      {.name = "role", .target = fields::store_string<I, &I::role>, .routes = kItemHead},
      {.name = "type", .target = fields::store_string<I, &I::type>, .routes = kItemHead},
      {.name = "content", .target = read_content, .routes = kMessages},
      {.name = "call_id",
       .target = fields::store_optional_string<I, &I::call_id>,
       .routes = kCalls},
      {.name = "name",
       .target = fields::store_optional_string<I, &I::name>,
       .routes = bit(ItemKind::kFunctionCall)},
      {.name = "arguments",
       .target = fields::store_optional_string<I, &I::arguments>,
       .routes = bit(ItemKind::kFunctionCall)},
      {.name = "output", .target = read_output, .routes = bit(ItemKind::kFunctionCallOutput)},
      {.name = "summary", .target = read_summary, .routes = bit(ItemKind::kReasoning)},
      {.name = "content", .target = read_reasoning, .routes = bit(ItemKind::kReasoning)},
  };
  return table;
}

ItemKind kind_of(const std::string& role, const std::string& type) {
  if (role == "user" || role == "system" || role == "developer") return ItemKind::kMessage;
  if (role == "assistant" && type == "message") return ItemKind::kAssistantMessage;
  if (type == "function_call") return ItemKind::kFunctionCall;
  if (type == "function_call_output") return ItemKind::kFunctionCallOutput;
  if (type == "reasoning") return ItemKind::kReasoning;
  return ItemKind::kNone;
}

// Whether the item has the members its kind needs (the reference's test of its shape).
bool complete(const ResponsesItem& item) {
  switch (item.kind) {
    case ItemKind::kMessage:
    case ItemKind::kAssistantMessage:
      return item.content.has_value();
    case ItemKind::kFunctionCall:
      return item.call_id && item.name && item.arguments;
    case ItemKind::kFunctionCallOutput:
      return item.call_id && (item.output || item.output_parts);
    case ItemKind::kReasoning:
      return item.summary_given && item.reasoning;
    case ItemKind::kNone:
      break;
  }
  return false;
}

Check parse_item(const Json& v, const std::string& path, ResponsesItem& out) {
  if (!v.is_object()) return unknown_item();
  if (auto err = fields::parse_nested_fields(item_fields(), v, path, out, {.route = kItemHead})) {
    return err;
  }
  out.kind = kind_of(out.role, out.type);
  if (out.kind == ItemKind::kNone) return unknown_item();
  if (auto err =
          fields::parse_nested_fields(item_fields(), v, path, out, {.route = bit(out.kind)})) {
    return err;
  }
  return complete(out) ? std::nullopt : std::optional<ApiError>(unknown_item());
}

// --- The body ----------------------------------------------------------------------------

using F = fields::Field<ResponsesRequest>;
using R = ResponsesRequest;

constexpr uint32_t kBody = 1u << 0;
constexpr uint32_t kReasoningRows = 1u << 1;

Check read_previous_id(const Json& v, const std::string& used, R& out, const FieldContext&) {
  if (auto err = fields::to_string(v, used, out.previous_response_id)) return err;
  if (out.previous_response_id.empty()) return std::nullopt;
  return invalid_request("llama.cpp does not support 'previous_response_id'.");
}

Check read_input(const Json& v, const std::string& used, R& out, const FieldContext&) {
  out.input_given = true;
  if (v.is_string()) {
    out.input_text = v.get<std::string>();
    return std::nullopt;
  }
  if (!v.is_array()) return invalid_request("'input' must be a string or array of objects");
  out.items.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (auto err = parse_item(v[i], fields::item_path(used, i), out.items[i])) return err;
  }
  return std::nullopt;
}

using ToolField = fields::Field<ResponsesTool>;

const std::vector<ToolField>& tool_fields() {
  static const std::vector<ToolField> table = {
      {.name = "type", .target = fields::store_string<ResponsesTool, &ResponsesTool::type>},
  };
  return table;
}

// Function tools, as chat tools' `function` objects; other types (web_search, mcp, ...) have
// no chat equivalent and are skipped, as in the reference.
Check read_tools(const Json& v, const std::string& used, R& out, const FieldContext&) {
  if (!v.is_array()) return invalid_request("'tools' must be an array of objects");
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string path = fields::item_path(used, i);
    if (!v[i].is_object()) return fields::type_error(path, "object", v[i]);
    ResponsesTool tool;
    if (auto err = fields::parse_nested_fields(tool_fields(), v[i], path, tool, {})) return err;
    if (tool.type != "function") continue;
    tool.function = v[i];
    tool.function.erase("type");
    if (!tool.function.contains("strict")) tool.function["strict"] = true;
    out.tools.push_back(std::move(tool));
  }
  return std::nullopt;
}

// Handed to the native table as max_tokens; its type is checked here to name it.
Check read_max_output(const Json& v, const std::string& used, R& out, const FieldContext&) {
  int64_t ignored = 0;
  if (!v.is_null()) {
    if (auto err = fields::to_int64(v, used, ignored)) return err;
  }
  out.max_output_tokens = v;
  return std::nullopt;
}

Check read_reasoning_object(const Json& v, const std::string& used, R& out, const FieldContext&);

const std::vector<F>& body_fields() {
  static const std::vector<F> table = {
      {.name = "previous_response_id", .target = read_previous_id, .routes = kBody},
      {.name = "input", .target = read_input, .routes = kBody, .keeps_null = true},
      {.name = "instructions",
       .target = fields::store_optional_string<R, &R::instructions>,
       .routes = kBody},
      {.name = "tools", .target = read_tools, .routes = kBody, .keeps_null = true},
      {.name = "max_output_tokens", .target = read_max_output, .routes = kBody, .keeps_null = true},
      {.name = "reasoning", .target = read_reasoning_object, .routes = kBody},
      {.name = "effort",
       .target = fields::store_optional_string<R, &R::reasoning_effort>,
       .routes = kReasoningRows},
  };
  return table;
}

// Only reasoning.effort is read (as reasoning_effort).
Check read_reasoning_object(const Json& v, const std::string& used, R& out, const FieldContext&) {
  if (!v.is_object()) return fields::type_error(used, "object", v);
  return fields::parse_nested_fields(body_fields(), v, used, out, {.route = kReasoningRows});
}

// The chat body's members: the body less the Responses rows, less what the translation
// writes (messages; reasoning_effort when reasoning.effort is given).
Json chat_members(const Json& body, const ResponsesRequest& request) {
  Json rest = body;
  for (const F& row : body_fields()) {
    if (row.routes == kBody) rest.erase(std::string(row.name));
  }
  rest.erase("messages");
  if (request.reasoning_effort) rest.erase("reasoning_effort");
  return rest;
}

}  // namespace

std::vector<fields::FieldInfo> responses_field_info() {
  return fields::field_info(body_fields(), kBody);
}

std::optional<ApiError> parse_responses_request(const Json& body, ResponsesRequest& out) {
  if (auto err = fields::parse_fields(body_fields(), body, out, {.route = kBody})) return err;
  if (!out.input_given) return fields::required_error("input");
  return parse_chat_request(chat_members(body, out), out.chat);
}

}  // namespace hearth::server::openai

// The Anthropic Messages body's field tables (openai-compat.md §8.1): the body's members,
// then the objects nested in it (messages, content blocks and their image source, tools,
// tool_choice, thinking), each read by a table of the same rows. A member of the wrong type
// is a 400 naming its path; the reference reads each leniently (a wrong type, or a block
// that is not an object, silently becomes the default or disappears; differences.json
// anthropic-wrong-types-400). Blocks of a type Hearth does not read are ignored, as there.
#include <limits>

#include "server/fields/store.h"
#include "server/openai/anthropic_request.h"

namespace hearth::server::openai {

namespace {

using fields::FieldContext;
using Check = std::optional<ApiError>;

constexpr uint32_t bit(BlockKind kind) {
  return static_cast<uint32_t>(kind);
}

// --- Content blocks ----------------------------------------------------------------------

using BlockField = fields::Field<AnthropicBlock>;

// Rows read before the kind is known, and the image source's rows.
constexpr uint32_t kBlockType = 1u << 16;
constexpr uint32_t kImageSource = 1u << 17;

const std::vector<BlockField>& block_fields();

Check read_block_type(const Json& v, const std::string& used, AnthropicBlock& out,
                      const FieldContext&) {
  if (!v.is_string()) return fields::type_error(used, "string", v);
  const std::string& type = v.get_ref<const std::string&>();
  out.kind = type == "text"          ? BlockKind::kText
             : type == "thinking"    ? BlockKind::kThinking
             : type == "image"       ? BlockKind::kImage
             : type == "tool_use"    ? BlockKind::kToolUse
             : type == "tool_result" ? BlockKind::kToolResult
                                     : BlockKind::kOther;
  return std::nullopt;
}

Check read_source(const Json& v, const std::string& used, AnthropicBlock& out,
                  const FieldContext&) {
  if (!v.is_object()) return fields::type_error(used, "object", v);
  return fields::parse_nested_fields(block_fields(), v, used, out, {.route = kImageSource});
}

Check parse_block(const Json& v, const std::string& path, AnthropicBlock& out);

// A tool result's content: a string, or blocks.
Check read_result_content(const Json& v, const std::string& used, AnthropicBlock& out,
                          const FieldContext&) {
  if (v.is_string()) {
    out.content_text = v.get<std::string>();
    return std::nullopt;
  }
  if (!v.is_array()) return fields::type_error(used, "string or array", v);
  out.content_is_blocks = true;
  out.content.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (auto err = parse_block(v[i], fields::item_path(used, i), out.content[i])) return err;
  }
  return std::nullopt;
}

Check read_input(const Json& v, const std::string& used, AnthropicBlock& out,
                 const FieldContext& ctx) {
  return fields::store_object<AnthropicBlock, &AnthropicBlock::input>(v, used, out, ctx);
}

std::vector<BlockField> make_block_table() {
  using B = AnthropicBlock;
  return {
      {.name = "type", .target = read_block_type, .routes = kBlockType},
      {.name = "text",
       .target = fields::store_optional_string<B, &B::text>,
       .routes = bit(BlockKind::kText)},
      {.name = "thinking",
       .target = fields::store_optional_string<B, &B::text>,
       .routes = bit(BlockKind::kThinking)},
      {.name = "source", .target = read_source, .routes = bit(BlockKind::kImage)},
      {.name = "type", .target = fields::store_string<B, &B::source_type>, .routes = kImageSource},
      {.name = "media_type",
       .target = fields::store_string<B, &B::media_type>,
       .routes = kImageSource},
      {.name = "data", .target = fields::store_string<B, &B::data>, .routes = kImageSource},
      {.name = "url", .target = fields::store_string<B, &B::url>, .routes = kImageSource},
      {.name = "id", .target = fields::store_string<B, &B::id>, .routes = bit(BlockKind::kToolUse)},
      {.name = "name",
       .target = fields::store_string<B, &B::name>,
       .routes = bit(BlockKind::kToolUse)},
      {.name = "input", .target = read_input, .routes = bit(BlockKind::kToolUse)},
      {.name = "tool_use_id",
       .target = fields::store_string<B, &B::tool_use_id>,
       .routes = bit(BlockKind::kToolResult)},
      {.name = "content", .target = read_result_content, .routes = bit(BlockKind::kToolResult)},
  };
}

const std::vector<BlockField>& block_fields() {
  static const std::vector<BlockField> table = make_block_table();
  return table;
}

// A block: an object whose `type` says which rows read it.
Check parse_block(const Json& v, const std::string& path, AnthropicBlock& out) {
  if (!v.is_object()) return fields::type_error(path, "object", v);
  if (auto err = fields::parse_nested_fields(block_fields(), v, path, out, {.route = kBlockType})) {
    return err;
  }
  if (out.kind == BlockKind::kNone) return fields::required_error(path + ".type");
  if (auto err =
          fields::parse_nested_fields(block_fields(), v, path, out, {.route = bit(out.kind)})) {
    return err;
  }
  if (out.kind == BlockKind::kText && !out.text) return fields::required_error(path + ".text");
  return std::nullopt;
}

Check parse_blocks(const Json& v, const std::string& path, std::vector<AnthropicBlock>& out) {
  out.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    if (auto err = parse_block(v[i], fields::item_path(path, i), out[i])) return err;
  }
  return std::nullopt;
}

// --- Messages ----------------------------------------------------------------------------

using MessageField = fields::Field<AnthropicMessage>;

Check read_message_content(const Json& v, const std::string& used, AnthropicMessage& out,
                           const FieldContext&) {
  out.has_content = true;
  if (v.is_array()) {
    out.content_is_blocks = true;
    return parse_blocks(v, used, out.blocks);
  }
  if (!v.is_string() && !v.is_null()) return fields::type_error(used, "string or array", v);
  return std::nullopt;
}

const std::vector<MessageField>& message_fields() {
  using M = AnthropicMessage;
  static const std::vector<MessageField> table = {
      {.name = "role", .target = fields::store_optional_string<M, &M::role>},
      {.name = "content", .target = read_message_content, .keeps_null = true},
  };
  return table;
}

// --- Tools -------------------------------------------------------------------------------

using ToolField = fields::Field<AnthropicTool>;

Check read_input_schema(const Json& v, const std::string& used, AnthropicTool& out,
                        const FieldContext& ctx) {
  return fields::store_object<AnthropicTool, &AnthropicTool::input_schema>(v, used, out, ctx);
}

const std::vector<ToolField>& tool_fields() {
  using T = AnthropicTool;
  static const std::vector<ToolField> table = {
      {.name = "name", .target = fields::store_string<T, &T::name>},
      {.name = "description", .target = fields::store_string<T, &T::description>},
      {.name = "input_schema", .target = read_input_schema},
  };
  return table;
}

// --- The body ----------------------------------------------------------------------------

using F = fields::Field<AnthropicRequest>;
using R = AnthropicRequest;

// The body's own rows, and those of the objects tool_choice and thinking.
constexpr uint32_t kBody = 1u << 0;
constexpr uint32_t kToolChoice = 1u << 1;
constexpr uint32_t kThinking = 1u << 2;

Check read_messages(const Json& v, const std::string& used, R& out, const FieldContext&) {
  if (!v.is_array()) return fields::type_error(used, "array", v);
  out.messages_given = true;
  out.messages.resize(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string path = fields::item_path(used, i);
    if (!v[i].is_object()) return fields::type_error(path, "object", v[i]);
    AnthropicMessage& m = out.messages[i];
    if (auto err = fields::parse_nested_fields(message_fields(), v[i], path, m, {})) return err;
    if (!m.content_is_blocks) m.as_sent = v[i];
  }
  return std::nullopt;
}

// A string, or blocks whose text blocks are joined (no separator).
Check read_system(const Json& v, const std::string& used, R& out, const FieldContext&) {
  if (v.is_string()) {
    out.system = v.get<std::string>();
    return std::nullopt;
  }
  if (!v.is_array()) return fields::type_error(used, "string or array", v);
  std::vector<AnthropicBlock> blocks;
  if (auto err = parse_blocks(v, used, blocks)) return err;
  std::string text;
  for (const AnthropicBlock& b : blocks) {
    if (b.kind == BlockKind::kText) text += *b.text;
  }
  out.system = std::move(text);
  return std::nullopt;
}

// A string or a list of strings (the native `stop`'s forms), checked here to name it.
Check read_stop_sequences(const Json& v, const std::string& used, R& out, const FieldContext&) {
  std::vector<std::string> stops;
  if (v.is_string()) {
    stops.push_back(v.get<std::string>());
  } else if (v.is_array()) {
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) return fields::type_error(fields::item_path(used, i), "string", v[i]);
      stops.push_back(v[i].get<std::string>());
    }
  } else {
    return fields::type_error(used, "array of strings", v);
  }
  out.stop_sequences = std::move(stops);
  return std::nullopt;
}

Check read_max_tokens(const Json& v, const std::string&, R& out, const FieldContext&) {
  out.max_tokens = v;
  return std::nullopt;
}

// temperature, top_p, top_k: the native table reads them (and names them) as sent.
Check read_sampling(const Json& v, const std::string& used, R& out, const FieldContext&) {
  out.sampling[used] = v;
  return std::nullopt;
}

Check read_kwargs(const Json& v, const std::string& used, R& out, const FieldContext& ctx) {
  return fields::store_object<R, &R::chat_template_kwargs>(v, used, out, ctx);
}

Check read_tools(const Json& v, const std::string& used, R& out, const FieldContext&) {
  if (!v.is_array()) return fields::type_error(used, "array", v);
  std::vector<AnthropicTool> tools(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    const std::string path = fields::item_path(used, i);
    if (!v[i].is_object()) return fields::type_error(path, "object", v[i]);
    if (auto err = fields::parse_nested_fields(tool_fields(), v[i], path, tools[i], {})) return err;
  }
  out.tools = std::move(tools);
  return std::nullopt;
}

const std::vector<F>& body_fields();

// tool_choice and thinking: objects read by their own rows of this table.
template <uint32_t rows>
Check read_object_rows(const Json& v, const std::string& used, R& out, const FieldContext&) {
  if (!v.is_object()) return fields::type_error(used, "object", v);
  return fields::parse_nested_fields(body_fields(), v, used, out, {.route = rows});
}

// thinking.budget_tokens: an integer from -1 (no budget) up, as thinking_budget_tokens.
Check read_budget(const Json& v, const std::string& used, R& out, const FieldContext&) {
  if (!v.is_number_integer()) return fields::type_error(used, "integer", v);
  const int64_t value = v.get<int64_t>();
  if (auto err = fields::check_range(used, value, -1, std::numeric_limits<int32_t>::max())) {
    return err;
  }
  out.thinking_budget_tokens = static_cast<int32_t>(value);
  return std::nullopt;
}

std::vector<F> make_body_table() {
  return {
      {.name = "messages", .target = read_messages, .routes = kBody},
      {.name = "system", .target = read_system, .routes = kBody},
      {.name = "max_tokens", .target = read_max_tokens, .routes = kBody, .keeps_null = true},
      {.name = "stop_sequences",
       .target = read_stop_sequences,
       .limits = {128, 4096},
       .routes = kBody},
      {.name = "temperature", .target = read_sampling, .routes = kBody},
      {.name = "top_p", .target = read_sampling, .routes = kBody},
      {.name = "top_k", .target = read_sampling, .routes = kBody},
      {.name = "stream", .target = fields::store_bool<R, &R::stream>, .routes = kBody},
      {.name = "chat_template_kwargs", .target = read_kwargs, .routes = kBody},
      {.name = "tools", .target = read_tools, .routes = kBody},
      {.name = "tool_choice", .target = read_object_rows<kToolChoice>, .routes = kBody},
      {.name = "type",
       .target = fields::store_string<R, &R::tool_choice_type>,
       .routes = kToolChoice},
      {.name = "name",
       .target = fields::store_string<R, &R::tool_choice_name>,
       .routes = kToolChoice},
      {.name = "disable_parallel_tool_use",
       .target = fields::store_optional_bool<R, &R::disable_parallel_tool_use>,
       .routes = kToolChoice},
      {.name = "thinking", .target = read_object_rows<kThinking>, .routes = kBody},
      {.name = "type", .target = fields::store_string<R, &R::thinking_type>, .routes = kThinking},
      {.name = "budget_tokens", .target = read_budget, .routes = kThinking},
  };
}

const std::vector<F>& body_fields() {
  static const std::vector<F> table = make_body_table();
  return table;
}

}  // namespace

std::vector<fields::FieldInfo> anthropic_field_info() {
  return fields::field_info(body_fields(), kBody);
}

std::optional<ApiError> parse_anthropic_request(const Json& body, AnthropicRequest& out) {
  if (auto err = fields::parse_fields(body_fields(), body, out, {.route = kBody})) return err;
  // The reference answers a missing `messages` with 500; it is the client's mistake.
  if (!out.messages_given) return fields::required_error("messages");
  if (out.tool_choice_type == "tool" && out.tool_choice_name.empty()) {
    return fields::required_error("tool_choice.name");
  }
  return std::nullopt;
}

}  // namespace hearth::server::openai

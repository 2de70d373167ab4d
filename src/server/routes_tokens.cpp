// POST /tokenize and /detokenize (other-native-routes.md §8-§9), their bodies read with the
// field tables below. The reference reads the booleans leniently (a wrong type is the
// default) and answers 500 for a bad `content` or `tokens`; Hearth answers 400 naming the
// field (a recorded difference).
#include <string>

#include "server/api_error.h"
#include "server/fields/completion_fields.h"
#include "server/request_body.h"
#include "server/server_state.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server {

namespace {

struct TokenizeRequest {
  const Json* content = nullptr;  // absent: no tokens
  bool add_special = false;
  bool parse_special = true;
  bool with_pieces = false;
};

struct DetokenizeRequest {
  std::vector<int32_t> tokens;
};

const std::vector<fields::Field<TokenizeRequest>>& tokenize_fields() {
  using T = TokenizeRequest;
  static const std::vector<fields::Field<T>> table = {
      {.name = "content",
       .target = [](const Json& v, const std::string& used, T& out,
                    const fields::FieldContext&) -> std::optional<ApiError> {
         if (!is_text_or_tokens(v)) {
           return fields::field_error(used,
                                      "must be a string or an array of strings and token ids");
         }
         out.content = &v;
         return std::nullopt;
       }},
      {.name = "add_special", .target = +[](T& r) -> bool& { return r.add_special; }},
      {.name = "parse_special", .target = +[](T& r) -> bool& { return r.parse_special; }},
      {.name = "with_pieces", .target = +[](T& r) -> bool& { return r.with_pieces; }},
  };
  return table;
}

const std::vector<fields::Field<DetokenizeRequest>>& detokenize_fields() {
  using T = DetokenizeRequest;
  static const std::vector<fields::Field<T>> table = {
      {.name = "tokens",
       .target = [](const Json& v, const std::string& used, T& out,
                    const fields::FieldContext& ctx) -> std::optional<ApiError> {
         if (!v.is_array()) return fields::type_error(used, "array", v);
         const int32_t n_vocab = ctx.tok->n_vocab();
         for (const Json& id : v) {
           if (!id.is_number_integer()) return fields::type_error(used, "array of integers", v);
           const int64_t value = id.get<int64_t>();
           if (value < 0 || value >= n_vocab) {
             // The reference answers 500 with libstdc++'s range-check text.
             return fields::field_error(used, "token id " + std::to_string(value) +
                                                  " is outside the vocabulary (0.." +
                                                  std::to_string(n_vocab - 1) + ")");
           }
           out.tokens.push_back(static_cast<int32_t>(value));
         }
         return std::nullopt;
       }},
  };
  return table;
}

// One token of the answer, appended as JSON text: a million tokens as ordered_json values
// took 300 bytes each (and the answer was copied once more into its envelope), where the
// text takes 20.
void append_token(const tokenizer::Tokenizer& tok, int32_t id, bool with_piece, std::string& out) {
  if (!with_piece) {
    out += std::to_string(id);
    return;
  }
  const std::string piece = tok.token_to_piece(id, true);
  out += "{\"id\":";
  out += std::to_string(id);
  out += ",\"piece\":";
  if (tokenizer::is_valid_utf8(piece)) {
    out += dump_json(Json(piece));
  } else {
    out += '[';
    for (size_t i = 0; i < piece.size(); ++i) {
      if (i > 0) out += ',';
      out += std::to_string(static_cast<unsigned char>(piece[i]));
    }
    out += ']';
  }
  out += '}';
}

}  // namespace

http::Response handle_tokenize(ServerState& s, const http::Request& r) {
  Json body;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  TokenizeRequest request;
  fields::FieldContext ctx;
  ctx.tok = &tok;
  if (auto err = fields::parse_fields(tokenize_fields(), body, request, ctx)) {
    return error_response(*err);
  }
  std::vector<int32_t> ids;
  if (request.content != nullptr) {
    ids = tokenize_mixed(tok, *request.content, request.add_special, request.parse_special);
  }
  std::string out = "{\"tokens\":[";
  out.reserve(out.size() + ids.size() * (request.with_pieces ? 24 : 6) + 2);
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i > 0) out += ',';
    append_token(tok, ids[i], request.with_pieces, out);
  }
  out += "]}";
  return json_text_response(std::move(out));
}

http::Response handle_detokenize(ServerState& s, const http::Request& r) {
  Json body;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  DetokenizeRequest request;
  fields::FieldContext ctx;
  ctx.tok = &tok;
  if (auto err = fields::parse_fields(detokenize_fields(), body, request, ctx)) {
    return error_response(*err);
  }
  std::string text;
  for (int32_t id : request.tokens) text += tok.token_to_piece(id, true);
  return json_response(Json{{"content", text}});
}

}  // namespace hearth::server

// POST /tokenize and /detokenize (other-native-routes.md §8-§9).
#include <stdexcept>
#include <string>

#include "server/api_error.h"
#include "server/prompt_forms.h"
#include "server/server_state.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server {

namespace {

// Booleans outside the completion schema are read leniently: a wrong type is the default.
bool lenient_bool(const Json& body, const char* name, bool fallback) {
  auto it = body.find(name);
  return it != body.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

}  // namespace

http::Response handle_tokenize(ServerState& s, const http::Request& r) {
  const Json body = Json::parse(r.body);
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  Json tokens = Json::array();
  auto content = body.find("content");
  if (content != body.end()) {
    if (!content->is_array()) (void)content->get<std::string>();  // throws the type error
    const bool add_special = lenient_bool(body, "add_special", false);
    const bool parse_special = lenient_bool(body, "parse_special", true);
    const bool with_pieces = lenient_bool(body, "with_pieces", false);
    for (int32_t id : tokenize_mixed(tok, *content, add_special, parse_special)) {
      if (!with_pieces) {
        tokens.push_back(id);
        continue;
      }
      const std::string piece = tok.token_to_piece(id, true);
      Json entry = Json::object();
      entry["id"] = id;
      if (tokenizer::is_valid_utf8(piece)) {
        entry["piece"] = piece;
      } else {
        Json bytes = Json::array();
        for (unsigned char c : piece) bytes.push_back(static_cast<int>(c));
        entry["piece"] = std::move(bytes);
      }
      tokens.push_back(std::move(entry));
    }
  }
  return json_response(Json{{"tokens", tokens}});
}

http::Response handle_detokenize(ServerState& s, const http::Request& r) {
  const Json body = Json::parse(r.body);
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  std::string text;
  auto tokens = body.find("tokens");
  if (tokens != body.end()) {
    if (!tokens->is_array()) (void)tokens->get<std::vector<int64_t>>();  // throws the type error
    for (const Json& v : *tokens) {
      const int64_t id = v.is_boolean() ? (v.get<bool>() ? 1 : 0) : v.get<int64_t>();
      if (id < 0 || id >= tok.n_vocab()) {
        // The reference leaks libstdc++'s range-check text here; Hearth names the id.
        return error_response(server_error("token id " + std::to_string(id) +
                                           " is out of the vocabulary (" +
                                           std::to_string(tok.n_vocab()) + " tokens)"));
      }
      text += tok.token_to_piece(static_cast<int32_t>(id), true);
    }
  }
  return json_response(Json{{"content", text}});
}

}  // namespace hearth::server

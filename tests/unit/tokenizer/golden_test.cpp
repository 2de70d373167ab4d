// llama-server's /tokenize and /detokenize captures (shared/golden/llama-server-b10573, answered
// on stories260K.gguf) reproduced through the library, plus the other observations recorded in
// spec/llama-server/other-native-routes.md §8-9.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "support/test_paths.h"
#include "tokenizer_test_util.h"

namespace hearth::tokenizer::test {
namespace {

using json = nlohmann::json;

// A boolean member read leniently, as the server does: a wrong type means the default.
bool lenient_bool(const json& body, const char* key, bool fallback) {
  return body.contains(key) && body[key].is_boolean() ? body[key].get<bool>() : fallback;
}

// POST /tokenize: a string, or a mixed array of strings and ids (add_special only applies to a
// leading string).
std::vector<TokenId> server_tokenize(const Tokenizer& tok, const json& body) {
  const bool add_special = lenient_bool(body, "add_special", false);
  const bool parse_special = lenient_bool(body, "parse_special", true);
  const json content = body.value("content", json());
  if (content.is_string())
    return tok.tokenize(content.get<std::string>(), add_special, parse_special);
  std::vector<TokenId> ids;
  bool first = true;
  for (const json& part : content) {
    if (part.is_string()) {
      const auto p = tok.tokenize(part.get<std::string>(), first && add_special, parse_special);
      ids.insert(ids.end(), p.begin(), p.end());
    } else {
      ids.push_back(part.get<TokenId>());
    }
    first = false;
  }
  return ids;
}

// The "tokens" member of a /tokenize response as the server builds it.
json server_tokenize_response(const Tokenizer& tok, const json& body) {
  const std::vector<TokenId> ids = server_tokenize(tok, body);
  if (!lenient_bool(body, "with_pieces", false)) return json{{"tokens", ids}};
  json tokens = json::array();
  for (TokenId id : ids) {
    const std::string piece = tok.token_to_piece(id, true);
    json p =
        is_valid_utf8(piece) ? json(piece) : json(std::vector<int>(piece.begin(), piece.end()));
    if (p.is_array()) {
      for (auto& b : p) b = static_cast<uint8_t>(b.get<int>());
    }
    tokens.push_back(json{{"id", id}, {"piece", p}});
  }
  return json{{"tokens", tokens}};
}

// POST /detokenize: every piece with special tokens rendered, no leading-space removal; the
// JSON encoder replaces invalid UTF-8 by U+FFFD.
json server_detokenize_response(const Tokenizer& tok, const json& body) {
  std::string content;
  for (const json& id : body.value("tokens", json::array())) {
    content += tok.token_to_piece(id.get<TokenId>(), true);
  }
  const std::string dumped = json(content).dump(-1, ' ', false, json::error_handler_t::replace);
  return json{{"content", json::parse(dumped)}};
}

std::vector<std::filesystem::path> capture_files() {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path root = hearth::test::shared_path("golden/llama-server-b10573");
  if (!std::filesystem::is_directory(root)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root)) {
    if (entry.is_regular_file() && entry.path().extension() == ".json") files.push_back(entry);
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(TokenizerGolden, ReproducesEveryCapture) {
  const Tokenizer& tok = stories260k();
  int checked = 0;
  for (const auto& path : capture_files()) {
    const json capture = json::parse(hearth::test::read_file(path.string()), nullptr, false);
    if (!capture.is_object() || !capture.contains("request") || !capture.contains("response")) {
      continue;  // cases.json and streamed captures
    }
    const json& request = capture["request"];
    const std::string route = request.value("path", "");
    if (route != "/tokenize" && route != "/detokenize") continue;
    ASSERT_EQ(capture.value("status", 0), 200) << path;
    const json body = request.value("body", json::object());
    const json got = route == "/tokenize" ? server_tokenize_response(tok, body)
                                          : server_detokenize_response(tok, body);
    EXPECT_EQ(got, capture["response"]) << path << "\nrequest " << body.dump();
    ++checked;
  }
  EXPECT_GE(checked, 4) << "expected the /tokenize and /detokenize captures under shared/golden";
}

// Observations recorded in other-native-routes.md §8-9 (no capture file of their own).
TEST(TokenizerGolden, RecordedObservations) {
  const Tokenizer& tok = stories260k();
  EXPECT_EQ(server_tokenize(tok, json{{"content", json::array({1, "Hi", 600})}}),
            (std::vector<TokenId>{1, 320, 417, 600}));
  const json no_parse = {{"content", "<s>Hi"}, {"add_special", true}, {"parse_special", false}};
  const std::vector<TokenId> plain = server_tokenize(tok, no_parse);
  EXPECT_EQ(plain.size(), 7u) << format_ids(plain);  // BOS + six plain-text tokens
  EXPECT_EQ(plain.front(), 1);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 1);
  const json pieces = server_tokenize_response(tok, {{"content", "é中"}, {"with_pieces", true}});
  const json expected = json::parse(R"([{"id":410,"piece":" "},{"id":485,"piece":"é"},
      {"id":231,"piece":[228]},{"id":187,"piece":[184]},{"id":176,"piece":[173]}])");
  EXPECT_EQ(pieces["tokens"], expected);
  EXPECT_EQ(server_detokenize_response(tok, {{"tokens", {0, 1, 2, 3}}})["content"],
            std::string("<unk><s></s>") + '\0');
  const std::vector<TokenId> zhong = {pieces["tokens"][2]["id"], pieces["tokens"][3]["id"],
                                      pieces["tokens"][4]["id"]};
  EXPECT_EQ(server_detokenize_response(tok, {{"tokens", {zhong[0]}}})["content"], "\uFFFD");
  EXPECT_EQ(server_detokenize_response(tok, {{"tokens", zhong}})["content"], "中");
}

}  // namespace
}  // namespace hearth::tokenizer::test

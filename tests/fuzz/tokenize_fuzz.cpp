// libFuzzer target for /tokenize and /detokenize over the in-memory server: the fuzzer's
// bytes are the body. Answers are checked as every route's are (no 500, errors in the
// envelope, JSON that parses), and a /tokenize that succeeds is asked again with and
// without pieces: the ids must be the same, each piece must be its token's text (a string,
// or its bytes when not valid UTF-8), and /detokenize of the ids must answer 200.
//
//   build-fuzz/bin/tokenize_fuzz -dict=tests/fuzz/http.dict -max_total_time=600 \
//     /tmp/tokenize-corpus tests/fuzz/corpus/tokenize
#include <string>
#include <string_view>

#include "base/json_parse.h"
#include "fuzz/answer_checks.h"
#include "support/fake_server.h"
#include "support/settle.h"

namespace {

using namespace hearth;
using Json = nlohmann::ordered_json;
constexpr const char* kTarget = "tokenize_fuzz";

test::FakeServer* g_server = nullptr;

test::SettledResponse post(const std::string& path, const std::string& body,
                           std::string_view input) {
  server::http::Request request;
  request.method = "POST";
  request.path = path;
  request.body = body;
  auto settled = test::settle(g_server->server->dispatch(request), std::chrono::seconds(20));
  if (!settled) fuzz::fail(kTarget, path + ": no answer within 20 s", input);
  fuzz::check_answer(kTarget, settled->status, settled->content_type, settled->body,
                     settled->streamed, input);
  return *settled;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  auto tok = test::load_tokenizer(fuzz::shared_dir() + "/models/stories260K.gguf");
  if (!tok) fuzz::fail(kTarget, "cannot read the stories260K model", "");
  server::ServerConfig config;
  config.model_path = "fuzz.gguf";
  g_server = new test::FakeServer(test::make_fake_server(config, tok));
  if (!g_server->server) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const std::string body(input);
  post("/detokenize", body, input);
  const test::SettledResponse first = post("/tokenize", body, input);
  if (first.status != 200) return 0;
  auto request = parse_json(body);
  if (!request.is_ok() || !request->is_object()) fuzz::fail(kTarget, "200 for a non-object", input);
  (*request)["with_pieces"] = false;
  const test::SettledResponse plain = post("/tokenize", request->dump(), input);
  (*request)["with_pieces"] = true;
  const test::SettledResponse with = post("/tokenize", request->dump(), input);
  if (plain.status != 200 || with.status != 200) {
    fuzz::fail(kTarget, "with_pieces changed a 200 into an error", input);
  }
  const Json ids = Json::parse(plain.body)["tokens"];
  const Json pieces = Json::parse(with.body)["tokens"];
  if (!ids.is_array() || !pieces.is_array() || ids.size() != pieces.size()) {
    fuzz::fail(kTarget, "with_pieces gave other tokens", input);
  }
  const auto& tok = g_server->scheduler->tokenizer();
  for (size_t i = 0; i < ids.size(); ++i) {
    const Json& entry = pieces[i];
    if (!entry.is_object() || entry["id"] != ids[i]) fuzz::fail(kTarget, "id mismatch", input);
    const std::string text = tok.token_to_piece(ids[i].get<int32_t>(), true);
    std::string got;
    if (entry["piece"].is_string()) {
      got = entry["piece"].get<std::string>();
    } else {
      for (const Json& b : entry["piece"]) got += static_cast<char>(b.get<int>());
    }
    if (got != text) fuzz::fail(kTarget, "a piece is not its token's text", input);
  }
  post("/detokenize", Json{{"tokens", ids}}.dump(), input);
  return 0;
}

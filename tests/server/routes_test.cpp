// The route surface: every route the manifest claims answers, every other one is refused
// as the manifest records; the request pipeline (API keys, CORS, 404 body, bad input). On
// the fake server (no model, nothing under ../shared): what is checked here is the
// server's, whatever the model.
#include <filesystem>
#include <fstream>
#include <map>

#include "server/fake_fixture.h"

namespace hearth::test {
namespace {

Json manifest(const std::string& file) {
  std::ifstream in(std::string(HEARTH_SOURCE_DIR) + "/compat/llama-server/b10621/" + file);
  return Json::parse(in);
}

// A path usable in a request for a route pattern (":id_slot" -> "0").
std::string concrete(std::string path) {
  const size_t colon = path.find(':');
  if (colon != std::string::npos) path = path.substr(0, colon) + "0";
  return path;
}

// What each supported route is sent and must answer on the fake server with a vocabulary
// like stories260K's (512 tokens, no fill-in-the-middle tokens), started without
// --embeddings or --reranking, as stories260K was before the tests moved here: a valid
// request answers 200; a route whose feature this server lacks answers the reference's 501
// not_supported_error from its own handler. Any other status, a 404 included, fails.
struct RouteCase {
  std::string body;
  int status = 200;
  std::string error_type;  // for an error status
};

RouteCase answers(std::string body) {
  return RouteCase{std::move(body), 200, ""};
}

// The feature is off on this server: the handler's own 501.
RouteCase not_supported(std::string body) {
  return RouteCase{std::move(body), 501, "not_supported_error"};
}

const std::map<std::string, RouteCase>& route_cases() {
  static const std::string kChat = R"({"messages":[{"role":"user","content":"Hi"}])";
  static const std::map<std::string, RouteCase> cases = {
      {"/completion", answers(R"({"prompt":"Hi","n_predict":2})")},
      {"/completions", answers(R"({"prompt":"Hi","n_predict":2})")},
      {"/v1/completions", answers(R"({"prompt":"Hi","max_tokens":2})")},
      {"/tokenize", answers(R"({"content":"Hi"})")},
      {"/detokenize", answers(R"({"tokens":[1]})")},
      {"/props", answers(R"({})")},
      {"/lora-adapters", answers("[]")},
      {"/slots/0?action=save", answers(R"({"filename":"route.bin"})")},
      {"/apply-template", answers(kChat + "}")},
      {"/v1/chat/completions", answers(kChat + R"(,"max_tokens":2})")},
      {"/chat/completions", answers(kChat + R"(,"max_tokens":2})")},
      {"/v1/chat/completions/input_tokens", answers(kChat + "}")},
      {"/chat/completions/input_tokens", answers(kChat + "}")},
      {"/v1/messages", answers(kChat + R"(,"model":"m","max_tokens":2})")},
      {"/v1/messages/count_tokens", answers(kChat + R"(,"model":"m"})")},
      {"/v1/responses", answers(R"({"input":"Hi","max_output_tokens":2})")},
      {"/responses", answers(R"({"input":"Hi","max_output_tokens":2})")},
      {"/v1/responses/input_tokens", answers(R"({"input":"Hi"})")},
      {"/responses/input_tokens", answers(R"({"input":"Hi"})")},
      // An unknown id is not an error: the answer says nothing was running.
      {"/v1/chat/completions/control",
       answers(R"({"id":"chatcmpl-none","action":"reasoning_end"})")},
      {"/infill", not_supported(R"({"input_prefix":"a","input_suffix":"b"})")},
      {"/embedding", not_supported(R"({"content":"Hi"})")},
      {"/embeddings", not_supported(R"({"content":"Hi"})")},
      {"/v1/embeddings", not_supported(R"({"input":"Hi"})")},
      {"/rerank", not_supported(R"({"query":"a","documents":["b"]})")},
      {"/reranking", not_supported(R"({"query":"a","documents":["b"]})")},
      {"/v1/rerank", not_supported(R"({"query":"a","documents":["b"]})")},
      {"/v1/reranking", not_supported(R"({"query":"a","documents":["b"]})")},
      // No projector with audio (transcriptions_test.cpp starts one with -mm).
      {"/v1/audio/transcriptions", not_supported("{}")},
      {"/audio/transcriptions", not_supported("{}")},
      // Resumable streams: nothing is running here; an unknown id is not an error to the
      // lookup, and the stream routes without an id answer their handler's own 400.
      {"/v1/streams/lookup", answers(R"({"conversation_ids":["none"]})")},
      {"GET /v1/stream", RouteCase{"", 400, "invalid_request_error"}},
      {"DELETE /v1/stream", RouteCase{"", 400, "invalid_request_error"}},
  };
  return cases;
}

class ServerRoutes : public FakeServerTest {};

TEST_F(ServerRoutes, EverySupportedRouteAnswers) {
  const std::string slot_dir = make_temp_dir("route_slots");
  start({"--metrics", "--props", "--slot-save-path", slot_dir});
  int checked = 0;
  const Json routes = manifest("routes.json");
  for (const Json& route : routes["entries"]) {
    if (route["state"] != "supported") continue;
    const std::string method = route["method"];
    std::string path = concrete(route["path"]);
    // The Vertex AI routes exist only when started with AIP_MODE=PREDICTION (vertex_test.cpp).
    if (path.find('$') != std::string::npos) continue;
    if (path == "/slots/0") path += "?action=save";
    SCOPED_TRACE(method + " " + path);
    RouteCase expected;
    if (method == "POST") {
      const auto it = route_cases().find(path);
      ASSERT_NE(it, route_cases().end()) << "no sample request for this route: add one";
      expected = it->second;
    } else if (const auto it = route_cases().find(method + " " + path); it != route_cases().end()) {
      expected = it->second;
    }
    // The page is served gzip-compressed (a browser always accepts it); a build without the
    // embedded page (-DHEARTH_WEBUI=OFF) has nothing at /.
    if (path == "/" && !HEARTH_WEBUI_EMBEDDED) expected.status = 404;
    const std::vector<std::pair<std::string, std::string>> headers =
        path == "/" ? std::vector<std::pair<std::string, std::string>>{{"Accept-Encoding", "gzip"}}
                    : std::vector<std::pair<std::string, std::string>>{};
    const HttpReply reply = http_request(port(), method, path, expected.body, headers);
    EXPECT_EQ(reply.status, expected.status) << reply.body;
    EXPECT_FALSE(reply.body.empty());
    if (!expected.error_type.empty()) {
      EXPECT_EQ(parse_or_null(reply.body)["error"]["type"], expected.error_type) << reply.body;
    }
    ++checked;
  }
  EXPECT_GE(checked, 37);
  std::filesystem::remove_all(slot_dir);
}

// With FIM tokens, --embedding and rank pooling, the routes the first test sees refused
// answer 200 from their handlers.
TEST_F(ServerRoutes, FeatureRoutesAnswerWhenTheFeatureIsOn) {
  start({"--reranking"}, /*fim=*/true);
  int checked = 0;
  for (const auto& [path, c] : route_cases()) {
    // The transcription routes need an audio projector (-mm), not these features.
    if (c.status != 501 || path.find("/transcriptions") != std::string::npos) continue;
    SCOPED_TRACE(path);
    const HttpReply reply = http_request(port(), "POST", path, c.body);
    EXPECT_EQ(reply.status, 200) << reply.body;
    EXPECT_TRUE(parse_or_null(reply.body).is_structured()) << reply.body;
    ++checked;
  }
  EXPECT_EQ(checked, 8);
}

TEST_F(ServerRoutes, UnclaimedRoutesAreRefused) {
  start();
  int checked = 0;
  const Json routes = manifest("routes.json");
  for (const Json& route : routes["entries"]) {
    if (route["state"] == "supported") continue;
    std::string path = concrete(route["path"]);
    if (path.find('*') != std::string::npos || path.find('$') != std::string::npos) continue;
    const std::string method = route["method"];
    const int expected = route.contains("refusal") ? route["refusal"]["status"].get<int>() : 404;
    HttpReply reply = http_request(port(), method, path, method == "POST" ? "{}" : "");
    EXPECT_EQ(reply.status, expected) << method << " " << path << ": " << reply.body;
    ++checked;
  }
  EXPECT_GT(checked, 5);  // the loop ran (fewer as routes become supported)
  // Trailing slashes and unknown methods are not routes either.
  EXPECT_EQ(http_request(port(), "POST", "/completion/", "{}").status, 404);
  EXPECT_EQ(http_request(port(), "GET", "/completion").status, 404);
  HttpReply reply = http_request(port(), "GET", "/no/such/route");
  EXPECT_EQ(
      parse_or_null(reply.body),
      Json::parse(R"({"error":{"message":"File Not Found","type":"not_found_error","code":404}})"));
}

TEST_F(ServerRoutes, ApiKeysGuardEverythingButHealth) {
  start({"--api-key", "k1,k2"});
  EXPECT_EQ(http_request(port(), "GET", "/health").status, 200);
  HttpReply denied = http_request(port(), "GET", "/props");
  EXPECT_EQ(denied.status, 401);
  EXPECT_EQ(parse_or_null(denied.body)["error"]["message"], "Invalid API Key");
  EXPECT_EQ(http_request(port(), "GET", "/props", "", {{"Authorization", "Bearer k1"}}).status,
            200);
  EXPECT_EQ(http_request(port(), "GET", "/props", "", {{"Authorization", "k2"}}).status, 200);
  EXPECT_EQ(http_request(port(), "GET", "/props", "", {{"X-Api-Key", "k1"}}).status, 200);
  EXPECT_EQ(http_request(port(), "GET", "/props", "", {{"Authorization", "Bearer k3"}}).status,
            401);
  // Preflight is never authenticated.
  EXPECT_EQ(http_request(port(), "OPTIONS", "/completion").status, 200);
}

TEST_F(ServerRoutes, CorsEchoesTheOriginAndAnswersPreflight) {
  start();
  HttpReply reply = http_request(port(), "GET", "/health", "", {{"Origin", "http://example.com"}});
  EXPECT_EQ(reply.header("access-control-allow-origin"), "http://example.com");
  HttpReply pre = http_request(port(), "OPTIONS", "/v1/whatever", "", {{"Origin", "http://x"}});
  EXPECT_EQ(pre.status, 200);
  EXPECT_EQ(pre.header("access-control-allow-methods"), "GET, POST, DELETE, OPTIONS");
  EXPECT_EQ(pre.header("access-control-allow-credentials"), "true");
  EXPECT_EQ(pre.header("content-type"), "text/html");
}

TEST_F(ServerRoutes, DisabledEndpointsAnswer501) {
  start({"--no-slots"});
  EXPECT_EQ(http_request(port(), "GET", "/slots").status, 501);
  EXPECT_EQ(http_request(port(), "GET", "/metrics").status, 501);
  EXPECT_EQ(http_request(port(), "POST", "/props", "{}").status, 501);
  EXPECT_EQ(http_request(port(), "POST", "/slots/0?action=erase", "{}").status, 501);
}

TEST_F(ServerRoutes, DetokenizeRejectsOutOfVocab) {
  start();
  int status = 0;
  Json reply = post_json(port(), "/detokenize", Json{{"tokens", {1, 600}}}, &status);
  // The reference answers 500 with libstdc++'s range-check text (differences.json).
  EXPECT_EQ(status, 400);
  EXPECT_EQ(reply["error"]["type"], "invalid_request_error");
  EXPECT_EQ(reply["error"]["message"],
            "Field 'tokens': token id 600 is outside the vocabulary (0..511)");
  post_json(port(), "/detokenize", Json{{"tokens", {-1}}}, &status);
  EXPECT_EQ(status, 400);
}

TEST_F(ServerRoutes, BadInputGetsTheReferenceEnvelope) {
  start();
  HttpReply bad_json = http_request(port(), "POST", "/completion", R"({"prompt": "x", )");
  // The reference answers 500 with its JSON parser's message (differences.json).
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_EQ(parse_or_null(bad_json.body)["error"]["type"], "invalid_request_error");
  EXPECT_EQ(parse_or_null(bad_json.body)["error"]["message"],
            "Invalid JSON in request body: parse error at line 1, column 17: syntax error while "
            "parsing object key - unexpected end of input; expected string literal");
  int status = 0;
  Json r = post_json(port(), "/completion", Json{{"prompt", "x"}, {"n_predict", "many"}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(r["error"]["message"], "Field 'n_predict': type must be number, but is string");
  r = post_json(port(), "/completion", Json{{"n_predict", 4}}, &status);
  EXPECT_EQ(status, 400);
  r = post_json(port(), "/completion", Json{{"prompt", Json::array()}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(r["error"]["message"], "\"prompt\" must not be empty");
  r = post_json(port(), "/completion", Json{{"prompt", true}}, &status);
  EXPECT_EQ(status, 400);
  r = post_json(port(), "/completion", Json{{"prompt", {1, 99999}}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(r["error"]["message"], "Prompt contains invalid tokens");
  r = post_json(port(), "/completion", Json{{"prompt", "x"}, {"n_predict", -2}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(r["error"]["message"],
            "Field 'n_predict': Value must be between -1 <= value <= 2147483647, but got -2");
  std::vector<int> long_prompt(600, 403);
  r = post_json(port(), "/completion", Json{{"prompt", long_prompt}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(r["error"]["type"], "exceed_context_size_error");
  EXPECT_EQ(r["error"]["n_prompt_tokens"], 600);
  EXPECT_EQ(r["error"]["n_ctx"], 512);
  // A body over the limit is refused without reading it all (see differences.json).
  HttpReply huge = http_request(port(), "POST", "/completion", std::string(80u << 20, ' '));
  EXPECT_TRUE(huge.status == 413 || huge.status == 0) << huge.status;
  // The server is still healthy after all of that.
  EXPECT_EQ(http_request(port(), "GET", "/health").status, 200);
  r = post_json(port(), "/completion", Json{{"prompt", "Once"}, {"n_predict", 2}}, &status);
  EXPECT_EQ(status, 200);
}

}  // namespace
}  // namespace hearth::test

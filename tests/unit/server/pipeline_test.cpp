// The request pipeline before a model is loaded (no socket needed: Server::dispatch).
#include <gtest/gtest.h>

#include "server/api_error.h"
#include "server/request_body.h"
#include "server/server.h"
#include "support/fake_server.h"
#include "support/settle.h"

namespace hearth::server {
namespace {

http::Request request(const std::string& method, const std::string& path) {
  http::Request r;
  r.method = method;
  r.path = path;
  return r;
}

TEST(ServerPipelineTest, EveryRouteAnswers503WhileLoading) {
  ServerConfig config;
  config.api_keys = {"secret"};
  Server server(config);
  for (const char* path : {"/health", "/completion", "/props", "/no/such/route"}) {
    http::Response r = server.dispatch(request("GET", path));
    EXPECT_EQ(r.status, 503) << path;
    EXPECT_EQ(r.body,
              R"({"error":{"code":503,"message":"Loading model","type":"unavailable_error"}})");
  }
  // Preflight is answered even while loading, without a key.
  http::Response pre = server.dispatch(request("OPTIONS", "/completion"));
  EXPECT_EQ(pre.status, 200);
  EXPECT_EQ(pre.content_type, "text/html");
}

// The pipeline over the in-memory scheduler: every route answers without a model.
class FakePipelineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerConfig config;
    config.endpoint_metrics = true;
    config.model_path = "fake.gguf";
    fake_ = test::make_fake_server(config, test::FakeModel{});  // the synthetic vocabulary
    ASSERT_NE(fake_.server, nullptr);
  }
  test::SettledResponse call(const std::string& method, const std::string& path,
                             const std::string& body = "") {
    http::Request r = request(method, path);
    r.body = body;
    auto settled = test::settle(fake_.server->dispatch(r), std::chrono::seconds(10));
    EXPECT_TRUE(settled) << method << " " << path << " did not answer";
    return settled.value_or(test::SettledResponse{});
  }
  static Json json_of(const test::SettledResponse& r) {
    return Json::parse(r.body, nullptr, false);
  }
  test::FakeServer fake_;
};

TEST_F(FakePipelineTest, CompletionAnswersPendingThenRendered) {
  auto r = call("POST", "/completion", R"({"prompt": "Once upon a time", "n_predict": 3})");
  EXPECT_EQ(r.status, 200);
  Json j = json_of(r);
  EXPECT_EQ(j["tokens_predicted"], 3);
  EXPECT_EQ(j["stop_type"], "limit");
  EXPECT_EQ(j["generation_settings"].size(), 49u);
  EXPECT_EQ(fake_.scheduler->tasks_run(), 1u);
}

TEST_F(FakePipelineTest, StreamIsRenderedFrameByFrame) {
  auto r = call("POST", "/completion",
                R"({"prompt": "Once", "n_predict": 4, "stream": true, "n_probs": 1})");
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.streamed);
  EXPECT_EQ(r.content_type, "text/event-stream");
  size_t frames = 0;
  for (size_t at = 0; (at = r.body.find("data: ", at)) != std::string::npos; at += 6) ++frames;
  EXPECT_EQ(frames, 5u);  // four tokens and the final result
  EXPECT_NE(r.body.find("\"completion_probabilities\""), std::string::npos);
  EXPECT_NE(r.body.rfind("\"stop\":true"), std::string::npos);
}

TEST_F(FakePipelineTest, HeadIsServedWhereGetIs) {
  EXPECT_EQ(call("HEAD", "/health").status, 200);
  EXPECT_EQ(call("HEAD", "/props").status, 200);
  EXPECT_EQ(call("HEAD", "/completion").status, 404);
}

TEST_F(FakePipelineTest, HostileBodiesAre400WithoutTheLibrarysWords) {
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  for (const std::string& body :
       {std::string("{\"prompt\":") + deep + ",\"n_predict\":2}", std::string("{\"prompt\": "),
        std::string(""), std::string("{\"prompt\": NaN}"), std::string("{\"n_predict\": 1e400}"),
        std::string("{\"prompt\": \"\xff\xfe\"}"), std::string("{\"prompt\": \"\\ud800\"}"),
        std::string("{\"prompt\": \"a\0b\"}", 17), std::string("[1,2]")}) {
    auto r = call("POST", "/completion", body);
    EXPECT_EQ(r.status, 400) << body.substr(0, 40);
    const Json j = json_of(r);
    EXPECT_EQ(j["error"]["type"], "invalid_request_error") << body.substr(0, 40);
    EXPECT_EQ(j["error"]["message"].get<std::string>().find("json.exception"), std::string::npos);
  }
}

TEST_F(FakePipelineTest, SchedulerRefusalsMapThroughTheirStatus) {
  fake_.scheduler->stop();  // submit now fails with kResourceExhausted
  auto r = call("POST", "/completion", R"({"prompt": "x"})");
  EXPECT_EQ(r.status, 503);
  EXPECT_EQ(json_of(r)["error"]["type"], "unavailable_error");
}

TEST_F(FakePipelineTest, MetricsCarryTheExtensions) {
  call("POST", "/completion", R"({"prompt": "x", "n_predict": 1})");
  auto r = call("GET", "/metrics");
  EXPECT_EQ(r.status, 200);
  for (const char* name :
       {"llamacpp:kv_cache_usage_ratio", "llamacpp:prefix_cache_hits_total",
        "llamacpp:time_to_first_token_seconds_bucket{model_name=\"fake.gguf\",le=\"+Inf\"}",
        "vllm:num_requests_waiting{model_name=\"fake.gguf\"}", "vllm:kv_cache_usage_perc"}) {
    EXPECT_NE(r.body.find(name), std::string::npos) << name;
  }
}

TEST(ApiErrorTest, TransportErrorsUseTheEnvelope) {
  for (http::TransportError e :
       {http::TransportError::kBadRequest, http::TransportError::kUnknownMethod,
        http::TransportError::kHeadersTooLarge, http::TransportError::kBodyTooLarge,
        http::TransportError::kRequestTimeout, http::TransportError::kTooManyConnections,
        http::TransportError::kHandlerFailed}) {
    http::Response r = transport_error_response(e, "detail");
    const Json j = Json::parse(r.body);
    EXPECT_EQ(r.status, http::transport_status(e));
    EXPECT_EQ(j["error"]["code"], r.status);
    EXPECT_TRUE(j["error"]["message"].is_string());
    EXPECT_TRUE(j["error"]["type"].is_string());
  }
}

TEST(RequestBodyTest, DepthAndSizeLimitsAreClientErrors) {
  Json out;
  EXPECT_FALSE(parse_json_body(std::string(512, '[') + std::string(512, ']'), out));
  auto deep = parse_json_body(std::string(513, '[') + std::string(513, ']'), out);
  ASSERT_TRUE(deep);
  EXPECT_EQ(deep->type, ErrorType::kInvalidRequest);
  EXPECT_NE(deep->message.find("nested deeper than 512 levels"), std::string::npos);
  auto embedded = parse_embedded_json(std::string(60000, '['), "tool call arguments", out);
  ASSERT_TRUE(embedded);
  EXPECT_EQ(embedded->type, ErrorType::kInvalidRequest);
  EXPECT_NE(embedded->message.find("tool call arguments"), std::string::npos) << embedded->message;
}

}  // namespace
}  // namespace hearth::server

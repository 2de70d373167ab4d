// Google Vertex AI mode (other-native-routes.md §18) against the real hearth-server, started
// with the AIP_* variables in its environment.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "server/server_fixture.h"

namespace hearth::test {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

// A port nobody listens on now (the kernel's pick for a socket closed at once).
int free_port() {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  ::close(fd);
  return port;
}

std::string message_of(const Json& envelope) {
  return envelope["error"]["message"].get<std::string>();
}

class VertexTest : public ::testing::Test {
 protected:
  void start(Env env, std::vector<std::string> extra = {}) {
    ASSERT_TRUE(server_.start(stories_args(std::move(extra)), 60, env)) << server_.log();
  }
  int port() const { return server_.port(); }
  ServerProcess server_;
};

// AIP_HTTP_PORT replaces --port; the routes lacking their '/' get one.
TEST_F(VertexTest, PortAndRoutesFromTheEnvironment) {
  const int wanted = free_port();
  ASSERT_GT(wanted, 0);
  start({{"AIP_MODE", "PREDICTION"},
         {"AIP_HTTP_PORT", std::to_string(wanted)},
         {"AIP_HEALTH_ROUTE", "healthz"},
         {"AIP_PREDICT_ROUTE", "run"}});
  EXPECT_EQ(port(), wanted);
  const HttpReply health = http_request(port(), "GET", "/healthz");
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(parse_or_null(health.body)["status"], "ok");
  int status = 0;
  const Json answer = post_json(port(), "/run", {{"instances", Json::array()}}, &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(answer, Json::parse(R"({"predictions": []})"));
  EXPECT_EQ(http_request(port(), "POST", "/predict", "{}").status, 404);  // not the default
}

// Each instance runs through the route its @requestFormat names; the answers keep the
// instances' order, errors included, and the outer status stays 200.
TEST_F(VertexTest, PredictRunsEachInstance) {
  start({{"AIP_MODE", "PREDICTION"}, {"AIP_HTTP_PORT", std::to_string(free_port())}});
  const Json chat = {{"@requestFormat", "chatCompletions"},
                     {"max_tokens", 4},
                     {"messages", {{{"role", "user"}, {"content", "Hi"}}}}};
  Json instances = Json::array();
  instances.push_back(chat);
  instances.push_back({{"@requestFormat", "/v1/completions"},
                       {"prompt", "Once"},
                       {"max_tokens", 3},
                       {"stream", true}});  // forced off: one JSON answer
  instances.push_back({{"@requestFormat", "tokenize"}, {"content", "Once"}});
  instances.push_back(
      {{"@requestFormat", "applyTemplate"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}});
  instances.push_back({{"@requestFormat", "nope"}});
  instances.push_back(5);
  instances.push_back({{"prompt", "no format"}});
  instances.push_back({{"@requestFormat", "completion"}, {"prompt", "x"}, {"n_predict", "many"}});
  int status = 0;
  const Json answer = post_json(port(), "/predict", {{"instances", instances}}, &status);
  ASSERT_EQ(status, 200) << answer.dump();
  const Json& p = answer["predictions"];
  ASSERT_EQ(p.size(), instances.size()) << answer.dump();
  EXPECT_EQ(p[0]["object"], "chat.completion");
  EXPECT_EQ(p[0]["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(p[1]["object"], "text_completion");
  EXPECT_EQ(p[1]["usage"]["completion_tokens"], 3);
  EXPECT_TRUE(p[2]["tokens"].is_array());
  EXPECT_TRUE(p[3]["prompt"].is_string());
  EXPECT_EQ(message_of(p[4]), "no handler registered for @requestFormat: nope");
  EXPECT_EQ(p[4]["error"]["code"], 400);
  EXPECT_EQ(message_of(p[5]), "each instance must be a JSON object");
  EXPECT_EQ(message_of(p[6]), "each instance must include a string @requestFormat");
  EXPECT_EQ(p[7]["error"]["code"], 400);  // the target's own error envelope
}

TEST_F(VertexTest, PredictBodyErrors) {
  start({{"AIP_MODE", "PREDICTION"}, {"AIP_HTTP_PORT", std::to_string(free_port())}});
  const auto answer = [&](const std::string& body) {
    const HttpReply reply = http_request(port(), "POST", "/predict", body);
    EXPECT_EQ(reply.status, 400) << body;
    return parse_or_null(reply.body);
  };
  EXPECT_EQ(answer("{oops")["error"]["type"], "invalid_request_error");
  EXPECT_EQ(message_of(answer("[1]")), "request body must be a JSON object");
  EXPECT_EQ(message_of(answer("{}")), "request body must include an array field named instances");
  EXPECT_EQ(message_of(answer(R"({"instances": {}})")),
            "request body must include an array field named instances");
  Json many = {{"instances", Json::array()}};
  for (int i = 0; i < 129; ++i) many["instances"].push_back({{"@requestFormat", "health"}});
  EXPECT_EQ(message_of(answer(many.dump())), "instances array exceeds maximum size of 128");
}

// The health alias is not public: with an API key it needs the key, /health does not.
TEST_F(VertexTest, HealthAliasNeedsTheKey) {
  start({{"AIP_MODE", "PREDICTION"},
         {"AIP_HTTP_PORT", std::to_string(free_port())},
         {"AIP_HEALTH_ROUTE", "/alive"}},
        {"--api-key", "secret"});
  EXPECT_EQ(http_request(port(), "GET", "/alive").status, 401);
  EXPECT_EQ(http_request(port(), "GET", "/alive", "", {{"Authorization", "Bearer secret"}}).status,
            200);
  EXPECT_EQ(http_request(port(), "GET", "/health").status, 200);
}

// Outside AIP_MODE=PREDICTION the variables change nothing.
TEST_F(VertexTest, OtherModesChangeNothing) {
  start({{"AIP_MODE", "BATCH"}, {"AIP_HTTP_PORT", "1"}});  // port 1 would fail to bind
  EXPECT_EQ(http_request(port(), "POST", "/predict", R"({"instances": []})").status, 404);
}

TEST(VertexStartup, BadEnvironmentIsAStartupError) {
  const std::vector<std::pair<Env, std::string>> cases = {
      {{{"AIP_MODE", "PREDICTION"}, {"AIP_HTTP_PORT", "eighty"}}, "AIP_HTTP_PORT"},
      {{{"AIP_MODE", "PREDICTION"}, {"AIP_HTTP_PORT", "70000"}}, "AIP_HTTP_PORT"},
      {{{"AIP_MODE", "PREDICTION"}, {"AIP_PREDICT_ROUTE", "completion"}},
       "AIP_PREDICT_ROUTE=/completion conflicts with an existing llama-server route"},
  };
  for (const auto& [env, expected] : cases) {
    ServerProcess server;
    EXPECT_FALSE(server.start(stories_args(), 60, env));
    EXPECT_NE(server.log().find(expected), std::string::npos) << server.log();
  }
}

}  // namespace
}  // namespace hearth::test

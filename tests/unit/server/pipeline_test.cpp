// The request pipeline before a model is loaded (no socket needed: Server::dispatch).
#include <gtest/gtest.h>

#include "server/server.h"

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

}  // namespace
}  // namespace hearth::server

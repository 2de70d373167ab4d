// HttpServer with plain (non-streamed) responses: keep-alive, concurrency, decoding,
// limits, errors, timeouts and shutdown.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "unit/http/server_fixture.h"

namespace hearth::server::http::testing {
namespace {

using Clock = std::chrono::steady_clock;

Response echo(const Request& request) {
  std::string body = request.method + " " + request.path;
  for (const auto& [key, value] : request.query) body += " [" + key + "=" + value + "]";
  if (!request.body.empty()) body += " body=" + request.body;
  return text(body);
}

TEST_F(HttpServerTest, KeepAliveServesSeveralRequestsOnOneConnection) {
  start(echo);
  RawClient client(port());
  ASSERT_TRUE(client.is_open());
  for (int i = 0; i < 5; ++i) {
    std::string target = "/item?i=" + std::to_string(i);
    ASSERT_TRUE(i % 2 ? client.send_request("POST", target, "payload" + std::to_string(i))
                      : client.send_request("GET", target));
    auto response = client.read_response();
    ASSERT_TRUE(response) << "request " << i;
    EXPECT_EQ(response->status, 200);
    std::string expected = std::string(i % 2 ? "POST" : "GET") + " /item [i=" + std::to_string(i) +
                           "]" + (i % 2 ? " body=payload" + std::to_string(i) : "");
    EXPECT_EQ(response->body, expected);
    EXPECT_EQ(response->header("Server"), "llama.cpp");
    EXPECT_EQ(response->header("Content-Length"), std::to_string(expected.size()));
    EXPECT_EQ(response->header("Content-Type"), "text/plain");
  }
}

TEST_F(HttpServerTest, PipelinedRequestsAreAnsweredInOrder) {
  start(echo);
  RawClient client(port());
  ASSERT_TRUE(client.send("GET /a HTTP/1.1\r\nHost: x\r\n\r\nGET /b HTTP/1.1\r\nHost: x\r\n\r\n"));
  auto first = client.read_response();
  auto second = client.read_response();
  ASSERT_TRUE(first && second);
  EXPECT_EQ(first->body, "GET /a");
  EXPECT_EQ(second->body, "GET /b");
}

TEST_F(HttpServerTest, ServesManyConnectionsConcurrently) {
  constexpr int kClients = 40;
  std::mutex mutex;
  std::condition_variable all_arrived;
  int arrived = 0;
  // Every handler blocks until all clients are inside a handler at once, which only a
  // server with a thread per connection can satisfy.
  start([&](const Request&) {
    std::unique_lock<std::mutex> lock(mutex);
    ++arrived;
    all_arrived.notify_all();
    bool ok = all_arrived.wait_for(lock, 5s, [&] { return arrived >= kClients; });
    return text(ok ? "together" : "alone");
  });
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < kClients; ++i) {
    clients.push_back(std::make_unique<RawClient>(port()));
    ASSERT_TRUE(clients.back()->send_request("GET", "/wait"));
  }
  for (auto& client : clients) {
    auto response = client->read_response(10s);
    ASSERT_TRUE(response);
    EXPECT_EQ(response->body, "together");
  }
}

TEST_F(HttpServerTest, DecodesPathQueryAndKeepsHeaders) {
  std::mutex mutex;
  Request seen;
  start([&](const Request& request) {
    std::lock_guard<std::mutex> lock(mutex);
    seen = request;
    return text("ok");
  });
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/a%20b/c%2Fd?x=1+2&y=%41%42%2b&z&empty=&x=3&bad=%zz", {},
                                  "X-Custom-Header: Some Value\r\n"));
  ASSERT_TRUE(client.read_response());
  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_EQ(seen.method, "GET");
  EXPECT_EQ(seen.path, "/a b/c/d");
  std::vector<std::pair<std::string, std::string>> expected = {
      {"x", "1 2"}, {"y", "AB+"}, {"z", ""}, {"empty", ""}, {"x", "3"}, {"bad", "%zz"}};
  EXPECT_EQ(seen.query, expected);
  EXPECT_EQ(seen.query_param("x"), "1 2");
  EXPECT_EQ(seen.query_param("missing"), std::nullopt);
  EXPECT_EQ(seen.header("x-custom-header"), "Some Value");
  EXPECT_EQ(seen.header("HOST"), "127.0.0.1");
  EXPECT_EQ(seen.header("Nope"), std::nullopt);
  ASSERT_FALSE(seen.headers.empty());
  EXPECT_EQ(seen.headers[0].first, "Host");  // as received, in order
}

TEST_F(HttpServerTest, AddsExtraHeadersAndHonoursStatus) {
  start([](const Request&) {
    Response response = text("{}", 404);
    response.content_type = "application/json; charset=utf-8";
    response.headers = {{"Access-Control-Allow-Origin", "*"}, {"X-Bad", "a\r\nInjected: 1"}};
    return response;
  });
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/missing"));
  auto response = client.read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 404);
  EXPECT_EQ(response->header("Access-Control-Allow-Origin"), "*");
  EXPECT_EQ(response->header("Content-Type"), "application/json; charset=utf-8");
  EXPECT_EQ(response->header("Injected"), std::nullopt);
  EXPECT_EQ(response->body, "{}");
}

TEST_F(HttpServerTest, BodyOverLimitGets413) {
  ServerOptions options;
  options.max_body_bytes = 1024;
  start(echo, options);
  const std::string kExpected =
      R"({"error":{"code":413,"message":"request body too large","type":"invalid_request_error"}})";
  {
    RawClient client(port());
    ASSERT_TRUE(client.send_request("POST", "/big", std::string(5000, 'x')));
    auto response = client.read_response();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 413);
    EXPECT_EQ(response->body, kExpected);
    EXPECT_EQ(response->header("Server"), "llama.cpp");
    EXPECT_TRUE(client.wait_closed(3s));
  }
  {
    // Chunked request bodies are only known to be too large while reading them.
    RawClient client(port());
    std::string chunk(700, 'y');
    std::string request =
        "POST /big HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n2bc\r\n" + chunk +
        "\r\n2bc\r\n" + chunk + "\r\n0\r\n\r\n";
    ASSERT_TRUE(client.send(request));
    auto response = client.read_response();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 413);
    EXPECT_EQ(response->body, kExpected);
  }
  {
    RawClient client(port());
    ASSERT_TRUE(client.send_request("POST", "/ok", std::string(1024, 'z')));
    auto response = client.read_response();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 200);
  }
}

TEST_F(HttpServerTest, ExpectContinueGetsInterimResponse) {
  start(echo);
  RawClient client(port());
  ASSERT_TRUE(client.send(
      "POST /up HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nExpect: 100-continue\r\n\r\n"));
  auto interim = client.read_head();
  ASSERT_TRUE(interim);
  EXPECT_EQ(interim->status, 100);
  ASSERT_TRUE(client.send("hello"));
  auto response = client.read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "POST /up body=hello");
}

TEST_F(HttpServerTest, MalformedRequestGets400AndClose) {
  start(echo);
  RawClient client(port());
  ASSERT_TRUE(client.send("THIS IS NOT HTTP\r\n\r\n"));
  auto response = client.read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 400);
  EXPECT_TRUE(client.wait_closed(3s));
  // The server is still fine for the next client.
  RawClient next(port());
  ASSERT_TRUE(next.send_request("GET", "/still"));
  auto ok = next.read_response();
  ASSERT_TRUE(ok);
  EXPECT_EQ(ok->status, 200);
}

TEST_F(HttpServerTest, HandlerExceptionGives500Json) {
  start([](const Request&) -> Response { throw std::runtime_error("boom \"quoted\""); });
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/throw"));
  auto response = client.read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 500);
  EXPECT_EQ(response->body,
            R"({"error":{"code":500,"message":"boom \"quoted\"","type":"server_error"}})");
}

TEST_F(HttpServerTest, ClientConnectedTurnsFalseForBlockedHandler) {
  std::atomic<bool> noticed{false};
  std::atomic<bool> started{false};
  start([&](const Request& request) {
    started = true;
    auto deadline = Clock::now() + 5s;
    while (Clock::now() < deadline) {
      if (!request.client_connected()) {
        noticed = true;
        break;
      }
      std::this_thread::sleep_for(20ms);
    }
    return text("late");
  });
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/block"));
  while (!started) std::this_thread::sleep_for(5ms);
  std::this_thread::sleep_for(100ms);
  EXPECT_FALSE(noticed);  // still connected while the client waits
  client.close();
  auto closed_at = Clock::now();
  while (!noticed && Clock::now() - closed_at < 2s) std::this_thread::sleep_for(10ms);
  EXPECT_TRUE(noticed);
  EXPECT_LT(Clock::now() - closed_at, 1s);
}

TEST_F(HttpServerTest, TimeoutDropsSilentConnection) {
  ServerOptions options;
  options.timeout_seconds = 1;
  start(echo, options);
  RawClient silent(port());
  RawClient half(port());
  ASSERT_TRUE(half.send("GET /partial HTTP/1.1\r\nHost:"));
  auto begin = Clock::now();
  EXPECT_TRUE(silent.wait_closed(4s));
  EXPECT_TRUE(half.wait_closed(4s));
  EXPECT_LT(Clock::now() - begin, 3s);
}

TEST_F(HttpServerTest, ExtraConnectionsOverTheCapAreClosed) {
  ServerOptions options;
  options.max_connections = 2;
  start(echo, options);
  RawClient a(port());
  RawClient b(port());
  // A completed request proves each connection was accepted and is being served.
  ASSERT_TRUE(a.send_request("GET", "/a") && a.read_response());
  ASSERT_TRUE(b.send_request("GET", "/b") && b.read_response());
  RawClient c(port());
  c.send_request("GET", "/c");
  EXPECT_TRUE(c.wait_closed(3s));
  b.close();
  // A slot frees up once b's thread has ended.
  auto deadline = Clock::now() + 3s;
  bool served = false;
  while (!served && Clock::now() < deadline) {
    RawClient d(port());
    served = d.send_request("GET", "/d") && d.read_response(500ms).has_value();
    if (!served) std::this_thread::sleep_for(50ms);
  }
  EXPECT_TRUE(served);
}

TEST_F(HttpServerTest, StopReturnsPromptlyWithIdleKeepAliveConnection) {
  start(echo);
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/once"));
  ASSERT_TRUE(client.read_response());
  auto begin = Clock::now();
  server_->stop(std::chrono::milliseconds(5000));
  EXPECT_LT(Clock::now() - begin, 1s);
  run_thread_.join();
  EXPECT_TRUE(client.wait_closed(1s));
  RawClient refused(port());
  EXPECT_TRUE(!refused.is_open() || refused.wait_closed(1s));
}

TEST_F(HttpServerTest, StopLetsInFlightRequestFinish) {
  std::atomic<bool> started{false};
  start([&](const Request&) {
    started = true;
    std::this_thread::sleep_for(300ms);
    return text("finished");
  });
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/slow"));
  while (!started) std::this_thread::sleep_for(5ms);
  server_->stop(std::chrono::milliseconds(5000));
  auto response = client.read_response(1s);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "finished");
  EXPECT_EQ(response->header("Connection"), "close");
}

TEST_F(HttpServerTest, Http10ClosesAfterResponseAndHeadHasNoBody) {
  start(echo);
  RawClient old(port());
  ASSERT_TRUE(old.send("GET /old HTTP/1.0\r\n\r\n"));
  auto response = old.read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "GET /old");
  EXPECT_TRUE(old.wait_closed(2s));

  RawClient client(port());
  ASSERT_TRUE(client.send_request("HEAD", "/h"));
  auto head = client.read_head();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->header("Content-Length"), "7");  // what GET /h would carry: "HEAD /h"
  ASSERT_TRUE(client.send_request("GET", "/next"));
  auto next = client.read_response();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, "GET /next");  // no stray HEAD body before it
}

TEST_F(HttpServerTest, ListenFailsOnABusyPort) {
  start(echo);
  ServerOptions options;
  options.host = "127.0.0.1";
  options.port = port();
  HttpServer second(options, echo);
  Status status = second.listen();
  EXPECT_FALSE(status.is_ok());
  EXPECT_EQ(status.code(), ErrorCode::kIo);
}

}  // namespace
}  // namespace hearth::server::http::testing

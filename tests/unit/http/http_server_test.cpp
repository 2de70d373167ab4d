// HttpServer with plain (non-streamed) responses: keep-alive, concurrency, decoding,
// limits, errors, timeouts and shutdown.
#include <atomic>
#include <condition_variable>
#include <fstream>
#include <functional>
#include <future>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "unit/http/server_fixture.h"

namespace hearth::server::http::testing {
namespace {

using Clock = std::chrono::steady_clock;

bool wait_until(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  while (Clock::now() < deadline) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

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
  std::vector<std::shared_ptr<PendingResponse>> waiting;
  // Every answer waits until all clients are inside a request at once: the I/O threads
  // (far fewer than 40) must not be held by a request that waits.
  start([&](const Request&) {
    auto pending = std::make_shared<PendingResponse>();
    std::vector<std::shared_ptr<PendingResponse>> ready;
    {
      std::lock_guard<std::mutex> lock(mutex);
      waiting.push_back(pending);
      if (waiting.size() == kClients) ready.swap(waiting);
    }
    for (auto& p : ready) p->resolve([] { return text("together"); });
    Response response;
    response.pending = pending;
    return response;
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
  EXPECT_LE(server_->stats().io_threads, 4);
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
  options.render_error = json_errors;
  start(echo, options);
  const std::string kExpected = R"({"status":413})";
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

TEST_F(HttpServerTest, HandlerExceptionIsAnsweredByTheErrorRenderer) {
  ServerOptions options;
  options.render_error = [](TransportError error, std::string_view detail) {
    Response response = text("rendered: " + std::string(detail), transport_status(error));
    return response;
  };
  start([](const Request&) -> Response { throw std::runtime_error("boom"); }, options);
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/throw"));
  auto response = client.read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 500);
  EXPECT_EQ(response->body, "rendered: boom");
}

TEST_F(HttpServerTest, PendingResponseIsCancelledWhenTheClientLeaves) {
  std::promise<void> cancelled;
  std::shared_ptr<PendingResponse> kept;
  start([&](const Request&) {
    auto pending = std::make_shared<PendingResponse>();
    pending->set_on_cancel([&] { cancelled.set_value(); });
    kept = pending;
    Response response;
    response.pending = pending;
    return response;
  });
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/block"));
  auto future = cancelled.get_future();
  EXPECT_EQ(future.wait_for(200ms), std::future_status::timeout);  // still waiting
  client.close();
  EXPECT_EQ(future.wait_for(5s), std::future_status::ready);
  kept->resolve([] { return text("too late"); });  // harmless
}

// A request waiting for its answer while the client pipelines more than the watch keeps
// (64 KiB): the connection must stay alive with no read pending and answer both.
TEST_F(HttpServerTest, PendingResponseSurvivesALargePipelinedRequest) {
  start([this](const Request& request) {
    if (request.path == "/big") return text("big " + std::to_string(request.body.size()));
    auto pending = std::make_shared<PendingResponse>();
    spawn([pending] {
      std::this_thread::sleep_for(300ms);
      pending->resolve([] { return text("slow"); });
    });
    Response response;
    response.pending = pending;
    return response;
  });
  RawClient client(port());
  const std::string big(100 * 1024, 'x');
  ASSERT_TRUE(
      client.send("GET /slow HTTP/1.1\r\nHost: x\r\n\r\nPOST /big HTTP/1.1\r\nHost: "
                  "x\r\nContent-Length: " +
                  std::to_string(big.size()) + "\r\n\r\n" + big));
  auto first = client.read_response(5s);
  ASSERT_TRUE(first);
  EXPECT_EQ(first->body, "slow");
  auto second = client.read_response(5s);
  ASSERT_TRUE(second);
  EXPECT_EQ(second->body, "big 102400");
}

// Handlers of requests with a body run off the I/O threads: two slow ones (parsing and
// tokenizing a large body, say) do not hold up a health check.
TEST_F(HttpServerTest, SlowHandlersDoNotHoldUpRequestsWithoutABody) {
  ServerOptions options;
  options.io_threads = 2;
  // The slow handlers hold both workers until the health check has been answered: if it
  // needed a worker it would never be, whatever the machine's speed.
  std::promise<void> health_answered;
  std::shared_future<void> released = health_answered.get_future().share();
  std::atomic<int> running{0};
  start(
      [&](const Request& request) {
        if (request.body.empty()) return text("healthy");
        ++running;
        released.wait_for(30s);
        return text("slow");
      },
      options);
  RawClient slow1(port());
  RawClient slow2(port());
  ASSERT_TRUE(slow1.send_request("POST", "/slow", "x") && slow2.send_request("POST", "/slow", "y"));
  ASSERT_TRUE(wait_until([&] { return running.load() == 2; }, 10s));
  RawClient health(port());
  ASSERT_TRUE(health.send_request("GET", "/health"));
  auto answer = health.read_response(10s);
  health_answered.set_value();
  ASSERT_TRUE(answer);
  EXPECT_EQ(answer->body, "healthy");
  EXPECT_EQ(slow1.read_response(10s)->body, "slow");
  EXPECT_EQ(slow2.read_response(10s)->body, "slow");
}

TEST_F(HttpServerTest, PendingResponseResolvedFromAnotherThreadKeepsItsHeaders) {
  start([this](const Request&) {
    auto pending = std::make_shared<PendingResponse>();
    spawn([pending] {
      std::this_thread::sleep_for(50ms);
      pending->resolve([] { return text("later", 202); });
    });
    Response response;
    response.pending = pending;
    response.headers = {{"Access-Control-Allow-Origin", "x"}};
    return response;
  });
  RawClient client(port());
  for (int i = 0; i < 2; ++i) {  // and the connection stays usable
    ASSERT_TRUE(client.send_request("GET", "/later"));
    auto response = client.read_response();
    ASSERT_TRUE(response);
    EXPECT_EQ(response->status, 202);
    EXPECT_EQ(response->body, "later");
    EXPECT_EQ(response->header("Access-Control-Allow-Origin"), "x");
  }
}

TEST_F(HttpServerTest, IdleConnectionIsClosedAfterTheTimeout) {
  ServerOptions options;
  options.timeout_seconds = 1;
  start(echo, options);
  RawClient silent(port());
  auto begin = Clock::now();
  EXPECT_TRUE(silent.wait_closed(8s));
  EXPECT_GT(Clock::now() - begin, 800ms);
}

TEST_F(HttpServerTest, SlowHeadersGet408AfterTheHeaderDeadline) {
  ServerOptions options;
  options.timeout_seconds = 60;
  options.header_deadline = 700ms;
  start(echo, options);
  RawClient drip(port());
  ASSERT_TRUE(drip.send("GET /partial HTTP/1.1\r\nHo"));
  auto begin = Clock::now();
  // Each byte comes in time for a per-read timeout, but the headers as a whole do not.
  for (char c : std::string("st: x\r\n")) {
    std::this_thread::sleep_for(150ms);
    if (!drip.send(std::string(1, c))) break;
  }
  auto response = drip.read_response(6s);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 408);
  // The 700 ms deadline, not the 60 s timeout (margin for a loaded machine).
  EXPECT_LT(Clock::now() - begin, 5s);
  EXPECT_TRUE(drip.wait_closed(3s));
}

TEST_F(HttpServerTest, SlowBodyGets408AfterTheTimeout) {
  ServerOptions options;
  options.timeout_seconds = 1;
  start(echo, options);
  RawClient client(port());
  ASSERT_TRUE(client.send("POST /b HTTP/1.1\r\nHost: x\r\nContent-Length: 10\r\n\r\nabc"));
  auto response = client.read_response(4s);
  ASSERT_TRUE(response);
  EXPECT_EQ(response->status, 408);
}

TEST_F(HttpServerTest, HeaderLimitsGive431AndUnknownMethods400) {
  ServerOptions options;
  options.max_header_fields = 8;
  start(echo, options);
  std::string many;
  for (int i = 0; i < 9; ++i) many += "X-H" + std::to_string(i) + ": v\r\n";
  std::vector<std::pair<std::string, int>> cases = {
      {"GET /a HTTP/1.1\r\nHost: x\r\n" + many + "\r\n", 431},
      {"GET /a HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(70000, 'b') + "\r\n\r\n", 431},
      {"FOO /health HTTP/1.1\r\nHost: x\r\n\r\n", 400},
      {"GET /a HTTP/9.9\r\nHost: x\r\n\r\n", 400},
      {"POST /a HTTP/1.1\r\nHost: x\r\nContent-Length: nope\r\n\r\n", 400},
      {"POST /a HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
  };
  for (const auto& [raw, status] : cases) {
    RawClient client(port());
    ASSERT_TRUE(client.send(raw));
    auto response = client.read_response();
    ASSERT_TRUE(response) << raw.substr(0, 40);
    EXPECT_EQ(response->status, status) << raw.substr(0, 40);
    EXPECT_TRUE(client.wait_closed(3s));
  }
  RawClient known(port());
  ASSERT_TRUE(known.send_request("PUT", "/put"));  // known methods reach the dispatcher
  auto response = known.read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "PUT /put");
}

TEST_F(HttpServerTest, AtTheConnectionLimitTheLongestIdleMakesRoom) {
  ServerOptions options;
  options.max_connections = 2;
  start(echo, options);
  RawClient a(port());
  ASSERT_TRUE(a.send_request("GET", "/a") && a.read_response());
  std::this_thread::sleep_for(20ms);
  RawClient b(port());
  ASSERT_TRUE(b.send_request("GET", "/b") && b.read_response());
  RawClient c(port());  // over the limit: `a`, idle longest, is closed for it
  ASSERT_TRUE(c.send_request("GET", "/c"));
  auto response = c.read_response();
  ASSERT_TRUE(response);
  EXPECT_EQ(response->body, "GET /c");
  EXPECT_TRUE(a.wait_closed(2s));
  ASSERT_TRUE(b.send_request("GET", "/b2"));
  EXPECT_TRUE(b.read_response());
  EXPECT_EQ(server_->stats().evicted, 1u);
}

TEST_F(HttpServerTest, AtTheConnectionLimitWithNoneIdleTheNewOneGets503) {
  ServerOptions options;
  options.max_connections = 2;
  options.render_error = json_errors;
  std::mutex mutex;
  std::vector<std::shared_ptr<PendingResponse>> waiting;
  start(
      [&](const Request&) {
        auto pending = std::make_shared<PendingResponse>();
        std::lock_guard<std::mutex> lock(mutex);
        waiting.push_back(pending);
        Response response;
        response.pending = pending;
        return response;
      },
      options);
  RawClient a(port());
  RawClient b(port());
  ASSERT_TRUE(a.send_request("GET", "/a") && b.send_request("GET", "/b"));
  auto deadline = Clock::now() + 2s;
  while (Clock::now() < deadline) {
    std::lock_guard<std::mutex> lock(mutex);
    if (waiting.size() == 2) break;
  }
  RawClient c(port());
  c.send_request("GET", "/c");
  auto refused = c.read_response();
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 503);
  EXPECT_EQ(refused->body, R"({"status":503})");
  EXPECT_TRUE(c.wait_closed(3s));
  {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto& p : waiting) p->resolve([] { return text("done"); });
  }
  auto answered = a.read_response();
  ASSERT_TRUE(answered);
  EXPECT_EQ(answered->body, "done");
  EXPECT_EQ(server_->stats().rejected, 1u);
}

// A flood past the limit: every newcomer is told 503, none is dropped silently (past 64 at
// once the answer is written in one send instead of lingering).
TEST_F(HttpServerTest, EveryConnectionOverTheLimitIsAnswered503) {
  ServerOptions options;
  options.max_connections = 1;
  std::shared_ptr<PendingResponse> held;
  std::mutex mutex;
  start(
      [&](const Request&) {
        auto pending = std::make_shared<PendingResponse>();
        std::lock_guard<std::mutex> lock(mutex);
        held = pending;
        Response response;
        response.pending = pending;
        return response;
      },
      options);
  RawClient busy(port());
  ASSERT_TRUE(busy.send_request("GET", "/busy"));
  auto deadline = Clock::now() + 2s;
  while (Clock::now() < deadline) {
    std::lock_guard<std::mutex> lock(mutex);
    if (held) break;
  }
  std::vector<std::unique_ptr<RawClient>> flood;
  for (int i = 0; i < 100; ++i) flood.push_back(std::make_unique<RawClient>(port()));
  int refused = 0;
  int closed_at_handshake = 0;
  for (auto& client : flood) {
    closed_at_handshake += client->is_open() ? 0 : 1;
    auto response = client->read_response(5s);
    refused += response && response->status == 503 ? 1 : 0;
  }
  if (clients_speak_tls()) {
    // Over TLS an answer needs a handshake first: the 64 lingering carriers give one, the
    // rest are closed at once (still none left waiting).
    EXPECT_GT(refused, 0);
    EXPECT_EQ(refused + closed_at_handshake, 100);
  } else {
    EXPECT_EQ(refused, 100);
  }
  std::lock_guard<std::mutex> lock(mutex);
  held->resolve([] { return text("done"); });
}

TEST_F(HttpServerTest, StopReturnsPromptlyWithIdleKeepAliveConnection) {
  start(echo);
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/once"));
  ASSERT_TRUE(client.read_response());
  auto begin = Clock::now();
  server_->stop(std::chrono::milliseconds(20000));
  // Without waiting out the grace period for the idle connection.
  EXPECT_LT(Clock::now() - begin, 10s);
  run_thread_.join();
  EXPECT_TRUE(client.wait_closed(1s));
  RawClient refused(port());
  EXPECT_TRUE(!refused.is_open() || refused.wait_closed(1s));
}

TEST_F(HttpServerTest, StopLetsInFlightRequestFinish) {
  std::atomic<bool> started{false};
  start([&](const Request&) {
    started = true;
    auto pending = std::make_shared<PendingResponse>();
    spawn([pending] {
      std::this_thread::sleep_for(300ms);
      pending->resolve([] { return text("finished"); });
    });
    Response response;
    response.pending = pending;
    return response;
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

TEST_F(HttpServerTest, ReusePortLetsTwoServersListenOnOnePort) {
  ServerOptions options;
  options.reuse_port = true;
  start(echo, options);
  options.port = port();
  HttpServer second(options, echo);
  EXPECT_TRUE(second.listen().is_ok());
  ServerOptions plain;
  plain.port = port();
  HttpServer third(plain, echo);  // without SO_REUSEPORT the port is taken
  EXPECT_FALSE(third.listen().is_ok());
}

int process_threads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Threads:", 0) == 0) return std::stoi(line.substr(8));
  }
  return -1;
}

TEST_F(HttpServerTest, IoThreadsFollowTheOption) {
  const int before = process_threads();
  ServerOptions options;
  options.io_threads = 3;
  start(echo, options);
  EXPECT_EQ(server_->stats().io_threads, 3);
  EXPECT_EQ(server_->stats().worker_threads, 12);
  EXPECT_EQ(server_->stats().large_body_worker_threads, 3);
  // The fixture's thread runs run(), which starts two more (three I/O threads), beside twelve
  // workers for handlers and three for the handlers of large bodies.
  EXPECT_TRUE(wait_until([&] { return process_threads() == before + 18; }, 2s))
      << process_threads() - before << " threads started";
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/x"));
  EXPECT_TRUE(client.read_response());
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

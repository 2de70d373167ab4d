// HttpServer with streamed (chunked SSE) responses.
#include <atomic>
#include <future>
#include <thread>

#include "unit/http/server_fixture.h"

namespace hearth::server::http::testing {
namespace {

using Clock = std::chrono::steady_clock;

Response sse(std::shared_ptr<StreamBody> body, std::chrono::seconds ping = {}) {
  Response response;
  response.content_type = "text/event-stream";
  response.headers = {{"X-Accel-Buffering", "no"}};
  response.stream = std::move(body);
  response.ping_interval = ping;
  return response;
}

TEST_F(HttpServerTest, StreamsChunksInOrderThenKeepsConnection) {
  start([this](const Request& request) {
    if (request.path != "/stream") return text("plain");
    auto body = std::make_shared<StreamBody>();
    spawn([body] {
      for (int i = 0; i < 5; ++i) {
        body->push("data: " + std::to_string(i) + "\n\n");
        std::this_thread::sleep_for(std::chrono::milliseconds(i == 2 ? 50 : 0));
      }
      body->push("");  // dropped: an empty chunk would end the body
      body->close();
    });
    return sse(body);
  });
  RawClient client(port());
  ASSERT_TRUE(client.send_request("POST", "/stream", "{}"));
  auto head = client.read_head();
  ASSERT_TRUE(head);
  EXPECT_EQ(head->status, 200);
  EXPECT_EQ(head->header("Content-Type"), "text/event-stream");
  EXPECT_EQ(head->header("Transfer-Encoding"), "chunked");
  EXPECT_EQ(head->header("X-Accel-Buffering"), "no");
  EXPECT_EQ(head->header("Server"), "llama.cpp");
  EXPECT_EQ(head->header("Content-Length"), std::nullopt);
  std::string joined;
  for (;;) {
    auto chunk = client.read_chunk();
    ASSERT_TRUE(chunk);
    if (chunk->empty()) break;
    joined += *chunk;
  }
  EXPECT_EQ(joined, "data: 0\n\ndata: 1\n\ndata: 2\n\ndata: 3\n\ndata: 4\n\n");
  // The connection stays usable after the last chunk.
  ASSERT_TRUE(client.send_request("GET", "/after"));
  auto next = client.read_response();
  ASSERT_TRUE(next);
  EXPECT_EQ(next->body, "plain");
}

TEST_F(HttpServerTest, EachPushArrivesAsItsOwnChunkWithoutWaitingForClose) {
  auto body = std::make_shared<StreamBody>();
  start([body](const Request&) { return sse(body); });
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/s"));
  ASSERT_TRUE(client.read_head());
  body->push("first");
  EXPECT_EQ(client.read_chunk(2s), "first");
  body->push("second");
  EXPECT_EQ(client.read_chunk(2s), "second");
  body->close();
  EXPECT_EQ(client.read_chunk(2s), "");
}

TEST_F(HttpServerTest, SendsPingChunkWhenIdle) {
  start([this](const Request&) {
    auto body = std::make_shared<StreamBody>();
    spawn([body] {
      body->push("a");
      std::this_thread::sleep_for(1400ms);
      body->push("b");
      body->close();
    });
    return sse(body, std::chrono::seconds(1));
  });
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/ping"));
  auto response = client.read_response(5s);
  ASSERT_TRUE(response);
  std::vector<std::string> expected = {"a", ":\n\n", "b"};
  EXPECT_EQ(response->chunks, expected);
}

TEST_F(HttpServerTest, ClientDisconnectMidStreamAbandons) {
  for (bool reset : {false, true}) {
    auto body = std::make_shared<StreamBody>();
    std::promise<void> called;
    std::atomic<int> calls{0};
    body->set_on_abandon([&] {
      if (calls++ == 0) called.set_value();
    });
    start([this, body](const Request&) {
      spawn([body] {
        // A producer that keeps generating until it learns nobody listens.
        while (!body->abandoned()) {
          body->push("data: token\n\n");
          std::this_thread::sleep_for(10ms);
        }
      });
      return sse(body);
    });
    RawClient client(port());
    ASSERT_TRUE(client.send_request("POST", "/completion", "{}"));
    ASSERT_TRUE(client.read_head());
    ASSERT_TRUE(client.read_chunk());
    client.close(reset);
    auto closed_at = Clock::now();
    EXPECT_EQ(called.get_future().wait_for(5s), std::future_status::ready) << "reset=" << reset;
    while (!body->abandoned() && Clock::now() - closed_at < 2s) {
      std::this_thread::sleep_for(5ms);
    }
    EXPECT_TRUE(body->abandoned());
    TearDown();
    server_.reset();
    helpers_.clear();
    EXPECT_EQ(calls.load(), 1);
  }
}

TEST_F(HttpServerTest, SilentStreamNoticesDisconnectWithoutPings) {
  auto body = std::make_shared<StreamBody>();
  std::promise<void> called;
  body->set_on_abandon([&] { called.set_value(); });
  start([body](const Request&) { return sse(body); });  // no pings, nothing pushed
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/quiet"));
  ASSERT_TRUE(client.read_head());
  client.close();
  EXPECT_EQ(called.get_future().wait_for(1s), std::future_status::ready);
}

TEST_F(HttpServerTest, ClientThatStopsReadingIsCutAfterTheTimeout) {
  ServerOptions options;
  options.timeout_seconds = 1;
  auto body = std::make_shared<StreamBody>();
  std::promise<void> abandoned;
  body->set_on_abandon([&] { abandoned.set_value(); });
  start(
      [this, body](const Request&) {
        spawn([body] {
          // A producer that honours backpressure: it waits while its output is queued.
          const std::string frame = "data: " + std::string(64 * 1024, 'x') + "\n\n";
          while (!body->abandoned()) {
            if (body->queued_bytes() < (1u << 20)) body->push(frame);
            std::this_thread::sleep_for(1ms);
          }
        });
        return sse(body);
      },
      options);
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/firehose"));
  ASSERT_TRUE(client.read_head());
  // The client reads nothing more: the socket buffers fill, the write blocks, and after the
  // timeout the server gives up on it.
  auto begin = Clock::now();
  EXPECT_EQ(abandoned.get_future().wait_for(10s), std::future_status::ready);
  EXPECT_GT(Clock::now() - begin, 900ms);
  EXPECT_LE(body->queued_bytes(), 0u);  // dropped with the stream
  EXPECT_TRUE(client.wait_closed(5s));
}

// Late notifications and pings of a finished stream must not touch the next response on
// the same connection (a producer may notify after it closed the stream).
TEST_F(HttpServerTest, KeepAliveStreamsBackToBackStayFramed) {
  start([this](const Request& request) {
    if (request.path == "/plain") return text("plain");
    auto body = std::make_shared<StreamBody>();
    spawn([body] {
      body->push("a");
      body->push("b");
      body->close();
      body->push("late");  // ignored, but notifies nobody harmful
    });
    return sse(body, std::chrono::seconds(1));
  });
  RawClient client(port());
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(client.send_request("GET", "/stream"));
    auto streamed = client.read_response();
    ASSERT_TRUE(streamed) << i;
    EXPECT_EQ(streamed->body, "ab") << i;
    ASSERT_TRUE(client.send_request("GET", "/plain"));
    auto plain = client.read_response();
    ASSERT_TRUE(plain) << i;
    EXPECT_EQ(plain->body, "plain") << i;
  }
}

TEST_F(HttpServerTest, StopEndsAStreamWhoseProducerNeverCloses) {
  auto body = std::make_shared<StreamBody>();
  start([body](const Request&) { return sse(body); });
  RawClient client(port());
  ASSERT_TRUE(client.send_request("GET", "/forever"));
  ASSERT_TRUE(client.read_head());
  auto begin = Clock::now();
  server_->stop(std::chrono::milliseconds(200));
  // It does not wait for a producer that never closes (margin for a loaded machine).
  EXPECT_LT(Clock::now() - begin, 8s);
  EXPECT_TRUE(body->abandoned());
  EXPECT_TRUE(client.wait_closed(1s));
}

}  // namespace
}  // namespace hearth::server::http::testing

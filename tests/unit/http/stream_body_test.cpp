// StreamBody (the simple StreamSource) and PendingResponse, without a socket.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "server/http/http.h"

namespace hearth::server::http {
namespace {

TEST(StreamBodyTest, TakesChunksInOrderThenReportsEnd) {
  StreamBody body;
  body.push("a");
  body.push("");
  body.push("b");
  std::string out;
  EXPECT_FALSE(body.take(out, 1024));
  EXPECT_EQ(out, "ab");
  body.close();
  body.push("ignored after close");
  out.clear();
  EXPECT_TRUE(body.take(out, 1024));
  EXPECT_EQ(out, "");
}

TEST(StreamBodyTest, TakeStopsAtTheByteBudgetButAlwaysTakesOneChunk) {
  StreamBody body;
  body.push(std::string(10, 'x'));
  body.push(std::string(10, 'y'));
  std::string out;
  EXPECT_FALSE(body.take(out, 4));  // one whole chunk even over the budget
  EXPECT_EQ(out, std::string(10, 'x'));
  out.clear();
  body.close();
  EXPECT_TRUE(body.take(out, 4));
  EXPECT_EQ(out, std::string(10, 'y'));
}

TEST(StreamBodyTest, NotifiesOnPushAndClose) {
  StreamBody body;
  int notified = 0;
  body.set_notify([&] { ++notified; });
  body.push("x");
  body.push("");  // nothing to tell
  body.close();
  EXPECT_EQ(notified, 2);
}

TEST(StreamBodyTest, AbandonRunsCallbackOnceAndDropsChunks) {
  StreamBody body;
  int calls = 0;
  body.set_on_abandon([&] { ++calls; });
  body.push("queued");
  EXPECT_FALSE(body.abandoned());
  body.abandon();
  body.abandon();
  EXPECT_EQ(calls, 1);
  EXPECT_TRUE(body.abandoned());
  body.push("dropped");
  std::string out;
  body.take(out, 1024);
  EXPECT_EQ(out, "");
}

TEST(StreamBodyTest, CallbackSetAfterAbandonRunsAtOnce) {
  StreamBody body;
  body.abandon();
  int calls = 0;
  body.set_on_abandon([&] { ++calls; });
  EXPECT_EQ(calls, 1);
}

TEST(StreamBodyTest, ConcurrentProducerLosesNothing) {
  StreamBody body;
  constexpr int kChunks = 2000;
  std::thread producer([&] {
    for (int i = 0; i < kChunks; ++i) body.push(std::to_string(i) + ",");
    body.close();
  });
  std::string all;
  while (!body.take(all, 64)) std::this_thread::yield();
  producer.join();
  std::string expected;
  for (int i = 0; i < kChunks; ++i) expected += std::to_string(i) + ",";
  EXPECT_EQ(all, expected);
}

TEST(PendingResponseTest, ReadyRunsOnceWhicheverComesFirst) {
  for (bool resolve_first : {true, false}) {
    PendingResponse pending;
    int ready_calls = 0;
    int status = 0;
    auto render = [] {
      Response r;
      r.status = 201;
      return r;
    };
    auto ready = [&](PendingResponse::Render make) {
      ++ready_calls;
      status = make().status;
    };
    if (resolve_first) {
      pending.resolve(render);
      pending.on_ready(ready);
    } else {
      pending.on_ready(ready);
      pending.resolve(render);
    }
    pending.resolve(render);  // only the first counts
    EXPECT_EQ(ready_calls, 1) << resolve_first;
    EXPECT_EQ(status, 201);
  }
}

TEST(PendingResponseTest, CancelTellsTheProducerOnceAndDropsTheAnswer) {
  PendingResponse pending;
  int cancels = 0;
  int ready_calls = 0;
  pending.set_on_cancel([&] { ++cancels; });
  pending.on_ready([&](PendingResponse::Render) { ++ready_calls; });
  EXPECT_FALSE(pending.cancelled());
  pending.cancel();
  pending.cancel();
  EXPECT_TRUE(pending.cancelled());
  EXPECT_EQ(cancels, 1);
  pending.resolve([] { return Response{}; });
  EXPECT_EQ(ready_calls, 0);
  int late = 0;
  pending.set_on_cancel([&] { ++late; });  // registered after the fact: runs at once
  EXPECT_EQ(late, 1);
}

}  // namespace
}  // namespace hearth::server::http

#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "server/http/http.h"

namespace hearth::server::http {
namespace {

using namespace std::chrono_literals;

TEST(StreamBodyTest, DeliversChunksInOrderThenReportsClosed) {
  StreamBody body;
  body.push("a");
  body.push("");
  body.push("b");
  body.close();
  body.push("ignored after close");
  bool closed = false;
  EXPECT_EQ(body.next(0ms, closed), "a");
  EXPECT_FALSE(closed);
  EXPECT_EQ(body.next(0ms, closed), "b");
  EXPECT_FALSE(closed);
  EXPECT_EQ(body.next(0ms, closed), std::nullopt);
  EXPECT_TRUE(closed);
}

TEST(StreamBodyTest, NextTimesOutAndWakesForAPush) {
  StreamBody body;
  bool closed = true;
  EXPECT_EQ(body.next(20ms, closed), std::nullopt);
  EXPECT_FALSE(closed);
  std::thread producer([&] {
    std::this_thread::sleep_for(20ms);
    body.push("late");
  });
  auto begin = std::chrono::steady_clock::now();
  EXPECT_EQ(body.next(5s, closed), "late");
  EXPECT_LT(std::chrono::steady_clock::now() - begin, 2s);
  producer.join();
}

TEST(StreamBodyTest, AbandonRunsCallbackOnceAndDropsChunks) {
  StreamBody body;
  int calls = 0;
  bool abandoned_inside = true;
  body.set_on_abandon([&] {
    ++calls;
    abandoned_inside = body.abandoned();
  });
  body.push("queued");
  EXPECT_FALSE(body.abandoned());
  body.abandon();
  body.abandon();
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(abandoned_inside);  // the callback runs before abandoned() turns true
  EXPECT_TRUE(body.abandoned());
  body.push("dropped");
  bool closed = false;
  EXPECT_EQ(body.next(0ms, closed), std::nullopt);
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
    for (int i = 0; i < kChunks; ++i) body.push(std::to_string(i));
    body.close();
  });
  int expected = 0;
  bool closed = false;
  while (!closed) {
    auto chunk = body.next(1s, closed);
    if (chunk) {
      EXPECT_EQ(*chunk, std::to_string(expected++));
    }
  }
  producer.join();
  EXPECT_EQ(expected, kChunks);
}

}  // namespace
}  // namespace hearth::server::http

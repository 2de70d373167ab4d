// hearth-server as an attacker and a busy deployment meet it: thousands of idle
// connections, clients dripping their headers, a client that stops reading its stream,
// hostile JSON, and a battery of malformed requests. Each probe is bounded in count and
// time; the server must stay responsive to everyone else throughout.
#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <thread>

#include "server/hardening_util.h"
#include "server/server_fixture.h"

namespace hearth::test {
namespace {

using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

class ServerHardening : public StoriesServer {};

// A stream that never ends on its own (no end of text, no budget) with large frames (every
// token with all 512 candidate probabilities), which fill socket buffers quickly.
std::string endless_stream_request() {
  const std::string body = Json{
      {"prompt", "Once upon a time"},
      {"n_predict", -1},
      {"ignore_eos", true},
      {"n_probs", 512},
      {"stream", true}}.dump();
  return "POST /completion HTTP/1.1\r\nHost: x\r\nContent-Length: " + std::to_string(body.size()) +
         "\r\n\r\n" + body;
}

TEST_F(ServerHardening, HoldsFiveThousandIdleConnectionsWhileServing) {
  constexpr int kIdle = 5000;
  if (!raise_descriptor_limit(kIdle + 200)) {
    GTEST_SKIP() << "the open-file limit is below " << kIdle + 200 << " (ulimit -Hn)";
  }
  start();
  const int threads_before = thread_count(server_.pid());
  std::vector<int> idle = open_idle_connections(port(), kIdle);
  ASSERT_EQ(static_cast<int>(idle.size()), kIdle);
  // Every connection is held open by the server (none answered, none closed).
  EXPECT_TRUE(wait_for([&] { return open_descriptors(server_.pid()) >= kIdle; }, 10s))
      << open_descriptors(server_.pid()) << " descriptors open in the server";
  const auto begin = Clock::now();
  int status = 0;
  Json r = post_json(port(), "/completion",
                     Json{{"prompt", "Once upon a time"}, {"n_predict", 8}, {"temperature", 0}},
                     &status);
  const auto elapsed = Clock::now() - begin;
  EXPECT_EQ(status, 200) << r.dump();
  // Served, not starved by the idle connections (about 20 ms alone; the margin holds under
  // the sanitizers on two busy cores).
  EXPECT_LT(elapsed, 10s);
  EXPECT_EQ(http_request(port(), "GET", "/health").status, 200);
  const int threads = thread_count(server_.pid());
  // A few I/O threads serve them all: no thread per connection.
  EXPECT_LE(threads, threads_before + 2);
  RecordProperty("server_threads_with_5000_idle_connections", threads);
  std::printf("hearth-server threads with %d idle connections: %d\n", kIdle, threads);
  EXPECT_EQ(count_closed(idle), 0);
  close_all(idle);
}

TEST_F(ServerHardening, HeaderDrippersAreCutAtTheDeadlineWhileOthersAreServed) {
  constexpr int kDrippers = 200;
  start({"--timeout", "2"});  // header deadline: min(10 s, --timeout)
  std::vector<int> drippers = open_idle_connections(port(), kDrippers);
  ASSERT_EQ(static_cast<int>(drippers.size()), kDrippers);
  for (int fd : drippers) send_all(fd, "GET /health HTTP/1.1\r\nX-Slow: ");
  const auto begin = Clock::now();
  // Each dripper sends one byte every 300 ms: in time for any per-read timeout, never done.
  std::atomic<bool> dripping{true};
  std::thread drip([&] {
    while (dripping) {
      for (int fd : drippers) send_all(fd, "a");
      std::this_thread::sleep_for(300ms);
    }
  });
  int served = 0;
  while (Clock::now() - begin < 1500ms) {
    int status = 0;
    post_json(port(), "/completion", Json{{"prompt", "Once"}, {"n_predict", 4}}, &status);
    served += status == 200 ? 1 : 0;
    EXPECT_EQ(http_request(port(), "GET", "/health").status, 200);
  }
  EXPECT_GT(served, 0);
  // Past the deadline every dripper has its 408 and is closed.
  std::vector<std::string> answers = read_until_closed(drippers, 6s);
  dripping = false;
  drip.join();
  const auto elapsed = Clock::now() - begin;
  int timed_out = 0;
  for (const std::string& answer : answers) {
    timed_out += answer.rfind("HTTP/1.1 408", 0) == 0 ? 1 : 0;
  }
  EXPECT_EQ(timed_out, kDrippers);
  // Cut at the 2 s deadline, not at the 60 s timeout (margin for a loaded machine).
  EXPECT_LT(elapsed, 9s);
  close_all(drippers);
  EXPECT_EQ(http_request(port(), "GET", "/health").status, 200);
}

TEST_F(ServerHardening, ClientThatStopsReadingLosesItsStreamAndSlot) {
  start({"-np", "1", "--timeout", "2"});
  // Large frames (every token with all 512 candidate probabilities) fill the socket buffers
  // after a few hundred tokens; the client then reads nothing.
  const int fd = connect_with_small_buffer(port());
  ASSERT_GE(fd, 0);
  send_all(fd, endless_stream_request());
  // While the client is stalled, backpressure holds the slot (it generates nothing more).
  EXPECT_TRUE(wait_for([&] { return slot_busy(port(), 0); }, 3s));
  std::this_thread::sleep_for(1s);
  EXPECT_TRUE(slot_busy(port(), 0));
  // Past the write timeout the server gives up on the client: the slot is freed...
  const auto begin = Clock::now();
  EXPECT_TRUE(wait_for([&] { return !slot_busy(port(), 0); }, 10s));
  EXPECT_LT(Clock::now() - begin, 9s);
  // ...the connection is closed, and the stream never reached its final frame.
  std::string received = drain_until_closed(fd, 10s);
  EXPECT_EQ(received.find("\"stop\":true"), std::string::npos);
  ::close(fd);
  int status = 0;
  post_json(port(), "/completion", Json{{"prompt", "Once"}, {"n_predict", 2}}, &status);
  EXPECT_EQ(status, 200);
}

TEST_F(ServerHardening, SigtermWithStreamsInFlightEndsEachWithAnErrorFrame) {
  start();
  // Four streams held in flight: large frames, and clients that read nothing yet.
  std::vector<int> fds;
  for (int i = 0; i < 4; ++i) {
    fds.push_back(connect_with_small_buffer(port()));
    ASSERT_GE(fds.back(), 0);
    send_all(fds.back(), endless_stream_request());
  }
  ASSERT_TRUE(wait_for(
      [&] {
        for (int id = 0; id < 4; ++id) {
          if (!slot_busy(port(), id)) return false;
        }
        return true;
      },
      5s));
  const auto begin = Clock::now();
  int code = -2;
  std::thread stopper([&] { code = server_.stop(10); });
  std::this_thread::sleep_for(50ms);
  const std::vector<std::string> received = read_until_closed(fds, 8s);
  stopper.join();
  EXPECT_EQ(code, 0);
  EXPECT_LT(Clock::now() - begin, 8s);
  for (const std::string& stream : received) {
    const size_t last = stream.rfind("data: ");
    ASSERT_NE(last, std::string::npos);
    const std::string frame = stream.substr(last, stream.find('\n', last) - last);
    EXPECT_NE(frame.find("\"error\""), std::string::npos) << frame.substr(0, 200);
    EXPECT_NE(frame.find("shutting down"), std::string::npos) << frame.substr(0, 200);
  }
  close_all(fds);
}

// Generated text that is not valid UTF-8 (byte-fallback tokens forced by a logit bias; <0x83>
// is a lone continuation byte) is the model's output, not an error: 200 with U+FFFD in
// place of the broken bytes and the token ids intact (the reference answers 500).
TEST_F(ServerHardening, InvalidUtf8OutputIsReturnedWithReplacementCharacters) {
  start();
  const Json body = {{"prompt", "Once upon"},
                     {"n_predict", 4},
                     {"temperature", 0},
                     {"return_tokens", true},
                     {"logit_bias", Json::array({Json::array({134, 100})})}};
  int status = 0;
  const Json r = post_json(port(), "/completion", body, &status);
  ASSERT_EQ(status, 200) << r.dump();
  EXPECT_EQ(r["content"], "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(r["tokens"], Json::array({134, 134, 134, 134}));
}

}  // namespace
}  // namespace hearth::test

// Concurrency: many streaming clients at once get exactly what each request gets alone;
// a client that goes away frees its slot at once; /slots tells a full server.
#include <atomic>
#include <chrono>
#include <thread>

#include "server/server_fixture.h"

namespace hearth::test {
namespace {

Json completion_body(int i, bool stream) {
  static const char* kPrompts[] = {"Once upon a time", "The little dog", "Tom and Sue",
                                   "One day, a cat", "Lily saw a big red ball"};
  return Json{{"prompt", kPrompts[i % 5]},
              {"n_predict", 8 + (i * 7) % 24},
              {"temperature", 0},
              {"stream", stream},
              {"cache_prompt", i % 3 != 0}};
}

// The concatenated content and the token ids of a streamed completion.
std::pair<std::string, std::vector<int>> streamed(int port, const Json& body, std::string* error) {
  HttpReply reply = http_request(port, "POST", "/completion", body.dump());
  std::string content;
  std::vector<int> tokens;
  if (reply.status != 200) {
    *error = "status " + std::to_string(reply.status) + ": " + reply.body;
    return {};
  }
  for (const std::string& payload : sse_payloads(reply.body)) {
    Json frame = parse_or_null(payload);
    if (!frame.is_object() || frame.contains("error")) {
      *error = payload;
      return {};
    }
    if (frame["stop"] == false) {
      content += frame["content"].get<std::string>();
      for (int t : frame["tokens"]) tokens.push_back(t);
    }
  }
  return {content, tokens};
}

class ServerLoad : public StoriesServer {};

TEST_F(ServerLoad, ConcurrentStreamsMatchRequestsServedAlone) {
  start();
  constexpr int kRequests = 64, kClients = 16;
  std::vector<std::pair<std::string, std::vector<int>>> alone(kRequests), together(kRequests);
  std::vector<std::string> errors(kRequests);
  for (int i = 0; i < kRequests; ++i)
    alone[i] = streamed(port(), completion_body(i, true), &errors[i]);
  std::atomic<int> next{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < kClients; ++c) {
    clients.emplace_back([&] {
      for (int i = next++; i < kRequests; i = next++) {
        together[i] = streamed(port(), completion_body(i, true), &errors[i]);
      }
    });
  }
  for (std::thread& t : clients) t.join();
  for (int i = 0; i < kRequests; ++i) {
    EXPECT_EQ(errors[i], "") << "request " << i;
    EXPECT_FALSE(alone[i].second.empty()) << "request " << i;
    EXPECT_EQ(together[i], alone[i]) << "request " << i;
  }
}

bool slot_busy(int port, int slot) {
  Json slots = parse_or_null(http_request(port, "GET", "/slots").body);
  return slots.is_array() && slots[slot]["is_processing"] == true;
}

TEST_F(ServerLoad, ClientThatLeavesFreesItsSlot) {
  start({"-np", "1", "-c", "4096", "-n", "-1"});
  RawConnection conn(port());
  ASSERT_TRUE(conn.send_request(
      "POST", "/completion",
      R"({"prompt":"Once upon a time","n_predict":4000,"stream":true,"ignore_eos":true})"));
  const std::string first = conn.read_until("data: ", 10000);
  ASSERT_NE(first.find("data: "), std::string::npos) << first;
  EXPECT_TRUE(slot_busy(port(), 0));
  HttpReply full = http_request(port(), "GET", "/slots?fail_on_no_slot=1");
  EXPECT_EQ(full.status, 503);
  EXPECT_EQ(parse_or_null(full.body)["error"]["message"], "no slot available");
  conn.close();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (slot_busy(port(), 0) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(slot_busy(port(), 0)) << "slot still busy 1 s after the client left";
  EXPECT_EQ(http_request(port(), "GET", "/slots?fail_on_no_slot=1").status, 200);
  int status = 0;
  post_json(port(), "/completion", Json{{"prompt", "Hi"}, {"n_predict", 3}}, &status);
  EXPECT_EQ(status, 200);
}

TEST_F(ServerLoad, NonStreamingClientThatLeavesIsCancelled) {
  start({"-np", "1", "-c", "4096"});
  RawConnection conn(port());
  ASSERT_TRUE(
      conn.send_request("POST", "/completion",
                        R"({"prompt":"Once upon a time","n_predict":4000,"ignore_eos":true})"));
  const auto busy_deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (!slot_busy(port(), 0) && std::chrono::steady_clock::now() < busy_deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  conn.close();
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (slot_busy(port(), 0) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(slot_busy(port(), 0));
}

TEST_F(ServerLoad, SigtermEndsInFlightWorkAndExitsZero) {
  start({"-np", "2"});
  std::thread client([&] {
    http_request(port(), "POST", "/completion",
                 R"({"prompt":"Once upon a time","n_predict":400,"stream":true})");
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_EQ(server_.stop(10), 0) << server_.log();
  client.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(8));
}

}  // namespace
}  // namespace hearth::test

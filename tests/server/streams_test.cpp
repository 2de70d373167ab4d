// Resumable streams (other-native-routes.md §15) against the real hearth-server: a streaming
// generation sent with X-Conversation-Id is buffered, survives its client, is replayed from a
// byte offset by GET /v1/stream, ended by DELETE, listed by POST /v1/streams/lookup.
//
// Nothing here depends on speed: where a generation must still be running at some point, it
// waits for the only slot, held by a plain stream whose client does not read (frames of
// ~36 KB each fill the socket buffers, and the server then pauses it, long before its 1900
// tokens).
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "server/server_fixture.h"

namespace hearth::test {
namespace {

using Headers = std::vector<std::pair<std::string, std::string>>;

Headers conv(const std::string& id) {
  return {{"X-Conversation-Id", id}};
}

const Json kNative = {{"prompt", "Once upon a time"}, {"n_predict", 40}, {"stream", true}};

Json lookup(int port, const std::vector<std::string>& ids) {
  return post_json(port, "/v1/streams/lookup", {{"conversation_ids", ids}});
}

HttpReply get_stream(int port, const std::string& id, const std::string& from = "") {
  std::string path = "/v1/stream?conv_id=" + id;
  if (!from.empty()) path += "&from=" + from;
  return http_request(port, "GET", path);
}

// Waits (30 s at most) until the server lists session `id`: its request was taken.
bool wait_for_session(int port, const std::string& id) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (lookup(port, {id}).size() == 1) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Holds the only slot (see the file comment) until close().
class SlotBlocker {
 public:
  explicit SlotBlocker(int port) : conn_(port) {}
  bool start() {
    const Json body = {{"prompt", "Once"}, {"n_predict", 1900}, {"n_probs", 512}, {"stream", true}};
    if (!conn_.send_request("POST", "/completion", body.dump())) return false;
    return conn_.read_until("data: ", 30000).find("data: ") != std::string::npos;
  }
  void close() { conn_.close(); }

 private:
  RawConnection conn_;
};

// The last `data:` payload of an SSE body, parsed (null if none).
Json last_event(const std::string& body) {
  const auto payloads = sse_payloads(body);
  return payloads.empty() ? Json() : parse_or_null(payloads.back());
}

class StreamsTest : public StoriesServer {};

// Each generating route honours the header (/infill too, by the same wrapper, but
// stories260K has no FIM tokens to show it): its stream read again from 0 is byte for byte
// what its client received, and from an offset is that stream's suffix.
TEST_F(StreamsTest, ReplayIsTheOriginalStreamOnEveryGeneratingRoute) {
  start();
  const Json chat = {
      {"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 20}, {"stream", true}};
  const std::vector<std::pair<std::string, Json>> routes = {
      {"/completion", kNative},
      {"/completions", kNative},
      {"/v1/completions", {{"prompt", "Once"}, {"max_tokens", 20}, {"stream", true}}},
      {"/v1/chat/completions", chat},
      {"/chat/completions", chat},
      {"/v1/messages", chat},
      {"/v1/responses", {{"input", "Hi"}, {"max_output_tokens", 20}, {"stream", true}}},
      {"/responses", {{"input", "Hi"}, {"max_output_tokens", 20}, {"stream", true}}},
  };
  for (size_t i = 0; i < routes.size(); ++i) {
    const auto& [path, body] = routes[i];
    SCOPED_TRACE(path);
    const std::string id = "replay-" + std::to_string(i);
    const HttpReply original = http_request(port(), "POST", path, body.dump(), conv(id));
    ASSERT_EQ(original.status, 200) << original.body;
    ASSERT_FALSE(original.body.empty());

    const HttpReply replay = get_stream(port(), id, "0");
    EXPECT_EQ(replay.status, 200);
    EXPECT_EQ(replay.header("content-type"), "text/event-stream");
    EXPECT_EQ(replay.body, original.body);

    const size_t middle = original.body.size() / 2;
    EXPECT_EQ(get_stream(port(), id, std::to_string(middle)).body, original.body.substr(middle));
    EXPECT_EQ(get_stream(port(), id).body, original.body);  // `from` defaults to 0

    const Json listed = lookup(port(), {id});
    ASSERT_EQ(listed.size(), 1u) << listed.dump();
    EXPECT_EQ(listed[0]["conversation_id"], id);
    EXPECT_EQ(listed[0]["is_done"], true);
    EXPECT_EQ(listed[0]["total_bytes"], original.body.size());
  }
}

// A plain stream is what it always was: no header, no session.
TEST_F(StreamsTest, OnlyStreamsWithTheHeaderAreKept) {
  start();
  ASSERT_EQ(http_request(port(), "POST", "/completion", kNative.dump()).status, 200);
  Json plain = kNative;
  plain["stream"] = false;
  const HttpReply answer = http_request(port(), "POST", "/completion", plain.dump(), conv("ns"));
  EXPECT_EQ(answer.status, 200);
  EXPECT_EQ(parse_or_null(answer.body)["stop"], true) << answer.body;
  EXPECT_EQ(lookup(port(), {"ns"}), Json::array());

  // A request refused before it streams leaves nothing either.
  Json bad = kNative;
  bad["n_predict"] = "many";
  EXPECT_EQ(http_request(port(), "POST", "/completion", bad.dump(), conv("bad")).status, 400);
  EXPECT_EQ(lookup(port(), {"bad"}), Json::array());
}

// The client leaves before its generation even started; the generation still runs to its
// end, and the stream read afterwards is complete.
TEST_F(StreamsTest, GenerationOutlivesItsClient) {
  start({"-np", "1"});
  SlotBlocker blocker(port());
  ASSERT_TRUE(blocker.start());
  {
    RawConnection client(port());
    ASSERT_TRUE(client.send_request("POST", "/completion", kNative.dump(), conv("gone")));
    ASSERT_TRUE(wait_for_session(port(), "gone"));
    const Json running = lookup(port(), {"gone"});
    EXPECT_EQ(running[0]["is_done"], false);
    EXPECT_EQ(running[0]["completed_at"], 0);
    EXPECT_GT(running[0]["started_at"].get<int64_t>(), 0);
    client.close();
  }
  blocker.close();  // a plain stream's client leaving cancels it: the slot frees

  const HttpReply replay = get_stream(port(), "gone", "0");  // follows until the end
  ASSERT_EQ(replay.status, 200);
  const Json last = last_event(replay.body);
  EXPECT_EQ(last["stop"], true) << replay.body.substr(0, 500);
  EXPECT_EQ(last["tokens_predicted"], 40);
  const Json done = lookup(port(), {"gone"});
  EXPECT_EQ(done[0]["is_done"], true);
  EXPECT_GE(done[0]["completed_at"].get<int64_t>(), done[0]["started_at"].get<int64_t>());
}

// The client reads part of its stream and leaves: whatever it had read, the rest is
// generated without it (the store's pump takes over from the client's connection) and the
// stream read afterwards is the whole one, starting with the bytes the client had.
TEST_F(StreamsTest, ClientLeavingMidStreamHandsOver) {
  start();
  // Frames of ~36 KB: the client that stops reading soon holds the generation back.
  const Json body = {{"prompt", "Once"}, {"n_predict", 200}, {"n_probs", 512}, {"stream", true}};
  std::string seen;
  {
    RawConnection client(port());
    ASSERT_TRUE(client.send_request("POST", "/completion", body.dump(), conv("midway")));
    seen = client.read_until("\n\n", 30000);
    ASSERT_NE(seen.find("data: "), std::string::npos);
    client.close();
  }
  const HttpReply replay = get_stream(port(), "midway", "0");
  ASSERT_EQ(replay.status, 200);
  const Json last = last_event(replay.body);
  EXPECT_EQ(last["stop"], true);
  EXPECT_EQ(last["tokens_predicted"], 200);
  // The first event the client saw opens the replay.
  const size_t start_of_data = seen.find("data: ");
  const std::string first_frame = seen.substr(start_of_data, seen.find("\n\n") - start_of_data);
  EXPECT_EQ(replay.body.rfind(first_frame, 0), 0u);
}

// DELETE cancels the generation and evicts the session: its readers end, it is gone.
TEST_F(StreamsTest, DeleteCancelsAndEvicts) {
  start({"-np", "1"});
  SlotBlocker blocker(port());
  ASSERT_TRUE(blocker.start());
  RawConnection client(port());
  ASSERT_TRUE(client.send_request("POST", "/completion", kNative.dump(), conv("stop-me")));
  ASSERT_TRUE(wait_for_session(port(), "stop-me"));
  RawConnection follower(port());
  ASSERT_TRUE(follower.send_request("GET", "/v1/stream?conv_id=stop-me&from=0", ""));

  const HttpReply deleted = http_request(port(), "DELETE", "/v1/stream?conv_id=stop-me");
  EXPECT_EQ(deleted.status, 204);
  EXPECT_EQ(deleted.body, "");
  // Both the requesting client and the follower get a stream that ends (the last chunk),
  // with no event in it.
  const std::string followed = follower.read_until("0\r\n\r\n", 30000);
  EXPECT_NE(followed.find("0\r\n\r\n"), std::string::npos) << followed;
  EXPECT_EQ(followed.find("data: "), std::string::npos) << followed;
  const std::string requested = client.read_until("0\r\n\r\n", 30000);
  EXPECT_NE(requested.find("0\r\n\r\n"), std::string::npos) << requested;
  EXPECT_EQ(requested.find("data: "), std::string::npos) << requested;

  const HttpReply after = get_stream(port(), "stop-me", "0");
  EXPECT_EQ(after.status, 404);
  EXPECT_EQ(after.body,
            R"({"error":{"message":"File Not Found","type":"not_found_error","code":404}})");
  EXPECT_EQ(lookup(port(), {"stop-me"}), Json::array());

  // The cancelled generation does not take the slot once it frees: the next request is
  // served, and the session stays gone.
  blocker.close();
  const HttpReply next = http_request(port(), "POST", "/completion", kNative.dump());
  EXPECT_EQ(next.status, 200);
  EXPECT_EQ(lookup(port(), {"stop-me"}), Json::array());
  // Deleting what does not exist is still a 204.
  EXPECT_EQ(http_request(port(), "DELETE", "/v1/stream?conv_id=stop-me").status, 204);
}

TEST_F(StreamsTest, RouteErrors) {
  start();
  ASSERT_EQ(http_request(port(), "POST", "/completion", kNative.dump(), conv("known")).status, 200);
  const auto error_of = [](const HttpReply& reply) {
    return parse_or_null(reply.body)["error"]["message"];
  };
  const HttpReply no_id = http_request(port(), "GET", "/v1/stream");
  EXPECT_EQ(no_id.status, 400);
  EXPECT_EQ(error_of(no_id), "Missing conversation id in path");
  const HttpReply delete_no_id = http_request(port(), "DELETE", "/v1/stream?conv_id=");
  EXPECT_EQ(delete_no_id.status, 400);
  EXPECT_EQ(error_of(delete_no_id), "Missing conversation id in path");

  const HttpReply unknown = get_stream(port(), "nobody");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(error_of(unknown), "File Not Found");
  EXPECT_EQ(get_stream(port(), "nobody", "x").status, 404);  // the id is checked first

  for (const std::string from : {"x", "-1", "12abc", "1.5"}) {
    const HttpReply bad = get_stream(port(), "known", from);
    EXPECT_EQ(bad.status, 400) << from;
    EXPECT_EQ(error_of(bad), "Invalid 'from' offset") << from;
  }
  // Past the end of a finished stream: an empty stream.
  const HttpReply past = get_stream(port(), "known", "99999999");
  EXPECT_EQ(past.status, 200);
  EXPECT_EQ(past.body, "");
}

TEST_F(StreamsTest, LookupShapes) {
  start();
  for (const std::string id : {"c1", "c1::model-a", "c10", "other"}) {
    ASSERT_EQ(http_request(port(), "POST", "/completion", kNative.dump(), conv(id)).status, 200);
  }
  // An id matches itself and its "<id>::<model>" variants, nothing else.
  const Json found = lookup(port(), {"c1"});
  ASSERT_EQ(found.size(), 2u) << found.dump();
  std::vector<std::string> ids;
  for (const Json& entry : found) {
    ids.push_back(entry["conversation_id"]);
    std::vector<std::string> keys;
    for (const auto& [key, value] : entry.items()) keys.push_back(key);
    EXPECT_EQ(keys, (std::vector<std::string>{"conversation_id", "is_done", "total_bytes",
                                              "started_at", "completed_at"}));
  }
  std::sort(ids.begin(), ids.end());
  EXPECT_EQ(ids, (std::vector<std::string>{"c1", "c1::model-a"}));

  // Non-string and empty entries are skipped; no list at all is an empty answer.
  const Json mixed = post_json(port(), "/v1/streams/lookup",
                               Json::parse(R"({"conversation_ids": [1, "", null, "other"]})"));
  ASSERT_EQ(mixed.size(), 1u);
  EXPECT_EQ(mixed[0]["conversation_id"], "other");
  EXPECT_EQ(post_json(port(), "/v1/streams/lookup", Json::object()), Json::array());
  EXPECT_EQ(lookup(port(), {"unknown"}), Json::array());

  const HttpReply bad = http_request(port(), "POST", "/v1/streams/lookup", "{not json");
  EXPECT_EQ(bad.status, 400);
  const Json error = parse_or_null(bad.body);
  EXPECT_EQ(error["error"]["type"], "invalid_request_error");
  EXPECT_EQ(error["error"]["message"].get<std::string>().rfind("invalid body: ", 0), 0u);
  EXPECT_FALSE(error["error"].contains("code"));  // the reference's shape for this error
}

// Each session keeps its newest bytes: an offset before them is lost, after them it reads.
// The requesting client itself still receives everything.
TEST_F(StreamsTest, SessionKeepsItsNewestBytes) {
  ASSERT_TRUE(server_.start(stories_args(), 60, {{"HEARTH_STREAM_MAX_BYTES", "1000"}}))
      << server_.log();
  const HttpReply original =
      http_request(port(), "POST", "/completion", kNative.dump(), conv("window"));
  ASSERT_EQ(original.status, 200);
  ASSERT_GT(original.body.size(), 2000u);
  EXPECT_EQ(last_event(original.body)["stop"], true);

  const HttpReply lost = get_stream(port(), "window", "0");
  EXPECT_EQ(lost.status, 400);
  EXPECT_EQ(parse_or_null(lost.body)["error"]["message"], "Stream offset lost, please restart");
  const size_t kept_from = original.body.size() - 1000;
  EXPECT_EQ(get_stream(port(), "window", std::to_string(kept_from - 1)).status, 400);
  EXPECT_EQ(get_stream(port(), "window", std::to_string(kept_from)).body,
            original.body.substr(kept_from));
  EXPECT_EQ(lookup(port(), {"window"})[0]["total_bytes"], original.body.size());
}

// The store holds at most N sessions: a finished one makes room, running ones do not, and
// the request that finds no room is told so.
TEST_F(StreamsTest, SessionCountIsBounded) {
  ASSERT_TRUE(server_.start(stories_args({"-np", "1"}), 60, {{"HEARTH_STREAM_MAX_SESSIONS", "1"}}))
      << server_.log();
  ASSERT_EQ(http_request(port(), "POST", "/completion", kNative.dump(), conv("first")).status, 200);
  ASSERT_EQ(http_request(port(), "POST", "/completion", kNative.dump(), conv("second")).status,
            200);
  EXPECT_EQ(lookup(port(), {"first"}), Json::array());  // finished: evicted to make room
  EXPECT_EQ(lookup(port(), {"second"}).size(), 1u);

  SlotBlocker blocker(port());
  ASSERT_TRUE(blocker.start());
  RawConnection running(port());
  ASSERT_TRUE(running.send_request("POST", "/completion", kNative.dump(), conv("running")));
  ASSERT_TRUE(wait_for_session(port(), "running"));
  const HttpReply refused = http_request(port(), "POST", "/completion", kNative.dump(), conv("x"));
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(parse_or_null(refused.body)["error"]["type"], "unavailable_error") << refused.body;
  EXPECT_EQ(lookup(port(), {"x"}), Json::array());
  // Ending the running one makes room.
  EXPECT_EQ(http_request(port(), "DELETE", "/v1/stream?conv_id=running").status, 204);
  blocker.close();
  EXPECT_EQ(http_request(port(), "POST", "/completion", kNative.dump(), conv("x")).status, 200);
}

// A finished session expires after the TTL (0 here: at once); a running one does not.
TEST_F(StreamsTest, FinishedSessionsExpire) {
  ASSERT_TRUE(server_.start(stories_args({"-np", "1"}), 60, {{"HEARTH_STREAM_TTL_MS", "0"}}))
      << server_.log();
  ASSERT_EQ(http_request(port(), "POST", "/completion", kNative.dump(), conv("old")).status, 200);
  EXPECT_EQ(lookup(port(), {"old"}), Json::array());
  EXPECT_EQ(get_stream(port(), "old").status, 404);

  SlotBlocker blocker(port());
  ASSERT_TRUE(blocker.start());
  RawConnection running(port());
  ASSERT_TRUE(running.send_request("POST", "/completion", kNative.dump(), conv("live")));
  ASSERT_TRUE(wait_for_session(port(), "live"));
  EXPECT_EQ(lookup(port(), {"live"}).size(), 1u);
  blocker.close();
}

TEST(StreamsStartup, BadBoundIsAStartupError) {
  ServerProcess server;
  EXPECT_FALSE(server.start(stories_args(), 60, {{"HEARTH_STREAM_MAX_SESSIONS", "lots"}}));
  EXPECT_NE(server.log().find("HEARTH_STREAM_MAX_SESSIONS"), std::string::npos) << server.log();
}

}  // namespace
}  // namespace hearth::test

// HTTPS: hearth-server started with --ssl-key-file and --ssl-cert-file (a self-signed
// certificate the test makes) serves everything plain HTTP does over TLS on the same port,
// cuts clients that stall in the handshake, and refuses bad files at startup.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>

#include <nlohmann/json.hpp>

#include "server/harness.h"
#include "support/process.h"
#include "support/test_paths.h"
#include "support/tls_files.h"

namespace hearth::test {
namespace {

using Json = nlohmann::json;

std::string model() {
  return shared_path("models/stories260K.gguf");
}

class ServerTls : public ::testing::Test {
 protected:
  void SetUp() override {
    files_ = make_tls_files();
    if (!files_.error.empty()) GTEST_SKIP() << "no certificate for HTTPS: " << files_.error;
  }

  // `extra`: the test's own options (slots, context, timeout).
  void start(const std::vector<std::string>& extra) {
    std::vector<std::string> args = {"-m",       model(),           "--ssl-key-file",
                                     files_.key, "--ssl-cert-file", files_.cert};
    args.insert(args.end(), extra.begin(), extra.end());
    ASSERT_TRUE(server_.start(args, 60, {}, Transport::kHttps)) << server_.log();
  }
  int port() const { return server_.port(); }

  bool slot_busy(int slot) {
    const Json slots =
        Json::parse(http_request(Transport::kHttps, port(), "GET", "/slots").body, nullptr, false);
    return slots.is_array() && slots.size() > static_cast<size_t>(slot) &&
           slots[slot]["is_processing"] == true;
  }

  TlsFiles files_;
  ServerProcess server_;
};

TEST_F(ServerTls, ServesHttpsWithKeepAliveAndStreaming) {
  ASSERT_NO_FATAL_FAILURE(start({"-np", "2", "-c", "1024"}));
  EXPECT_NE(server_.log().find("listening on https://127.0.0.1:"), std::string::npos);
  RawConnection conn(port(), Transport::kHttps);
  ASSERT_TRUE(conn.connected());
  // Two requests on one connection, then a stream, then another request after it.
  ASSERT_TRUE(conn.send_request("GET", "/health", ""));
  HttpReply health = conn.read_reply(10000);
  EXPECT_EQ(health.status, 200);
  EXPECT_EQ(Json::parse(health.body, nullptr, false)["status"], "ok") << health.body;
  EXPECT_EQ(health.header("server"), "llama.cpp");
  ASSERT_TRUE(conn.send_request("GET", "/props", ""));
  HttpReply props = conn.read_reply(10000);
  EXPECT_EQ(props.status, 200);
  EXPECT_TRUE(Json::parse(props.body, nullptr, false).contains("total_slots")) << props.body;
  ASSERT_TRUE(conn.send_request("POST", "/completion",
                                R"({"prompt":"Once upon a time","n_predict":8,"stream":true})"));
  HttpReply stream = conn.read_reply(60000);
  ASSERT_EQ(stream.status, 200);
  EXPECT_EQ(stream.header("content-type"), "text/event-stream");
  EXPECT_EQ(stream.header("transfer-encoding"), "chunked");
  const std::vector<std::string> frames = sse_payloads(stream.body);
  ASSERT_GE(frames.size(), 2u) << stream.body;
  EXPECT_EQ(Json::parse(frames.back(), nullptr, false)["stop"], true) << frames.back();
  ASSERT_TRUE(conn.send_request("GET", "/health", ""));
  EXPECT_EQ(conn.read_reply(10000).status, 200);
  EXPECT_FALSE(conn.peer_closed());
  // The same size limits: headers over 64 KiB are answered 431, over TLS too.
  RawConnection big(port(), Transport::kHttps);
  ASSERT_TRUE(big.connected());
  ASSERT_TRUE(big.send_raw(
      "GET /health HTTP/1.1\r\nHost: x\r\nX-Big: " + std::string(80 * 1024, 'a') + "\r\n\r\n"));
  EXPECT_EQ(big.read_reply(10000).status, 431);
}

// Generation would only stop at the slot context's end: a stream that ends well before it,
// once its client left, was cancelled by the disconnect.
double tokens_predicted(int port) {
  const std::string text = http_request(Transport::kHttps, port, "GET", "/metrics").body;
  const std::string name = "llamacpp:tokens_predicted_total ";
  const size_t at = text.find("\n" + name);
  return at == std::string::npos ? -1 : std::atof(text.c_str() + at + 1 + name.size());
}

TEST_F(ServerTls, ClientThatLeavesAStreamIsCancelled) {
  ASSERT_NO_FATAL_FAILURE(start({"-np", "1", "-c", "2048", "--slots", "--metrics"}));
  RawConnection conn(port(), Transport::kHttps);
  ASSERT_TRUE(conn.send_request(
      "POST", "/completion",
      R"({"prompt":"Once upon a time","n_predict":100000,"stream":true,"ignore_eos":true})"));
  const std::string first = conn.read_until("data: ", 30000);
  ASSERT_NE(first.find("data: "), std::string::npos) << first;
  EXPECT_TRUE(slot_busy(0));
  conn.close();
  // Generous: the point is that the stream is cancelled at all.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (slot_busy(0) && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_FALSE(slot_busy(0)) << "slot 0 still busy after the client left";
  const double predicted = tokens_predicted(port());
  EXPECT_GE(predicted, 0) << "no llamacpp:tokens_predicted_total in /metrics";
  const Json slots =
      Json::parse(http_request(Transport::kHttps, port(), "GET", "/slots").body, nullptr, false);
  ASSERT_TRUE(slots.is_array() && !slots.empty() && slots[0]["n_ctx"].is_number()) << slots;
  // Half: the stream is cancelled as its client leaves, long before it could reach the end.
  EXPECT_LT(predicted, slots[0]["n_ctx"].get<double>() / 2)
      << "the stream ran on after its client left";
}

TEST_F(ServerTls, PlainHttpToTheTlsPortFailsCleanly) {
  ASSERT_NO_FATAL_FAILURE(start({"-np", "1", "-c", "512"}));
  RawConnection plain(port(), Transport::kHttp);
  ASSERT_TRUE(plain.send_request("GET", "/health", ""));
  const std::string got = plain.read_until("HTTP/1.1 200", 30000);
  EXPECT_EQ(got.find("HTTP/1.1"), std::string::npos) << got;
  EXPECT_TRUE(plain.peer_closed()) << "the server kept a failed handshake open";
  // And it keeps serving.
  EXPECT_EQ(http_request(Transport::kHttps, port(), "GET", "/health").status, 200);
}

TEST_F(ServerTls, StalledHandshakeIsCut) {
  // -to 1: the handshake deadline is min(10 s, the timeout), as for request headers.
  ASSERT_NO_FATAL_FAILURE(start({"-np", "1", "-c", "512", "-to", "1"}));
  RawConnection silent(port(), Transport::kHttp);  // TCP only: it never says hello
  RawConnection partial(port(), Transport::kHttp);
  ASSERT_TRUE(partial.send_raw(std::string("\x16\x03\x01\x02\x00\x01", 6)));  // a hello's start
  silent.read_until("never sent", 30000);
  partial.read_until("never sent", 30000);
  EXPECT_TRUE(silent.peer_closed()) << "a client that never spoke was not cut";
  EXPECT_TRUE(partial.peer_closed()) << "a client stalled mid-handshake was not cut";
  EXPECT_EQ(http_request(Transport::kHttps, port(), "GET", "/health").status, 200);
}

// Past the handshake the plain deadlines hold: headers that stall are answered 408, and a
// kept-alive connection left idle is closed after the timeout.
TEST_F(ServerTls, DeadlinesHoldAfterTheHandshake) {
  ASSERT_NO_FATAL_FAILURE(start({"-np", "1", "-c", "512", "-to", "1"}));
  RawConnection stalled(port(), Transport::kHttps);
  ASSERT_TRUE(stalled.connected());
  ASSERT_TRUE(stalled.send_raw("GET /health HTTP/1.1\r\nHost: x\r\n"));  // no blank line
  EXPECT_EQ(stalled.read_reply(30000).status, 408);
  RawConnection idle(port(), Transport::kHttps);
  ASSERT_TRUE(idle.send_request("GET", "/health", ""));
  EXPECT_EQ(idle.read_reply(10000).status, 200);
  idle.read_until("never sent", 30000);
  EXPECT_TRUE(idle.peer_closed()) << "an idle kept-alive connection was not closed";
}

// The reference (cpp-httplib's SSLServer) fails to bind with bad files ("couldn't bind HTTP
// server socket", exit 1) and ignores one file given alone; Hearth names the problem, and
// refuses the lone file rather than ignore it. Exit status 1 in every case.
TEST_F(ServerTls, StartupRefusesBadFiles) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::string missing = make_temp_dir("tls-missing") + "/none.pem";
  const std::vector<Case> cases = {
      {{"--ssl-key-file", files_.key}, "--ssl-key-file is given without --ssl-cert-file"},
      {{"--ssl-cert-file", files_.cert}, "--ssl-cert-file is given without --ssl-key-file"},
      {{"--ssl-key-file", missing, "--ssl-cert-file", files_.cert},
       "cannot read --ssl-key-file '" + missing + "'"},
      {{"--ssl-key-file", files_.key, "--ssl-cert-file", missing},
       "cannot read --ssl-cert-file '" + missing + "'"},
      {{"--ssl-key-file", files_.other_key, "--ssl-cert-file", files_.cert},
       "does not match the certificate"},
      {{"--ssl-key-file", files_.key, "--ssl-cert-file", files_.key}, "is not a PEM certificate"},
      {{"--ssl-key-file", files_.cert, "--ssl-cert-file", files_.cert}, "is not a PEM private key"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {bin_dir() + "/hearth-server", "-m", model(), "--port", "0"};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    const ProcessResult result = run_process(argv, 60);
    SCOPED_TRACE(c.message);
    EXPECT_EQ(result.exit_code, 1);
    EXPECT_NE((result.out + result.err).find(c.message), std::string::npos)
        << result.out << result.err;
    EXPECT_EQ((result.out + result.err).find("listening on"), std::string::npos);
  }
}

}  // namespace
}  // namespace hearth::test

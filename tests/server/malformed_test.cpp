// The request pipeline's answers to hostile and malformed requests on the fake server (no
// model: each is refused before a model is asked, or is a transport matter): JSON nested a
// million deep, the battery of malformed requests, HEAD and unknown methods. The probes
// that need a model generating (streams, slow readers, shutdown) stay in hardening_test.cpp.
#include <chrono>
#include <cstdio>

#include "server/fake_fixture.h"
#include "server/hardening_util.h"
#include "support/test_paths.h"

namespace hearth::test {
namespace {

using namespace std::chrono_literals;

class ServerHardening : public FakeServerTest {};

TEST_F(ServerHardening, MillionDeepJsonIs400) {
  start();
  const std::string deep =
      "{\"prompt\":" + std::string(1000000, '[') + std::string(1000000, ']') + ",\"n_predict\":2}";
  for (const char* path : {"/completion", "/tokenize", "/detokenize", "/apply-template"}) {
    HttpReply reply = http_request(port(), "POST", path, deep);
    EXPECT_EQ(reply.status, 400) << path << ": " << reply.body.substr(0, 200);
    EXPECT_EQ(parse_or_null(reply.body)["error"]["message"],
              "Invalid JSON in request body: nested deeper than 512 levels");
  }
  EXPECT_EQ(http_request(port(), "GET", "/health").status, 200);
}

TEST_F(ServerHardening, MalformedRequestsGet4xxInTheEnvelope) {
  const std::string dir = make_temp_dir("hardening-slots");
  start({"--slot-save-path", dir, "--props"});
  const std::vector<MalformedCase> cases = malformed_cases();
  ASSERT_GE(cases.size(), 60u);
  std::printf("%zu malformed requests\n", cases.size());
  for (const MalformedCase& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string raw = send_and_read(port(), c.raw, 5s);
    const int status = status_of(raw);
    EXPECT_TRUE(status == 400 || status == 408 || status == 413 || status == 431)
        << status << " " << raw.substr(0, 300);
    if (c.expected_status != 0) {
      EXPECT_EQ(status, c.expected_status) << raw.substr(0, 300);
    }
    const Json body = parse_or_null(body_of(raw));
    EXPECT_EQ(body["error"]["code"], status) << raw.substr(0, 300);
    ASSERT_TRUE(body["error"]["message"].is_string()) << raw.substr(0, 300);
    EXPECT_TRUE(body["error"]["type"].is_string());
    const std::string message = body["error"]["message"];
    EXPECT_EQ(message.find("[json.exception"), std::string::npos) << message;
    EXPECT_NE(message.find(c.message_part), std::string::npos) << message;
    ASSERT_EQ(http_request(port(), "GET", "/health").status, 200) << "the server died";
  }
}

TEST_F(ServerHardening, HeadIsServedAndUnknownMethodsAre400) {
  start();
  const std::string head = send_and_read(port(),
                                         "HEAD /health HTTP/1.1\r\nHost: x\r\n"
                                         "Connection: close\r\n\r\n",
                                         5s);
  EXPECT_EQ(status_of(head), 200);
  EXPECT_EQ(body_of(head), "");
  EXPECT_NE(head.find("Content-Length: 15"), std::string::npos) << head;
  const std::string foo = send_and_read(port(), "FOO /health HTTP/1.1\r\nHost: x\r\n\r\n", 5s);
  EXPECT_EQ(status_of(foo), 400);
  EXPECT_EQ(parse_or_null(body_of(foo))["error"]["message"], "unsupported HTTP method");
}

}  // namespace
}  // namespace hearth::test

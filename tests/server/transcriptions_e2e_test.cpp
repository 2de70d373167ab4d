// /v1/audio/transcriptions end to end: hearth-server on the ultravox-f32 golden's models
// (hearth-synth's random-weight text model and ultravox projector) answers the multipart
// requests of tests/data/media/transcriptions/ultravox-f32.json, captured from llama-server
// b10573 started the same way, as the reference did: transcript text, usage (input, output
// and cached tokens, so the ASR prompt and the audio's positions), and the stream's events.
#include <filesystem>
#include <string>
#include <vector>

#include "server/media_golden.h"

namespace hearth::test {
namespace {

const char kBoundary[] = "hearthAsrE2eBoundary0123456789";

std::string media_file(const std::string& name) {
  return read_file(std::string(HEARTH_SOURCE_DIR) + "/tests/data/media/" + name);
}

// The case's form: its text fields in order, then the file.
std::string form_body(const Json& c) {
  std::string body;
  const std::string open = std::string("--") + kBoundary + "\r\n";
  for (const Json& field : c["fields"]) {
    body += open + "Content-Disposition: form-data; name=\"" + field[0].get<std::string>() +
            "\"\r\n\r\n" + field[1].get<std::string>() + "\r\n";
  }
  const std::string file = c["file"];
  body += open + "Content-Disposition: form-data; name=\"file\"; filename=\"" +
          file.substr(file.rfind('/') + 1) +
          "\"\r\nContent-Type: application/octet-stream\r\n\r\n" + media_file(file) + "\r\n";
  return body + "--" + kBoundary + "--\r\n";
}

class TranscriptionsE2e : public ::testing::Test {
 protected:
  void SetUp() override {
    golden_ = load_media_golden("ultravox-f32");
    ASSERT_FALSE(golden_.is_null()) << "tests/data/media/golden/ultravox-f32.json";
    const std::string capture =
        std::string(HEARTH_SOURCE_DIR) + "/tests/data/media/transcriptions/ultravox-f32.json";
    cases_ = Json::parse(read_file(capture));
    dir_ = make_temp_dir("asr-e2e");
    const std::string failure = synth_media_pair(golden_, dir_);
    if (failure.rfind("SKIPPED", 0) == 0) GTEST_SKIP() << failure;
    ASSERT_EQ(failure, "");
    ASSERT_TRUE(start_media_server(server_, golden_, dir_)) << server_.log();
  }
  void TearDown() override {
    server_.stop();
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  Json golden_;
  Json cases_;
  std::string dir_;
  ServerProcess server_;
};

// The cases in the captured order (the prompt cache's counts depend on the history).
TEST_F(TranscriptionsE2e, AnswersAsTheReference) {
  const std::string content_type = std::string("multipart/form-data; boundary=") + kBoundary;
  for (const Json& c : cases_["cases"]) {
    const std::string name = c["name"];
    SCOPED_TRACE(name);
    const HttpReply reply = http_request(server_.port(), "POST", c["path"], form_body(c),
                                         {{"Content-Type", content_type}});
    ASSERT_EQ(reply.status, c["status"].get<int>()) << reply.body;
    if (c.contains("body")) {
      EXPECT_EQ(parse_or_null(reply.body), c["body"]) << reply.body;
      continue;
    }
    const std::vector<std::string> frames = sse_payloads(reply.body);
    ASSERT_EQ(frames.size(), c["frames"].size()) << reply.body;
    for (size_t i = 0; i < frames.size(); ++i) {
      const std::string expected = c["frames"][i];
      if (expected == "[DONE]") {
        EXPECT_EQ(frames[i], expected);
      } else {
        EXPECT_EQ(parse_or_null(frames[i]), parse_or_null(expected)) << "frame " << i;
      }
    }
  }
}

}  // namespace
}  // namespace hearth::test

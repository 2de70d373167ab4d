// Hearth's version on every surface that shows it: --version, /props build_info and the
// OpenAI routes' system_fingerprint all name the compatible llama-server release (b10621)
// and the commit the build recorded (src/version: version.txt, written by the build), and
// the two JSON fields are the same string.
#include <fstream>
#include <regex>

#include "server/server_fixture.h"
#include "support/process.h"

namespace hearth::test {
namespace {

struct RecordedVersion {
  std::string version;
  std::string commit;
};

// What CMake wrote for this build ("version X" and "commit Y" lines).
RecordedVersion recorded_version() {
  RecordedVersion r;
  std::ifstream in(HEARTH_VERSION_RECORD);
  std::string key, value;
  while (in >> key >> value) {
    if (key == "version") r.version = value;
    if (key == "commit") r.commit = value;
  }
  return r;
}

TEST(ServerVersion, RecordedCommitIsAHashOrUnknown) {
  const RecordedVersion r = recorded_version();
  EXPECT_FALSE(r.version.empty()) << HEARTH_VERSION_RECORD;
  // A build outside a git checkout (a source tarball) says "unknown".
  EXPECT_TRUE(std::regex_match(r.commit, std::regex("[0-9a-f]{8}|unknown"))) << r.commit;
}

TEST(ServerVersion, VersionOptionNamesReleaseCommitAndHearthVersion) {
  const RecordedVersion r = recorded_version();
  ProcessResult p = run_process({bin_dir() + "/hearth-server", "--version"});
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_EQ(p.out.rfind("version: 10621 (" + r.commit + ")\n", 0), 0u) << p.out;
  EXPECT_NE(p.out.find("for hearth-server " + r.version + ", compatible with llama-server b10621"),
            std::string::npos)
      << p.out;
}

TEST(ServerVersion, BuildInfoAndFingerprintAreTheBuildsVersion) {
  const RecordedVersion r = recorded_version();
  const std::string expected = "b10621-" + r.commit;
  ServerProcess server;
  ASSERT_TRUE(server.start(stories_args())) << server.log();
  const Json props = parse_or_null(http_request(server.port(), "GET", "/props").body);
  EXPECT_EQ(props.value("build_info", ""), expected) << props.dump();

  const Json chat_body = {{"messages", {{{"role", "user"}, {"content", "Hi"}}}}, {"max_tokens", 1}};
  const Json chat = post_json(server.port(), "/v1/chat/completions", chat_body);
  EXPECT_EQ(chat.value("system_fingerprint", ""), expected) << chat.dump();
  const Json text =
      post_json(server.port(), "/v1/completions", {{"prompt", "Once"}, {"max_tokens", 1}});
  EXPECT_EQ(text.value("system_fingerprint", ""), expected) << text.dump();

  Json stream_body = chat_body;
  stream_body["stream"] = true;
  const HttpReply streamed =
      http_request(server.port(), "POST", "/v1/chat/completions", stream_body.dump());
  int chunks = 0;
  for (const std::string& payload : sse_payloads(streamed.body)) {
    if (payload == "[DONE]") continue;
    EXPECT_EQ(parse_or_null(payload).value("system_fingerprint", ""), expected) << payload;
    ++chunks;
  }
  EXPECT_GT(chunks, 0) << streamed.body;
}

}  // namespace
}  // namespace hearth::test

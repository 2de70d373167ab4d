// Hearth's version on every surface that shows it: --version, /props build_info and the
// OpenAI routes' system_fingerprint all name the compatible llama-server release (b10621)
// and the commit the build recorded (src/version: version.txt, written by the build), and
// the two JSON fields are the same string.
#include <filesystem>
#include <fstream>

#include "server/server_fixture.h"
#include "support/process.h"
#include "support/text_match.h"

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
  EXPECT_TRUE(hearth::test::full_match(r.commit, "[0-9a-f]{8}|unknown")) << r.commit;
}

// A stale binary (built before HEAD moved, its record rewritten since) fails these tests.
constexpr const char* kStaleHint = " (a hearth-server older than the build's record? rebuild it)";

// Runs the build's generator as the build does, on `source_dir`, into `out_dir`.
ProcessResult generate_version(const std::string& source_dir, const std::string& out_dir) {
  return run_process({HEARTH_CMAKE_COMMAND, "-DSOURCE_DIR=" + source_dir, "-DOUTPUT_DIR=" + out_dir,
                      "-DVERSION=9.8.7", "-DGIT_EXECUTABLE=git", "-P",
                      std::string(HEARTH_SOURCE_DIR) + "/cmake/GenerateVersion.cmake"});
}

// A source tarball has no git metadata: the build still works and says "unknown".
TEST(ServerVersion, OutsideAGitCheckoutTheCommitIsUnknown) {
  const std::string dir = make_temp_dir("version_tarball");
  std::filesystem::create_directories(dir + "/src");
  ProcessResult r = generate_version(dir + "/src", dir + "/out");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(read_file(dir + "/out/version.txt"), "version 9.8.7\ncommit unknown\n");
  const std::string code = read_file(dir + "/out/version_info.cpp");
  EXPECT_NE(code.find("return \"unknown\";"), std::string::npos) << code;
  EXPECT_NE(code.find("return \"9.8.7\";"), std::string::npos) << code;
  std::filesystem::remove_all(dir);
}

// Run again with the same commit, the generator leaves its file alone, so nothing that
// compiles it is rebuilt (its time is set far back first: a rewrite would show).
TEST(ServerVersion, UnchangedCommitLeavesTheGeneratedFileAlone) {
  const std::string dir = make_temp_dir("version_again");
  ASSERT_EQ(generate_version(HEARTH_SOURCE_DIR, dir).exit_code, 0);
  const std::filesystem::path file = dir + "/version_info.cpp";
  const auto old_time = std::filesystem::file_time_type::clock::now() - std::chrono::hours(24);
  std::filesystem::last_write_time(file, old_time);
  ASSERT_EQ(generate_version(HEARTH_SOURCE_DIR, dir).exit_code, 0);
  EXPECT_EQ(std::filesystem::last_write_time(file), old_time);
  std::filesystem::remove_all(dir);
}

TEST(ServerVersion, VersionOptionNamesReleaseCommitAndHearthVersion) {
  const RecordedVersion r = recorded_version();
  ProcessResult p = run_process({bin_dir() + "/hearth-server", "--version"});
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_EQ(p.out.rfind("version: 10621 (" + r.commit + ")\n", 0), 0u) << p.out << kStaleHint;
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
  EXPECT_EQ(props.value("build_info", ""), expected) << props.dump() << kStaleHint;

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

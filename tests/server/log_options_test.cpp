// The log options on the real hearth-server (cli.md "Logging"): each line starts with the
// time since start and the level letter unless --no-log-timestamps / --no-log-prefix say
// otherwise, --log-colors decides the ANSI codes (auto: none when stderr is a pipe, as it
// is here), --log-file gets every line stderr gets, and --log-prompts-dir receives each
// prompt in a file of its own.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "server/server_fixture.h"
#include "support/process.h"
#include "support/text_match.h"

namespace hearth::test {
namespace {

const std::string kListening = "server is listening on http://127.0.0.1:";

// The log line that announces the port (stdout and stderr both reach the harness's log).
std::string listening_line(const std::string& log) {
  std::istringstream lines(log);
  std::string line;
  while (std::getline(lines, line)) {
    if (line.find(kListening) != std::string::npos) return line;
  }
  ADD_FAILURE() << "no listening line in:\n" << log;
  return "";
}

// Starts the server with `extra`, stops it and returns what it wrote.
std::string run_and_log(const std::vector<std::string>& extra) {
  ServerProcess server;
  EXPECT_TRUE(server.start(stories_args(extra))) << server.log();
  EXPECT_EQ(server.stop(), 0);
  return server.log();
}

TEST(ServerLogOptions, DefaultLinesCarryTimeSinceStartAndLevel) {
  const std::string log = run_and_log({});
  // "M.SS.mmm.uuu I message", as llama-server writes its lines.
  EXPECT_TRUE(hearth::test::full_match(listening_line(log),
                                       R"(\d+\.\d{2}\.\d{3}\.\d{3} I server is listening on .*)"))
      << listening_line(log);
  // auto colours: stderr is a pipe here.
  EXPECT_EQ(log.find('\033'), std::string::npos) << log;
}

TEST(ServerLogOptions, NoTimestampsKeepsTheLevelLetter) {
  EXPECT_EQ(listening_line(run_and_log({"--no-log-timestamps"})).rfind("I " + kListening, 0), 0u);
}

TEST(ServerLogOptions, NoPrefixWritesTheBareMessage) {
  EXPECT_EQ(listening_line(run_and_log({"--no-log-prefix"})).rfind(kListening, 0), 0u);
  // Timestamps are part of the prefix: asking for them alone adds nothing.
  EXPECT_EQ(
      listening_line(run_and_log({"--no-log-prefix", "--log-timestamps"})).rfind(kListening, 0),
      0u);
}

TEST(ServerLogOptions, ColorsOnTintsTimeAndLevel) {
  const std::string line = listening_line(run_and_log({"--log-colors", "on"}));
  // Blue time, green "I ", then the reset before the message (the reference's codes).
  EXPECT_TRUE(hearth::test::full_match(
      line,
      "\033\\[34m\\d+\\.\\d{2}\\.\\d{3}\\.\\d{3}\033\\[0m \033\\[32mI \033\\[0mserver is "
      "listening on .*"))
      << line;
}

TEST(ServerLogOptions, ColorsOffAndAutoOnAPipeWriteNoEscapes) {
  for (const char* value : {"off", "auto"}) {
    SCOPED_TRACE(value);
    const std::string log = run_and_log({"--log-colors", value});
    EXPECT_EQ(log.find('\033'), std::string::npos) << log;
    EXPECT_FALSE(listening_line(log).empty());
  }
}

TEST(ServerLogOptions, BadColorValueIsAStartupError) {
  ProcessResult r = run_process({bin_dir() + "/hearth-server", "--log-colors", "sometimes"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--log-colors"), std::string::npos) << r.err;
}

TEST(ServerLogOptions, LogFileGetsEveryLineStderrGets) {
  const std::string dir = make_temp_dir("log_file_e2e");
  const std::string file = dir + "/server.log";
  ServerProcess server;
  ASSERT_TRUE(server.start(stories_args({"--log-file", file, "--log-colors", "on"})))
      << server.log();
  int status = 0;
  post_json(server.port(), "/completion", {{"prompt", "Once"}, {"n_predict", 2}}, &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(server.stop(), 0);
  // The same text, colours included, line for line (the shutdown lines too).
  EXPECT_EQ(read_file(file), server.log());
  EXPECT_NE(read_file(file).find("received signal"), std::string::npos);
  std::filesystem::remove_all(dir);
}

// The files of `dir`, by name (the names are the milliseconds since start).
std::vector<std::filesystem::path> prompt_files(const std::string& dir) {
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) files.push_back(entry.path());
  std::sort(files.begin(), files.end());
  return files;
}

TEST(ServerLogOptions, PromptsDirGetsEachPrompt) {
  const std::string root = make_temp_dir("prompts_dir");
  const std::string dir = root + "/made/by/the/server";  // created, parents included
  ServerProcess server;
  ASSERT_TRUE(server.start(stories_args({"--log-prompts-dir", dir}))) << server.log();
  ASSERT_TRUE(std::filesystem::is_directory(dir));
  int status = 0;
  post_json(server.port(), "/completion", {{"prompt", "Once upon a time"}, {"n_predict", 1}},
            &status);
  EXPECT_EQ(status, 200);
  post_json(server.port(), "/completion", {{"prompt", {1, 2, 3}}, {"n_predict", 1}}, &status);
  EXPECT_EQ(status, 200);
  post_json(server.port(), "/v1/chat/completions",
            {{"messages", {{{"role", "user"}, {"content", "Tell me a story"}}}}, {"max_tokens", 1}},
            &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(server.stop(), 0);

  const auto files = prompt_files(dir);
  ASSERT_EQ(files.size(), 3u);
  for (const auto& f : files) {
    EXPECT_TRUE(hearth::test::full_match(f.filename().string(), R"(\d{12}\.txt)")) << f;
  }
  // In request order: text as sent, token ids as indented JSON, the chat's templated prompt.
  EXPECT_EQ(read_file(files[0].string()), "Once upon a time");
  EXPECT_EQ(read_file(files[1].string()), "[\n  1,\n  2,\n  3\n]");
  const std::string chat = read_file(files[2].string());
  EXPECT_NE(chat.find("Tell me a story"), std::string::npos) << chat;
  EXPECT_NE(chat, "Tell me a story") << "the template was not applied";
  std::filesystem::remove_all(root);
}

TEST(ServerLogOptions, UncreatablePromptsDirIsAStartupError) {
  const std::string root = make_temp_dir("prompts_dir_bad");
  const std::string blocker = root + "/a_file";
  std::ofstream(blocker) << "x";
  ProcessResult r = run_process(
      {bin_dir() + "/hearth-server", "-m", stories_model(), "--log-prompts-dir", blocker + "/sub"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("--log-prompts-dir"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot create prompts directory '" + blocker + "/sub'"), std::string::npos)
      << r.err;
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace hearth::test

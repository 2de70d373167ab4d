// set_log_file: log lines also reach the file (console output continues), a second call
// moves them to the new file, and a file that cannot be opened is a kIo error.
// set_log_format: the reference's line layout and colours, read back from the file.
#include "base/log.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "support/test_paths.h"
#include "support/text_match.h"

namespace hearth {
namespace {

TEST(LogFileTest, LinesReachTheFile) {
  std::string dir = test::make_temp_dir("log_file");
  LogLevel saved = log_level();
  set_log_level(LogLevel::kInfo);
  ASSERT_TRUE(set_log_file(dir + "/first.log").is_ok());
  log_info("hello {}", 42);
  log_debug("below the level");
  std::string first = test::read_file(dir + "/first.log");
  EXPECT_NE(first.find("I "), std::string::npos) << first;  // the level letter
  EXPECT_NE(first.find("hello 42\n"), std::string::npos) << first;
  EXPECT_EQ(first.find("below the level"), std::string::npos) << first;

  // A second file replaces the first.
  ASSERT_TRUE(set_log_file(dir + "/second.log").is_ok());
  log_warn("moved");
  EXPECT_NE(test::read_file(dir + "/second.log").find("moved"), std::string::npos);
  EXPECT_EQ(test::read_file(dir + "/first.log").find("moved"), std::string::npos);
  set_log_level(saved);
  std::filesystem::remove_all(dir);
}

TEST(LogFileTest, UnopenableFileIsAnError) {
  std::string dir = test::make_temp_dir("log_file_bad");
  Status st = set_log_file(dir);  // a directory cannot be opened for writing
  ASSERT_FALSE(st.is_ok());
  EXPECT_EQ(st.code(), ErrorCode::kIo);
  EXPECT_NE(st.message().find(dir), std::string::npos) << st.message();
  std::filesystem::remove_all(dir);
}

// Logs one line per level with `format` and returns the file's text.
std::string lines_with(const LogFormat& format, const std::string& tag) {
  const std::string dir = test::make_temp_dir(tag);
  const LogLevel saved_level = log_level();
  const LogFormat saved_format = log_format();
  set_log_level(LogLevel::kDebug);
  set_log_format(format);
  EXPECT_TRUE(set_log_file(dir + "/format.log").is_ok());
  log_debug("d");
  log_info("i");
  log_warn("w");
  log_error("e");
  const std::string text = test::read_file(dir + "/format.log");
  set_log_format(saved_format);
  set_log_level(saved_level);
  std::filesystem::remove_all(dir);
  return text;
}

TEST(LogFormatTest, DefaultIsTimeSinceStartThenLetter) {
  const std::string text = lines_with({}, "log_default");
  const std::string stamp = R"(\d+\.\d{2}\.\d{3}\.\d{3} )";
  EXPECT_TRUE(
      test::full_match(text, stamp + "D d\n" + stamp + "I i\n" + stamp + "W w\n" + stamp + "E e\n"))
      << text;
}

TEST(LogFormatTest, TimestampsOnlyWithThePrefix) {
  EXPECT_EQ(lines_with({.prefix = true, .timestamps = false, .colors = false}, "log_letter"),
            "D d\nI i\nW w\nE e\n");
  EXPECT_EQ(lines_with({.prefix = false, .timestamps = true, .colors = false}, "log_bare"),
            "d\ni\nw\ne\n");
}

TEST(LogFormatTest, ColorsAreTheReferenceCodes) {
  // Info's text is plain; the other levels' text keeps the letter's colour to its end.
  EXPECT_EQ(lines_with({.prefix = true, .timestamps = false, .colors = true}, "log_colors"),
            "\033[33mD d\033[0m\n"
            "\033[32mI \033[0mi\n"
            "\033[35mW w\033[0m\n"
            "\033[31mE e\033[0m\n");
  const std::string timed =
      lines_with({.prefix = true, .timestamps = true, .colors = true}, "log_colors_time");
  EXPECT_TRUE(test::partial_match(timed,
                                  "^\033\\[34m\\d+\\.\\d{2}\\.\\d{3}\\.\\d{3}"
                                  "\033\\[0m \033\\[33mD d"))
      << timed;
}

TEST(LogFormatTest, NoColorTurnsAutoColorsOff) {
  const char* saved = std::getenv("NO_COLOR");
  const std::string saved_value = saved ? saved : "";
  setenv("NO_COLOR", "1", 1);
  EXPECT_FALSE(terminal_wants_colors());
  if (saved) {
    setenv("NO_COLOR", saved_value.c_str(), 1);
  } else {
    unsetenv("NO_COLOR");
  }
}

}  // namespace
}  // namespace hearth

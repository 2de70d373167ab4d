// set_log_file: log lines also reach the file (console output continues), a second call
// moves them to the new file, and a file that cannot be opened is a kIo error.
#include "base/log.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "support/test_paths.h"

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

}  // namespace
}  // namespace hearth

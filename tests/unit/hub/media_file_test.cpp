// file:// media URLs under --media-path (media_fetch.h): llama-server's path rules and texts
// (tools/server/tests/unit/test_security.py's cases among them), and Hearth's refusal of
// symbolic links that lead out of the directory, with both ways of opening.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "hub/media_fetch.h"
#include "support/test_paths.h"

namespace hearth::hub {
namespace {

namespace fs = std::filesystem;

void write(const fs::path& path, const std::string& content) {
  std::ofstream(path, std::ios::binary) << content;
}

// <root>/media holds a.png, sub/b.png and links in and out; <root>/secret.txt is outside.
class MediaFile : public ::testing::TestWithParam<MediaOpenMode> {
 protected:
  void SetUp() override {
    root_ = fs::path(test::make_temp_dir("media_file"));
    media_ = root_ / "media";
    fs::create_directories(media_ / "sub");
    write(media_ / "a.png", "AAA");
    write(media_ / "sub" / "b.png", "BBBB");
    write(root_ / "secret.txt", "SECRET");
    fs::create_symlink("a.png", media_ / "link_in");
    fs::create_symlink("../a.png", media_ / "sub" / "link_up_inside");
    fs::create_symlink("../secret.txt", media_ / "link_out");
    fs::create_symlink(root_ / "secret.txt", media_ / "link_abs");
    fs::create_directory_symlink(root_, media_ / "dir_out");
    ASSERT_EQ(::mkfifo((media_ / "fifo").c_str(), 0600), 0);
    auto path = validate_media_path(media_.string());
    ASSERT_TRUE(path.is_ok()) << path.status().to_string();
    settings_.media_path = *path;
  }
  void TearDown() override {
    if (!root_.empty()) fs::remove_all(root_);
  }

  Result<std::vector<uint8_t>> read(std::string_view file_path) {
    return read_media_file(file_path, settings_, GetParam());
  }
  std::string read_text(std::string_view file_path) {
    auto bytes = read(file_path);
    if (!bytes.is_ok()) return "error: " + bytes.status().message();
    return {bytes->begin(), bytes->end()};
  }

  fs::path root_;
  fs::path media_;
  MediaFetchSettings settings_;
};

TEST_P(MediaFile, ReadsFilesUnderTheMediaPath) {
  EXPECT_EQ(read_text("a.png"), "AAA");
  EXPECT_EQ(read_text("sub/b.png"), "BBBB");
  // llama-server joins "<media_path>" and the path, so leading and doubled slashes stay
  // inside ("file:////mtmd//test-1.jpeg" is "file://mtmd/test-1.jpeg" in test_security.py).
  EXPECT_EQ(read_text("//sub//b.png"), "BBBB");
  EXPECT_EQ(read_text("./a.png"), "AAA");
  // Links that stay inside are followed.
  EXPECT_EQ(read_text("link_in"), "AAA");
  EXPECT_EQ(read_text("sub/link_up_inside"), "AAA");
  // And through the URL form.
  auto bytes = fetch_media_url("file://sub/b.png", settings_);
  ASSERT_TRUE(bytes.is_ok()) << bytes.status().to_string();
  EXPECT_EQ(std::string(bytes->begin(), bytes->end()), "BBBB");
}

TEST_P(MediaFile, RefusesPathsLlamaServerRefuses) {
  const std::string nul_inside("a.png\0.txt", 10);
  const std::string cases[] = {
      "../secret.txt",
      "a/../../secret.txt",
      "sub/..",
      "..",
      ".",
      "",
      nul_inside,
      "a:b.png",
      "a.png.",
      " a.png",
      "a.png ",
      "sub/b?.png",
      "a\x7f.png",
      "\xc0\xae\xc0\xae/secret.txt",          // overlong '.'
      "\xef\xbc\x8e\xef\xbc\x8e/secret.txt",  // U+FF0E, a full-width '.'
      "a\xe2\x88\x95..png",                   // U+2215 and ".."
      "\xff.png",
      std::string(256, 'a'),
  };
  for (const std::string& path : cases) {
    auto bytes = read(path);
    ASSERT_FALSE(bytes.is_ok()) << path;
    EXPECT_EQ(bytes.status().message(), "file path is not allowed: " + path);
    EXPECT_EQ(bytes.status().code(), ErrorCode::kInvalidArgument);
  }
  EXPECT_TRUE(is_allowed_media_file_path(std::string(255, 'a')));
  EXPECT_TRUE(is_allowed_media_file_path("sub\\b.png"));  // subdirectories, either separator
  EXPECT_TRUE(is_allowed_media_file_path("caf\xc3\xa9.png"));
}

// Hearth's addition: a link that leads out of the directory is refused as a path that is not
// allowed (llama-server would read what it points to).
TEST_P(MediaFile, RefusesLinksLeadingOutOfTheMediaPath) {
  for (const char* path : {"link_out", "link_abs", "dir_out/secret.txt"}) {
    EXPECT_EQ(read_text(path), std::string("error: file path is not allowed: ") + path);
  }
}

// With openat2 the kernel refuses any step out of the directory, even one that comes back in;
// resolving first only looks at where the path ends.
TEST_P(MediaFile, TheKernelRefusesEveryStepOutOfTheDirectory) {
  if (GetParam() != MediaOpenMode::kBeneath) GTEST_SKIP() << "openat2 mode only";
#ifndef SYS_openat2
  GTEST_SKIP() << "built without openat2";
#else
  open_how how{};
  how.flags = O_RDONLY | O_DIRECTORY;
  const long probe = ::syscall(SYS_openat2, AT_FDCWD, ".", &how, sizeof(how));
  if (probe < 0) GTEST_SKIP() << "this kernel has no openat2";
  ::close(static_cast<int>(probe));
  EXPECT_EQ(read_text("dir_out/media/a.png"),
            "error: file path is not allowed: dir_out/media/a.png");
#endif
}

// An absolute path names a file under the media directory, like llama-server's join: the
// secret outside is not read, the answer is that no such file exists there.
TEST_P(MediaFile, AnAbsolutePathStaysUnderTheMediaPath) {
  const std::string secret = (root_ / "secret.txt").string();
  ASSERT_EQ(secret.front(), '/');
  EXPECT_EQ(read_text(secret), "error: file does not exist or cannot be opened: " + secret);
  EXPECT_EQ(read_text("/etc/passwd"),
            "error: file does not exist or cannot be opened: /etc/passwd");
}

TEST_P(MediaFile, MissingFilesDirectoriesAndFifosCannotBeOpened) {
  for (const char* path : {"missing.png", "sub/missing.png", "sub", "/", "fifo"}) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(read_text(path),
              std::string("error: file does not exist or cannot be opened: ") + path);
    // A FIFO without a writer must not block the request.
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5)) << path;
  }
}

TEST_P(MediaFile, RefusesFilesOverTheLimit) {
  settings_.max_file_bytes = 3;
  EXPECT_EQ(read_text("a.png"), "AAA");
  settings_.max_file_bytes = 2;
  const std::string message = read_text("a.png");
  EXPECT_EQ(message.rfind("error: file is larger than", 0), 0u) << message;
  EXPECT_NE(message.find(": a.png"), std::string::npos) << message;
}

TEST_P(MediaFile, NeedsAMediaPath) {
  MediaFetchSettings none;
  for (const char* url : {"file://a.png", "file://../x", "file:///etc/passwd"}) {
    auto bytes = fetch_media_url(url, none);
    ASSERT_FALSE(bytes.is_ok());
    EXPECT_EQ(bytes.status().message(),
              "file:// URLs are not allowed unless --media-path is specified");
    EXPECT_EQ(bytes.status().code(), ErrorCode::kInvalidArgument);
  }
}

INSTANTIATE_TEST_SUITE_P(OpenModes, MediaFile,
                         ::testing::Values(MediaOpenMode::kBeneath, MediaOpenMode::kResolved),
                         [](const auto& mode) {
                           return mode.param == MediaOpenMode::kBeneath ? "Beneath" : "Resolved";
                         });

TEST(MediaPathOption, MustNameADirectoryAndGetsATrailingSlash) {
  const fs::path root(test::make_temp_dir("media_path"));
  write(root / "file.txt", "x");
  auto with_slash = validate_media_path(root.string() + "/");
  ASSERT_TRUE(with_slash.is_ok());
  EXPECT_EQ(*with_slash, root.string() + "/");
  auto without = validate_media_path(root.string());
  ASSERT_TRUE(without.is_ok());
  EXPECT_EQ(*without, root.string() + "/");
  for (const std::string& bad :
       {(root / "missing").string(), (root / "file.txt").string(), std::string()}) {
    auto r = validate_media_path(bad);
    ASSERT_FALSE(r.is_ok()) << bad;
    EXPECT_EQ(r.status().message(), "not a directory: " + bad);
    EXPECT_EQ(r.status().code(), ErrorCode::kInvalidArgument);
  }
  fs::remove_all(root);
}

}  // namespace
}  // namespace hearth::hub

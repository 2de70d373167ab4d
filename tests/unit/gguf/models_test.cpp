// Every GGUF file among the shared fixtures must load through both File and Archive.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "fuzz/gguf_exercise.h"
#include "gguf/file.h"
#include "support/test_paths.h"

namespace hearth::gguf {
namespace {

std::vector<std::string> shared_gguf_files() {
  std::vector<std::string> paths;
  const std::filesystem::path root = test::shared_path("models");
  std::error_code ec;
  if (!std::filesystem::is_directory(root, ec)) return paths;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(root, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".gguf")
      paths.push_back(entry.path().string());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

TEST(GgufSharedModels, EveryFileParses) {
  const auto paths = shared_gguf_files();
  if (paths.empty()) GTEST_SKIP() << "no GGUF files under " << test::shared_path("models");
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    // Archive::open parses the file with File::open; a file without split keys is one shard.
    auto archive = Archive::open(path);
    ASSERT_TRUE(archive.is_ok()) << archive.status().to_string();
    ASSERT_EQ(archive->files().size(), 1u);
    const File& f = archive->primary();
    EXPECT_EQ(f.name(), path);
    EXPECT_GE(f.version(), 2u);
    EXPECT_FALSE(f.metadata().empty());
    uint64_t checksum = 0;
    // Only the first and last byte of each tensor: the mapping, not the data, is under test.
    EXPECT_EQ(fuzz::exercise(f, checksum, /*touch_all_bytes=*/false), "");
    EXPECT_EQ(archive->tensors().size(), f.tensors().size());
    for (const TensorInfo& t : f.tensors()) {
      EXPECT_EQ(archive->find_tensor(t.name), &t) << t.name;
      EXPECT_EQ(t.shard, 0);
    }
  }
}

}  // namespace
}  // namespace hearth::gguf

// MappedFile in each load mode: the same bytes whichever way the file is brought in; only
// the mapping modes leave the file mapped in the process.
#include "base/mapped_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace hearth {
namespace {

const LoadMode kAllModes[] = {LoadMode::kAuto,  LoadMode::kNone,      LoadMode::kMmap,
                              LoadMode::kMlock, LoadMode::kMmapMlock, LoadMode::kDirectIo};

class MappedFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("hearth_mapped_file_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  // A file of `n` bytes whose content depends on the offset, so any shifted or missing
  // piece shows.
  std::string write_file(const std::string& name, size_t n) {
    bytes_.resize(n);
    for (size_t i = 0; i < n; ++i) bytes_[i] = static_cast<uint8_t>((i * 131 + i / 4096) % 251);
    const std::string path = (dir_ / name).string();
    std::ofstream(path, std::ios::binary)
        .write(reinterpret_cast<const char*>(bytes_.data()), static_cast<std::streamsize>(n));
    return path;
  }

  std::filesystem::path dir_;
  std::vector<uint8_t> bytes_;
};

// Not a multiple of the page or of a file system block: the direct reads' last piece is
// partial.
TEST_F(MappedFileTest, EveryModeHoldsTheFileBytes) {
  const std::string path = write_file("model.bin", 3 * 4096 + 123);
  for (LoadMode mode : kAllModes) {
    auto file = MappedFile::open(path, mode);
    ASSERT_TRUE(file.is_ok()) << load_mode_name(mode) << ": " << file.status().message();
    ASSERT_EQ(file->size(), bytes_.size()) << load_mode_name(mode);
    EXPECT_TRUE(std::equal(bytes_.begin(), bytes_.end(), file->data())) << load_mode_name(mode);
    EXPECT_EQ(file->maps_file(), load_mode_maps(mode)) << load_mode_name(mode);
    // Releasing the bytes of a copy keeps them (they cannot be read back from the file).
    file->release(file->data(), file->size());
    EXPECT_TRUE(std::equal(bytes_.begin(), bytes_.end(), file->data())) << load_mode_name(mode);
  }
}

TEST_F(MappedFileTest, EmptyAndMissingFiles) {
  const std::string empty = write_file("empty.bin", 0);
  for (LoadMode mode : kAllModes) {
    auto file = MappedFile::open(empty, mode);
    ASSERT_TRUE(file.is_ok()) << load_mode_name(mode);
    EXPECT_EQ(file->size(), 0u);
    auto missing = MappedFile::open((dir_ / "missing.bin").string(), mode);
    ASSERT_FALSE(missing.is_ok());
    EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound) << load_mode_name(mode);
  }
}

bool mapped_in_process(const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.ends_with(" " + path)) return true;
  return false;
}

TEST_F(MappedFileTest, ReadModesDoNotMapTheFile) {
  const std::string path = write_file("weights.bin", 2 * 4096);
  {
    auto mapped = MappedFile::open(path, LoadMode::kMmap);
    ASSERT_TRUE(mapped.is_ok());
    EXPECT_TRUE(mapped_in_process(path));
  }
  EXPECT_FALSE(mapped_in_process(path));  // unmapped with the object
  for (LoadMode mode : {LoadMode::kNone, LoadMode::kMlock, LoadMode::kDirectIo}) {
    auto read = MappedFile::open(path, mode);
    ASSERT_TRUE(read.is_ok()) << load_mode_name(mode);
    EXPECT_FALSE(mapped_in_process(path)) << load_mode_name(mode);
  }
}

TEST(LoadModeTest, NamesRoundTrip) {
  for (LoadMode mode : kAllModes) EXPECT_EQ(load_mode_from_name(load_mode_name(mode)), mode);
  EXPECT_FALSE(load_mode_from_name("mmap+dio").has_value());
  EXPECT_FALSE(load_mode_from_name("").has_value());
}

}  // namespace
}  // namespace hearth

// Models split into <prefix>-0000i-of-0000N.gguf shards, opened through Archive.
#include <gtest/gtest.h>

#include <filesystem>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "support/test_paths.h"

namespace hearth::gguf {
namespace {

class GgufSplit : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = test::make_temp_dir("gguf-split");
    prefix_ = dir_ + "/model";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string shard(int index, int count = 3) const { return split_path(prefix_, index, count); }

  // Shard `index` of `count` holding tensors t<index>a and t<index>b, filled with `index`.
  static Writer shard_writer(int index, int count, int total_tensors) {
    Writer w;
    if (index == 0) {
      w.set_string("general.architecture", "llama");
      w.set_u32("llama.block_count", 3);
    }
    w.set_u16("split.no", static_cast<uint16_t>(index));
    w.set_u16("split.count", static_cast<uint16_t>(count));
    w.set_i32("split.tensors.count", total_tensors);
    const auto fill = static_cast<uint8_t>(index + 1);
    for (const char* suffix : {"a", "b"}) {
      const std::string name = "t" + std::to_string(index) + suffix;
      EXPECT_TRUE(w.add_tensor(name, TensorType::kF32, {4, index + 1},
                               std::vector<uint8_t>(16 * (index + 1), fill))
                      .is_ok());
    }
    return w;
  }

  void write_model(int count = 3) {
    for (int i = 0; i < count; ++i) {
      ASSERT_TRUE(shard_writer(i, count, 2 * count).write(shard(i, count)).is_ok());
    }
  }

  void expect_error(const std::string& path, ErrorCode code, const std::string& needle) {
    auto archive = Archive::open(path);
    ASSERT_FALSE(archive.is_ok());
    EXPECT_EQ(archive.status().code(), code) << archive.status().to_string();
    EXPECT_NE(archive.status().message().find(needle), std::string::npos)
        << archive.status().message();
  }

  std::string dir_;
  std::string prefix_;
};

TEST_F(GgufSplit, SplitPathNames) {
  EXPECT_EQ(split_path("/m/x", 0, 3), "/m/x-00001-of-00003.gguf");
  auto p = parse_split_path("/m/x-00002-of-00003.gguf");
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->prefix, "/m/x");
  EXPECT_EQ(p->index, 1);
  EXPECT_EQ(p->count, 3);
  EXPECT_EQ(parse_split_path("-00001-of-00001.gguf")->prefix, "");
  for (const char* bad : {"x.gguf", "x-00000-of-00003.gguf", "x-00004-of-00003.gguf",
                          "x-0001-of-00003.gguf", "x-00001-of-00003.bin", "x-000a1-of-00003.gguf",
                          "x_00001-of-00003.gguf", "x-00001_of-00003.gguf", ""}) {
    EXPECT_FALSE(parse_split_path(bad).has_value()) << bad;
  }
}

TEST_F(GgufSplit, OpensAllShardsFromTheFirst) {
  write_model();
  auto archive = Archive::open(shard(0));
  ASSERT_TRUE(archive.is_ok()) << archive.status().to_string();
  ASSERT_EQ(archive->files().size(), 3u);
  EXPECT_EQ(archive->tensors().size(), 6u);
  EXPECT_EQ(*archive->primary().get_string("general.architecture"), "llama");
  for (int i = 0; i < 3; ++i) {
    for (const char* suffix : {"a", "b"}) {
      const std::string name = "t" + std::to_string(i) + suffix;
      const TensorInfo* t = archive->find_tensor(name);
      ASSERT_NE(t, nullptr) << name;
      EXPECT_EQ(t->shard, i);
      EXPECT_EQ(t->ne[1], i + 1);
      EXPECT_EQ(t->data[t->n_bytes - 1], i + 1);
      const auto& bytes = archive->files()[i].bytes();
      EXPECT_TRUE(t->data >= bytes.data() && t->data + t->n_bytes <= bytes.data() + bytes.size());
    }
  }
  EXPECT_EQ(archive->find_tensor("t3a"), nullptr);
  EXPECT_EQ(archive->total_tensor_bytes(), 2u * (16 + 32 + 48));
  // Moving the archive keeps its tensor pointers valid.
  Archive moved = std::move(archive).value();
  EXPECT_EQ(moved.find_tensor("t2b")->data[0], 3);
}

TEST_F(GgufSplit, SingleFileWithoutSplitKeys) {
  Writer w;
  ASSERT_TRUE(w.add_tensor("x", TensorType::kF32, {1}, std::vector<uint8_t>(4)).is_ok());
  ASSERT_TRUE(w.write(dir_ + "/single.gguf").is_ok());
  auto archive = Archive::open(dir_ + "/single.gguf");
  ASSERT_TRUE(archive.is_ok()) << archive.status().to_string();
  EXPECT_EQ(archive->files().size(), 1u);
  EXPECT_EQ(archive->find_tensor("x")->shard, 0);
}

TEST_F(GgufSplit, MissingShard) {
  write_model();
  std::filesystem::remove(shard(2));
  expect_error(shard(0), ErrorCode::kNotFound, "shard 3 of 3");
}

TEST_F(GgufSplit, ShardWithWrongSplitNumber) {
  write_model();
  ASSERT_TRUE(shard_writer(2, 3, 6).write(shard(1)).is_ok());
  expect_error(shard(0), ErrorCode::kCorruptFile, "split keys say shard 3 of 3, expected shard 2");
  Writer no_keys;  // a shard without split keys is shard 1 of 1
  ASSERT_TRUE(no_keys.write(shard(1)).is_ok());
  expect_error(shard(0), ErrorCode::kCorruptFile, "split keys say shard 1 of 1");
}

TEST_F(GgufSplit, ShardWithWrongSplitCount) {
  write_model();
  Writer w = shard_writer(1, 3, 6);
  w.set_u16("split.count", 4);
  ASSERT_TRUE(w.write(shard(1)).is_ok());
  expect_error(shard(0), ErrorCode::kCorruptFile, "shard 2 of 4, expected shard 2 of 3");
}

TEST_F(GgufSplit, OpeningANonFirstShard) {
  write_model();
  expect_error(shard(1), ErrorCode::kInvalidArgument, "is shard 2 of 3");
  expect_error(shard(2), ErrorCode::kInvalidArgument, "open the first shard");
}

TEST_F(GgufSplit, FirstShardNameMustMatchItsKeys) {
  write_model();
  std::filesystem::copy_file(shard(0), dir_ + "/renamed.gguf");
  expect_error(dir_ + "/renamed.gguf", ErrorCode::kInvalidArgument, "-00001-of-00003.gguf");
  std::filesystem::copy_file(shard(0), shard(0, 4));
  expect_error(shard(0, 4), ErrorCode::kInvalidArgument, "declares 3 shards");
}

TEST_F(GgufSplit, TensorCountMismatch) {
  write_model();
  ASSERT_TRUE(shard_writer(0, 3, 7).write(shard(0)).is_ok());
  expect_error(shard(0), ErrorCode::kCorruptFile,
               "split.tensors.count is 7, but the shards hold 6");
}

TEST_F(GgufSplit, DuplicateTensorAcrossShards) {
  write_model();
  Writer w = shard_writer(2, 3, 6);
  ASSERT_TRUE(w.add_tensor("t0a", TensorType::kF32, {4}, std::vector<uint8_t>(16)).is_ok());
  ASSERT_TRUE(w.write(shard(2)).is_ok());
  expect_error(shard(0), ErrorCode::kCorruptFile,
               "tensor 't0a' is in shard 1 and again in shard 3");
}

TEST_F(GgufSplit, SplitKeysMustBeU16AndConsistent) {
  Writer w = shard_writer(0, 3, 6);
  w.set_u32("split.count", 3);
  ASSERT_TRUE(w.write(shard(0)).is_ok());
  expect_error(shard(0), ErrorCode::kCorruptFile, "'split.count' is stored as u32, expected u16");
  Writer zero = shard_writer(0, 3, 6);
  zero.set_u16("split.count", 0);
  ASSERT_TRUE(zero.write(shard(0)).is_ok());
  expect_error(shard(0), ErrorCode::kCorruptFile, "split.no 0 with split.count 0 is invalid");
}

TEST_F(GgufSplit, CorruptShardIsReported) {
  write_model();
  std::filesystem::resize_file(shard(1), 100);
  expect_error(shard(0), ErrorCode::kCorruptFile, "shard 2 of 3: " + shard(1) + ": ");
}

}  // namespace
}  // namespace hearth::gguf

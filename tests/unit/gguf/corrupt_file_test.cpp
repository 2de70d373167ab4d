// Malformed GGUF images: each must be refused with kCorruptFile and a message that names the
// problem, never read out of bounds or allocate by a count it has not checked.
#include <gtest/gtest.h>

#include <memory>
#include <random>

#include "fuzz/gguf_exercise.h"
#include "gguf/file.h"
#include "gguf/writer.h"
#include "raw_gguf.h"

namespace hearth::gguf {
namespace {

constexpr uint64_t kMaxU64 = ~uint64_t{0};

// Parses a copy of `bytes` in a buffer of exactly that size, so a sanitizer sees any read
// past the end.
Result<File> parse_exact(std::span<const uint8_t> bytes, std::unique_ptr<uint8_t[]>& storage) {
  storage.reset(new uint8_t[bytes.size()]);
  if (!bytes.empty()) std::memcpy(storage.get(), bytes.data(), bytes.size());
  return File::parse(std::span<const uint8_t>(storage.get(), bytes.size()), "test.gguf");
}

::testing::AssertionResult rejects(const std::vector<uint8_t>& bytes, std::string_view needle) {
  std::unique_ptr<uint8_t[]> storage;
  auto f = parse_exact(bytes, storage);
  if (f.is_ok()) return ::testing::AssertionFailure() << "parsed, expected '" << needle << "'";
  const Status& s = f.status();
  if (s.code() != ErrorCode::kCorruptFile)
    return ::testing::AssertionFailure() << "wrong code: " << s.to_string();
  if (s.message().find(needle) == std::string::npos)
    return ::testing::AssertionFailure() << "message lacks '" << needle << "': " << s.message();
  if (s.message().rfind("test.gguf: ", 0) != 0 ||
      s.message().find("(at byte ") == std::string::npos)
    return ::testing::AssertionFailure() << "message lacks the file or position: " << s.message();
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult accepts(const std::vector<uint8_t>& bytes) {
  std::unique_ptr<uint8_t[]> storage;
  auto f = parse_exact(bytes, storage);
  if (!f.is_ok()) return ::testing::AssertionFailure() << f.status().to_string();
  uint64_t checksum = 0;
  const std::string problem = fuzz::exercise(*f, checksum);
  if (!problem.empty()) return ::testing::AssertionFailure() << problem;
  return ::testing::AssertionSuccess();
}

// A valid file with values of several types and three tensors; the last tensor fills its
// alignment exactly, so the file has no optional trailing padding.
std::vector<uint8_t> small_valid_file() {
  Writer w;
  w.set_string("general.architecture", "llama");
  w.set_u32("llama.block_count", 1);
  w.set_f32("llama.rope.freq_base", 10000.0f);
  w.set_bool("flag", false);
  w.set_string_array("tokenizer.ggml.tokens", {"<s>", "a", ""});
  w.set_i32_array("ids", std::vector<int32_t>{1, -2});
  EXPECT_TRUE(w.add_tensor("a", TensorType::kF32, {3}, std::vector<uint8_t>(12, 1)).is_ok());
  EXPECT_TRUE(w.add_tensor("b", TensorType::kQ8_0, {32}, std::vector<uint8_t>(34, 2)).is_ok());
  EXPECT_TRUE(w.add_tensor("c", TensorType::kF16, {16}, std::vector<uint8_t>(32, 3)).is_ok());
  return w.to_bytes();
}

// One metadata entry and one tensor `t` with the given fields, then `data_bytes` of data.
std::vector<uint8_t> one_tensor(const std::vector<uint64_t>& ne, uint32_t type, uint64_t offset,
                                size_t data_bytes, std::string_view name = "t") {
  RawGguf g;
  g.header(1, 1).kv_string("general.architecture", "x").tensor(name, ne, type, offset);
  return g.pad(32).zeros(data_bytes).bytes();
}

TEST(GgufCorrupt, SmallValidFileParses) {
  const auto bytes = small_valid_file();
  EXPECT_EQ(bytes.size() % 32, 0u);
  EXPECT_TRUE(accepts(bytes));
  EXPECT_TRUE(accepts(one_tensor({4, 2}, 0, 0, 32)));
}

TEST(GgufCorrupt, EveryTruncationFails) {
  const auto bytes = small_valid_file();
  for (size_t n = 0; n < bytes.size(); ++n) {
    std::unique_ptr<uint8_t[]> storage;
    auto f = parse_exact(std::span<const uint8_t>(bytes.data(), n), storage);
    ASSERT_FALSE(f.is_ok()) << "a prefix of " << n << " bytes parsed";
    ASSERT_EQ(f.status().code(), ErrorCode::kCorruptFile) << f.status().to_string();
  }
  EXPECT_TRUE(accepts(bytes));
}

TEST(GgufCorrupt, Header) {
  EXPECT_TRUE(rejects({}, "too small"));
  EXPECT_TRUE(rejects(RawGguf().raw("GGU").bytes(), "too small"));
  EXPECT_TRUE(rejects(RawGguf().raw("GGUF").bytes(), "truncated: the version"));
  EXPECT_TRUE(rejects(RawGguf().raw("GGML").u32(3).i64(0).i64(0).bytes(), "bad magic"));
  EXPECT_TRUE(rejects(RawGguf().raw("FUGG").u32(3).i64(0).i64(0).bytes(), "bad magic"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 0, 0).bytes(), "invalid GGUF version 0"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 0, 1).bytes(), "version 1 is not supported"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 0, 4).bytes(), "unsupported GGUF version 4"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 0, 0xFFFFFFFF).bytes(), "unsupported GGUF version"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 0, 0x03000000).bytes(), "big-endian"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 0, 0x02000000).bytes(), "big-endian"));
  EXPECT_TRUE(rejects(RawGguf().raw("GGUF").u32(3).i64(0).bytes(), "truncated: the metadata"));
  EXPECT_TRUE(accepts(RawGguf().header(0, 0, 3).bytes()));
  EXPECT_TRUE(accepts(RawGguf().header(0, 0, 2).bytes()));
}

TEST(GgufCorrupt, Counts) {
  const auto kv = [](int64_t n_tensors, int64_t n_kv) {
    return RawGguf().header(n_tensors, n_kv).kv_u32("k", 1).bytes();
  };
  EXPECT_TRUE(rejects(kv(-1, 1), "negative tensor count -1"));
  EXPECT_TRUE(rejects(kv(INT64_MIN, 1), "negative tensor count"));
  EXPECT_TRUE(rejects(kv(0, -1), "negative metadata count -1"));
  EXPECT_TRUE(rejects(kv(0, INT64_MAX), "metadata count 9223372036854775807 cannot fit"));
  EXPECT_TRUE(rejects(kv(INT64_MAX, 1), "tensor count 9223372036854775807 cannot fit"));
  EXPECT_TRUE(rejects(kv(int64_t{1} << 40, 1), "tensor count"));
  EXPECT_TRUE(rejects(kv(0, 2), "metadata count 2 cannot fit"));
  EXPECT_TRUE(
      rejects(RawGguf().header(0, 2).kv_u32("k", 1).u64(5).raw("abc").bytes(),
              "metadata entry 1: key length 5 runs past the end of the file (3 bytes left)"));
  EXPECT_TRUE(rejects(kv(1, 1), "tensor count 1 cannot fit"));
  EXPECT_TRUE(accepts(kv(0, 1)));
}

TEST(GgufCorrupt, AbsurdStringLengths) {
  for (uint64_t len : {uint64_t{1} << 31, kMaxU64, (uint64_t{1} << 30) + 1}) {
    SCOPED_TRACE(len);
    EXPECT_TRUE(rejects(RawGguf().header(0, 1).str_with_length(len, "k").u32(4).u32(0).bytes(),
                        "key length"));
    EXPECT_TRUE(rejects(RawGguf().header(0, 1).str("k").u32(8).str_with_length(len, "v").bytes(),
                        "string value length"));
    EXPECT_TRUE(rejects(
        RawGguf().header(0, 1).kv_array("k", 8, 2).str("a").str_with_length(len, "").bytes(),
        "string element 1 length"));
    RawGguf t;
    t.header(1, 0).str_with_length(len, "t").u32(1).u64(1).u32(0).u64(0).pad(32).zeros(32);
    EXPECT_TRUE(rejects(t.bytes(), "tensor name length"));
  }
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).str("k").u32(8).str_with_length(1u << 30, "v").bytes(),
                      "runs past the end"));
  EXPECT_TRUE(
      rejects(RawGguf().header(0, 1).str("k").u32(8).str_with_length(2, "v").bytes(), "past"));
}

TEST(GgufCorrupt, Arrays) {
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).kv_array("a", 4, 1000).u32(1).bytes(),
                      "array of 1000 u32 values (4000 bytes) runs past the end"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).kv_array("a", 4, kMaxU64).bytes(), "2^30"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).kv_array("a", 0, (1u << 30) + 1).bytes(), "2^30"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).kv_array("a", 8, 1 << 20).str("x").bytes(),
                      "array of 1048576 strings cannot fit"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).kv_array("a", 8, 2).str("x").zeros(7).bytes(),
                      "truncated: the length of the string element 1 needs 8 bytes, 7 left"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).kv_array("a", 13, 0).bytes(),
                      "unknown array element type id 13"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).kv_array("a", 0xFFFFFFFF, 0).bytes(),
                      "unknown array element type id 4294967295"));
  EXPECT_TRUE(
      rejects(RawGguf().header(0, 1).kv_array("a", 9, 1).u32(4).u64(0).bytes(), "nested arrays"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).str("a").u32(9).u32(4).bytes(), "array count"));
  EXPECT_TRUE(accepts(RawGguf().header(0, 1).kv_array("a", 4, 0).bytes()));
  EXPECT_TRUE(accepts(RawGguf().header(0, 1).kv_array("a", 8, 0).bytes()));
}

TEST(GgufCorrupt, MetadataRecords) {
  for (uint32_t type : {13u, 255u, 0xFFFFFFFFu}) {
    EXPECT_TRUE(rejects(RawGguf().header(0, 1).str("k").u32(type).u32(0).bytes(),
                        "unknown value type id " + std::to_string(type)));
  }
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).str("").u32(4).u32(0).bytes(), "empty key"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 2).kv_u32("a.b", 1).kv_u32("a.b", 2).bytes(),
                      "metadata entry 1 'a.b': duplicate key (metadata entry 0"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).str("k").u32(10).u32(0).bytes(),
                      "truncated: the u64 value needs 8 bytes, 4 left"));
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).str("kkkk").u16(4).bytes(),
                      "truncated: the value type needs 4 bytes, 2 left"));
  // Binary keys are escaped in messages.
  EXPECT_TRUE(rejects(RawGguf().header(0, 1).str("\x01\xff").u32(99).bytes(), "'\\x01\\xff'"));
}

TEST(GgufCorrupt, ErrorMessageNamesFileRecordAndPosition) {
  const auto bytes = RawGguf().header(0, 2).kv_u32("first", 1).str("second").u32(42).bytes();
  auto f = File::parse(bytes, "model.gguf");
  ASSERT_FALSE(f.is_ok());
  // header 24 + first record (8 + 5 + 4 + 4 = 21) + key (8 + 6) puts the type id at 59.
  EXPECT_EQ(f.status().message(),
            "model.gguf: metadata entry 1 'second': unknown value type id 42 (at byte 59)");
}

TEST(GgufCorrupt, TensorNamesAndDimensions) {
  EXPECT_TRUE(accepts(one_tensor({8}, 0, 0, 32, std::string(63, 'n'))));
  EXPECT_TRUE(rejects(one_tensor({8}, 0, 0, 32, std::string(64, 'n')),
                      "name of 64 bytes is longer than the limit of 63"));
  RawGguf five;
  five.header(1, 0).str("t").u32(5).u64(1).u64(1).u64(1).u64(1).u64(1).u32(0).u64(0);
  EXPECT_TRUE(rejects(five.pad(32).zeros(32).bytes(), "5 dimensions, more than the limit of 4"));
  EXPECT_TRUE(rejects(RawGguf().header(1, 0).str("t").u32(0xFFFFFFFF).zeros(64).bytes(),
                      "4294967295 dimensions"));
  // n_dims 0 is a one-element tensor.
  EXPECT_TRUE(accepts(one_tensor({}, 0, 0, 4)));
  EXPECT_TRUE(rejects(one_tensor({uint64_t{1} << 63}, 0, 0, 32), "dimension 0 is negative"));
  EXPECT_TRUE(rejects(one_tensor({1, kMaxU64}, 0, 0, 32), "dimension 1 is negative"));
  EXPECT_TRUE(rejects(one_tensor({uint64_t{1} << 32, uint64_t{1} << 32}, 0, 0, 32),
                      "element count of shape [4294967296, 4294967296] overflows"));
  EXPECT_TRUE(rejects(one_tensor({2, 2, uint64_t{1} << 61, 1}, 0, 0, 32), "overflows"));
  EXPECT_TRUE(rejects(one_tensor({uint64_t{1} << 62}, 0, 0, 32),
                      "byte size of a f32 tensor of shape [4611686018427387904] overflows"));
  EXPECT_TRUE(rejects(one_tensor({uint64_t{1} << 61, 2}, 28, 0, 32), "byte size"));
  // A zero dimension makes an empty tensor, but must not hide an overflow of the others
  // (found by the fuzzer: n_rows() overflowed).
  EXPECT_TRUE(accepts(one_tensor({0, uint64_t{1} << 62}, 0, 0, 0)));
  EXPECT_TRUE(accepts(one_tensor({8, 0, 2}, 0, 0, 0)));
  EXPECT_TRUE(rejects(one_tensor({0, uint64_t{1} << 40, uint64_t{1} << 40}, 0, 0, 0),
                      "element count of shape [0, 1099511627776, 1099511627776] overflows"));
  EXPECT_TRUE(rejects(one_tensor({uint64_t{1} << 40, uint64_t{1} << 40, 0}, 0, 0, 0), "overflows"));
  EXPECT_TRUE(rejects(one_tensor({33, 1}, 2, 0, 64),
                      "row length 33 is not a multiple of the q4_0 block size 32"));
  EXPECT_TRUE(rejects(one_tensor({128}, 12, 0, 256), "q4_K block size 256"));
  const auto dup = RawGguf().header(2, 0).tensor("t", {8}, 0, 0).tensor("t", {8}, 0, 32).pad(32);
  EXPECT_TRUE(rejects(RawGguf(dup).zeros(64).bytes(), "tensor info 1 't': duplicate tensor name"));
}

TEST(GgufCorrupt, TensorTypes) {
  for (uint32_t removed : {4u, 5u, 31u, 32u, 33u, 36u, 37u, 38u}) {
    EXPECT_TRUE(rejects(one_tensor({32}, removed, 0, 256), "was removed")) << removed;
  }
  for (uint32_t unknown : {43u, 44u, 1000u, 0xFFFFFFFFu}) {
    EXPECT_TRUE(rejects(one_tensor({32}, unknown, 0, 256), "unknown tensor type id")) << unknown;
  }
  for (uint32_t id = 0; id < kTensorTypeIdLimit; ++id) {
    const auto traits = tensor_type_traits(id);
    if (!traits) continue;
    const uint64_t n = traits->block_size * 2;
    EXPECT_TRUE(accepts(one_tensor({n}, id, 0, traits->type_size * 2))) << traits->name;
  }
}

TEST(GgufCorrupt, TensorOffsetsAndSizes) {
  EXPECT_TRUE(rejects(one_tensor({8}, 0, 4, 64), "data offset 4 is not a multiple of 32"));
  EXPECT_TRUE(rejects(one_tensor({8}, 0, 32, 64), "data offset 32 is not packed"));
  EXPECT_TRUE(rejects(one_tensor({8}, 0, kMaxU64 - 31, 64), "not packed"));
  EXPECT_TRUE(rejects(one_tensor({8}, 0, 0, 31), "data [0, +32) runs past the end"));
  EXPECT_TRUE(rejects(one_tensor({1024, 1024}, 0, 0, 64), "runs past the end"));
  // Second tensor not where packing puts it: a gap, an overlap, past the end.
  for (uint64_t offset : {0ull, 64ull, 96ull, 1ull << 40}) {
    RawGguf g;
    g.header(2, 0).tensor("a", {8}, 0, 0).tensor("b", {8}, 0, offset).pad(32).zeros(128);
    EXPECT_TRUE(rejects(g.bytes(), "tensor 1 'b': data offset")) << offset;
  }
  RawGguf ok;
  ok.header(2, 0).tensor("a", {3}, 0, 0).tensor("b", {8}, 0, 32).pad(32).zeros(64);
  EXPECT_TRUE(accepts(ok.bytes()));
  // The file ends before the aligned start of the data section.
  RawGguf short_pad;
  short_pad.header(1, 0).tensor("a", {0}, 0, 0);
  EXPECT_TRUE(rejects(short_pad.bytes(), "before the tensor data"));
  EXPECT_TRUE(accepts(RawGguf(short_pad).pad(32).bytes()));
}

TEST(GgufCorrupt, Alignment) {
  auto with_alignment = [](auto add_key) {
    RawGguf g;
    g.header(1, 1);
    add_key(g);
    return g.tensor("t", {8}, 0, 0).pad(32).zeros(32).bytes();
  };
  for (uint32_t bad : {0u, 3u, 48u, 0xFFFFFFFFu}) {
    EXPECT_TRUE(rejects(with_alignment([&](RawGguf& g) { g.kv_u32("general.alignment", bad); }),
                        "metadata entry 0 'general.alignment': alignment " + std::to_string(bad) +
                            " is not a power of two"));
  }
  EXPECT_TRUE(
      rejects(with_alignment([](RawGguf& g) { g.str("general.alignment").u32(10).u64(32); }),
              "alignment is stored as u64, expected u32"));
  EXPECT_TRUE(rejects(with_alignment([](RawGguf& g) { g.str("general.alignment").u32(5).u32(32); }),
                      "stored as i32"));
  EXPECT_TRUE(rejects(with_alignment([](RawGguf& g) { g.kv_string("general.alignment", "32"); }),
                      "stored as string"));
  EXPECT_TRUE(accepts(with_alignment([](RawGguf& g) { g.kv_u32("general.alignment", 32); })));
  EXPECT_TRUE(accepts(with_alignment([](RawGguf& g) { g.kv_u32("general.alignment", 16); })));
  // The alignment also governs offsets: 64 makes the second tensor start at 64.
  for (uint32_t align : {1u, 8u, 64u, 4096u}) {
    Writer w;
    w.set_alignment(align);
    ASSERT_TRUE(w.add_tensor("a", TensorType::kF32, {3}, std::vector<uint8_t>(12)).is_ok());
    ASSERT_TRUE(w.add_tensor("b", TensorType::kF32, {1}, std::vector<uint8_t>(4)).is_ok());
    const auto bytes = w.to_bytes();
    auto f = File::parse(bytes);
    ASSERT_TRUE(f.is_ok()) << f.status().to_string();
    EXPECT_EQ(f->alignment(), align);
    EXPECT_EQ(f->data_offset() % align, 0u);
    EXPECT_EQ(f->tensors()[1].offset, (12 + align - 1) / align * align);
  }
}

// Random mutations of a valid file: each either parses, and then reads back consistently,
// or fails with kCorruptFile. Meaningful mostly under ASan/UBSan.
TEST(GgufCorrupt, RandomMutations) {
  const auto original = small_valid_file();
  std::mt19937_64 rng(20240611);
  const uint64_t interesting[] = {
      0,          1,          4,          8,       13,          63, 64, 1u << 30, (1u << 30) + 1,
      1ull << 31, 1ull << 62, 1ull << 63, kMaxU64, kMaxU64 - 31};
  int parsed = 0;
  for (int iteration = 0; iteration < 4000; ++iteration) {
    std::vector<uint8_t> bytes = original;
    const int edits = 1 + static_cast<int>(rng() % 4);
    for (int e = 0; e < edits; ++e) {
      const size_t at = rng() % bytes.size();
      switch (rng() % 5) {
        case 0:
          bytes[at] ^= static_cast<uint8_t>(1u << (rng() % 8));
          break;
        case 1:
          bytes[at] = static_cast<uint8_t>(rng());
          break;
        case 2:
          bytes[at] = (rng() & 1) ? 0xFF : 0x00;
          break;
        case 3: {
          const uint64_t v = interesting[rng() % std::size(interesting)];
          std::memcpy(bytes.data() + at, &v, std::min<size_t>(8, bytes.size() - at));
          break;
        }
        default:
          bytes.resize(at);
          break;
      }
      if (bytes.empty()) break;
    }
    std::unique_ptr<uint8_t[]> storage;
    auto f = parse_exact(bytes, storage);
    if (!f.is_ok()) {
      ASSERT_EQ(f.status().code(), ErrorCode::kCorruptFile) << f.status().to_string();
      continue;
    }
    ++parsed;
    uint64_t checksum = 0;
    ASSERT_EQ(fuzz::exercise(*f, checksum), "") << "iteration " << iteration;
    ASSERT_EQ(fuzz::check_rewrite(*f), "") << "iteration " << iteration;
  }
  // Flips in tensor data or string contents keep the file valid; make sure some do.
  EXPECT_GT(parsed, 100);
}

}  // namespace
}  // namespace hearth::gguf

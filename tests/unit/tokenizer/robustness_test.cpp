// Inputs that must not crash or hang: invalid UTF-8, empty text, out-of-range ids, 1 MB texts,
// and malformed vocabularies (which must give an error Status).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_util.h"

namespace hearth::tokenizer::test {
namespace {

using Ids = std::vector<TokenId>;

const char* const kAllVocabs[] = {"llama-spm",    "phi-3",          "gpt-2",    "mpt",
                                  "falcon",       "starcoder",      "refact",   "bert-bge",
                                  "deepseek-llm", "deepseek-coder", "baichuan", "gpt-neox"};

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kSanitized = true;  // ~10x slower: smaller inputs, no tokenizer.json loading here
constexpr size_t kHugeSize = size_t{1} << 18;
#else
constexpr bool kSanitized = false;
constexpr size_t kHugeSize = size_t{1} << 20;
#endif

// The shared GGUF vocabularies, plus the tokenizer.json ones (slower to load) on request.
// Each missing one is named on stdout, so a run that covers fewer than expected says so.
std::vector<const Tokenizer*> available_tokenizers(bool with_npm = false) {
  std::vector<const Tokenizer*> out;
  for (const char* name : kAllVocabs) {
    if (const Tokenizer* t = vocab_gguf(name)) {
      out.push_back(t);
    } else {
      std::printf("[ info ] vocabulary %s is missing: not covered\n", name);
    }
  }
  if (!with_npm || kSanitized) return out;
  for (const char* pkg : {"tokenizer-qwen3", "tokenizer-llama3"}) {
    if (const Tokenizer* t = npm_tokenizer(pkg, nullptr)) out.push_back(t);
  }
  return out;
}

constexpr const char* kNoVocabularies = "none of the shared vocabularies (models/vocab) is present";

void expect_ids_in_range(const Tokenizer& tok, const Ids& ids, const std::string& what) {
  for (TokenId id : ids) {
    ASSERT_TRUE(id >= 0 && id < tok.n_vocab()) << what << ": id " << id;
  }
}

const std::vector<std::string>& invalid_utf8_inputs() {
  static const std::vector<std::string> inputs = {
      "\xFF",
      "\xC3",
      "abc\xE4\xB8",
      "\xF0\x9F\x98",
      "\xED\xA0\x80 surrogate",
      "\xF4\x90\x80\x80 beyond U+10FFFF",
      std::string("\xC0\x80 overlong nul", 15),
      "\x80\x80 stray continuation",
      "ok \xF8\x88\x80\x80\x80 five-byte",
      std::string("nul\0inside", 10),
      "<|im_start|>\xFF<s>\xC3</s>",
  };
  return inputs;
}

TEST(TokenizerRobustness, InvalidUtf8DoesNotCrash) {
  const std::vector<const Tokenizer*> tokenizers = available_tokenizers(/*with_npm=*/true);
  if (tokenizers.empty()) GTEST_SKIP() << kNoVocabularies;
  for (const Tokenizer* tok : tokenizers) {
    for (const std::string& s : invalid_utf8_inputs()) {
      for (bool parse : {false, true}) {
        const Ids ids = tok->tokenize(s, true, parse);
        expect_ids_in_range(*tok, ids, std::string(tok->model()) + " '" + escape(s) + "'");
        (void)tok->detokenize(ids, false, true);
      }
    }
  }
}

TEST(TokenizerRobustness, InvalidUtf8RoundTripsThroughSpmBytes) {
  const Tokenizer* tok = vocab_gguf("llama-spm");
  if (tok == nullptr) GTEST_SKIP() << "ggml-vocab-llama-spm.gguf missing";
  for (const std::string& s : invalid_utf8_inputs()) {
    EXPECT_EQ(tok->detokenize(tok->tokenize(s, false, false)), s) << escape(s);
  }
}

TEST(TokenizerRobustness, InvalidUtf8BecomesReplacementCharactersInBpe) {
  const Tokenizer* tok = vocab_gguf("gpt-2");
  if (tok == nullptr) GTEST_SKIP() << "ggml-vocab-gpt-2.gguf missing";
  EXPECT_EQ(tok->detokenize(tok->tokenize("\xFF", false, false)), "\xEF\xBF\xBD");
  EXPECT_EQ(tok->detokenize(tok->tokenize("a\xC3", false, false)), "a\xEF\xBF\xBD");
}

TEST(TokenizerRobustness, EmptyInput) {
  const std::vector<const Tokenizer*> tokenizers = available_tokenizers();
  if (tokenizers.empty()) GTEST_SKIP() << kNoVocabularies;
  for (const Tokenizer* tok : tokenizers) {
    EXPECT_TRUE(tok->tokenize("", false, false).empty()) << tok->model();
    EXPECT_TRUE(tok->tokenize("", false, true).empty()) << tok->model();
    EXPECT_EQ(tok->detokenize(Ids{}), "");
    StreamDetokenizer stream(*tok);
    EXPECT_EQ(stream.finish(), "");
  }
}

TEST(TokenizerRobustness, OutOfRangeIds) {
  const std::vector<const Tokenizer*> tokenizers = available_tokenizers();
  if (tokenizers.empty()) GTEST_SKIP() << kNoVocabularies;
  for (const Tokenizer* tok : tokenizers) {
    for (TokenId id : {-1, -1000, tok->n_vocab(), tok->n_vocab() + 5, INT32_MAX, INT32_MIN}) {
      EXPECT_EQ(tok->token_to_piece(id), "");
      EXPECT_EQ(tok->token_to_piece(id, false, 3), "");
      EXPECT_EQ(tok->token_text(id), "");
      EXPECT_EQ(tok->token_attr(id), kAttrUndefined);
      EXPECT_FALSE(tok->is_control(id));
      EXPECT_FALSE(tok->is_eog(id));
    }
    const Ids ids = {-1, tok->n_vocab(), INT32_MAX};
    EXPECT_EQ(tok->detokenize(ids), "");
    EXPECT_EQ(tok->detokenize(ids, true, true), "");
  }
}

// 1 MB of mixed text, and 256 KB runs of one character (a single pre-tokenized word: the worst
// case for merging), finish quickly (no quadratic paths): one tokenizer per algorithm and
// regex family.
TEST(TokenizerRobustness, OneMegabyteInputs) {
  std::vector<const Tokenizer*> tokenizers;
  for (const char* name : {"llama-spm", "gpt-2", "deepseek-llm", "bert-bge"}) {
    if (const Tokenizer* t = vocab_gguf(name)) tokenizers.push_back(t);
  }
  for (const char* pkg : {"tokenizer-qwen3", "tokenizer-llama3"}) {
    if (kSanitized) break;
    if (const Tokenizer* t = npm_tokenizer(pkg, nullptr)) tokenizers.push_back(t);
  }
  if (tokenizers.empty()) GTEST_SKIP() << kNoVocabularies;
  std::mt19937 rng(7);
  const std::vector<std::string> pieces = {
      "hello", " ",  "  ", "\n", "123456", "\xE4\xB8\xAD", "\xF0\x9F\x98\x81",
      "'s",    "!?", "\t", "<|", "|>",     "\xFF"};
  std::string mixed;
  while (mixed.size() < kHugeSize) mixed += pieces[rng() % pieces.size()];
  const std::vector<std::pair<std::string, std::string>> inputs = {
      {"mixed", mixed},
      {"letters", std::string(kHugeSize / 4, 'a')},
      {"spaces", std::string(kHugeSize / 4, ' ')},
      {"digits", std::string(kHugeSize / 4, '7')},
      {"newlines", std::string(kHugeSize / 4, '\n')},
  };
  for (const Tokenizer* tok : tokenizers) {
    for (const auto& [name, text] : inputs) {
      const auto start = std::chrono::steady_clock::now();
      const Ids ids = tok->tokenize(text, true, true);
      const double secs =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      EXPECT_FALSE(ids.empty());
      EXPECT_LT(secs, 60.0) << tok->model() << "/" << tok->pre() << " " << name;
      if (secs > 2.0) {
        std::cout << "[ info ] " << tok->model() << "/" << tok->pre() << " " << name << ": " << secs
                  << " s\n";
      }
    }
  }
}

}  // namespace
}  // namespace hearth::tokenizer::test

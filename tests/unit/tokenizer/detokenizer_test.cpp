// Streaming detokenization and the clean_spaces passes.
#include "tokenizer/detokenizer.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <random>

#include "tokenizer/tokenizer.h"
#include "tokenizer_test_util.h"

namespace hearth::tokenizer::test {
namespace {

using Ids = std::vector<TokenId>;

// llama.cpp's three in-place passes (llama_vocab::impl::detokenize), as the reference.
std::string reference_clean(std::string text) {
  int total = static_cast<int>(text.size());
  const int total1 = total;
  total = total ? 1 : 0;
  for (int i = 1; i < total1; ++i) {
    const char x = text[i];
    if (text[i - 1] == ' ' && (x == '?' || x == '!' || x == '.' || x == ',')) --total;
    text[total++] = x;
  }
  const int total2 = total;
  total = total ? 1 : 0;
  for (int i = 1; i < total2; ++i) {
    const char x = text[i];
    if (x == '\'' && i + 1 < total2 && text[i - 1] == ' ' && text[i + 1] == ' ') {
      --total;
      text[++i] = '\0';
    }
    text[total++] = x;
  }
  const int total3 = total;
  total = total ? 1 : 0;
  for (int i = 1; i < total3; ++i) {
    const char x = text[i];
    if (text[i - 1] == ' ' && x == '\'' && i + 1 < total3) {
      const char x1 = text[i + 1];
      if (x1 == 's' || x1 == 'm') {
        --total;
      } else if (x1 != 't' && x1 != 'd' && i + 2 < total3) {
        const char x2 = text[i + 2];
        if ((x1 == 'r' && x2 == 'e') || (x1 == 'v' && x2 == 'e')) --total;
      }
    }
    text[total++] = x;
  }
  text.resize(total);
  return text;
}

TEST(TokenizerSpaceCleaner, MatchesReferenceOnRandomStreams) {
  std::mt19937 rng(1234);
  const std::string alphabet = "  ''smrvetdl?!.,x";
  for (int round = 0; round < 20000; ++round) {
    std::string text;
    const int len = static_cast<int>(rng() % 12);
    for (int i = 0; i < len; ++i) text += alphabet[rng() % alphabet.size()];
    SpaceCleaner cleaner;
    std::string out;
    size_t pos = 0;
    while (pos < text.size()) {  // feed in random pieces
      const size_t n = 1 + rng() % 3;
      cleaner.push(std::string_view(text).substr(pos, n), out);
      pos += n;
    }
    cleaner.finish(out);
    ASSERT_EQ(out, reference_clean(text)) << "input '" << text << "'";
  }
}

// Streams `ids` one by one; checks that the chunks add up to detokenize(). (Random ids make
// invalid UTF-8, so chunks may end in a stray lead byte that the next one does not continue.)
void check_stream(const Tokenizer& tok, const Ids& ids, bool remove_special, bool unparse) {
  StreamDetokenizer stream(tok, remove_special, unparse);
  std::string streamed;
  for (TokenId id : ids) streamed += stream.feed(id);
  streamed += stream.finish();
  EXPECT_EQ(streamed, tok.detokenize(ids, remove_special, unparse)) << format_ids(ids);
}

TEST(TokenizerStream, HoldsBackSplitCharacters) {
  const Tokenizer* tok = vocab_gguf("llama-spm");
  if (tok == nullptr) GTEST_SKIP() << "ggml-vocab-llama-spm.gguf missing";
  const std::string text = "a\xF0\x9F\xA6\x99 b \xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x98\x81!";
  const Ids ids = tok->tokenize(text, true, false);
  StreamDetokenizer stream(*tok);
  std::vector<std::string> chunks;
  for (TokenId id : ids) chunks.push_back(stream.feed(id));
  chunks.push_back(stream.finish());
  std::string joined;
  for (const std::string& c : chunks) {
    EXPECT_TRUE(is_valid_utf8(c)) << "chunk '" << c << "'";
    joined += c;
  }
  EXPECT_EQ(joined, tok->detokenize(ids));
  EXPECT_EQ(joined, " " + text);  // BOS takes the one-shot leading-space removal
  // The four byte tokens of the llama emoji: nothing comes out until the last one.
  const Ids emoji = tok->tokenize("\xF0\x9F\xA6\x99", false, false);
  ASSERT_EQ(emoji.size(), 5u);  // "▁" + four bytes
  StreamDetokenizer s2(*tok);
  EXPECT_EQ(s2.feed(emoji[0]), "");  // the leading space is removed
  EXPECT_EQ(s2.feed(emoji[1]), "");
  EXPECT_EQ(s2.feed(emoji[2]), "");
  EXPECT_EQ(s2.feed(emoji[3]), "");
  EXPECT_EQ(s2.feed(emoji[4]), "\xF0\x9F\xA6\x99");
  EXPECT_EQ(s2.finish(), "");
}

TEST(TokenizerStream, FinishReturnsIncompleteTail) {
  const Tokenizer* tok = vocab_gguf("llama-spm");
  if (tok == nullptr) GTEST_SKIP() << "ggml-vocab-llama-spm.gguf missing";
  StreamDetokenizer stream(*tok);
  const TokenId lead = tok->find_token("<0xE4>");
  ASSERT_NE(lead, kNoToken);
  EXPECT_EQ(stream.feed(lead), "");
  EXPECT_EQ(stream.finish(), "\xE4");
  // The stream restarts after finish().
  EXPECT_EQ(stream.feed(15043), "Hello");
}

TEST(TokenizerStream, MatchesDetokenizeOnRandomIds) {
  std::mt19937 rng(99);
  int covered = 0;
  for (const char* name : {"llama-spm", "gpt-2", "phi-3", "deepseek-llm", "bert-bge"}) {
    const Tokenizer* tok = vocab_gguf(name);
    if (tok == nullptr) {
      std::printf("[ info ] vocabulary %s is missing: not covered\n", name);
      continue;
    }
    ++covered;
    for (int round = 0; round < 200; ++round) {
      Ids ids;
      const int len = static_cast<int>(rng() % 16);
      for (int i = 0; i < len; ++i) {
        const uint32_t pick = rng() % 10;
        if (pick == 0) {
          ids.push_back(tok->bos());
        } else if (pick == 1) {
          ids.push_back(tok->eos());
        } else if (pick == 2) {
          ids.push_back(static_cast<TokenId>(rng() % 300));  // byte tokens, punctuation
        } else {
          ids.push_back(static_cast<TokenId>(rng() % tok->n_vocab()));
        }
      }
      for (bool remove : {false, true}) {
        for (bool unparse : {false, true}) check_stream(*tok, ids, remove, unparse);
      }
    }
  }
  if (covered == 0)
    GTEST_SKIP() << "none of the five shared vocabularies (models/vocab) is present";
}

TEST(TokenizerStream, CleanSpacesAcrossTokens) {
  const Tokenizer* tok = vocab_gguf("gpt-2");
  if (tok == nullptr) GTEST_SKIP() << "ggml-vocab-gpt-2.gguf missing";
  const Ids ids = tok->tokenize("Hello , world ! It 's a 😁 test .", false, false);
  check_stream(*tok, ids, false, false);
  EXPECT_EQ(tok->detokenize(ids), "Hello, world! It's a 😁 test.");
}

TEST(TokenizerStream, RemoveSpecialDropsBosOnly) {
  const Tokenizer* tok = vocab_gguf("llama-spm");
  if (tok == nullptr) GTEST_SKIP() << "ggml-vocab-llama-spm.gguf missing";
  // add_eos is false for this vocabulary, so remove_special keeps EOS (see the synthetic
  // vocabulary tests for add_eos).
  const Ids ids = {1, 15043, 2, 3186, 2};
  EXPECT_EQ(tok->detokenize(ids, true, true), " Hello</s> world</s>");
  EXPECT_EQ(tok->detokenize(ids, true, false), " Hello world");
  check_stream(*tok, ids, true, true);
  check_stream(*tok, ids, true, false);
}

TEST(TokenizerStream, OutOfRangeIdsRenderNothing) {
  const Tokenizer* tok = vocab_gguf("llama-spm");
  if (tok == nullptr) GTEST_SKIP() << "ggml-vocab-llama-spm.gguf missing";
  StreamDetokenizer stream(*tok);
  EXPECT_EQ(stream.feed(-7), "");
  EXPECT_EQ(stream.feed(tok->n_vocab()), "");
  EXPECT_EQ(stream.feed(15043), " Hello");  // the one-shot space removal was used up
  EXPECT_EQ(stream.finish(), "");
}

}  // namespace
}  // namespace hearth::tokenizer::test

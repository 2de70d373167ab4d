// Behaviour of tokenize()/token_to_piece()/detokenize() on the shared vocabularies, with the
// examples of spec/engine/tokenizers.md.
#include "tokenizer/tokenizer.h"

#include <gtest/gtest.h>

#include "tokenizer_test_util.h"

namespace hearth::tokenizer::test {
namespace {

using Ids = std::vector<TokenId>;

#define REQUIRE_VOCAB(var, name)           \
  const Tokenizer* var = vocab_gguf(name); \
  if (var == nullptr) GTEST_SKIP() << "models/vocab/ggml-vocab-" name ".gguf missing"

#define REQUIRE_NPM(var, package)                                \
  std::string var##_missing;                                     \
  const Tokenizer* var = npm_tokenizer(package, &var##_missing); \
  if (var == nullptr) GTEST_SKIP() << var##_missing << " is missing; run scripts/fetch-test-data.sh"

TEST(TokenizerSpm, SpecExamples) {
  REQUIRE_VOCAB(tok, "llama-spm");
  EXPECT_EQ(tok->type(), VocabType::kSpm);
  EXPECT_EQ(tok->tokenize("Hello world", false, false), (Ids{15043, 3186}));
  EXPECT_EQ(tok->tokenize(" Hello world", false, false), (Ids{29871, 15043, 3186}));
  EXPECT_EQ(tok->tokenize("   Hello", false, false), (Ids{1678, 15043}));
  EXPECT_EQ(tok->tokenize("\n\n", false, false), (Ids{29871, 13, 13}));
}

TEST(TokenizerSpm, ByteFallback) {
  REQUIRE_VOCAB(tok, "llama-spm");
  const Ids ids = tok->tokenize(
      "a\xF0\x9F\xA6\x99"
      "b",
      false, false);  // a🦙b
  EXPECT_EQ(ids, (Ids{263, 243, 162, 169, 156, 29890}));
  for (size_t i = 1; i <= 4; ++i) EXPECT_TRUE(tok->is_byte(ids[i]));
  EXPECT_EQ(tok->token_to_piece(243), "\xF0");
  EXPECT_EQ(tok->detokenize(ids),
            "a\xF0\x9F\xA6\x99"
            "b");
}

TEST(TokenizerSpm, ParseSpecialAddsDummySpaceAfterEverySpecial) {
  REQUIRE_VOCAB(tok, "llama-spm");
  EXPECT_EQ(tok->tokenize("<s>Hi</s> there", false, true), (Ids{1, 6324, 2, 29871, 727}));
  // Without parse_special the markup is plain text.
  const Ids plain = tok->tokenize("<s>Hi</s> there", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 1), 0) << format_ids(plain);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 2), 0) << format_ids(plain);
}

TEST(TokenizerSpm, AddSpecial) {
  REQUIRE_VOCAB(tok, "llama-spm");
  EXPECT_TRUE(tok->add_bos());
  EXPECT_FALSE(tok->add_eos());
  EXPECT_EQ(tok->tokenize("Hello world", true, false), (Ids{1, 15043, 3186}));
  EXPECT_EQ(tok->tokenize("", true, false), (Ids{1}));
  EXPECT_EQ(tok->tokenize("", false, false), Ids{});
}

TEST(TokenizerSpm, DetokenizeLeadingSpace) {
  REQUIRE_VOCAB(tok, "llama-spm");
  EXPECT_EQ(tok->detokenize(Ids{15043, 3186}), "Hello world");
  EXPECT_EQ(tok->detokenize(Ids{1, 15043, 3186}), " Hello world");
  EXPECT_EQ(tok->detokenize(Ids{1, 15043, 3186}, true), " Hello world");
  EXPECT_EQ(tok->detokenize(Ids{1, 15043, 3186}, false, true), "<s> Hello world");
  EXPECT_EQ(tok->detokenize(Ids{15043, 3186, 2}, false, true), "Hello world</s>");
}

TEST(TokenizerSpm, TokenToPieceFlags) {
  REQUIRE_VOCAB(tok, "llama-spm");
  EXPECT_EQ(tok->token_to_piece(15043), " Hello");
  EXPECT_EQ(tok->token_to_piece(15043, true, 1), "Hello");
  EXPECT_EQ(tok->token_to_piece(1, true), "<s>");
  EXPECT_EQ(tok->token_to_piece(1, false), "");
  EXPECT_EQ(tok->token_to_piece(0, false), "");  // <unk> is UNKNOWN
  EXPECT_EQ(tok->token_to_piece(0, true), "<unk>");
  EXPECT_EQ(tok->token_to_piece(13), "\n");  // <0x0A>
  EXPECT_EQ(tok->nl(), 13);
}

TEST(TokenizerSpm, Phi3StripsWhitespaceAroundSpecials) {
  REQUIRE_VOCAB(tok, "phi-3");
  EXPECT_EQ(tok->tokenize("<|user|>\nHello<|end|>\n<|assistant|>", false, true),
            (Ids{32010, 15043, 32007, 32001}));
  EXPECT_TRUE(tok->is_eog(32007));  // <|end|>
  EXPECT_TRUE(tok->is_eog(tok->eos()));
}

TEST(TokenizerBpe, Gpt2SpecExamples) {
  REQUIRE_VOCAB(tok, "gpt-2");
  EXPECT_EQ(tok->type(), VocabType::kBpe);
  EXPECT_EQ(tok->pre(), "gpt-2");
  EXPECT_EQ(tok->tokenize("   Hello", false, false), (Ids{220, 220, 18435}));
  EXPECT_EQ(tok->tokenize("3333333", false, false), (Ids{24840, 20370}));
  EXPECT_FALSE(tok->add_bos());
  EXPECT_EQ(tok->tokenize("Hello", true, false), tok->tokenize("Hello", false, false));
  EXPECT_EQ(tok->bos(), 50256);
  EXPECT_TRUE(tok->is_eog(50256));
}

TEST(TokenizerBpe, Gpt2CleanSpaces) {
  REQUIRE_VOCAB(tok, "gpt-2");
  EXPECT_TRUE(tok->clean_spaces());
  const Ids ids = tok->tokenize(" Hello , world !", false, false);
  EXPECT_EQ(tok->detokenize(ids), " Hello, world!");
  EXPECT_EQ(tok->detokenize(tok->tokenize("it 's a ' test ' and we 're", false, false)),
            "it's a'test'and we're");
}

TEST(TokenizerBpe, UserDefinedTokensAreSplitWithoutParseSpecial) {
  REQUIRE_VOCAB(tok, "gpt-2");
  // <|endoftext|> is CONTROL: only recognised with parse_special.
  EXPECT_EQ(tok->tokenize("a<|endoftext|>b", false, true), (Ids{64, 50256, 65}));
  const Ids plain = tok->tokenize("a<|endoftext|>b", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), 50256), 0);
}

TEST(TokenizerBpe, Llama3FromTokenizerJson) {
  REQUIRE_NPM(tok, "tokenizer-llama3");
  EXPECT_EQ(tok->tokenize("Hello world", false, false), (Ids{9906, 1917}));
  EXPECT_EQ(tok->tokenize(" Hello world", false, false), (Ids{22691, 1917}));
  EXPECT_EQ(tok->tokenize("   Hello", false, false), (Ids{256, 22691}));
  EXPECT_EQ(tok->tokenize("\n\n", false, false), (Ids{271}));
  EXPECT_EQ(tok->tokenize("3333333", false, false), (Ids{8765, 8765, 18}));
  // add_bos comes from the llama-bpe pre type.
  EXPECT_TRUE(tok->add_bos());
  EXPECT_EQ(tok->bos(), 128000);
  EXPECT_EQ(tok->tokenize("Hello world", true, false), (Ids{128000, 9906, 1917}));
  EXPECT_EQ(tok->tokenize("<|begin_of_text|>Hi", false, true).front(), 128000);
  EXPECT_TRUE(tok->is_control(128000));
  EXPECT_TRUE(tok->is_eog(tok->find_token("<|eot_id|>")));
  EXPECT_EQ(tok->eot(), tok->find_token("<|eot_id|>"));
}

TEST(TokenizerBpe, Qwen3FromTokenizerJson) {
  REQUIRE_NPM(tok, "tokenizer-qwen3");
  EXPECT_EQ(tok->tokenize("3333333", false, false), (Ids{18, 18, 18, 18, 18, 18, 18}));
  EXPECT_EQ(tok->tokenize("Hello world", false, false), (Ids{9707, 1879}));
  EXPECT_FALSE(tok->add_bos());
  EXPECT_FALSE(tok->clean_spaces());
  const TokenId im_start = tok->find_token("<|im_start|>");
  const TokenId im_end = tok->find_token("<|im_end|>");
  ASSERT_NE(im_start, kNoToken);
  EXPECT_EQ(tok->eos(), im_end);
  EXPECT_TRUE(tok->is_eog(im_end));
  EXPECT_TRUE(tok->is_eog(tok->find_token("<|endoftext|>")));
  const Ids chat = tok->tokenize("<|im_start|>user\nHi<|im_end|>\n", false, true);
  EXPECT_EQ(chat.front(), im_start);
  EXPECT_EQ(std::count(chat.begin(), chat.end(), im_end), 1);
  EXPECT_EQ(tok->detokenize(chat, false, true), "<|im_start|>user\nHi<|im_end|>\n");
  EXPECT_EQ(tok->detokenize(chat), "user\nHi\n");
  // <think> is a non-special added token: USER_DEFINED, split out even without parse_special.
  const TokenId think = tok->find_token("<think>");
  ASSERT_NE(think, kNoToken);
  EXPECT_TRUE(tok->is_user_defined(think));
  EXPECT_EQ(tok->tokenize("a<think>b", false, false)[1], think);
  EXPECT_EQ(tok->token_to_piece(think, false), "<think>");
}

TEST(TokenizerWpm, BertAddsClsAndSep) {
  REQUIRE_VOCAB(tok, "bert-bge");
  EXPECT_EQ(tok->type(), VocabType::kWpm);
  const Ids plain = tok->tokenize("Hello world", false, false);
  const Ids with = tok->tokenize("Hello world", true, false);
  ASSERT_EQ(with.size(), plain.size() + 2);
  EXPECT_EQ(with.front(), 101);
  EXPECT_EQ(with.back(), 102);
  // Lower-cased and accents stripped.
  EXPECT_EQ(tok->tokenize("HÉLLO", false, false), tok->tokenize("hello", false, false));
}

TEST(TokenizerCopies, CopiesAndMovesShareTheVocabulary) {
  REQUIRE_VOCAB(tok, "llama-spm");
  Tokenizer copy = *tok;
  Tokenizer moved = std::move(copy);
  EXPECT_EQ(moved.tokenize("Hello world", false, false), (Ids{15043, 3186}));
  EXPECT_EQ(moved.n_vocab(), 32000);
}

}  // namespace
}  // namespace hearth::tokenizer::test

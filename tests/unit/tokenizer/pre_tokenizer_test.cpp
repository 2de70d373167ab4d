// Regex pre-tokenization: every pre type compiles, and splitting follows llama.cpp's
// semantics (tokenizers.md §5.5), including the places where PCRE2 needs adapting.
#include "tokenizer/pre_tokenizer.h"

#include <gtest/gtest.h>

namespace hearth::tokenizer {
namespace {

using Words = std::vector<std::string>;

Words split(const std::string& pre, const std::string& text) {
  auto config = pre_tokenizer_config(pre);
  EXPECT_TRUE(config.is_ok()) << config.status().to_string();
  if (!config.is_ok()) return {};
  auto splitter = RegexSplitter::create(config->regexes);
  EXPECT_TRUE(splitter.is_ok()) << splitter.status().to_string();
  if (!splitter.is_ok()) return {};
  return splitter->split(text, /*byte_encode=*/false);
}

TEST(TokenizerPreTokenizer, EveryPreTypeCompiles) {
  const auto names = supported_pre_tokenizers();
  EXPECT_GT(names.size(), 60u);
  for (std::string_view name : names) {
    auto config = pre_tokenizer_config(name);
    ASSERT_TRUE(config.is_ok()) << name;
    EXPECT_FALSE(config->regexes.empty()) << name;
    auto splitter = RegexSplitter::create(config->regexes);
    EXPECT_TRUE(splitter.is_ok()) << name << ": " << splitter.status().to_string();
    if (splitter.is_ok()) {
      // Any text splits into pieces that add up to it.
      const std::string text = "Hello, y'all! 123456 \xE4\xB8\xAD\xE6\x96\x87 \t\n\n  x";
      std::string joined;
      for (const std::string& w : splitter->split(text, false)) joined += w;
      EXPECT_EQ(joined, text) << name;
    }
  }
}

TEST(TokenizerPreTokenizer, UnknownAndMissingPre) {
  auto unknown = pre_tokenizer_config("nonexistent");
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kUnsupported);
  auto missing = pre_tokenizer_config("");
  ASSERT_TRUE(missing.is_ok());
  EXPECT_EQ(missing->name, "default");
}

TEST(TokenizerPreTokenizer, Llama3Semantics) {
  EXPECT_EQ(split("llama-bpe", "   Hello"), (Words{"  ", " Hello"}));
  EXPECT_EQ(split("llama-bpe", "Hello   "), (Words{"Hello", "   "}));
  EXPECT_EQ(split("llama-bpe", "3333333"), (Words{"333", "333", "3"}));
  EXPECT_EQ(split("llama-bpe", "a \n \nb"), (Words{"a", " \n \n", "b"}));
  EXPECT_EQ(split("llama-bpe", "I'M HERE"), (Words{"I", "'M", " HERE"}));
  EXPECT_EQ(split("llama-bpe", "!!\n\nx"), (Words{"!!\n\n", "x"}));
}

TEST(TokenizerPreTokenizer, Qwen2AndStarcoderDigits) {
  EXPECT_EQ(split("qwen2", "x333"), (Words{"x", "3", "3", "3"}));
  EXPECT_EQ(split("starcoder", "x 42"), (Words{"x", " ", "4", "2"}));
  EXPECT_EQ(split("gpt-2", "x 42"), (Words{"x", " 42"}));
  EXPECT_EQ(split("gpt-2", "I'M"), (Words{"I", "'", "M"}));  // GPT-2 contractions are lower case
}

TEST(TokenizerPreTokenizer, WhitespaceIsLlamaCppsSet) {
  // U+180E (Mongolian vowel separator) is not whitespace for llama.cpp, unlike PCRE2's \s.
  EXPECT_EQ(split("gpt-2",
                  "a\xE1\xA0\x8E"
                  "b"),
            (Words{"a", "\xE1\xA0\x8E", "b"}));
  // U+3000 is: it stays in front of the word as \s+(?!\S) would leave it.
  EXPECT_EQ(split("gpt-2",
                  "a\xE3\x80\x80\xE3\x80\x80"
                  "b"),
            (Words{"a", "\xE3\x80\x80", "\xE3\x80\x80", "b"}));
}

TEST(TokenizerPreTokenizer, TildeIsNotASymbolInCollapsedPatterns) {
  // llama.cpp's collapsed \p{S} lists only $+<=>^`| among ASCII symbols.
  EXPECT_EQ(split("deepseek-v3", "!~"), (Words{"!", "~"}));
  EXPECT_EQ(split("deepseek-v3", "~abc"), (Words{"~abc"}));
  auto translated = translate_pattern(R"([^\r\n\p{L}\p{P}\p{S}]?[\p{P}\p{S}]+)");
  ASSERT_TRUE(translated.is_ok());
  EXPECT_EQ(*translated, R"((?:~|[^\r\n\p{L}\p{P}\p{S}])?(?:(?!~)[\p{P}\p{S}])+)");
}

TEST(TokenizerPreTokenizer, LiteralPatternsSeeWhitespaceAsVerticalTab) {
  // CJK_A's range U+0800-U+4E00 contains U+3000, but llama.cpp matches these patterns on text
  // whose non-ASCII whitespace became U+000B.
  EXPECT_EQ(split("deepseek-coder", "\xE4\xB8\xAD\xE3\x80\x80\xE6\x96\x87"),
            (Words{"\xE4\xB8\xAD", "\xE3\x80\x80", "\xE6\x96\x87"}));
}

TEST(TokenizerPreTokenizer, EmptyMatchesSplit) {
  // superbpe's lookahead-only pattern cuts digit runs into groups of three from the right.
  EXPECT_EQ(split("superbpe", "1234567"), (Words{"1", "234", "567"}));
}

TEST(TokenizerPreTokenizer, ByteEncoding) {
  auto config = pre_tokenizer_config("gpt-2");
  ASSERT_TRUE(config.is_ok());
  auto splitter = RegexSplitter::create(config->regexes);
  ASSERT_TRUE(splitter.is_ok());
  EXPECT_EQ(splitter->split(" a\n", true), (Words{"\xC4\xA0"
                                                  "a",
                                                  "\xC4\x8A"}));  // Ġa, Ċ
  // Invalid UTF-8 becomes U+FFFD (EF BF BD), each byte then GPT-2 encoded.
  EXPECT_EQ(splitter->split("\xFF", true), (Words{"\xC3\xAF\xC2\xBF\xC2\xBD"}));
}

TEST(TokenizerPreTokenizer, HfRegexDetection) {
  EXPECT_EQ(
      pre_from_hf_regex(
          R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
      "llama-bpe");
  EXPECT_EQ(
      pre_from_hf_regex(
          R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)"),
      "qwen2");
  EXPECT_EQ(pre_from_hf_regex("x+"), "");
}

}  // namespace
}  // namespace hearth::tokenizer

// Small vocabularies written on purpose: flags the shared files do not exercise (add_eos), and
// malformed vocabularies, which must give an error Status rather than crash.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <random>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"
#include "tokenizer_test_util.h"

namespace hearth::tokenizer::test {
namespace {

using Ids = std::vector<TokenId>;

// An SPM vocabulary: <unk> <s> </s>, 256 byte tokens, then a few pieces.
struct SpmSpec {
  std::vector<std::string> tokens = {"<unk>", "<s>", "</s>"};
  std::vector<float> scores = {0, 0, 0};
  std::vector<int32_t> types = {2, 3, 3};

  SpmSpec() {
    static constexpr char kHex[] = "0123456789ABCDEF";
    for (int b = 0; b < 256; ++b) {
      add(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">", 0, 6);
    }
    const std::vector<std::string> pieces = {"\u2581", "a",        "b",   "c",        "\u2581a",
                                             "ab",     "\u2581ab", "abc", "\u2581abc"};
    for (size_t i = 0; i < pieces.size(); ++i) add(pieces[i], -static_cast<float>(i), 1);
    add("<|user|>", 0, 3);
    add("<think>", 0, 4);
  }
  void add(const std::string& t, float score, int32_t type) {
    tokens.push_back(t);
    scores.push_back(score);
    types.push_back(type);
  }
  gguf::Writer writer() const {
    gguf::Writer w;
    w.set_string("general.architecture", "llama");
    w.set_string("tokenizer.ggml.model", "llama");
    w.set_string_array("tokenizer.ggml.tokens", tokens);
    w.set_f32_array("tokenizer.ggml.scores", scores);
    w.set_i32_array("tokenizer.ggml.token_type", types);
    return w;
  }
};

// A byte-level BPE vocabulary: the 256 GPT-2 alphabet characters plus a few merges.
gguf::Writer bpe_writer(std::vector<std::string> extra_tokens = {"ab", "abc", "\u0120a"},
                        std::vector<std::string> merges = {"a b", "ab c", "\u0120 a"}) {
  std::vector<std::string> tokens;
  for (int b = 0; b < 256; ++b) tokens.push_back(unicode::byte_to_gpt2(static_cast<uint8_t>(b)));
  for (auto& t : extra_tokens) tokens.push_back(std::move(t));
  tokens.push_back("<|endoftext|>");
  std::vector<int32_t> types(tokens.size(), 1);
  types.back() = 3;
  gguf::Writer w;
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", "gpt-2");
  w.set_string_array("tokenizer.ggml.tokens", tokens);
  w.set_i32_array("tokenizer.ggml.token_type", types);
  w.set_string_array("tokenizer.ggml.merges", merges);
  w.set_u32("tokenizer.ggml.bos_token_id", static_cast<uint32_t>(tokens.size() - 1));
  w.set_u32("tokenizer.ggml.eos_token_id", static_cast<uint32_t>(tokens.size() - 1));
  return w;
}

Result<Tokenizer> load(const gguf::Writer& w) {
  const std::vector<uint8_t> bytes = w.to_bytes();
  auto file = gguf::File::parse(bytes, "synthetic.gguf");
  if (!file.is_ok()) return file.status();
  return Tokenizer::from_gguf(*file);  // the tokenizer copies what it needs
}

TEST(TokenizerSyntheticVocab, SpmWorks) {
  auto tok = load(SpmSpec().writer());
  ASSERT_TRUE(tok.is_ok()) << tok.status().to_string();
  EXPECT_EQ(tok->tokenize("abc", false, false), (Ids{3 + 256 + 8}));  // ▁abc
  EXPECT_EQ(tok->tokenize("abc", true, false).front(), 1);
  // <think> is USER_DEFINED: split out without parse_special; <|user|> only with it.
  const TokenId think = tok->find_token("<think>");
  const TokenId user = tok->find_token("<|user|>");
  EXPECT_EQ(tok->tokenize("a<think>", false, false).back(), think);
  const Ids plain = tok->tokenize("<|user|>", false, false);
  EXPECT_EQ(std::count(plain.begin(), plain.end(), user), 0);
  EXPECT_EQ(tok->tokenize("<|user|>", false, true), (Ids{user}));
  // d is not a piece: byte fallback.
  EXPECT_EQ(tok->tokenize("d", false, false), (Ids{3 + 256, 3 + 'd'}));
}

TEST(TokenizerSyntheticVocab, AddEosAndRemoveSpecial) {
  gguf::Writer w = SpmSpec().writer();
  w.set_bool("tokenizer.ggml.add_eos_token", true);
  auto tok = load(w);
  ASSERT_TRUE(tok.is_ok()) << tok.status().to_string();
  EXPECT_TRUE(tok->add_eos());
  const TokenId ab = tok->find_token("\u2581ab");
  EXPECT_EQ(tok->tokenize("ab", true, false), (Ids{1, ab, 2}));
  const Ids ids = {1, ab, 2, ab, 2};
  EXPECT_EQ(tok->detokenize(ids, false, true), "<s> ab</s> ab</s>");
  EXPECT_EQ(tok->detokenize(ids, true, true), " ab</s> ab");
  EXPECT_EQ(tok->detokenize(ids, true, false), " ab ab");
  for (bool unparse : {false, true}) {
    StreamDetokenizer stream(*tok, true, unparse);
    std::string streamed;
    for (TokenId id : ids) streamed += stream.feed(id);
    streamed += stream.finish();
    EXPECT_EQ(streamed, tok->detokenize(ids, true, unparse));
  }
}

TEST(TokenizerSyntheticVocab, BpeWorks) {
  auto tok = load(bpe_writer());
  ASSERT_TRUE(tok.is_ok()) << tok.status().to_string();
  const TokenId abc = tok->find_token("abc");
  const TokenId sp_a = tok->find_token("\u0120a");
  EXPECT_EQ(tok->tokenize("abc a", false, false), (Ids{abc, sp_a}));
  EXPECT_EQ(tok->detokenize(tok->tokenize("abc a!", false, false)), "abc a!");
  EXPECT_EQ(tok->nl(), tok->find_token("\u010A"));
}

TEST(TokenizerSyntheticVocab, MalformedMergesAreTolerated) {
  // Merges without a space, with unknown sides, or duplicated must not break loading.
  auto tok = load(bpe_writer({"ab"}, {"nospace", "a b", "a b", "zz qq", " x", ""}));
  ASSERT_TRUE(tok.is_ok()) << tok.status().to_string();
  EXPECT_EQ(tok->tokenize("ab", false, false), (Ids{tok->find_token("ab")}));
}

void expect_error(const gguf::Writer& w, ErrorCode code, const std::string& needle) {
  auto tok = load(w);
  ASSERT_FALSE(tok.is_ok()) << "expected an error mentioning '" << needle << "'";
  EXPECT_EQ(tok.status().code(), code) << tok.status().to_string();
  EXPECT_NE(tok.status().message().find(needle), std::string::npos) << tok.status().to_string();
}

TEST(TokenizerSyntheticVocab, MissingMergesIsAnError) {
  gguf::Writer w;
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", "gpt-2");
  w.set_string_array("tokenizer.ggml.tokens", {"a", "b", "ab"});
  expect_error(w, ErrorCode::kCorruptFile, "tokenizer.ggml.merges");
}

TEST(TokenizerSyntheticVocab, TokenTypeCountMismatchIsAnError) {
  const SpmSpec spm;
  gguf::Writer w = spm.writer();
  std::vector<int32_t> short_types(spm.types.begin(), spm.types.end() - 3);
  w.set_i32_array("tokenizer.ggml.token_type", short_types);
  expect_error(w, ErrorCode::kCorruptFile, "tokenizer.ggml.token_type");
}

TEST(TokenizerSyntheticVocab, ScoreCountMismatchIsAnError) {
  const SpmSpec spm;
  gguf::Writer w = spm.writer();
  w.set_f32_array("tokenizer.ggml.scores", std::vector<float>(5, 0.0f));
  expect_error(w, ErrorCode::kCorruptFile, "tokenizer.ggml.scores");
}

TEST(TokenizerSyntheticVocab, DuplicateTokenTextsAreAnError) {
  SpmSpec spm;
  spm.tokens[262] = spm.tokens[263];
  expect_error(spm.writer(), ErrorCode::kCorruptFile, "duplicate token");
}

TEST(TokenizerSyntheticVocab, WrongTypesAreErrors) {
  const SpmSpec spm;
  {
    gguf::Writer w = spm.writer();
    w.set_i32_array("tokenizer.ggml.tokens", std::vector<int32_t>(spm.tokens.size(), 1));
    expect_error(w, ErrorCode::kCorruptFile, "tokenizer.ggml.tokens");
  }
  {
    gguf::Writer w = spm.writer();
    w.set_f32_array("tokenizer.ggml.token_type", spm.scores);
    expect_error(w, ErrorCode::kCorruptFile, "tokenizer.ggml.token_type");
  }
  {
    gguf::Writer w = spm.writer();
    w.set_string_array("tokenizer.ggml.scores", spm.tokens);
    expect_error(w, ErrorCode::kCorruptFile, "tokenizer.ggml.scores");
  }
  {
    gguf::Writer w = spm.writer();
    w.set_u32("tokenizer.ggml.model", 7);
    expect_error(w, ErrorCode::kCorruptFile, "tokenizer.ggml.model");
  }
  {
    gguf::Writer w = spm.writer();
    w.set_string("tokenizer.ggml.bos_token_id", "one");
    expect_error(w, ErrorCode::kCorruptFile, "tokenizer.ggml.bos_token_id");
  }
  {
    gguf::Writer w = spm.writer();
    w.set_string_array("tokenizer.ggml.add_bos_token", {"yes"});
    expect_error(w, ErrorCode::kCorruptFile, "tokenizer.ggml.add_bos_token");
  }
}

TEST(TokenizerSyntheticVocab, MissingOrUnknownKeysAreErrors) {
  const SpmSpec spm;
  {
    gguf::Writer w;
    w.set_string_array("tokenizer.ggml.tokens", spm.tokens);
    expect_error(w, ErrorCode::kNotFound, "tokenizer.ggml.model");
  }
  {
    gguf::Writer w;
    w.set_string("tokenizer.ggml.model", "llama");
    expect_error(w, ErrorCode::kNotFound, "tokenizer.ggml.tokens");
  }
  {
    gguf::Writer w = spm.writer();
    w.set_string("tokenizer.ggml.model", "rwkv");
    expect_error(w, ErrorCode::kUnsupported, "rwkv");
  }
  {
    gguf::Writer w = bpe_writer();
    w.set_string("tokenizer.ggml.pre", "no-such-pre");
    expect_error(w, ErrorCode::kUnsupported, "no-such-pre");
  }
  {
    gguf::Writer w = spm.writer();
    w.set_string_array("tokenizer.ggml.tokens", {});
    w.set_f32_array("tokenizer.ggml.scores", std::vector<float>{});
    w.set_i32_array("tokenizer.ggml.token_type", std::vector<int32_t>{});
    expect_error(w, ErrorCode::kCorruptFile, "empty");
  }
}

TEST(TokenizerSyntheticVocab, AddBosWithoutBosIsAnError) {
  gguf::Writer w;
  w.set_string("tokenizer.ggml.model", "gpt2");
  w.set_string("tokenizer.ggml.pre", "gpt-2");
  w.set_string_array("tokenizer.ggml.tokens", {"a", "b", "ab"});  // default BOS 11: out of range
  w.set_string_array("tokenizer.ggml.merges", {"a b"});
  w.set_bool("tokenizer.ggml.add_bos_token", true);
  expect_error(w, ErrorCode::kCorruptFile, "bos_token_id");
}

TEST(TokenizerSyntheticVocab, OutOfRangeSpecialIdsAreIgnored) {
  gguf::Writer w = SpmSpec().writer();
  w.set_u32("tokenizer.ggml.bos_token_id", 1u << 30);
  w.set_u32("tokenizer.ggml.eot_token_id", 0xFFFFFFFFu);
  auto tok = load(w);
  ASSERT_TRUE(tok.is_ok()) << tok.status().to_string();
  EXPECT_EQ(tok->bos(), 1);  // the SPM default stays
  EXPECT_EQ(tok->eot(), kNoToken);
}

// Random corruption of a valid file: whatever the parser lets through, loading and using the
// tokenizer must not crash (run under the sanitizers to make this meaningful).
TEST(TokenizerSyntheticVocab, RandomCorruptionNeverCrashes) {
  std::vector<std::vector<uint8_t>> seeds = {SpmSpec().writer().to_bytes(),
                                             bpe_writer().to_bytes()};
  std::mt19937 rng(2024);
  int loaded = 0;
  for (int round = 0; round < 1500; ++round) {
    std::vector<uint8_t> bytes = seeds[round % seeds.size()];
    const int flips = 1 + static_cast<int>(rng() % 8);
    for (int f = 0; f < flips; ++f) bytes[rng() % bytes.size()] = static_cast<uint8_t>(rng());
    auto file = gguf::File::parse(bytes, "fuzz.gguf");
    if (!file.is_ok()) continue;
    auto tok = Tokenizer::from_gguf(*file);
    if (!tok.is_ok()) continue;
    ++loaded;
    for (const char* text : {"abc a", "<|user|>\xFF<think>", "", "  \n\t d"}) {
      const Ids ids = tok->tokenize(text, true, true);
      (void)tok->detokenize(ids, true, true);
    }
  }
  EXPECT_GT(loaded, 0);
}

std::string write_temp(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(TokenizerJson, ErrorsAreStatuses) {
  const std::string dir = hearth::test::make_temp_dir("tokjson");
  auto missing = Tokenizer::from_tokenizer_json(dir + "/nope.json");
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().code(), ErrorCode::kNotFound);
  auto bad = Tokenizer::from_tokenizer_json(write_temp(dir, "bad.json", "{ not json"));
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kCorruptFile);
  auto no_model = Tokenizer::from_tokenizer_json(write_temp(dir, "nomodel.json", "{}"));
  ASSERT_FALSE(no_model.is_ok());
  EXPECT_EQ(no_model.status().code(), ErrorCode::kCorruptFile);
  auto wordpiece = Tokenizer::from_tokenizer_json(
      write_temp(dir, "wp.json", R"({"model": {"type": "WordPiece", "vocab": {"a": 0}}})"));
  ASSERT_FALSE(wordpiece.is_ok());
  EXPECT_EQ(wordpiece.status().code(), ErrorCode::kUnsupported);
  auto wrong_types = Tokenizer::from_tokenizer_json(
      write_temp(dir, "types.json",
                 R"({"model": {"type": "BPE", "vocab": {"a": "zero"}, "merges": []},
          "pre_tokenizer": {"type": "ByteLevel"}})"));
  ASSERT_FALSE(wrong_types.is_ok());
  EXPECT_EQ(wrong_types.status().code(), ErrorCode::kCorruptFile);
  std::filesystem::remove_all(dir);
}

TEST(TokenizerJson, MinimalByteLevelBpe) {
  const std::string dir = hearth::test::make_temp_dir("tokjson");
  const std::string json_path = write_temp(dir, "tokenizer.json", R"({
    "model": {"type": "BPE", "vocab": {"a": 0, "b": 1, "ab": 2, "\u0120": 3, "\u0120ab": 4},
              "merges": ["a b", ["\u0120", "ab"]]},
    "pre_tokenizer": {"type": "ByteLevel", "add_prefix_space": false, "use_regex": true},
    "added_tokens": [{"id": 6, "content": "<|endoftext|>", "special": true},
                     {"id": 7, "content": "<tool>", "special": false}]})");
  const std::string config_path = write_temp(
      dir, "tokenizer_config.json", R"({"eos_token": "<|endoftext|>", "add_bos_token": false})");
  auto tok = Tokenizer::from_tokenizer_json(json_path, config_path);
  ASSERT_TRUE(tok.is_ok()) << tok.status().to_string();
  EXPECT_EQ(tok->pre(), "gpt-2");
  EXPECT_EQ(tok->n_vocab(), 8);
  EXPECT_EQ(tok->token_text(5), "[PAD5]");
  EXPECT_TRUE(tok->is_unused(5));
  EXPECT_EQ(tok->eos(), 6);
  EXPECT_TRUE(tok->is_control(6));
  EXPECT_TRUE(tok->is_user_defined(7));
  EXPECT_EQ(tok->tokenize("ab ab<|endoftext|>", false, true), (Ids{2, 4, 6}));
  EXPECT_EQ(tok->tokenize("ab<tool>", false, false), (Ids{2, 7}));
  TokenizerJsonOptions options;
  options.pre = "qwen2";
  options.n_vocab = 10;
  auto qwen = Tokenizer::from_tokenizer_json(json_path, config_path, options);
  ASSERT_TRUE(qwen.is_ok()) << qwen.status().to_string();
  EXPECT_EQ(qwen->pre(), "qwen2");
  EXPECT_EQ(qwen->n_vocab(), 10);
  std::filesystem::remove_all(dir);
}

// A SentencePiece BPE model in tokenizer.json form (byte fallback, ' ' -> U+2581, Prepend):
// loaded as an SPM vocabulary whose piece scores follow the ids, so the lower id merges first.
TEST(TokenizerJson, SentencePieceBpeBecomesSpm) {
  const std::string dir = hearth::test::make_temp_dir("tokjson");
  const std::string json_path = write_temp(dir, "tokenizer.json", R"({
    "normalizer": {"type": "Sequence", "normalizers": [
        {"type": "Prepend", "prepend": "\u2581"},
        {"type": "Replace", "pattern": {"String": " "}, "content": "\u2581"}]},
    "model": {"type": "BPE", "byte_fallback": true, "unk_token": "<unk>",
              "vocab": {"<unk>": 0, "<s>": 1, "</s>": 2, "<0x41>": 3, "\u2581": 4, "a": 5,
                        "b": 6, "\u2581a": 7, "ab": 8},
              "merges": [["\u2581", "a"], ["a", "b"]]},
    "added_tokens": [{"id": 1, "content": "<s>", "special": true},
                     {"id": 2, "content": "</s>", "special": true}]})");
  const std::string config_path =
      write_temp(dir, "tokenizer_config.json",
                 R"({"bos_token": "<s>", "eos_token": "</s>", "add_bos_token": true})");
  auto tok = Tokenizer::from_tokenizer_json(json_path, config_path);
  ASSERT_TRUE(tok.is_ok()) << tok.status().to_string();
  EXPECT_EQ(tok->pre(), "default");
  EXPECT_EQ(tok->bos(), 1);
  EXPECT_EQ(tok->eos(), 2);
  // "ab a" -> "\u2581ab\u2581a": "\u2581a" (id 7) outscores "ab" (id 8), so b stays alone.
  EXPECT_EQ(tok->tokenize("ab a", false, false), (Ids{7, 6, 7}));
  // 'A' is no piece: its byte <0x41>; the BOS is added as the config asks.
  EXPECT_EQ(tok->tokenize("A", true, false), (Ids{1, 4, 3}));
  EXPECT_EQ(tok->token_to_piece(3, false, 0), "A");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hearth::tokenizer::test

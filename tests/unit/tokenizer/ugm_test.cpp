// The unigram (UGM, "t5") tokenizer against llama.cpp b10573: vocabularies made from the
// shared llama-spm vocabulary (tokenizer model t5, its tokens, scores and types, three tokens
// made user-defined, a precompiled charsmap of normalization rules, two whitespace modes;
// tests/data/tokenizer/ugm_cases.json records them with the reference's ids for every
// distinct string of the shared .inp files and strings for the charsmap's rules).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cstring>
#include <filesystem>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_util.h"

namespace hearth::tokenizer::test {
namespace {

using Json = nlohmann::json;

std::vector<uint8_t> base64_decode(const std::string& text) {
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v = -1;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    if (c >= '0' && c <= '9') v = c - '0' + 52;
    if (c == '+') v = 62;
    if (c == '/') v = 63;
    if (v < 0) break;
    acc = (acc << 6) | static_cast<uint32_t>(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(static_cast<uint8_t>((acc >> bits) & 0xFF));
    }
  }
  return out;
}

// A u8 array value: element type, count, then the bytes.
std::vector<uint8_t> u8_array(const std::vector<uint8_t>& bytes) {
  const uint32_t type = 0;
  const uint64_t n = bytes.size();
  std::vector<uint8_t> payload(4 + 8 + bytes.size());
  std::memcpy(payload.data(), &type, 4);
  std::memcpy(payload.data() + 4, &n, 8);
  if (!bytes.empty()) std::memcpy(payload.data() + 12, bytes.data(), bytes.size());
  return payload;
}

// The vocabulary `spec` describes, written as a GGUF from the shared llama-spm vocabulary.
std::string write_vocab(const Json& spec, const std::string& dir) {
  auto spm = gguf::File::open(hearth::test::shared_path("models/vocab/ggml-vocab-llama-spm.gguf"));
  EXPECT_TRUE(spm.is_ok());
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  w.set_string("tokenizer.ggml.model", "t5");
  w.set_value("tokenizer.ggml.tokens", *spm->find("tokenizer.ggml.tokens"));
  w.set_value("tokenizer.ggml.scores", *spm->find("tokenizer.ggml.scores"));
  const gguf::Value* types = spm->find("tokenizer.ggml.token_type");
  std::vector<int32_t> t(types->size());
  for (size_t i = 0; i < t.size(); ++i) t[i] = static_cast<int32_t>(types->int_at(i));
  for (const Json& id : spec["user_defined"]) t[id.get<size_t>()] = 4;
  w.set_i32_array("tokenizer.ggml.token_type", t);
  w.set_u32("tokenizer.ggml.unknown_token_id", spec["unknown_token_id"].get<uint32_t>());
  w.set_u32("tokenizer.ggml.bos_token_id", spec["bos_token_id"].get<uint32_t>());
  w.set_u32("tokenizer.ggml.eos_token_id", spec["eos_token_id"].get<uint32_t>());
  w.set_bool("tokenizer.ggml.add_space_prefix", spec["add_space_prefix"].get<bool>());
  w.set_bool("tokenizer.ggml.remove_extra_whitespaces",
             spec["remove_extra_whitespaces"].get<bool>());
  w.set_raw("tokenizer.ggml.precompiled_charsmap", 9,
            u8_array(base64_decode(spec["charsmap"].get<std::string>())));
  const std::string path = dir + "/" + spec["name"].get<std::string>() + ".gguf";
  EXPECT_TRUE(w.write(path).is_ok());
  return path;
}

class UgmVocab : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (!hearth::test::file_exists(
            hearth::test::shared_path("models/vocab/ggml-vocab-llama-spm.gguf")))
      GTEST_SKIP() << "SKIPPED: models/vocab/ggml-vocab-llama-spm.gguf is missing";
    const Json doc = Json::parse(hearth::test::read_file(std::string(HEARTH_SOURCE_DIR) +
                                                         "/tests/data/tokenizer/ugm_cases.json"));
    spec_ = doc["vocabularies"][static_cast<size_t>(GetParam())];
    dir_ = hearth::test::make_temp_dir("ugm");
    auto file = gguf::File::open(write_vocab(spec_, dir_));
    ASSERT_TRUE(file.is_ok());
    auto tok = Tokenizer::from_gguf(*file);
    ASSERT_TRUE(tok.is_ok()) << tok.status().to_string();
    tok_.emplace(std::move(*tok));
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  Json spec_;
  std::string dir_;
  std::optional<Tokenizer> tok_;
};

TEST_P(UgmVocab, MatchesTheReferenceOnEveryInput) {
  ASSERT_EQ(tok_->type(), VocabType::kUgm);
  int failures = 0;
  for (const Json& c : spec_["cases"]) {
    const std::string input = c["input"];
    const std::vector<TokenId> want = c["ids"].get<std::vector<TokenId>>();
    const std::vector<TokenId> got = tok_->tokenize(input, false, false);
    if (got == want) continue;
    ++failures;
    ADD_FAILURE() << "input '" << escape(input) << "'\n  expected " << format_ids(want)
                  << "\n  got      " << format_ids(got);
  }
  EXPECT_EQ(failures, 0) << failures << " of " << spec_["cases"].size() << " inputs differ";
}

// add_special: EOS (UGM's default) after the pieces, no BOS unless asked for.
TEST_P(UgmVocab, SpecialTokensAsTheTypeDefaults) {
  const std::vector<TokenId> plain = tok_->tokenize("Hello", false, false);
  std::vector<TokenId> with_eos = plain;
  with_eos.push_back(spec_["eos_token_id"].get<TokenId>());
  EXPECT_EQ(tok_->tokenize("Hello", true, false), with_eos);
}

// Hostile input: invalid UTF-8, NULs, lone continuation bytes, a long run of unknown code
// points; ids stay in the vocabulary and unknown runs collapse.
TEST_P(UgmVocab, HostileInputStaysInTheVocabulary) {
  std::string junk =
      "\xFF\xFE a\x80"
      "b\xC3";
  junk.push_back('\0');
  junk += "\xE2\x82 end";
  std::string unknowns;
  for (int i = 0; i < 2000; ++i) unknowns += "\xF0\x9F\x9B\xB8";  // U+1F6F8, not in the vocab
  for (const std::string& text : {junk, unknowns, std::string(100000, ' ')}) {
    const std::vector<TokenId> ids = tok_->tokenize(text, true, true);
    for (TokenId id : ids) ASSERT_TRUE(id >= 0 && id < tok_->n_vocab()) << id;
  }
  const std::vector<TokenId> ids = tok_->tokenize(unknowns, false, false);
  EXPECT_LE(ids.size(), 2u) << "a run of unknown code points is one <unk>";
}

INSTANTIATE_TEST_SUITE_P(Synthesized, UgmVocab, ::testing::Values(0, 1));

// A user-defined token passes through normalization only where the whole token is in the
// text. (The reference takes any path of its user-defined trie: a user-defined "▁Hello" makes
// it emit the first byte of "…" or "①" raw, which becomes <unk> and U+FFFD; differences.json,
// ugm-user-defined-whole-tokens.)
TEST(UgmUserDefined, OnlyWholeTokensPassThroughNormalization) {
  if (!hearth::test::file_exists(
          hearth::test::shared_path("models/vocab/ggml-vocab-llama-spm.gguf")))
    GTEST_SKIP() << "SKIPPED: models/vocab/ggml-vocab-llama-spm.gguf is missing";
  const Json doc = Json::parse(hearth::test::read_file(std::string(HEARTH_SOURCE_DIR) +
                                                       "/tests/data/tokenizer/ugm_cases.json"));
  const Json plain = doc["vocabularies"][1];
  Json with_marker = plain;
  with_marker["name"] = "ugm-marker-user-defined";
  with_marker["user_defined"].push_back(15043);  // "▁Hello" made user-defined as well
  const std::string dir = hearth::test::make_temp_dir("ugm-user");
  auto a = gguf::File::open(write_vocab(plain, dir));
  auto b = gguf::File::open(write_vocab(with_marker, dir));
  ASSERT_TRUE(a.is_ok() && b.is_ok());
  auto base = Tokenizer::from_gguf(*a);
  auto extra = Tokenizer::from_gguf(*b);
  ASSERT_TRUE(base.is_ok() && extra.is_ok());
  for (const char* text : {"wait\xE2\x80\xA6", "x\xE2\x91\xA0y", "\xE2\x84\xA2"}) {
    EXPECT_EQ(extra->tokenize(text, false, false), base->tokenize(text, false, false))
        << escape(text);
  }
  EXPECT_EQ(extra->tokenize("\xE2\x96\x81Hello", false, false), std::vector<TokenId>{15043});
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hearth::tokenizer::test

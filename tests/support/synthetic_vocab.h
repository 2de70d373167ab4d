// A vocabulary built in memory for tests that need a tokenizer but not a model: the fake
// scheduler's server, pipeline and fuzz targets run with no file under ../shared.
//
// It is a SentencePiece ("llama") vocabulary of exactly 512 tokens, as stories260K's is, so
// the vocabulary's bounds read the same: <unk> <s> </s> (ids 0-2, BOS added to prompts), the
// 256 byte-fallback tokens <0x00>..<0xFF>, ChatML's <|im_start|> and <|im_end|> (an end of
// generation by name), optionally the six fill-in-the-middle tokens (<|fim_prefix|> ...),
// "▁", every printable ASCII character alone and after "▁", a few story words with every
// prefix (so "Once upon a time" is four tokens), and unused tokens up to 512.
#pragma once

#include <memory>

#include "tokenizer/tokenizer.h"

namespace hearth::test {

inline constexpr int32_t kSyntheticVocabSize = 512;

struct SyntheticVocabOptions {
  bool fim = true;  // the FIM tokens (/infill answers); without them /infill is refused
};

// Never null: the vocabulary is fixed, so a failure to build it is a bug (it aborts).
std::shared_ptr<const tokenizer::Tokenizer> synthetic_tokenizer(SyntheticVocabOptions options = {});

}  // namespace hearth::test

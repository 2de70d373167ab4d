// The per-type encoders applied to each raw-text fragment (after special tokens were split
// out). Each appends ids to `out`.
#pragma once

#include <string_view>
#include <vector>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/vocab.h"

namespace hearth::tokenizer {

// SentencePiece BPE over UTF-8 characters with scores and byte fallback (tokenizers.md §4).
// `text` is already space-escaped (' ' -> U+2581).
void spm_encode(const Vocab& vocab, std::string_view text, std::vector<TokenId>& out);

// Byte-level BPE: regex pre-tokenization, then merges by rank (tokenizers.md §5).
void bpe_encode(const Vocab& vocab, const RegexSplitter& splitter, std::string_view text,
                std::vector<TokenId>& out);

void wpm_encode(const Vocab& vocab, std::string_view text, std::vector<TokenId>& out);

}  // namespace hearth::tokenizer

// UTF-8 helpers shared by the tokenizer algorithms: llama.cpp-compatible (lossy) decoding,
// the GPT-2 byte-to-unicode alphabet, whitespace, and the checks used when streaming text.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::tokenizer::unicode {

inline constexpr uint32_t kReplacement = 0xFFFD;

// Length of the UTF-8 sequence announced by `lead`, from its high nibble only (0x0-0xB -> 1,
// 0xC-0xD -> 2, 0xE -> 3, 0xF -> 4). No validation: this is how SPM and BPE cut symbols.
inline size_t sequence_length(uint8_t lead) {
  static constexpr uint8_t kLengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLengths[lead >> 4];
}

// Decodes like llama.cpp: a malformed sequence yields U+FFFD and consumes one byte. Overlong
// forms and surrogates are accepted as decoded; 4-byte forms may exceed U+10FFFF.
std::vector<uint32_t> decode_lossy(std::string_view text);

// Appends the UTF-8 encoding of `cpt` (surrogates as 3-byte forms); values above U+10FFFF are
// written as U+FFFD.
void append_utf8(std::string& out, uint32_t cpt);
std::string to_utf8(uint32_t cpt);

// Whitespace as llama.cpp defines it: U+0009-U+000D, U+0020, U+0085, U+00A0, U+1680,
// U+2000-U+200A, U+2028, U+2029, U+202F, U+205F, U+3000.
bool is_whitespace(uint32_t cpt);

// GPT-2 byte-level alphabet: the UTF-8 text of the code point standing for `byte`.
const std::string& byte_to_gpt2(uint8_t byte);
// The byte a GPT-2 alphabet code point stands for, or -1.
int gpt2_to_byte(uint32_t cpt);

// True when `text` is a sequence of well-formed UTF-8 characters (lead byte plus the right
// number of continuation bytes), the check llama-server applies before returning a piece as a
// string.
bool is_valid_utf8(std::string_view text);

// Length of the prefix of `text` that does not end inside an incomplete multi-byte character
// (llama-server's check: only the last 1-4 bytes are examined).
size_t complete_prefix_length(std::string_view text);

}  // namespace hearth::tokenizer::unicode

// WordPiece (llama.cpp's llm_tokenizer_wpm): BERT-style normalization (lower-casing, accent
// stripping by NFD), splitting on whitespace and punctuation, then greedy longest-match of
// "▁word" against the vocabulary. Unicode data comes from ICU when the build has it.
#include <algorithm>
#include <string>

#include "tokenizer/encoders.h"
#include "tokenizer/unicode.h"

#include <unicode/uchar.h>
#include <unicode/unorm2.h>
#include <unicode/utf16.h>

namespace hearth::tokenizer {

namespace {

// llama.cpp's "NFD" keeps only the first code point of the canonical decomposition.
uint32_t nfd_first(uint32_t cpt) {
  if (cpt > 0x10FFFF) return cpt;
  UErrorCode err = U_ZERO_ERROR;
  const UNormalizer2* nfd = unorm2_getNFDInstance(&err);
  if (U_FAILURE(err) || nfd == nullptr) return cpt;
  UChar buf[32];
  const int32_t len = unorm2_getDecomposition(nfd, static_cast<UChar32>(cpt), buf, 32, &err);
  if (U_FAILURE(err) || len <= 0) return cpt;
  int32_t i = 0;
  UChar32 first = 0;
  U16_NEXT(buf, i, len, first);
  return static_cast<uint32_t>(first);
}

struct Flags {
  bool control = false;
  bool punctuation = false;
  bool symbol = false;
  bool mark = false;
};

Flags flags_of(uint32_t cpt) {
  Flags f;
  if (cpt > 0x10FFFF) return f;
  switch (u_charType(static_cast<UChar32>(cpt))) {
    case U_CONTROL_CHAR:
    case U_FORMAT_CHAR:
    case U_PRIVATE_USE_CHAR:
    case U_SURROGATE:
      f.control = true;
      break;
    case U_DASH_PUNCTUATION:
    case U_START_PUNCTUATION:
    case U_END_PUNCTUATION:
    case U_CONNECTOR_PUNCTUATION:
    case U_OTHER_PUNCTUATION:
    case U_INITIAL_PUNCTUATION:
    case U_FINAL_PUNCTUATION:
      f.punctuation = true;
      break;
    case U_MATH_SYMBOL:
    case U_CURRENCY_SYMBOL:
    case U_MODIFIER_SYMBOL:
    case U_OTHER_SYMBOL:
      f.symbol = true;
      break;
    case U_NON_SPACING_MARK:
    case U_ENCLOSING_MARK:
    case U_COMBINING_SPACING_MARK:
      f.mark = true;
      break;
    default:
      break;
  }
  return f;
}

bool is_chinese(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) ||
         (c >= 0x20000 && c <= 0x2A6DF) || (c >= 0x2A700 && c <= 0x2B73F) ||
         (c >= 0x2B740 && c <= 0x2B81F) || (c >= 0x2B920 && c <= 0x2CEAF) ||
         (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

std::vector<std::string> preprocess(const Vocab& vocab, std::string_view text) {
  std::vector<std::string> words(1);
  for (uint32_t cpt : unicode::decode_lossy(text)) {
    if (vocab.strip_accents) cpt = nfd_first(cpt);
    if (unicode::is_whitespace(cpt)) {
      if (!words.back().empty()) words.emplace_back();
      continue;
    }
    const Flags f = flags_of(cpt);
    if (cpt == 0 || cpt == unicode::kReplacement || f.control) continue;
    if (vocab.strip_accents && f.mark) continue;
    const uint32_t out_cpt =
        vocab.lowercase && cpt <= 0x10FFFF ? static_cast<uint32_t>(u_tolower(cpt)) : cpt;
    if (f.punctuation || (cpt < 0x7F && f.symbol) || is_chinese(cpt)) {
      if (!words.back().empty()) words.emplace_back();
      words.back() = unicode::to_utf8(out_cpt);
      words.emplace_back();
    } else {
      unicode::append_utf8(words.back(), out_cpt);
    }
  }
  if (words.back().empty()) words.pop_back();
  return words;
}

}  // namespace

void wpm_encode(const Vocab& vocab, std::string_view text, std::vector<TokenId>& out) {
  for (const std::string& w : preprocess(vocab, text)) {
    const std::string word = "\xE2\x96\x81" + w;
    const std::string_view sv(word);
    const size_t n = sv.size();
    const size_t start = out.size();
    for (size_t i = 0; i < n; ++i) {
      bool match = false;
      for (size_t j = std::min(n, i + vocab.max_token_len + 1); j > i; --j) {
        const TokenId id = vocab.find(sv.substr(i, j - i));
        if (id != kNoToken) {
          out.push_back(id);
          match = true;
          i = j - 1;
          break;
        }
      }
      if (!match) {  // one unmatched position discards the whole word
        out.resize(start);
        break;
      }
    }
    const TokenId unk = vocab.id(SpecialSlot::kUnk);
    if (out.size() == start && unk != kNoToken) out.push_back(unk);
  }
}

}  // namespace hearth::tokenizer

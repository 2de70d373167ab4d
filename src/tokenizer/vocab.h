// The in-memory vocabulary: token texts, scores and attributes, merges, special ids and flags,
// built from a RawVocab (what a GGUF file or tokenizer.json holds) by applying llama.cpp's
// per-type defaults, metadata overrides and automatic special-token fix-ups.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "base/status.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace hearth::tokenizer {

// Special-id slots in the order llama.cpp reads their keys (the last three are the deprecated
// FIM keys that overwrite the FIM ids).
enum class SpecialSlot : int {
  kBos,
  kEos,
  kEot,
  kEom,
  kUnk,
  kSep,
  kPad,
  kMask,
  kFimPre,
  kFimSuf,
  kFimMid,
  kFimPad,
  kFimRep,
  kFimSep,
  kPrefix,
  kSuffix,
  kMiddle,
  kCount,
};
inline constexpr size_t kSpecialSlotCount = static_cast<size_t>(SpecialSlot::kCount);

// What a vocabulary file holds, before llama.cpp's defaults and fix-ups.
struct RawVocab {
  std::string source;  // file name, for error messages
  std::string model;   // tokenizer.ggml.model
  std::string pre;     // tokenizer.ggml.pre (empty when absent)
  std::vector<std::string> tokens;
  std::vector<float> scores;         // empty: all 0
  std::vector<int32_t> token_types;  // empty: all NORMAL
  std::vector<std::pair<std::string, std::string>> merges;
  bool has_merges = false;
  std::array<std::optional<int64_t>, kSpecialSlotCount> special_ids;
  std::optional<bool> add_bos, add_eos, add_sep, add_space_prefix, remove_extra_whitespaces;
  std::optional<bool> lowercase, strip_accents;
  std::vector<uint8_t> precompiled_charsmap;  // UGM's normalizer (empty: none)
  std::string general_name;
  std::string general_arch;
};

struct TokenData {
  std::string text;
  float score = 0.0f;
  uint32_t attr = kAttrNormal;
};

struct Vocab {
  Vocab() = default;
  Vocab(const Vocab&) = delete;  // text_to_id holds views into `tokens`
  Vocab& operator=(const Vocab&) = delete;
  Vocab(Vocab&&) = default;
  Vocab& operator=(Vocab&&) = default;

  VocabType type = VocabType::kSpm;
  std::string model;
  PreTokenizerConfig pre;

  std::vector<TokenData> tokens;
  std::unordered_map<std::string_view, TokenId> text_to_id;
  // Merge ranks by (left id, right id) for merges whose two sides are tokens; the rest (rare,
  // malformed vocabularies) by text. merge_result[rank] is the id of left + right, if a token.
  std::unordered_map<uint64_t, int32_t> merge_ranks_by_id;
  std::unordered_map<std::string, int32_t> merge_ranks_by_text;  // key: merge_key(left, right)
  std::vector<TokenId> merge_result;
  size_t max_token_len = 0;

  std::array<TokenId, kSpecialSlotCount> ids{};
  TokenId linefeed = kNoToken;

  bool add_space_prefix = false;
  bool add_bos = false;
  bool add_eos = false;
  bool add_sep = false;
  bool ignore_merges = false;
  bool clean_spaces = false;
  bool remove_extra_whitespaces = false;
  bool escape_whitespaces = false;
  bool lowercase = true;
  bool strip_accents = true;
  std::vector<uint8_t> charsmap;  // UGM: the precompiled normalizer, checked by build_vocab

  std::set<TokenId> eog;
  std::vector<TokenId> special_cache;  // CONTROL/USER_DEFINED/UNKNOWN ids, longest text first
  std::vector<std::string> pieces;     // token_to_piece(id, special = true)

  TokenId id(SpecialSlot slot) const { return ids[static_cast<size_t>(slot)]; }
  TokenId& id(SpecialSlot slot) { return ids[static_cast<size_t>(slot)]; }
  int32_t size() const { return static_cast<int32_t>(tokens.size()); }
  bool valid(TokenId t) const { return t >= 0 && t < size(); }
  TokenId find(std::string_view text) const {
    const auto it = text_to_id.find(text);
    return it == text_to_id.end() ? kNoToken : it->second;
  }
  // Byte fallback as llama.cpp's byte_to_token: "<0xXX>" (SPM) or the GPT-2 character (BPE).
  TokenId byte_token(uint8_t byte) const;
  // Rank of the merge (left, right); -1 when absent. Pass the ids of `left` and `right` when
  // they are tokens. `scratch` avoids an allocation per call.
  int32_t merge_rank(TokenId left_id, TokenId right_id, std::string_view left,
                     std::string_view right, std::string& scratch) const;
};

// Key of a merge pair in Vocab::merge_ranks_by_text (length-prefixed, so any text is unambiguous).
void merge_key(std::string& out, std::string_view left, std::string_view right);

// Applies defaults, overrides and fix-ups (tokenizers.md §2) and fills the caches.
Result<Vocab> build_vocab(RawVocab raw);

// The piece of a token as llama.cpp's token_to_piece with special = true, lstrip = 0.
std::string render_piece(const Vocab& vocab, TokenId id);

}  // namespace hearth::tokenizer

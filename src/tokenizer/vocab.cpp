// Building a Vocab from a RawVocab the way llama.cpp's llama_vocab::impl::load() does:
// per-type defaults, metadata overrides, text-based special-token fix-ups and the caches.
#include "tokenizer/vocab.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "base/log.h"
#include "tokenizer/unicode.h"

namespace hearth::tokenizer {
namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";  // U+2581, SPM's space

using Slot = SpecialSlot;

void set_all_ids(Vocab& v, TokenId bos, TokenId eos, TokenId unk, TokenId sep, TokenId pad,
                 TokenId mask) {
  v.ids.fill(kNoToken);
  v.id(Slot::kBos) = bos;
  v.id(Slot::kEos) = eos;
  v.id(Slot::kUnk) = unk;
  v.id(Slot::kSep) = sep;
  v.id(Slot::kPad) = pad;
  v.id(Slot::kMask) = mask;
}

Status apply_bpe_pre(const RawVocab& raw, const std::string& pre, Vocab& v) {
  if (pre.empty()) {
    log_warn("{}: tokenizer.ggml.pre is missing, using 'default' (quality may suffer)", raw.source);
  }
  HEARTH_ASSIGN_OR_RETURN(v.pre, pre_tokenizer_config(pre));
  v.add_space_prefix = false;
  v.clean_spaces = v.pre.clean_spaces;
  v.ignore_merges = v.pre.ignore_merges;
  v.add_bos = v.pre.add_bos;
  v.add_sep = v.pre.add_sep;
  v.escape_whitespaces = v.pre.escape_whitespaces;
  if (v.pre.bos_unset) v.id(Slot::kBos) = kNoToken;
  return Status::ok();
}

// UGM's precompiled charsmap: a u32 size, that many bytes of XCDA units, then the
// replacement strings; the reference refuses a blob whose parts do not fit.
Status check_charsmap(const RawVocab& raw) {
  const std::vector<uint8_t>& cm = raw.precompiled_charsmap;
  if (cm.empty()) return Status::ok();
  uint32_t blob = 0;
  if (cm.size() >= sizeof(blob)) std::memcpy(&blob, cm.data(), sizeof(blob));
  if (cm.size() < sizeof(blob) || uint64_t{blob} + sizeof(blob) >= cm.size())
    return error(ErrorCode::kCorruptFile,
                 raw.source +
                     ": tokenizer.ggml.precompiled_charsmap is malformed (index out of "
                     "array bounds in precompiled charsmap)");
  return Status::ok();
}

// Vocabulary type, default special ids and per-type flags (llama-vocab.cpp, load()).
Status apply_type_defaults(const RawVocab& raw, Vocab& v) {
  v.model = raw.model;
  v.pre = PreTokenizerConfig{};
  v.pre.name = "default";
  if (raw.model == "llama") {
    v.type = VocabType::kSpm;
    set_all_ids(v, 1, 2, 0, kNoToken, kNoToken, kNoToken);
    v.add_space_prefix = true;
    v.add_bos = true;
  } else if (raw.model == "bert") {
    v.type = VocabType::kWpm;
    set_all_ids(v, 101, kNoToken, 100, 102, 0, 103);
    v.add_bos = true;
    v.add_sep = true;
    v.clean_spaces = true;
  } else if (raw.model == "gpt2" || raw.model == "gemma4") {
    v.type = VocabType::kBpe;
    if (!raw.has_merges) {
      return error(ErrorCode::kCorruptFile,
                   raw.source + ": tokenizer.ggml.merges is missing (required for BPE)");
    }
    if (raw.model == "gemma4") {
      set_all_ids(v, kNoToken, kNoToken, kNoToken, kNoToken, kNoToken, kNoToken);
      HEARTH_RETURN_IF_ERROR(apply_bpe_pre(raw, "gemma4", v));
    } else {
      set_all_ids(v, 11, 11, kNoToken, kNoToken, kNoToken, kNoToken);
      HEARTH_RETURN_IF_ERROR(apply_bpe_pre(raw, raw.pre, v));
    }
  } else if (raw.model == "t5") {
    v.type = VocabType::kUgm;
    set_all_ids(v, kNoToken, 1, 2, kNoToken, 0, kNoToken);
    v.add_eos = true;
    v.escape_whitespaces = true;
    HEARTH_RETURN_IF_ERROR(check_charsmap(raw));
    v.charsmap = raw.precompiled_charsmap;
  } else if (raw.model.empty()) {
    return error(ErrorCode::kNotFound, raw.source + ": tokenizer.ggml.model is missing");
  } else {
    return error(ErrorCode::kUnsupported,
                 raw.source + ": unsupported tokenizer model '" + raw.model + "'");
  }
  if (raw.add_space_prefix) v.add_space_prefix = *raw.add_space_prefix;
  if (raw.remove_extra_whitespaces) v.remove_extra_whitespaces = *raw.remove_extra_whitespaces;
  return Status::ok();
}

uint32_t attr_from_type(int32_t type) {
  switch (type) {
    case 1:
      return kAttrNormal;
    case 2:
      return kAttrUnknown;
    case 3:
      return kAttrControl;
    case 4:
      return kAttrUserDefined;
    case 5:
      return kAttrUnused;
    case 6:
      return kAttrByte;
    default:
      return kAttrUndefined;
  }
}

Status load_tokens(RawVocab& raw, Vocab& v) {
  const size_t n = raw.tokens.size();
  if (n == 0) return error(ErrorCode::kCorruptFile, raw.source + ": the vocabulary is empty");
  if (n > static_cast<size_t>(INT32_MAX)) {
    return error(ErrorCode::kCorruptFile, raw.source + ": too many tokens");
  }
  if (!raw.scores.empty() && raw.scores.size() < n) {
    return error(ErrorCode::kCorruptFile, raw.source + ": tokenizer.ggml.scores has " +
                                              std::to_string(raw.scores.size()) + " entries for " +
                                              std::to_string(n) + " tokens");
  }
  if (!raw.token_types.empty() && raw.token_types.size() < n) {
    return error(ErrorCode::kCorruptFile, raw.source + ": tokenizer.ggml.token_type has " +
                                              std::to_string(raw.token_types.size()) +
                                              " entries for " + std::to_string(n) + " tokens");
  }
  v.tokens.resize(n);
  for (size_t i = 0; i < n; ++i) {
    TokenData& t = v.tokens[i];
    t.text = std::move(raw.tokens[i]);
    if (t.text.empty()) t.text = "[EMPTY_" + std::to_string(i) + "]";
    t.score = raw.scores.empty() ? 0.0f : raw.scores[i];
    t.attr = raw.token_types.empty() ? kAttrNormal : attr_from_type(raw.token_types[i]);
    v.max_token_len = std::max(v.max_token_len, t.text.size());
  }
  // Inserted in id order without reserving, like llama.cpp's token_to_id: the iteration order
  // of this map decides ties in the text-based fix-ups below.
  for (size_t i = 0; i < n; ++i) {
    const auto [it, inserted] = v.text_to_id.emplace(v.tokens[i].text, static_cast<TokenId>(i));
    if (!inserted) {
      return error(ErrorCode::kCorruptFile,
                   raw.source + ": duplicate token in vocabulary: '" + v.tokens[i].text +
                       "' has ids " + std::to_string(it->second) + " and " + std::to_string(i));
    }
  }
  return Status::ok();
}

uint64_t id_pair(TokenId a, TokenId b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

void load_merges(RawVocab& raw, Vocab& v) {
  std::string key;
  v.merge_result.resize(raw.merges.size(), kNoToken);
  for (size_t i = 0; i < raw.merges.size(); ++i) {
    const auto& [left, right] = raw.merges[i];
    const auto rank = static_cast<int32_t>(i);
    const TokenId a = v.find(left);
    const TokenId b = v.find(right);
    // The first rank of a pair wins, as with llama.cpp's emplace.
    if (a != kNoToken && b != kNoToken) {
      v.merge_ranks_by_id.emplace(id_pair(a, b), rank);
    } else {
      merge_key(key, left, right);
      v.merge_ranks_by_text.emplace(key, rank);
    }
    key = left;
    key += right;
    v.merge_result[i] = v.find(key);
  }
}

Status apply_special_ids(const RawVocab& raw, Vocab& v) {
  static constexpr std::array<Slot, kSpecialSlotCount> kTarget = {
      Slot::kBos,    Slot::kEos,    Slot::kEot,    Slot::kEom,    Slot::kUnk,    Slot::kSep,
      Slot::kPad,    Slot::kMask,   Slot::kFimPre, Slot::kFimSuf, Slot::kFimMid, Slot::kFimPad,
      Slot::kFimRep, Slot::kFimSep, Slot::kFimPre, Slot::kFimSuf, Slot::kFimMid,
  };
  for (size_t k = 0; k < kSpecialSlotCount; ++k) {
    TokenId& id = v.id(kTarget[k]);
    if (id >= v.size()) id = kNoToken;  // a default beyond the vocabulary is disabled
    const auto& value = raw.special_ids[k];
    if (!value) continue;
    if (*value >= 0 && *value < v.size()) {
      id = static_cast<TokenId>(*value);
    } else if (*value == 0xFFFFFFFFll || *value == -1) {
      // Converters write u32 -1 for "no such token"; nothing to warn about.
      log_debug("{}: special token id {} means unset, keeping {}", raw.source, *value, id);
    } else {
      log_warn("{}: special token id {} is out of range, keeping {}", raw.source, *value, id);
    }
  }
  if (raw.add_bos) v.add_bos = *raw.add_bos;
  if (raw.add_eos) v.add_eos = *raw.add_eos;
  if (raw.add_sep) v.add_sep = *raw.add_sep;
  if (v.pre.name == "gemma4") v.add_bos = true;
  const auto check = [&](bool add, Slot slot, const char* add_key, const char* id_key) {
    if (add && v.id(slot) == kNoToken) {
      return error(ErrorCode::kCorruptFile, raw.source + ": tokenizer.ggml." + add_key +
                                                " is true, but tokenizer.ggml." + id_key +
                                                " is not set");
    }
    return Status::ok();
  };
  HEARTH_RETURN_IF_ERROR(check(v.add_bos, Slot::kBos, "add_bos_token", "bos_token_id"));
  HEARTH_RETURN_IF_ERROR(check(v.add_eos, Slot::kEos, "add_eos_token", "eos_token_id"));
  HEARTH_RETURN_IF_ERROR(check(v.add_sep, Slot::kSep, "add_sep_token", "seperator_token_id"));
  v.lowercase = raw.lowercase.value_or(true);
  v.strip_accents = raw.strip_accents.value_or(v.lowercase);
  return Status::ok();
}

bool one_of(std::string_view text, std::initializer_list<std::string_view> list) {
  return std::find(list.begin(), list.end(), text) != list.end();
}

// Promotes tokens named like EOT/EOM/FIM tokens when the metadata did not set those ids.
void detect_specials_by_text(Vocab& v) {
  struct Rule {
    Slot slot;
    std::initializer_list<std::string_view> texts;
  };
  static const Rule kRules[] = {
      {Slot::kEot,
       {"<|eot_id|>", "<|im_end|>", "<|end|>", "<end_of_turn>", "<|endoftext|>", "<|end_of_text|>",
        "<EOT>", "_<EOT>", "[EOT]", "<\uFF5Cend\u2581of\u2581sentence\uFF5C>",
        "<end_of_utterance>"}},
      {Slot::kEom, {"<|eom_id|>"}},
      {Slot::kFimPre,
       {"<|fim_prefix|>", "<fim-prefix>", "<fim_prefix>", "<\uFF5Cfim\u2581begin\uFF5C>", "<PRE>",
        "\u2581<PRE>", "<|code_prefix|>", "<|prefix|>"}},
      {Slot::kFimSuf,
       {"<|fim_suffix|>", "<fim-suffix>", "<fim_suffix>", "<\uFF5Cfim\u2581hole\uFF5C>", "<SUF>",
        "\u2581<SUF>", "<|code_suffix|>", "<|suffix|>"}},
      {Slot::kFimMid,
       {"<|fim_middle|>", "<fim-middle>", "<fim_middle>", "<\uFF5Cfim\u2581end\uFF5C>", "<MID>",
        "\u2581<MID>", "<|code_middle|>", "<|middle|>"}},
      {Slot::kFimPad, {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"}},
      {Slot::kFimRep, {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"}},
      {Slot::kFimSep, {"<|file_sep|>"}},
  };
  for (const auto& [text, id] : v.text_to_id) {
    uint32_t& attr = v.tokens[id].attr;
    for (const Rule& rule : kRules) {
      if (v.id(rule.slot) != kNoToken || !one_of(text, rule.texts)) continue;
      v.id(rule.slot) = id;
      attr |= kAttrControl;
    }
  }
  for (const auto& [text, id] : v.text_to_id) {
    uint32_t& attr = v.tokens[id].attr;
    if ((attr & kAttrControl) != 0 && text.find("unused") != std::string_view::npos) {
      attr |= kAttrUnused;
    }
  }
}

TokenId eog_member(const Vocab& v, std::string_view text) {
  for (TokenId id : v.eog) {
    if (v.valid(id) && v.tokens[id].text == text) return id;
  }
  return kNoToken;
}

void build_eog(Vocab& v) {
  for (Slot s : {Slot::kFimPad, Slot::kFimRep, Slot::kFimSep}) {
    if (v.id(s) != kNoToken) v.eog.insert(v.id(s));
  }
  for (const auto& [text, id] : v.text_to_id) {
    if (!one_of(text, {"<|eot_id|>",
                       "<|im_end|>",
                       "<|end|>",
                       "<|return|>",
                       "<|call|>",
                       "<|flush|>",
                       "<|calls|>",
                       "<end_of_turn>",
                       "<|endoftext|>",
                       "</s>",
                       "<|eom_id|>",
                       "<EOT>",
                       "_<EOT>",
                       "[EOT]",
                       "[EOS]",
                       "<|end_of_text|>",
                       "<end_of_utterance>",
                       "<eos>",
                       "<turn|>",
                       "<|tool_response>",
                       "<\uFF5Cend\u2581of\u2581sentence\uFF5C>",
                       "[e~["})) {
      continue;
    }
    v.eog.insert(id);
    v.tokens[id].attr |= kAttrControl;
  }
  for (const auto& [text, id] : v.text_to_id) {
    if (one_of(text, {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"})) {
      v.tokens[id].attr = kAttrUserDefined;  // always rendered (gpt-oss)
    }
  }
  for (Slot s : {Slot::kEos, Slot::kEot, Slot::kEom}) {
    if (v.id(s) != kNoToken) v.eog.insert(v.id(s));
  }
  const bool has_return = eog_member(v, "<|return|>") != kNoToken;
  const bool has_call =
      eog_member(v, "<|call|>") != kNoToken || eog_member(v, "<|calls|>") != kNoToken;
  const bool has_flush = eog_member(v, "<|flush|>") != kNoToken;
  const TokenId end_id = eog_member(v, "<|end|>");
  if (end_id != kNoToken && has_call && (has_return || has_flush)) {
    v.eog.erase(end_id);
    v.tokens[end_id].attr = kAttrUserDefined;
  }
  const TokenId s_id = eog_member(v, "</s>");
  if (s_id != kNoToken && eog_member(v, "<|tool_response>") != kNoToken) {
    v.eog.erase(s_id);
    v.tokens[s_id].attr = kAttrNormal;
  }
}

void build_caches(Vocab& v) {
  for (TokenId id = 0; id < v.size(); ++id) {
    if ((v.tokens[id].attr & (kAttrControl | kAttrUserDefined | kAttrUnknown)) != 0) {
      v.special_cache.push_back(id);
    }
  }
  // Same algorithm and input order as llama.cpp, so equal-length ties end up the same way.
  std::sort(v.special_cache.begin(), v.special_cache.end(), [&](TokenId a, TokenId b) {
    return v.tokens[a].text.size() > v.tokens[b].text.size();
  });
  v.pieces.resize(v.tokens.size());
  for (TokenId id = 0; id < v.size(); ++id) v.pieces[id] = render_piece(v, id);
}

bool contains_any(std::string_view s, std::initializer_list<std::string_view> parts) {
  return std::any_of(parts.begin(), parts.end(),
                     [&](std::string_view p) { return s.find(p) != std::string_view::npos; });
}

// Per-model strip attributes (GGUF has no per-token attributes).
void apply_model_attrs(const RawVocab& raw, Vocab& v) {
  std::string name = raw.general_name;
  std::transform(name.begin(), name.end(), name.begin(),
                 [](char c) { return static_cast<char>(std::tolower(static_cast<uint8_t>(c))); });
  const auto set_attr = [&](std::string_view text, uint32_t attr, bool on) {
    const TokenId id = v.find(text);
    if (id == kNoToken) return;
    v.tokens[id].attr = on ? (v.tokens[id].attr | attr) : (v.tokens[id].attr & ~attr);
  };
  if (contains_any(raw.pre, {"jina-v2-de", "jina-v2-es", "jina-v2-code"}) ||
      contains_any(raw.general_arch, {"nomic-bert-moe", "jina-bert-v3"})) {
    set_attr("<mask>", kAttrLstrip, true);
  } else if (contains_any(name, {"phi-3", "phi3"})) {
    for (TokenId id : v.special_cache) v.tokens[id].attr |= kAttrRstrip;
    set_attr("</s>", kAttrRstrip, true);
    for (std::string_view t : {"<unk>", "<s>", "<|endoftext|>"}) set_attr(t, kAttrRstrip, false);
  } else if (contains_any(name, {"modern-bert"})) {
    set_attr("[MASK]", kAttrLstrip, true);
  }
}

uint8_t byte_of(std::string_view text) {
  // strtol(text.substr(3, 2), 16) for "<0xXX>"; stops at the first non-hex character.
  uint8_t value = 0;
  for (size_t i = 3; i < 5 && i < text.size(); ++i) {
    const char c = text[i];
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) break;
    value = static_cast<uint8_t>(value * 16 + digit);
  }
  return value;
}

std::string replace_space_marker(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, kSpaceMarker.size(), kSpaceMarker) == 0) {
      out += ' ';
      i += kSpaceMarker.size();
    } else {
      out += text[i++];
    }
  }
  return out;
}

// GPT-2 alphabet back to bytes; characters outside it give llama.cpp's [UNK_BYTE_...] marker.
std::string decode_byte_level(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (uint32_t cpt : unicode::decode_lossy(text)) {
    const int byte = unicode::gpt2_to_byte(cpt);
    if (byte >= 0) {
      out += static_cast<char>(byte);
      continue;
    }
    static constexpr char kHex[] = "0123456789abcdef";
    out += "[UNK_BYTE_0x";
    for (char c : unicode::to_utf8(cpt)) {
      out += kHex[static_cast<uint8_t>(c) >> 4];
      out += kHex[static_cast<uint8_t>(c) & 15];
    }
    out += text;
    out += ']';
  }
  return out;
}

}  // namespace

TokenId Vocab::byte_token(uint8_t byte) const {
  if (type == VocabType::kSpm || type == VocabType::kUgm) {
    static constexpr char kHex[] = "0123456789ABCDEF";
    const char buf[6] = {'<', '0', 'x', kHex[byte >> 4], kHex[byte & 15], '>'};
    const TokenId id = find(std::string_view(buf, 6));
    if (id != kNoToken) return id;
    return find(std::string_view(reinterpret_cast<const char*>(&byte), 1));
  }
  return find(unicode::byte_to_gpt2(byte));
}

int32_t Vocab::merge_rank(TokenId left_id, TokenId right_id, std::string_view left,
                          std::string_view right, std::string& scratch) const {
  if (left_id != kNoToken && right_id != kNoToken) {
    const auto it = merge_ranks_by_id.find(id_pair(left_id, right_id));
    return it == merge_ranks_by_id.end() ? -1 : it->second;
  }
  if (merge_ranks_by_text.empty()) return -1;
  merge_key(scratch, left, right);
  const auto it = merge_ranks_by_text.find(scratch);
  return it == merge_ranks_by_text.end() ? -1 : it->second;
}

void merge_key(std::string& out, std::string_view left, std::string_view right) {
  const auto n = static_cast<uint32_t>(left.size());
  out.clear();
  out.append(reinterpret_cast<const char*>(&n), sizeof(n));
  out.append(left);
  out.append(right);
}

std::string render_piece(const Vocab& v, TokenId id) {
  if (!v.valid(id)) return {};
  const TokenData& t = v.tokens[id];
  if ((t.attr & (kAttrUnknown | kAttrControl | kAttrUserDefined)) != 0) return t.text;
  if ((t.attr & kAttrNormal) != 0) {
    if (v.type == VocabType::kBpe && !v.escape_whitespaces) return decode_byte_level(t.text);
    return replace_space_marker(t.text);
  }
  if ((t.attr & kAttrByte) != 0) return std::string(1, static_cast<char>(byte_of(t.text)));
  return {};
}

Result<Vocab> build_vocab(RawVocab raw) {
  Vocab v;
  HEARTH_RETURN_IF_ERROR(apply_type_defaults(raw, v));
  HEARTH_RETURN_IF_ERROR(load_tokens(raw, v));
  load_merges(raw, v);
  HEARTH_RETURN_IF_ERROR(apply_special_ids(raw, v));
  detect_specials_by_text(v);
  build_eog(v);
  build_caches(v);
  apply_model_attrs(raw, v);
  return v;
}

}  // namespace hearth::tokenizer

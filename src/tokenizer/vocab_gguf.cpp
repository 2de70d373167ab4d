// Reading the tokenizer.ggml.* keys of a GGUF file (gguf-and-models.md §2.3) into a RawVocab.
#include "tokenizer/vocab_loaders.h"

namespace hearth::tokenizer {
namespace {

constexpr std::array<std::string_view, kSpecialSlotCount> kSpecialKeys = {
    "tokenizer.ggml.bos_token_id",     "tokenizer.ggml.eos_token_id",
    "tokenizer.ggml.eot_token_id",     "tokenizer.ggml.eom_token_id",
    "tokenizer.ggml.unknown_token_id", "tokenizer.ggml.seperator_token_id",
    "tokenizer.ggml.padding_token_id", "tokenizer.ggml.mask_token_id",
    "tokenizer.ggml.fim_pre_token_id", "tokenizer.ggml.fim_suf_token_id",
    "tokenizer.ggml.fim_mid_token_id", "tokenizer.ggml.fim_pad_token_id",
    "tokenizer.ggml.fim_rep_token_id", "tokenizer.ggml.fim_sep_token_id",
    "tokenizer.ggml.prefix_token_id",  "tokenizer.ggml.suffix_token_id",
    "tokenizer.ggml.middle_token_id",
};

Status type_error(const gguf::File& file, std::string_view key, std::string_view expected) {
  return error(ErrorCode::kCorruptFile,
               file.name() + ": " + std::string(key) + " must be " + std::string(expected));
}

Result<std::optional<std::string>> optional_string(const gguf::File& file, std::string_view key) {
  const gguf::Value* v = file.find(key);
  if (v == nullptr) return std::optional<std::string>();
  const auto s = v->as_string();
  if (!s) return type_error(file, key, "a string");
  return std::optional<std::string>(std::string(*s));
}

Result<std::optional<bool>> optional_bool(const gguf::File& file, std::string_view key) {
  const gguf::Value* v = file.find(key);
  if (v == nullptr) return std::optional<bool>();
  const auto b = v->as_bool();
  if (!b) return type_error(file, key, "a bool");
  return std::optional<bool>(*b);
}

Status read_strings(const gguf::File& file, std::string_view key, std::vector<std::string>& out) {
  const gguf::Value* v = file.find(key);
  if (v == nullptr) return Status::ok();
  if (!v->is_array() || v->element_type() != gguf::ValueType::kString) {
    return type_error(file, key, "an array of strings");
  }
  out.reserve(v->strings().size());
  for (std::string_view s : v->strings()) out.emplace_back(s);
  return Status::ok();
}

Status read_scores_and_types(const gguf::File& file, RawVocab& raw) {
  if (const gguf::Value* v = file.find("tokenizer.ggml.scores"); v != nullptr) {
    const bool ok = v->is_array() && (v->element_type() == gguf::ValueType::kF32 ||
                                      v->element_type() == gguf::ValueType::kI32);
    if (!ok) return type_error(file, "tokenizer.ggml.scores", "an array of f32 or i32");
    raw.scores.resize(v->size());
    for (uint64_t i = 0; i < v->size(); ++i) {
      raw.scores[i] = v->element_type() == gguf::ValueType::kF32
                          ? static_cast<float>(v->float_at(i))
                          : static_cast<float>(v->int_at(i));
    }
  }
  if (const gguf::Value* v = file.find("tokenizer.ggml.token_type"); v != nullptr) {
    if (!v->is_array() || v->element_type() != gguf::ValueType::kI32) {
      return type_error(file, "tokenizer.ggml.token_type", "an array of i32");
    }
    raw.token_types.resize(v->size());
    for (uint64_t i = 0; i < v->size(); ++i) {
      raw.token_types[i] = static_cast<int32_t>(v->int_at(i));
    }
  }
  return Status::ok();
}

// "A B" split at the first space at byte position >= 1; no such space gives ("", "").
std::pair<std::string, std::string> split_merge(std::string_view merge) {
  const size_t pos = merge.size() > 1 ? merge.find(' ', 1) : std::string_view::npos;
  if (pos == std::string_view::npos) return {};
  return {std::string(merge.substr(0, pos)), std::string(merge.substr(pos + 1))};
}

Status read_flags_and_ids(const gguf::File& file, RawVocab& raw) {
  for (size_t k = 0; k < kSpecialSlotCount; ++k) {
    const gguf::Value* v = file.find(kSpecialKeys[k]);
    if (v == nullptr) continue;
    const auto id = v->as_int();
    if (!id) return type_error(file, kSpecialKeys[k], "an integer");
    raw.special_ids[k] = *id;
  }
  const std::pair<std::string_view, std::optional<bool>*> bools[] = {
      {"tokenizer.ggml.add_bos_token", &raw.add_bos},
      {"tokenizer.ggml.add_eos_token", &raw.add_eos},
      {"tokenizer.ggml.add_sep_token", &raw.add_sep},
      {"tokenizer.ggml.add_space_prefix", &raw.add_space_prefix},
      {"tokenizer.ggml.remove_extra_whitespaces", &raw.remove_extra_whitespaces},
      {"tokenizer.ggml.normalizer.lowercase", &raw.lowercase},
      {"tokenizer.ggml.normalizer.strip_accents", &raw.strip_accents},
  };
  for (const auto& [key, target] : bools) {
    HEARTH_ASSIGN_OR_RETURN(*target, optional_bool(file, key));
  }
  return Status::ok();
}

}  // namespace

Result<RawVocab> raw_vocab_from_gguf(const gguf::File& file) {
  RawVocab raw;
  raw.source = file.name();
  HEARTH_ASSIGN_OR_RETURN(auto model, optional_string(file, "tokenizer.ggml.model"));
  if (!model) return error(ErrorCode::kNotFound, file.name() + ": tokenizer.ggml.model is missing");
  raw.model = *model;
  HEARTH_ASSIGN_OR_RETURN(auto pre, optional_string(file, "tokenizer.ggml.pre"));
  raw.pre = pre.value_or("");
  if (file.find("tokenizer.ggml.tokens") == nullptr) {
    return error(ErrorCode::kNotFound, file.name() + ": tokenizer.ggml.tokens is missing");
  }
  HEARTH_RETURN_IF_ERROR(read_strings(file, "tokenizer.ggml.tokens", raw.tokens));
  HEARTH_RETURN_IF_ERROR(read_scores_and_types(file, raw));
  if (const gguf::Value* cm = file.find("tokenizer.ggml.precompiled_charsmap")) {
    if (!cm->is_array() ||
        (cm->element_type() != gguf::ValueType::kU8 && cm->element_type() != gguf::ValueType::kI8))
      return type_error(file, "tokenizer.ggml.precompiled_charsmap", "an array of u8 or i8");
    raw.precompiled_charsmap.assign(cm->raw_data(), cm->raw_data() + cm->size());
  }
  if (file.find("tokenizer.ggml.merges") != nullptr) {
    std::vector<std::string> merges;
    HEARTH_RETURN_IF_ERROR(read_strings(file, "tokenizer.ggml.merges", merges));
    raw.has_merges = true;
    raw.merges.reserve(merges.size());
    for (const std::string& m : merges) raw.merges.push_back(split_merge(m));
  }
  HEARTH_RETURN_IF_ERROR(read_flags_and_ids(file, raw));
  HEARTH_ASSIGN_OR_RETURN(auto name, optional_string(file, "general.name"));
  raw.general_name = name.value_or("");
  HEARTH_ASSIGN_OR_RETURN(auto arch, optional_string(file, "general.architecture"));
  raw.general_arch = arch.value_or("");
  return raw;
}

}  // namespace hearth::tokenizer

// Converting a Hugging Face tokenizer.json (byte-level BPE, or SentencePiece BPE with byte
// fallback) into a RawVocab the way llama.cpp's convert_hf_to_gguf.py (get_vocab_base,
// _set_vocab_sentencepiece) and gguf-py's SpecialVocab do.
#include <fstream>
#include <nlohmann/json.hpp>

#include "tokenizer/vocab_loaders.h"

namespace hearth::tokenizer {
namespace {

using json = nlohmann::json;

constexpr int64_t kMaxTokens = int64_t{1} << 24;

Result<json> read_json(const std::string& path) {
  std::ifstream in(path, std::ios::binary | std::ios::ate);
  if (!in) return error(ErrorCode::kNotFound, "cannot open '" + path + "'");
  const std::streamoff size = in.tellg();
  if (size < 0) return error(ErrorCode::kIo, "cannot read '" + path + "'");
  std::string text(static_cast<size_t>(size), '\0');
  in.seekg(0);
  if (!in.read(text.data(), size)) return error(ErrorCode::kIo, "cannot read '" + path + "'");
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return error(ErrorCode::kCorruptFile, path + ": not valid JSON");
  return j;
}

// Added tokens that converters mark CONTROL although HF does not call them special.
bool looks_special(std::string_view t) {
  const auto wrapped = [&](std::string_view open, std::string_view close) {
    return t.size() >= open.size() + close.size() && t.substr(0, open.size()) == open &&
           t.substr(t.size() - close.size()) == close;
  };
  return t == "<pad>" || t == "<mask>" || t == "<2mass>" || t == "[@BOS@]" || wrapped("<|", "|>") ||
         wrapped("<\uFF5C", "\uFF5C>") || wrapped("<unused", ">");
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (size_t pos = s.find(from); pos != std::string::npos; pos = s.find(from, pos + to.size())) {
    s.replace(pos, from.size(), to);
  }
  return s;
}

// Token table: model.vocab plus added_tokens; missing ids become "[PAD<i>]" UNUSED tokens.
Status read_tokens(const json& tok, int32_t n_vocab, RawVocab& raw) {
  const json& vocab = tok.at("model").at("vocab");
  const json added = tok.value("added_tokens", json::array());
  int64_t max_id = -1;
  for (const auto& [text, id] : vocab.items())
    max_id = std::max<int64_t>(max_id, id.get<int64_t>());
  for (const json& a : added) max_id = std::max<int64_t>(max_id, a.at("id").get<int64_t>());
  const int64_t n = n_vocab > 0 ? n_vocab : max_id + 1;
  if (n <= 0 || n > kMaxTokens) {
    return error(ErrorCode::kCorruptFile,
                 raw.source + ": implausible vocabulary size " + std::to_string(n));
  }
  raw.tokens.assign(static_cast<size_t>(n), std::string());
  raw.token_types.assign(raw.tokens.size(), 5);  // UNUSED
  for (int64_t i = 0; i < n; ++i) raw.tokens[i] = "[PAD" + std::to_string(i) + "]";
  for (const auto& [text, id_json] : vocab.items()) {
    const int64_t id = id_json.get<int64_t>();
    if (id < 0 || id >= n) continue;
    raw.tokens[id] = text;
    raw.token_types[id] = 1;  // NORMAL
  }
  for (const json& a : added) {
    const int64_t id = a.at("id").get<int64_t>();
    if (id < 0 || id >= n) continue;
    std::string text = a.at("content").get<std::string>();
    if (a.value("special", false) || looks_special(text)) {
      raw.token_types[id] = 3;  // CONTROL
    } else {
      text = replace_all(std::move(text), "\xE2\x96\x81", " ");
      raw.token_types[id] = 4;  // USER_DEFINED
    }
    raw.tokens[id] = std::move(text);
  }
  return Status::ok();
}

void read_merges(const json& model, RawVocab& raw) {
  raw.has_merges = true;
  for (const json& m : model.value("merges", json::array())) {
    if (m.is_array() && m.size() == 2) {
      raw.merges.emplace_back(m[0].get<std::string>(), m[1].get<std::string>());
      continue;
    }
    const std::string s = m.get<std::string>();
    const size_t pos = s.size() > 1 ? s.find(' ', 1) : std::string::npos;
    if (pos == std::string::npos) {
      raw.merges.emplace_back();
    } else {
      raw.merges.emplace_back(s.substr(0, pos), s.substr(pos + 1));
    }
  }
}

std::vector<json> pre_tokenizer_steps(const json& tok) {
  const json pt = tok.value("pre_tokenizer", json());
  if (!pt.is_object()) return {};
  if (pt.value("type", "") == "Sequence") return pt.value("pretokenizers", std::vector<json>());
  return {pt};
}

bool is_byte_level(const json& tok) {
  for (const json& step : pre_tokenizer_steps(tok)) {
    if (step.value("type", "") == "ByteLevel") return true;
  }
  const json dec = tok.value("decoder", json());
  return dec.is_object() && dec.value("type", "") == "ByteLevel";
}

// The pre value llama.cpp's converter would have recorded, from the pre-tokenizer's shape.
std::string detect_pre(const json& tok, bool clean_up_spaces) {
  std::vector<std::string> regexes;
  bool individual_digits = false;
  bool byte_level_regex = false;
  for (const json& step : pre_tokenizer_steps(tok)) {
    const std::string type = step.value("type", "");
    if (type == "Split" && step.contains("pattern") && step["pattern"].contains("Regex")) {
      regexes.push_back(step["pattern"]["Regex"].get<std::string>());
    } else if (type == "Digits") {
      individual_digits = step.value("individual_digits", false);
    } else if (type == "ByteLevel") {
      byte_level_regex = step.value("use_regex", true);
    }
  }
  if (regexes.size() == 1) {
    std::string pre = pre_from_hf_regex(regexes[0]);
    if (!pre.empty()) return pre;
  }
  if (regexes.size() == 3 && regexes[0] == R"(\p{N}{1,3})" &&
      regexes[1] == "[\u4E00-\u9FA5\u3040-\u309F\u30A0-\u30FF]+") {
    return "deepseek-v3";
  }
  if (regexes.empty() && individual_digits && byte_level_regex) {
    return clean_up_spaces ? "starcoder" : "smollm";
  }
  if (regexes.empty() && !individual_digits && byte_level_regex) return "gpt-2";
  return {};
}

// "<type>_token" entries of tokenizer_config.json: a string or {"content": ...}.
std::optional<std::string> special_content(const json& config, const std::string& key) {
  if (!config.contains(key)) return std::nullopt;
  const json& e = config[key];
  if (e.is_string()) return e.get<std::string>();
  if (e.is_object() && e.contains("content") && e["content"].is_string()) {
    return e["content"].get<std::string>();
  }
  return std::nullopt;
}

struct SpecialType {
  std::string_view name;
  int slot;  // SpecialSlot, or -1 for types llama.cpp ignores (cls)
};
constexpr std::array<SpecialType, 6> kSpecialTypes = {{
    {"bos", static_cast<int>(SpecialSlot::kBos)},
    {"eos", static_cast<int>(SpecialSlot::kEos)},
    {"unk", static_cast<int>(SpecialSlot::kUnk)},
    {"sep", static_cast<int>(SpecialSlot::kSep)},
    {"pad", static_cast<int>(SpecialSlot::kPad)},
    {"mask", static_cast<int>(SpecialSlot::kMask)},
}};

// add_bos/add_eos implied by a TemplateProcessing post-processor (single sequence).
void read_post_processor(const json& tok, RawVocab& raw) {
  json pp = tok.value("post_processor", json());
  std::vector<json> steps;
  if (pp.is_object() && pp.value("type", "") == "Sequence") {
    steps = pp.value("processors", std::vector<json>());
  } else if (pp.is_object()) {
    steps.push_back(pp);
  }
  for (const json& step : steps) {
    if (step.value("type", "") != "TemplateProcessing") continue;
    const json single = step.value("single", json::array());
    if (!single.is_array() || single.empty()) continue;
    if (!raw.add_bos) raw.add_bos = single.front().contains("SpecialToken");
    if (!raw.add_eos) raw.add_eos = single.size() > 1 && single.back().contains("SpecialToken");
  }
}

void read_specials(const json& tok, const json& tok_config, const json& config, RawVocab& raw) {
  const json added = tok.value("added_tokens", json::array());
  for (const SpecialType& t : kSpecialTypes) {
    const std::string name(t.name);
    const json add =
        tok_config.is_object() ? tok_config.value("add_" + name + "_token", json()) : json();
    if (add.is_boolean() && name == "bos") raw.add_bos = add.get<bool>();
    if (add.is_boolean() && name == "eos") raw.add_eos = add.get<bool>();
    auto& slot = raw.special_ids[static_cast<size_t>(t.slot)];
    if (tok_config.is_object()) {
      if (const auto content = special_content(tok_config, name + "_token")) {
        for (const json& a : added) {
          if (a.value("content", "") == *content) {
            slot = a.at("id").get<int64_t>();
            break;
          }
        }
      }
    }
    const std::string key = name + "_token_id";
    if (!slot && config.is_object() && config.contains(key) && config[key].is_number_integer()) {
      slot = config[key].get<int64_t>();
    }
  }
  read_post_processor(tok, raw);
}

// The normalizer's steps (a Sequence's, or the one step).
std::vector<json> normalizer_steps(const json& tok) {
  const json n = tok.value("normalizer", json());
  if (!n.is_object()) return {};
  if (n.value("type", "") == "Sequence") return n.value("normalizers", std::vector<json>());
  return {n};
}

// A SentencePiece BPE model exported to tokenizer.json (Llama 2, Gemma): byte fallback, and
// a normalizer that turns ' ' into U+2581 (with a Prepend of it where SentencePiece adds a
// space prefix).
bool is_sentencepiece_bpe(const json& tok, bool& space_prefix) {
  const json& model = tok.at("model");
  if (model.value("type", "") != "BPE" || !model.value("byte_fallback", false)) return false;
  bool replaces_space = false;
  space_prefix = false;
  for (const json& step : normalizer_steps(tok)) {
    const std::string type = step.value("type", "");
    if (type == "Replace" && step.contains("pattern") &&
        step["pattern"].value("String", "") == " " && step.value("content", "") == "\xE2\x96\x81")
      replaces_space = true;
    if (type == "Prepend" && step.value("prepend", "") == "\xE2\x96\x81") space_prefix = true;
  }
  return replaces_space;
}

// As llama.cpp's SentencePiece conversion records it: model "llama", byte pieces <0xNN> of
// type BYTE, and piece scores. A SentencePiece BPE model numbers its pieces in order of
// decreasing score, so the score of normal piece i is -i (what the merges need: the
// tokenizer merges the highest-scoring pair first).
Result<RawVocab> convert_sentencepiece(const json& tok, const json& tok_config, const json& config,
                                       const std::string& source, bool space_prefix,
                                       int32_t n_vocab) {
  RawVocab raw;
  raw.source = source;
  raw.model = "llama";
  raw.pre = "default";
  HEARTH_RETURN_IF_ERROR(read_tokens(tok, n_vocab, raw));
  raw.scores.assign(raw.tokens.size(), 0.0f);
  for (size_t i = 0; i < raw.tokens.size(); ++i) {
    const std::string& t = raw.tokens[i];
    if (raw.token_types[i] != 1) continue;  // NORMAL pieces only
    if (t.size() == 6 && t.rfind("<0x", 0) == 0 && t.back() == '>') {
      raw.token_types[i] = 6;  // BYTE
    } else {
      raw.scores[i] = -static_cast<float>(i);
    }
  }
  const std::string unk = tok.at("model").value("unk_token", "");
  for (size_t i = 0; i < raw.tokens.size() && !unk.empty(); ++i) {
    if (raw.tokens[i] == unk) raw.token_types[i] = 2;  // UNKNOWN
  }
  raw.add_space_prefix = space_prefix;
  raw.remove_extra_whitespaces = false;
  read_specials(tok, tok_config, config, raw);
  return raw;
}

Result<RawVocab> convert(const json& tok, const json& tok_config, const json& config,
                         const std::string& source, const TokenizerJsonOptions& options) {
  RawVocab raw;
  raw.source = source;
  const json& model = tok.at("model");
  int32_t n_vocab = options.n_vocab;
  if (n_vocab <= 0 && config.is_object() && config.contains("vocab_size") &&
      config["vocab_size"].is_number_integer()) {
    n_vocab = config["vocab_size"].get<int32_t>();
  }
  bool space_prefix = false;
  if (is_sentencepiece_bpe(tok, space_prefix))
    return convert_sentencepiece(tok, tok_config, config, source, space_prefix, n_vocab);
  if (model.value("type", "") != "BPE" || !is_byte_level(tok)) {
    return error(ErrorCode::kUnsupported,
                 source +
                     ": only byte-level and SentencePiece BPE tokenizer.json files are "
                     "supported");
  }
  raw.model = "gpt2";
  const bool clean_up =
      tok_config.is_object() && tok_config.value("clean_up_tokenization_spaces", false);
  raw.pre = options.pre.empty() ? detect_pre(tok, clean_up) : options.pre;
  if (raw.pre.empty()) {
    return error(ErrorCode::kUnsupported,
                 source + ": cannot infer the pre-tokenizer type; set TokenizerJsonOptions::pre");
  }
  HEARTH_RETURN_IF_ERROR(read_tokens(tok, n_vocab, raw));
  read_merges(model, raw);
  read_specials(tok, tok_config, config, raw);
  return raw;
}

}  // namespace

Result<RawVocab> raw_vocab_from_tokenizer_json(const std::string& tokenizer_json_path,
                                               const std::string& tokenizer_config_path,
                                               const TokenizerJsonOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(json tok, read_json(tokenizer_json_path));
  json tok_config;
  if (!tokenizer_config_path.empty()) {
    HEARTH_ASSIGN_OR_RETURN(tok_config, read_json(tokenizer_config_path));
  }
  json config;
  if (!options.config_json_path.empty()) {
    HEARTH_ASSIGN_OR_RETURN(config, read_json(options.config_json_path));
  }
  try {
    return convert(tok, tok_config, config, tokenizer_json_path, options);
  } catch (const json::exception& e) {
    return error(ErrorCode::kCorruptFile,
                 tokenizer_json_path + ": unexpected tokenizer.json layout: " + e.what());
  }
}

}  // namespace hearth::tokenizer

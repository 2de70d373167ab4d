// Tokenizer: loading, tokenize() (special-token partition then the per-type encoder, as
// llama_vocab::impl::tokenize) and the read-only accessors.
#include "tokenizer/tokenizer.h"

#include "tokenizer/detokenizer.h"
#include "tokenizer/encoders.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/vocab_loaders.h"

namespace hearth::tokenizer {

namespace {

constexpr std::string_view kSpaceMarker = "\xE2\x96\x81";

std::string escape_spaces(std::string_view text, bool leading_space) {
  std::string out;
  out.reserve(text.size() + 8);
  if (leading_space) out += kSpaceMarker;
  for (char c : text) {
    if (c == ' ') {
      out += kSpaceMarker;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace

void TokenizerImpl::tokenize_spm(std::string_view text, const std::vector<Fragment>& fragments,
                                 bool add_special, std::vector<TokenId>& out) const {
  const TokenId bos = vocab.id(SpecialSlot::kBos);
  const TokenId eos = vocab.id(SpecialSlot::kEos);
  if (add_special && vocab.add_bos && bos != kNoToken) out.push_back(bos);
  // The dummy prefix goes before the first text and again after every special token.
  bool prev_special = true;
  for (const Fragment& f : fragments) {
    if (f.token != kNoToken) {
      out.push_back(f.token);
      prev_special = true;
      continue;
    }
    const std::string escaped =
        escape_spaces(text.substr(f.offset, f.length), vocab.add_space_prefix && prev_special);
    spm_encode(vocab, escaped, out);
    prev_special = false;
  }
  if (add_special && vocab.add_eos && eos != kNoToken) out.push_back(eos);
}

void TokenizerImpl::tokenize_ugm(std::string_view text, const std::vector<Fragment>& fragments,
                                 bool add_special, std::vector<TokenId>& out) const {
  const TokenId bos = vocab.id(SpecialSlot::kBos);
  const TokenId eos = vocab.id(SpecialSlot::kEos);
  if (add_special && vocab.add_bos && bos != kNoToken) out.push_back(bos);
  for (const Fragment& f : fragments) {
    if (f.token != kNoToken) {
      out.push_back(f.token);
    } else {
      ugm->encode(text.substr(f.offset, f.length), out);
    }
  }
  if (add_special && vocab.add_eos && eos != kNoToken) out.push_back(eos);
}

void TokenizerImpl::encode_bpe(std::string_view text, std::vector<TokenId>& out) const {
  if (vocab.escape_whitespaces) {
    bpe_encode(vocab, *splitter, escape_spaces(text, false), out);
  } else {
    bpe_encode(vocab, *splitter, text, out);
  }
}

std::vector<TokenId> TokenizerImpl::tokenize(std::string_view text, bool add_special,
                                             bool parse_special) const {
  std::vector<TokenId> out;
  const std::vector<Fragment> fragments = partition(vocab, matcher, text, parse_special);
  if (vocab.type == VocabType::kSpm) {
    tokenize_spm(text, fragments, add_special, out);
    return out;
  }
  const TokenId bos = vocab.id(SpecialSlot::kBos);
  const TokenId eos = vocab.id(SpecialSlot::kEos);
  const TokenId sep = vocab.id(SpecialSlot::kSep);
  if (vocab.type == VocabType::kUgm) {
    tokenize_ugm(text, fragments, add_special, out);
    return out;
  }
  const bool wpm = vocab.type == VocabType::kWpm;
  // WPM adds [CLS] ... [SEP] whenever add_special is set, whatever add_bos says.
  if (add_special && (wpm || vocab.add_bos) && bos != kNoToken) out.push_back(bos);
  for (const Fragment& f : fragments) {
    if (f.token != kNoToken) {
      out.push_back(f.token);
    } else if (wpm) {
      wpm_encode(vocab, text.substr(f.offset, f.length), out);
    } else {
      encode_bpe(text.substr(f.offset, f.length), out);
    }
  }
  if (add_special && wpm && sep != kNoToken) out.push_back(sep);
  if (add_special && !wpm && vocab.add_eos && eos != kNoToken) out.push_back(eos);
  return out;
}

Result<Tokenizer> Tokenizer::from_vocab(Vocab vocab) {
  auto impl = std::make_shared<TokenizerImpl>(std::move(vocab));
  Vocab& v = impl->vocab;
  if (v.type == VocabType::kBpe) {
    HEARTH_ASSIGN_OR_RETURN(RegexSplitter splitter, RegexSplitter::create(v.pre.regexes));
    impl->splitter.emplace(std::move(splitter));
  }
  if (v.type == VocabType::kUgm) impl->ugm.emplace(v);
  // The newline token (llama.cpp's linefeed_id).
  const TokenId pad = v.id(SpecialSlot::kPad);
  if (v.type == VocabType::kSpm) {
    const TokenId nl = v.byte_token('\n');
    v.linefeed = nl != kNoToken ? nl : pad;
  } else if (v.type == VocabType::kBpe || v.type == VocabType::kUgm) {
    const std::vector<TokenId> ids = impl->tokenize("\n", false, false);
    v.linefeed = ids.empty() ? pad : ids.front();
  } else {
    v.linefeed = pad;
  }
  return Tokenizer(std::move(impl));
}

Result<Tokenizer> Tokenizer::from_gguf(const gguf::File& file) {
  HEARTH_ASSIGN_OR_RETURN(RawVocab raw, raw_vocab_from_gguf(file));
  HEARTH_ASSIGN_OR_RETURN(Vocab vocab, build_vocab(std::move(raw)));
  return from_vocab(std::move(vocab));
}

Result<Tokenizer> Tokenizer::from_tokenizer_json(const std::string& tokenizer_json_path,
                                                 const std::string& tokenizer_config_path) {
  return from_tokenizer_json(tokenizer_json_path, tokenizer_config_path, TokenizerJsonOptions{});
}

Result<Tokenizer> Tokenizer::from_tokenizer_json(const std::string& tokenizer_json_path,
                                                 const std::string& tokenizer_config_path,
                                                 const TokenizerJsonOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(RawVocab raw, raw_vocab_from_tokenizer_json(
                                            tokenizer_json_path, tokenizer_config_path, options));
  HEARTH_ASSIGN_OR_RETURN(Vocab vocab, build_vocab(std::move(raw)));
  return from_vocab(std::move(vocab));
}

std::vector<TokenId> Tokenizer::tokenize(std::string_view text, bool add_special,
                                         bool parse_special) const {
  return impl_->tokenize(text, add_special, parse_special);
}

std::string Tokenizer::token_to_piece(TokenId id, bool special, int lstrip) const {
  return std::string(piece_view(impl_->vocab, id, special, lstrip));
}

std::string Tokenizer::detokenize(std::span<const TokenId> ids, bool remove_special,
                                  bool unparse_special) const {
  std::string out;
  DetokenizeState state(impl_->vocab, remove_special, unparse_special);
  for (TokenId id : ids) state.push(id, out);
  state.finish(out);
  return out;
}

}  // namespace hearth::tokenizer

// Tokenizer's read-only accessors and the StreamDetokenizer.
#include "tokenizer/detokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/unicode.h"

namespace hearth::tokenizer {

int32_t Tokenizer::n_vocab() const {
  return impl_->vocab.size();
}
VocabType Tokenizer::type() const {
  return impl_->vocab.type;
}
std::string_view Tokenizer::model() const {
  return impl_->vocab.model;
}
std::string_view Tokenizer::pre() const {
  return impl_->vocab.pre.name;
}

TokenId Tokenizer::bos() const {
  return impl_->vocab.id(SpecialSlot::kBos);
}
TokenId Tokenizer::eos() const {
  return impl_->vocab.id(SpecialSlot::kEos);
}
TokenId Tokenizer::eot() const {
  return impl_->vocab.id(SpecialSlot::kEot);
}
TokenId Tokenizer::eom() const {
  return impl_->vocab.id(SpecialSlot::kEom);
}
TokenId Tokenizer::unk() const {
  return impl_->vocab.id(SpecialSlot::kUnk);
}
TokenId Tokenizer::sep() const {
  return impl_->vocab.id(SpecialSlot::kSep);
}
TokenId Tokenizer::pad() const {
  return impl_->vocab.id(SpecialSlot::kPad);
}
TokenId Tokenizer::mask() const {
  return impl_->vocab.id(SpecialSlot::kMask);
}
TokenId Tokenizer::nl() const {
  return impl_->vocab.linefeed;
}
TokenId Tokenizer::fim_pre() const {
  return impl_->vocab.id(SpecialSlot::kFimPre);
}
TokenId Tokenizer::fim_suf() const {
  return impl_->vocab.id(SpecialSlot::kFimSuf);
}
TokenId Tokenizer::fim_mid() const {
  return impl_->vocab.id(SpecialSlot::kFimMid);
}
TokenId Tokenizer::fim_pad() const {
  return impl_->vocab.id(SpecialSlot::kFimPad);
}
TokenId Tokenizer::fim_rep() const {
  return impl_->vocab.id(SpecialSlot::kFimRep);
}
TokenId Tokenizer::fim_sep() const {
  return impl_->vocab.id(SpecialSlot::kFimSep);
}

bool Tokenizer::is_eog(TokenId id) const {
  return id != kNoToken && impl_->vocab.eog.count(id) > 0;
}
std::vector<TokenId> Tokenizer::eog_ids() const {
  return {impl_->vocab.eog.begin(), impl_->vocab.eog.end()};
}

bool Tokenizer::add_bos() const {
  return impl_->vocab.add_bos;
}
bool Tokenizer::add_eos() const {
  return impl_->vocab.add_eos;
}
bool Tokenizer::add_sep() const {
  return impl_->vocab.add_sep;
}
bool Tokenizer::add_space_prefix() const {
  return impl_->vocab.add_space_prefix;
}
bool Tokenizer::clean_spaces() const {
  return impl_->vocab.clean_spaces;
}

std::string_view Tokenizer::token_text(TokenId id) const {
  return impl_->vocab.valid(id) ? std::string_view(impl_->vocab.tokens[id].text) : "";
}
float Tokenizer::token_score(TokenId id) const {
  return impl_->vocab.valid(id) ? impl_->vocab.tokens[id].score : 0.0f;
}
uint32_t Tokenizer::token_attr(TokenId id) const {
  return impl_->vocab.valid(id) ? impl_->vocab.tokens[id].attr : kAttrUndefined;
}
bool Tokenizer::is_control(TokenId id) const {
  return (token_attr(id) & kAttrControl) != 0;
}
bool Tokenizer::is_user_defined(TokenId id) const {
  return (token_attr(id) & kAttrUserDefined) != 0;
}
bool Tokenizer::is_byte(TokenId id) const {
  return (token_attr(id) & kAttrByte) != 0;
}
bool Tokenizer::is_unused(TokenId id) const {
  return (token_attr(id) & kAttrUnused) != 0;
}
TokenId Tokenizer::find_token(std::string_view text) const {
  return impl_->vocab.find(text);
}

struct StreamDetokenizer::State {
  State(const Vocab& vocab, bool remove, bool unparse)
      : remove_special(remove), unparse_special(unparse), detok(vocab, remove, unparse) {}
  bool remove_special;
  bool unparse_special;
  DetokenizeState detok;
  std::string pending;  // final bytes not handed out yet (an incomplete character)
};

StreamDetokenizer::StreamDetokenizer(const Tokenizer& tokenizer, bool remove_special,
                                     bool unparse_special)
    : impl_(tokenizer.impl_),
      state_(std::make_unique<State>(impl_->vocab, remove_special, unparse_special)) {}

StreamDetokenizer::~StreamDetokenizer() = default;
StreamDetokenizer::StreamDetokenizer(StreamDetokenizer&&) noexcept = default;
StreamDetokenizer& StreamDetokenizer::operator=(StreamDetokenizer&&) noexcept = default;

std::string StreamDetokenizer::feed(TokenId id) {
  state_->detok.push(id, state_->pending);
  const size_t n = unicode::complete_prefix_length(state_->pending);
  std::string ready = state_->pending.substr(0, n);
  state_->pending.erase(0, n);
  return ready;
}

std::string StreamDetokenizer::finish() {
  state_->detok.finish(state_->pending);
  std::string rest = std::move(state_->pending);
  state_ = std::make_unique<State>(impl_->vocab, state_->remove_special, state_->unparse_special);
  return rest;
}

bool is_valid_utf8(std::string_view piece) {
  return unicode::is_valid_utf8(piece);
}
size_t complete_utf8_prefix(std::string_view text) {
  return unicode::complete_prefix_length(text);
}

}  // namespace hearth::tokenizer

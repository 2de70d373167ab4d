#include "scheduler/vocab_adapter.h"

namespace hearth::scheduler {

std::shared_ptr<const grammar::TokenTable> make_token_table(const tokenizer::Tokenizer& tok) {
  return std::make_shared<const grammar::TokenTable>(
      tok.n_vocab(), [&](int32_t id) { return tok.token_to_piece(id, true); },
      [&](int32_t id) { return tok.is_eog(id); });
}

}  // namespace hearth::scheduler

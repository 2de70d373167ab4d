// What the samplers that look at token text (DRY's sequence breakers, infill) need from a
// vocabulary. The scheduler adapts its tokenizer to this; tests use small fakes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::sampling {

class VocabView {
 public:
  virtual ~VocabView() = default;
  virtual int32_t n_vocab() const = 0;
  // The token's text with special tokens rendered as their text.
  virtual std::string piece(int32_t id) const = 0;
  // End-of-generation token (EOS, EOT, EOM, ...).
  virtual bool is_eog(int32_t id) const = 0;
  // EOT, or EOS when the vocabulary has no EOT; -1 when neither exists.
  virtual int32_t eot_or_eos() const = 0;
  // Tokens of `text` without BOS/EOS and without special-token parsing.
  virtual std::vector<int32_t> tokenize(std::string_view text) const = 0;
};

}  // namespace hearth::sampling

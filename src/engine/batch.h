// The unit of work of one forward call: tokens of one or more sequences, each with its
// position, its sequence and whether its logits are wanted. A step may mix one decode
// token from many sequences with a prefill chunk of another.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kv_cache.h"

namespace hearth::engine {

struct BatchToken {
  int32_t token = 0;
  int32_t pos = 0;  // absolute position in its sequence
  SeqId seq = 0;
  bool logits = false;  // return this token's logits
  // With ContextParams::embeddings: keep this token's final hidden state (Context::embedding).
  // Rows wanting neither skip the last layer's work after attention.
  bool output = true;
};

class Batch {
 public:
  void add(int32_t token, int32_t pos, SeqId seq, bool logits, bool output = true) {
    tokens_.push_back({token, pos, seq, logits, output});
  }
  void clear() { tokens_.clear(); }
  bool empty() const { return tokens_.empty(); }
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  const std::vector<BatchToken>& tokens() const { return tokens_; }
  const BatchToken& operator[](int32_t i) const { return tokens_[static_cast<size_t>(i)]; }

 private:
  std::vector<BatchToken> tokens_;
};

}  // namespace hearth::engine

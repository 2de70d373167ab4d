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
  // Non-null: the row's input embedding [n_embd] (an image or audio row), used instead of the
  // token's row and never multiplied by the architecture's token-embedding scale; `token` is
  // then ignored. The caller keeps it alive for the decode() call.
  const float* embd = nullptr;
  // >= pos: the row also sees its sequence's later positions up to this one (a non-causal
  // media chunk, whose rows all see the whole chunk; those positions must be in the same
  // batch). A sliding window still starts at the row's own position, as the reference's mask
  // with causal attention off. -1: causal, positions <= pos.
  int32_t visible_end = -1;
  // The last position the row sees.
  int32_t last_visible() const { return visible_end > pos ? visible_end : pos; }
};

class Batch {
 public:
  void add(int32_t token, int32_t pos, SeqId seq, bool logits, bool output = true) {
    tokens_.push_back({token, pos, seq, logits, output, nullptr, -1});
  }
  // A row whose input is the embedding `embd` [n_embd] (see BatchToken::embd and
  // visible_end).
  void add_embd(const float* embd, int32_t pos, SeqId seq, bool logits, int32_t visible_end = -1,
                bool output = true) {
    tokens_.push_back({0, pos, seq, logits, output, embd, visible_end});
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

// The unit of work of one forward call: tokens of one or more sequences, each with its
// position, its sequence and whether its logits are wanted. A step may mix one decode
// token from many sequences with a prefill chunk of another.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/kv_cache.h"

namespace hearth::engine {

// A row's rope position components under M-RoPE (ModelHparams::mrope): time, height, width
// and extra. t < 0: every component is the row's pos (a text row of a prompt without
// media, and every row of other models).
struct RopePos {
  int32_t t = -1;
  int32_t h = 0;
  int32_t w = 0;
  int32_t e = 0;
  // The same position in every component (a text row, or an audio row, under M-RoPE).
  static RopePos all(int32_t p) { return {p, p, p, p}; }
};

struct BatchToken {
  int32_t token = 0;
  int32_t pos = 0;  // absolute position in its sequence
  SeqId seq = 0;
  bool logits = false;  // return this token's logits
  // With ContextParams::embeddings: keep this token's final hidden state (Context::embedding).
  // Rows wanting neither skip the last layer's work after attention.
  bool output = true;
  // Non-null: the row's input embedding [n_embd_inp()] (an image or audio row; deepstack
  // models read their extra slices from it too), used instead of the token's row and never
  // multiplied by the architecture's token-embedding scale; `token` is then ignored. The
  // caller keeps it alive for the decode() call.
  const float* embd = nullptr;
  // >= pos: the row also sees its sequence's later positions up to this one (a non-causal
  // media chunk, whose rows all see the whole chunk; those positions must be in the same
  // batch). A sliding window still starts at the row's own position, as the reference's mask
  // with causal attention off. -1: causal, positions <= pos.
  int32_t visible_end = -1;
  // M-RoPE models only: the position the row is rotated by, which the KV row index `pos`
  // need not equal (an image's rows share a time position and take 2-D grid positions; the
  // text after it continues from the image's time position plus max(grid side)). Attention
  // masks by `pos`, which orders rows as the reference's M-RoPE mask does.
  RopePos rope;
  // The last position the row sees.
  int32_t last_visible() const { return visible_end > pos ? visible_end : pos; }
};

class Batch {
 public:
  void add(int32_t token, int32_t pos, SeqId seq, bool logits, bool output = true) {
    tokens_.push_back({token, pos, seq, logits, output, nullptr, -1, {}});
  }
  // A row whose input is the embedding `embd` [n_embd_inp()] (see BatchToken::embd and
  // visible_end).
  void add_embd(const float* embd, int32_t pos, SeqId seq, bool logits, int32_t visible_end = -1,
                bool output = true) {
    tokens_.push_back({0, pos, seq, logits, output, embd, visible_end, {}});
  }
  // The rope position of row i (M-RoPE models; see BatchToken::rope).
  void set_rope(int32_t i, RopePos rope) { tokens_[static_cast<size_t>(i)].rope = rope; }
  void clear() { tokens_.clear(); }
  bool empty() const { return tokens_.empty(); }
  int32_t size() const { return static_cast<int32_t>(tokens_.size()); }
  const std::vector<BatchToken>& tokens() const { return tokens_; }
  const BatchToken& operator[](int32_t i) const { return tokens_[static_cast<size_t>(i)]; }

 private:
  std::vector<BatchToken> tokens_;
};

}  // namespace hearth::engine

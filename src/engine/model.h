// A loaded model: hyper-parameters and weights, immutable once loaded and shared by every
// context that runs it. Architectures (src/models) subclass Model and provide the layer
// equation; the forward driver (Context) does embedding, layers and output.
#pragma once

#include <cstdint>
#include <memory>

#include "engine/hparams.h"
#include "engine/weights.h"
#include "gguf/file.h"

namespace hearth::engine {

struct ForwardState;

class Model {
 public:
  virtual ~Model() = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelHparams& hparams() const { return hparams_; }
  const ModelWeights& weights() const { return weights_; }
  const gguf::Archive& archive() const { return *archive_; }
  // The GGUF metadata (tokenizer keys, chat template, ...) of the first shard.
  const gguf::File& metadata() const { return archive_->primary(); }

  // Runs block `il` over the batch; st.x ([T][E] residual stream) is updated in place.
  virtual void forward_layer(int32_t il, ForwardState& st) const = 0;

  // The input rows st.s.x [T][E]: each token's embedding row. Encoders add their position
  // and token-type rows and normalize.
  virtual void embed_input(ForwardState& st) const;
  // The final hidden state of one row x [E] into out [E]: decoders' output RMSNorm;
  // encoders' last layer output as it is.
  virtual void final_hidden(const float* x, float* out) const;
  // The causal sliding window of layer il's attention (a token sees its last `window`
  // positions); 0: every earlier position. The KV cache keeps only that much of the layer.
  virtual int32_t attention_window(int32_t /*il*/) const { return 0; }
  // Layers that cache one row of their own per token in place of K and V rows (lfm2's short
  // convolutions keep each token's B*x row): its bytes; 0 for an attention layer. Such a
  // layer's attention_window() is how many of its rows a token reads (itself included).
  virtual int32_t state_row_bytes(int32_t /*il*/) const { return 0; }
  // Decoders have an output matrix (logits); encoders compute embeddings only.
  bool has_lm_head() const { return present(weights_.output); }

 protected:
  Model(std::shared_ptr<const gguf::Archive> archive, ModelHparams hparams, ModelWeights weights)
      : archive_(std::move(archive)), hparams_(std::move(hparams)), weights_(std::move(weights)) {}

 private:
  std::shared_ptr<const gguf::Archive> archive_;  // keeps the mapped tensor data alive
  ModelHparams hparams_;
  ModelWeights weights_;
};

}  // namespace hearth::engine

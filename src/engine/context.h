// Runs a model: owns the KV cache, the thread pools and the working memory of forward
// calls. One Context serves many sequences (the scheduler's slots); it is not thread-safe
// (one forward call at a time), while the Model it runs is shared and immutable.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/batch.h"
#include "engine/forward.h"
#include "engine/kv_cache.h"
#include "engine/model.h"
#include "engine/pooling.h"

namespace hearth::engine {

struct ContextParams {
  int32_t n_ctx = 4096;   // KV capacity in tokens, over all sequences
  int32_t n_seq_max = 1;  // sequences [0, n_seq_max)
  // The context one sequence may reach (0: n_ctx); picks phi3's long or short rope factors.
  int32_t n_ctx_seq = 0;
  int32_t n_threads = 0;        // threads for single-token steps; 0 = hardware threads
  int32_t n_threads_batch = 0;  // threads for multi-token steps; 0 = n_threads
  // Where the two pools' threads run, their priority and poll level (-C, --prio, --poll and
  // the batch forms); the default leaves threads unpinned at the inherited priority.
  ThreadPlacement placement;
  ThreadPlacement placement_batch;
  int32_t kv_block_size = 16;            // tokens per KV block
  TensorType type_k = TensorType::kF16;  // element type of cached K rows (-ctk)
  TensorType type_v = TensorType::kF16;  // element type of cached V rows (-ctv)
  // kReference reproduces the reference engine's numbers (activations in each weight type's
  // dot format, f16 accumulation in attention over an F16 V cache); kF32 keeps activations
  // and accumulators in f32/f64, for checking the model code against float64 math.
  kernels::MatmulPrecision precision = kernels::MatmulPrecision::kReference;
  // Keep every batch token's final hidden state (after the output norm), for embeddings.
  bool embeddings = false;
  // The most tokens one decode() call takes (the scheduler's -ub); 0: up to n_ctx. With it
  // the pools of sliding-window layers hold each sequence's window plus one such batch.
  int32_t n_ubatch = 0;
  // Keep every position of sliding-window layers (llama-server's --swa-full): prompts stay
  // reusable from any point, at the memory of a full cache.
  bool swa_full = false;
  // The most tokens a sequence may be cut back by after a decode (rejected speculative
  // drafts): windowed layers keep at least that many rows more than their window.
  int32_t n_rollback = 0;
};

// True when a KV cache can store rows of `type` for a model whose heads are `head_dim` wide.
bool kv_type_supported(TensorType type, int32_t head_dim);

class Context {
 public:
  static Result<std::unique_ptr<Context>> create(std::shared_ptr<const Model> model,
                                                 const ContextParams& params);

  // Runs one forward pass over `batch`. Each token's position must continue its
  // sequence: the first token of a sequence in the batch is at length(seq), the next at
  // length(seq)+1, and so on. On success the K/V rows are cached and logits() holds the
  // rows of the tokens that asked for them. On error nothing changes.
  Status decode(const Batch& batch);

  // Logits of batch token `i` of the last decode (which must have asked for them): [n_vocab].
  std::span<const float> logits(int32_t i) const;
  // With ContextParams::embeddings, batch token `i`'s final hidden state after the output norm,
  // as the reference's embeddings are taken: [n_embd]. Empty otherwise, and for a token added
  // with output = false (its last layer stopped after attention).
  std::span<const float> embedding(int32_t i) const;
  // One sequence's pooled output from its final hidden states (pool_sequence() on this
  // context's model, threads and precision).
  std::vector<float> pool(PoolingType type, const float* rows, int64_t n_tokens);

  const Model& model() const { return *model_; }
  const ContextParams& params() const { return params_; }
  KvCache& kv_cache() { return *kv_; }
  const KvCache& kv_cache() const { return *kv_; }

 private:
  Context(std::shared_ptr<const Model> model, const ContextParams& params);
  Status validate(const Batch& batch) const;
  Status reserve_kv(const Batch& batch);
  void prepare_scratch(int64_t n_tokens);
  const std::vector<float>& rope_factors() const;
  void compute_rope(const Batch& batch);
  void compute_mrope(const Batch& batch);
  void choose_outputs(const Batch& batch);
  void compute_logits(const Batch& batch, ThreadPool& pool);

  std::shared_ptr<const Model> model_;
  ContextParams params_;
  std::unique_ptr<KvCache> kv_;
  std::unique_ptr<ThreadPool> pool_;        // single-token steps
  std::unique_ptr<ThreadPool> pool_batch_;  // multi-token steps
  Scratch scratch_;
  std::vector<float> logits_;             // [n_out][n_vocab]
  std::vector<int32_t> logits_row_;       // batch index -> row in logits_, or -1
  std::vector<float> embd_;               // [kept rows][n_embd] with params_.embeddings
  std::vector<int32_t> out_row_;          // batch index -> row of the final state, or -1 (pruned)
  std::vector<int32_t> keep_;             // batch indices whose final state is computed
  std::vector<uint8_t> mrope_component_;  // M-RoPE: the position component of each pair
};

}  // namespace hearth::engine

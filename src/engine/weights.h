// Model weights as views into the mapped GGUF file: matrices stay where the file put them
// (zero-copy) unless they are repacked for the many-row kernels (kernels/interleaved.h),
// in which case the copy is owned here and the file's pages are dropped from memory; small
// 1-D tensors (norms, biases) are converted to f32 vectors at load.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "base/load_mode.h"
#include "base/status.h"
#include "gguf/file.h"
#include "kernels/matmul.h"

namespace hearth::engine {

using kernels::WeightMatrix;

inline bool present(const WeightMatrix& w) {
  return w.data != nullptr;
}

// How a model is loaded.
struct LoadOptions {
  // Repack the matrices the interleaved kernels handle (the reference's --repack, on by
  // default; -nr/--no-repack keeps the file's layout).
  bool repack = true;
  // How the file is brought into memory (-lm / --load-mode and its aliases). With a locking
  // mode the repacked copies are locked in RAM too, since they are the weights in use.
  LoadMode load_mode = LoadMode::kAuto;
  // Check every tensor's data for NaN/Inf before the model is built (--check-tensors).
  bool check_tensors = false;
};

// Storage of repacked matrices: 64-byte aligned, freed with std::free.
struct FreeBytes {
  void operator()(uint8_t* p) const { std::free(p); }
};
using OwnedBytes = std::unique_ptr<uint8_t, FreeBytes>;

// A mixture-of-experts FFN (qwen2moe, qwen3moe, olmoe, mixtral): the router, each
// expert's gate/up/down (the slices of the file's 3-D ffn_*_exps tensors), and an optional
// shared expert with its sigmoid gate (qwen2moe).
struct MoeWeights {
  WeightMatrix router;                               // ffn_gate_inp [E, n_expert]
  std::vector<WeightMatrix> gate, up, down;          // [n_expert] of [E, Fe] [E, Fe] [Fe, E]
  WeightMatrix shared_gate, shared_up, shared_down;  // [E, Fs] [E, Fs] [Fs, E]
  WeightMatrix shared_router;                        // ffn_gate_inp_shexp [E, 1]
  // gpt-oss: the router's bias [n_expert] and each expert's biases [n_expert] of [Fe] [Fe] [E].
  std::vector<float> router_b;
  std::vector<std::vector<float>> gate_b, up_b, down_b;
  bool present() const { return !gate.empty(); }
};

// One transformer block of the llama family. Shapes in GGUF order.
struct LayerWeights {
  std::vector<float> attn_norm;       // [E]
  WeightMatrix wq, wk, wv, wo;        // [E, H*D] [E, Hkv*D] [E, Hkv*Dv] [H*Dv, E]
  std::vector<float> bq, bk, bv, bo;  // optional biases [H*D] [Hkv*D] [Hkv*Dv] [E]
  std::vector<float> q_norm, k_norm;  // optional per-head RMSNorm weights [D]
  // jina-bert-v2: q/k LayerNorms over whole rows (weights in q_norm/k_norm [H*D] [Hkv*D]).
  std::vector<float> q_norm_b, k_norm_b;
  // jina-bert-v2: a second post-attention LayerNorm, after re-adding the block input.
  std::vector<float> attn_norm_2, attn_norm_2_b;
  std::vector<float> ffn_norm;    // [E]
  std::vector<float> attn_sinks;  // gpt-oss: each head's attention sink logit [H]
  // gemma2/3: RMSNorms of the attention and FFN outputs before their residual adds.
  std::vector<float> attn_post_norm, ffn_post_norm;     // [E] [E]
  WeightMatrix ffn_gate, ffn_up;                        // [E, F]
  WeightMatrix ffn_down;                                // [F, E]
  std::vector<float> ffn_gate_b, ffn_up_b, ffn_down_b;  // optional biases
  MoeWeights moe;  // in place of ffn_gate/up/down on mixture-of-experts layers
  // lfm2's short convolution layers (in place of attention): in_proj [E, 3E] (B, C and x
  // rows), the depthwise kernel as f32 [E][L] (tap L - 1 on the token itself), out_proj [E, E].
  WeightMatrix conv_in, conv_out;
  std::vector<float> conv_kernel;
  // Encoders (post-norm): LayerNorm after the attention and after the FFN residual adds.
  std::vector<float> attn_out_norm, attn_out_norm_b;  // [E] [E]
  std::vector<float> out_norm, out_norm_b;            // [E] [E]
};

struct ModelWeights {
  WeightMatrix token_embd;         // [E, V]; row t is token t's embedding
  std::vector<float> output_norm;  // [E]
  WeightMatrix output;             // [E, V]; the embedding matrix when tied
  std::vector<float> output_bias;  // optional [V]
  std::vector<float> rope_freqs;   // optional per-pair divisors [R/2]
  // phi3 LongRoPE: per-pair divisors for contexts past n_ctx_orig (long) or within it.
  std::vector<float> rope_long, rope_short;
  // Encoders: token type 0's row [E] (added to every token), absolute positions [E, n_ctx],
  // the embedding LayerNorm [E] [E].
  std::vector<float> token_type0;
  WeightMatrix position_embd;
  std::vector<float> embd_norm, embd_norm_b;
  // Rank head (rerankers): cls [E, E] + bias then tanh, cls.output [E, n_cls_out] + bias; kept
  // in the file's row layout (read one row at a time).
  WeightMatrix cls, cls_out;
  std::vector<float> cls_b, cls_out_b;
  std::vector<float> cls_norm;  // modern-bert: LayerNorm after the classifier's GELU [E]
  std::vector<LayerWeights> layers;
  std::vector<OwnedBytes> repacked;  // the data of every interleaved matrix above
};

// Looks tensors up by name with exact shape checks, and remembers which were used so
// that a file with tensors the architecture does not know can be refused.
class TensorLoader {
 public:
  explicit TensorLoader(const gguf::Archive& archive, LoadOptions options = {})
      : archive_(archive), options_(options) {}

  // A matrix with GGUF shape [n_cols, n_rows] of a type matmul can run, used only through
  // matmul(): repacked when the options and the kernels allow. An absent optional tensor
  // yields an empty view.
  Result<WeightMatrix> matrix(const std::string& name, int64_t n_cols, int64_t n_rows,
                              bool optional = false);
  // The n_mats matrices [n_cols, n_rows] of a 3-D tensor [n_cols, n_rows, n_mats] (experts),
  // each repacked like matrix() does.
  Result<std::vector<WeightMatrix>> matrices(const std::string& name, int64_t n_cols,
                                             int64_t n_rows, int64_t n_mats);
  // The same in the file's row layout, for a matrix whose rows are also read one by one
  // (token embeddings).
  Result<WeightMatrix> row_matrix(const std::string& name, int64_t n_cols, int64_t n_rows,
                                  bool optional = false);
  // A 1-D tensor of n elements, converted to f32. Absent and optional: empty vector.
  Result<std::vector<float>> vector(const std::string& name, int64_t n, bool optional = false);
  // The n_vecs rows of a 2-D tensor [n, n_vecs] (per-expert biases), converted to f32.
  Result<std::vector<std::vector<float>>> vectors(const std::string& name, int64_t n,
                                                  int64_t n_vecs);
  bool has(const std::string& name) const { return archive_.find_tensor(name) != nullptr; }
  // The file's description of a tensor (shape, type), or null; not a lookup that marks it used.
  const gguf::TensorInfo* find_info(const std::string& name) const {
    return archive_.find_tensor(name);
  }
  // kCorruptFile naming the first tensor no lookup asked for.
  Status check_all_used() const;
  // The storage of the matrices repacked so far (moved into ModelWeights::repacked).
  std::vector<OwnedBytes> take_repacked() { return std::move(repacked_); }

 private:
  Result<const gguf::TensorInfo*> find(const std::string& name, bool optional);
  WeightMatrix repack(const WeightMatrix& w);

  const gguf::Archive& archive_;
  LoadOptions options_;
  std::set<std::string, std::less<>> used_;
  std::vector<OwnedBytes> repacked_;
  bool lock_failed_ = false;  // a locking load mode could not lock a repacked matrix
};

}  // namespace hearth::engine

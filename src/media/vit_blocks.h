// The vision transformer of the families whose blocks go beyond vit.h's (llama.cpp's
// clip_graph::build_vit with its optional parts): LayerNorm or RMSNorm, optional q/k norms
// (over the whole width or per head), an optional 2-D RoPE over the patch grid (Pixtral),
// a gated or plain FFN, and layer scales (ls1, ls2: InternViT). The patch embedding takes
// any image whose sides are multiples of the patch size. Activations are f32 rows [token][E].
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/weights.h"
#include "media/clip_file.h"

namespace hearth::media {

enum class VitNorm { kLayer, kRms };

struct VitBlocksOptions {
  VitNorm norm = VitNorm::kLayer;
  bool rope_2d = false;  // rotate q, k by (row, column) of the patch grid
  float rope_theta = 10000.0f;
  // With rope_2d: Qwen-VL's vision M-RoPE (ggml's GGML_ROPE_TYPE_VISION with sections
  // D/4 each) instead of Pixtral's: value i of a head pairs with i + D/2; pairs i < D/4 turn
  // by the row at theta^(-4i/D), the next D/4 by the column at theta^(-4(i-D/4)/D).
  bool rope_halves = false;
};

// Where each token sits and what it sees, for VitBlocks::run: the 2-D rope position of each
// of the n tokens (row[t], col[t]), and, for the layers marked in `windowed` ([n_layer];
// empty: none), attention only inside its window: `windows` are [begin, end) token ranges
// that cover 0..n in order. Other layers attend over all n tokens.
struct VitRunPlan {
  std::vector<int32_t> row, col;
  std::vector<std::pair<int64_t, int64_t>> windows;
  std::vector<bool> windowed;
};

struct VitBlockLayer {
  std::vector<float> ln1_w, ln1_b, ln2_w, ln2_b;    // [E] (biases optional)
  engine::WeightMatrix wq, wk, wv, wo;              // [E, E] (q, k, v absent with wqkv)
  std::vector<float> bq, bk, bv, bo;                // [E] (optional)
  engine::WeightMatrix wqkv;                        // [E, 3E] fused q, k, v (optional)
  std::vector<float> bqkv;                          // [3E] (optional)
  std::vector<float> q_norm, k_norm;                // [E] or [D] (optional)
  std::vector<float> ls1, ls2;                      // [E] (optional)
  engine::WeightMatrix ffn_up, ffn_gate, ffn_down;  // [E, F] [E, F] (optional) [F, E]
  std::vector<float> ffn_up_b, ffn_gate_b, ffn_down_b;
};

class VitBlocks {
 public:
  // Reads v.patch_embd (+ bias), v.pre_ln, v.post_ln and the n_layer blocks v.blk.N.*.
  static Result<VitBlocks> load(engine::TensorLoader& loader, const VisionHparams& hp,
                                VitBlocksOptions options);

  const VisionHparams& hparams() const { return hp_; }

  // Each P x P patch of `pixels` (nx * ny * 3 interleaved RGB, normalized; nx, ny multiples
  // of P) through the patch kernel and its bias: [(ny/P) * (nx/P)][E], row-major patches.
  std::vector<float> patch_embed(const float* pixels, int32_t nx, int32_t ny,
                                 ThreadPool& pool) const;
  // The file's pre-norm (v.pre_ln) in place; nothing when it has none.
  void pre_norm(float* x, int64_t n_tokens, ThreadPool& pool) const;
  // Every block over x [n_tokens][E] in place. grid_x: patches per row (the 2-D RoPE's
  // positions are token / grid_x, token % grid_x).
  void run(float* x, int64_t n_tokens, int32_t grid_x, ThreadPool& pool) const;
  // Every block with the positions and windows of `plan` (row and col have n_tokens values).
  // after_layer (optional) sees x after each block il (Qwen3-VL's deepstack taps).
  void run(float* x, int64_t n_tokens, const VitRunPlan& plan, ThreadPool& pool,
           const std::function<void(int32_t il, const float* x)>& after_layer = {}) const;
  // The post-norm (v.post_ln) in place; nothing when the file has none.
  void post_norm(float* x, int64_t n_tokens, ThreadPool& pool) const;
  // This stack's norm (LayerNorm or RMSNorm) of n_tokens rows of width n; b may be empty.
  void norm_rows(const float* x, const std::vector<float>& w, const std::vector<float>& b, float* y,
                 int64_t n_tokens, int64_t n, float eps, ThreadPool& pool) const;

 private:
  // windows: [begin, end) ranges covering 0..n, attention stays inside each.
  using Windows = std::vector<std::pair<int64_t, int64_t>>;
  void run_layer(const VitBlockLayer& l, float* x, int64_t n, const VitRunPlan& plan,
                 const Windows& windows, ThreadPool& pool) const;
  void attention(const VitBlockLayer& l, const float* xn, int64_t n, const VitRunPlan& plan,
                 const Windows& windows, float* out, ThreadPool& pool) const;
  void ffn(const VitBlockLayer& l, const float* xn, int64_t n, float* out, ThreadPool& pool) const;
  void rope(float* q, int64_t n, const VitRunPlan& plan) const;
  void rope_halves(float* q, int64_t n, const VitRunPlan& plan) const;

  VisionHparams hp_;
  VitBlocksOptions options_;
  engine::WeightMatrix patch_embd_;  // [3*P*P, E], inputs ordered (channel, y, x)
  std::vector<float> patch_bias_;    // [E] (optional)
  std::vector<float> pre_ln_w_, pre_ln_b_, post_ln_w_, post_ln_b_;
  std::vector<VitBlockLayer> layers_;
};

// Activates n values in place as the reference's CPU does for `act` (GELU and quick GELU
// through its f16 tables, SiLU, exact GELU).
void activate_values(FfnActivation act, float* x, int64_t n, ThreadPool& pool);

}  // namespace hearth::media

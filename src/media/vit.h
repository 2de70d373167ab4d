// The vision transformer the projector families share (llama.cpp's clip_graph::build_vit
// and the LLaVA graph's loop): patch embedding, learned positions, an optional class
// embedding and pre-LN, pre-norm blocks (LayerNorm, non-causal multi-head attention with
// biases, an up/down FFN), and an optional post-LN. Activations are f32 rows [token][E].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/weights.h"
#include "media/clip_file.h"

namespace hearth::media {

struct VitLayer {
  std::vector<float> ln1_w, ln1_b, ln2_w, ln2_b;  // [E] each
  engine::WeightMatrix wq, wk, wv, wo;            // [E, E]
  std::vector<float> bq, bk, bv, bo;              // [E] (optional)
  engine::WeightMatrix ffn_up, ffn_down;          // [E, F] [F, E]
  std::vector<float> ffn_up_b, ffn_down_b;        // [F] [E] (optional)
};

class Vit {
 public:
  // Reads the v.* tensors, checking each shape against `hp` (the position table covers the
  // patches of one image_size x image_size image, plus the class token when there is one).
  static Result<Vit> load(engine::TensorLoader& loader, const VisionHparams& hp);
  // Only the blocks `<prefix>.blk.N.*` and the optional `<prefix>.post_ln`, for encoders that
  // make their own first-block input (the Whisper encoder: prefix "a"). Of `hp` the blocks
  // read n_embd, n_ff, n_layer, n_head, eps and ffn_act. embed() must not be called on it.
  static Result<Vit> load_blocks(engine::TensorLoader& loader, const VisionHparams& hp,
                                 std::string_view prefix);

  const VisionHparams& hparams() const { return hp_; }
  bool has_class_embedding() const { return !class_embd_.empty(); }
  // Rows of the position table: the patches of one native-size image, plus the class token.
  int32_t n_positions() const { return n_pos_; }
  int32_t n_layers() const { return static_cast<int32_t>(layers_.size()); }

  // The input of the first block: each patch of `pixels` (nx * ny * 3 interleaved RGB,
  // normalized; nx and ny the native image side) projected by the patch kernel, plus its
  // bias and position, then the class embedding as the last row (where the reference's
  // concat puts it) and the pre-LN. Returns [n_positions()][E].
  std::vector<float> embed(const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool) const;
  // Block `il` applied in place to x [n_tokens][E].
  void run_layer(int32_t il, float* x, int64_t n_tokens, ThreadPool& pool) const;
  // The post-LN in place (nothing when the file has none).
  void post_norm(float* x, int64_t n_tokens, ThreadPool& pool) const;

 private:
  // xn: [n][E], in: the normed rows; out: the block's output (before the residual add).
  void attention(const VitLayer& l, float* xn, int64_t n, ThreadPool& pool) const;
  void ffn(const VitLayer& l, float* xn, int64_t n, ThreadPool& pool) const;
  // K and V of the rows xn, block by block, into per-head tiles ([H][n_tiles][D * kT]).
  void project_kv_tiles(const VitLayer& l, const float* xn, int64_t n, float* k_tiles,
                        float* v_tiles, ThreadPool& pool) const;

  VisionHparams hp_;
  engine::WeightMatrix patch_embd_;   // [3*P*P, E]: one row of (channel, y, x) per output
  std::vector<float> patch_bias_;     // [E] (optional)
  std::vector<float> class_embd_;     // [E] (optional)
  std::vector<float> position_embd_;  // [n_pos][E]
  int32_t n_pos_ = 0;
  std::vector<float> pre_ln_w_, pre_ln_b_, post_ln_w_, post_ln_b_;
  std::vector<VitLayer> layers_;
};

// Norms a row at a time over n_tokens rows of width n, in parallel (the reference's
// ggml_norm then * w + b; w and b may be empty).
void layer_norm_rows(const float* x, const std::vector<float>& w, const std::vector<float>& b,
                     float* y, int64_t n_tokens, int64_t n, float eps, ThreadPool& pool);
// x[t][i] += b[i] for every token (b empty: nothing).
void add_bias_rows(float* x, const std::vector<float>& b, int64_t n_tokens);
// The patch kernel `name` [P, P, 3, E] as E rows of 3*P*P inputs in the reference's im2col
// order (channel, y, x); F32, F16 or BF16, shape checked. Qwen-VL files hold a second one
// for the temporal patch's other frame, "v.patch_embd.weight.1".
Result<engine::WeightMatrix> load_patch_kernel(engine::TensorLoader& loader,
                                               const VisionHparams& hp,
                                               const std::string& name = "v.patch_embd.weight");
// out[p] = kernel * (patch p of `pixels`, gathered as the kernel reads it) + bias, for the
// (nx / P) * (ny / P) patches in row order: [n_patches][kernel.n_rows].
void embed_patches(const engine::WeightMatrix& kernel, const std::vector<float>& bias,
                   const float* pixels, int32_t nx, int32_t ny, int32_t patch_size,
                   ThreadPool& pool, float* out);
// The exact GELU (erf form) in f32 over n values in place, as the reference's CPU computes
// ggml_gelu_erf on f32 (no table).
void gelu_erf(float* x, int64_t n);
// The reference's CPU GELU (tanh form through an f16 table) over n values in place.
void gelu_inplace(float* x, int64_t n, ThreadPool& pool);
// The reference's CPU quick GELU (x * sigmoid(1.702 x) through an f16 table) in place.
void gelu_quick_inplace(float* x, int64_t n);

// Non-causal soft-max attention over keys and values already in per-head tiles of
// kernels::kAttentionTileKeys (kT) positions ([H][n_tiles] tiles: keys transposed [D][kT],
// values [kT][D]), through the engine's online soft-max tiles. Each block of at most
// kVitQueryBlock queries q[first, first + count) ([n][H*D] rows) attends, per head, over the
// tiles [tile_begin, tile_end), tile j holding tile_valid[j] keys; their output goes to the same
// rows of merged, which may be q itself (a block reads its queries before writing them).
inline constexpr int64_t kVitQueryBlock = 32;
struct VitQueryBlock {
  int64_t first = 0, count = 0;
  int64_t tile_begin = 0, tile_end = 0;
};
void attend_query_blocks(const float* q, const float* k_tiles, const float* v_tiles,
                         const std::vector<int32_t>& tile_valid, int64_t H, int64_t D,
                         const std::vector<VitQueryBlock>& blocks, float* merged, ThreadPool& pool);

}  // namespace hearth::media

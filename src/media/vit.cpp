#include "media/vit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "base/half.h"
#include "engine/ops.h"
#include "kernels/attention_ops.h"
#include "kernels/quant.h"

namespace hearth::media {
namespace {

using engine::WeightMatrix;

// quick GELU of every f16 value, rounded to f16 (the reference CPU's lookup table: its
// input is rounded to f16 too).
const std::vector<float>& gelu_quick_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t i = 0; i < 65536; ++i) {
      const float x = f16_to_f32(static_cast<f16_bits>(i));
      t[i] = f16_to_f32(f32_to_f16(x * (1.0f / (1.0f + std::exp(-1.702f * x)))));
    }
    return t;
  }();
  return table;
}

void activate(FfnActivation act, float* x, int64_t n) {
  switch (act) {
    case FfnActivation::kGelu:
      engine::ops::gelu(x, x, n);
      break;
    case FfnActivation::kGeluQuick:
      gelu_quick_inplace(x, n);
      break;
    case FfnActivation::kSilu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
      break;
    case FfnActivation::kGeluErf:
      gelu_erf(x, n);
      break;
  }
}

// An FFN pair as the reference reads it: files of the vision families from old converters
// swap the names of up and down (and their biases), which shows as an ffn_down whose rows are
// E wide (the reference never swaps an audio encoder's).
Status load_ffn(engine::TensorLoader& loader, const std::string& b, const VisionHparams& hp,
                bool legacy_swap, VitLayer& l) {
  const int64_t E = hp.n_embd, F = hp.n_ff;
  std::string up = b + "ffn_up", down = b + "ffn_down";
  if (const gguf::TensorInfo* d = loader.find_info(down + ".weight");
      legacy_swap && d && d->ne[0] == E)
    std::swap(up, down);
  HEARTH_ASSIGN_OR_RETURN(l.ffn_up, loader.matrix(up + ".weight", E, F));
  HEARTH_ASSIGN_OR_RETURN(l.ffn_up_b, loader.vector(up + ".bias", F, true));
  HEARTH_ASSIGN_OR_RETURN(l.ffn_down, loader.matrix(down + ".weight", F, E));
  HEARTH_ASSIGN_OR_RETURN(l.ffn_down_b, loader.vector(down + ".bias", E, true));
  return Status::ok();
}

Result<VitLayer> load_layer(engine::TensorLoader& loader, const VisionHparams& hp, int32_t il,
                            std::string_view prefix) {
  const std::string b = fmt::format("{}.blk.{}.", prefix, il);
  const int64_t E = hp.n_embd;
  VitLayer l;
  HEARTH_ASSIGN_OR_RETURN(l.ln1_w, loader.vector(b + "ln1.weight", E));
  HEARTH_ASSIGN_OR_RETURN(l.ln1_b, loader.vector(b + "ln1.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(l.ln2_w, loader.vector(b + "ln2.weight", E));
  HEARTH_ASSIGN_OR_RETURN(l.ln2_b, loader.vector(b + "ln2.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(l.wq, loader.matrix(b + "attn_q.weight", E, E));
  HEARTH_ASSIGN_OR_RETURN(l.wk, loader.matrix(b + "attn_k.weight", E, E));
  HEARTH_ASSIGN_OR_RETURN(l.wv, loader.matrix(b + "attn_v.weight", E, E));
  HEARTH_ASSIGN_OR_RETURN(l.wo, loader.matrix(b + "attn_out.weight", E, E));
  HEARTH_ASSIGN_OR_RETURN(l.bq, loader.vector(b + "attn_q.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(l.bk, loader.vector(b + "attn_k.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(l.bv, loader.vector(b + "attn_v.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(l.bo, loader.vector(b + "attn_out.bias", E, true));
  HEARTH_RETURN_IF_ERROR(load_ffn(loader, b, hp, prefix == "v", l));
  return l;
}

}  // namespace

// The patch kernel [P, P, 3, E] as a matrix of E rows of 3*P*P inputs ordered (channel, y,
// x): the reference's im2col order, so a patch's gathered pixels dot each row directly.
Result<WeightMatrix> load_patch_kernel(engine::TensorLoader& loader, const VisionHparams& hp,
                                       const std::string& name) {
  const gguf::TensorInfo* t = loader.find_info(name);
  const int64_t P = hp.patch_size, E = hp.n_embd;
  if (t == nullptr)
    return error(ErrorCode::kCorruptFile, fmt::format("projector tensor '{}' is missing", name));
  if (t->ne[0] != P || t->ne[1] != P || t->ne[2] != 3 || t->ne[3] != E)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("projector tensor '{}' has shape {}, expected [{}, {}, 3, {}]", name,
                             t->shape_string(), P, P, E));
  if (t->type != TensorType::kF32 && t->type != TensorType::kF16 && t->type != TensorType::kBF16)
    return error(ErrorCode::kUnsupported,
                 fmt::format("projector tensor '{}' has type {} (F32, F16 or BF16 expected)", name,
                             tensor_type_name(t->type)));
  // Not a TensorLoader matrix (it is 4-D), so nothing repacks it: the row layout as stored.
  return WeightMatrix{.type = t->type,
                      .n_cols = 3 * P * P,
                      .n_rows = E,
                      .row_stride = row_bytes(traits_of(t->type), uint64_t(3 * P * P)),
                      .data = t->data,
                      .layout = kernels::WeightLayout::kRows};
}

void embed_patches(const WeightMatrix& kernel, const std::vector<float>& bias, const float* pixels,
                   int32_t nx, int32_t ny, int32_t patch_size, ThreadPool& pool, float* out) {
  const int64_t P = patch_size, K = 3 * P * P;
  const int64_t px_n = nx / P, n_patches = px_n * (ny / P);
  // Each patch's pixels in the kernel's (channel, y, x) order: [n_patches][3*P*P].
  std::vector<float> gathered(size_t(n_patches * K));
  pool.parallel_for(n_patches, [&](int64_t begin, int64_t end, int) {
    for (int64_t p = begin; p < end; ++p) {
      const int64_t x0 = (p % px_n) * P, y0 = (p / px_n) * P;
      float* dst = gathered.data() + p * K;
      for (int64_t c = 0; c < 3; ++c)
        for (int64_t y = 0; y < P; ++y)
          for (int64_t x = 0; x < P; ++x)
            dst[(c * P + y) * P + x] = pixels[((y0 + y) * nx + (x0 + x)) * 3 + c];
    }
  });
  kernels::matmul(kernel, gathered.data(), n_patches, out, pool);
  add_bias_rows(out, bias, n_patches);
}

void layer_norm_rows(const float* x, const std::vector<float>& w, const std::vector<float>& b,
                     float* y, int64_t n_tokens, int64_t n, float eps, ThreadPool& pool) {
  // ops::layer_norm always scales: ones stand in for a missing weight.
  const std::vector<float> ones =
      w.empty() ? std::vector<float>(size_t(n), 1.0f) : std::vector<float>();
  const float* scale = w.empty() ? ones.data() : w.data();
  const float* bias = b.empty() ? nullptr : b.data();
  pool.parallel_for(n_tokens, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t)
      engine::ops::layer_norm(x + t * n, scale, bias, y + t * n, n, eps);
  });
}

void add_bias_rows(float* x, const std::vector<float>& b, int64_t n_tokens) {
  if (b.empty()) return;
  const auto n = static_cast<int64_t>(b.size());
  for (int64_t t = 0; t < n_tokens; ++t) engine::ops::add_inplace(x + t * n, b.data(), n);
}

void gelu_erf(float* x, int64_t n) {
  constexpr float kInvSqrt2 = 0.70710678118654752f;
  for (int64_t i = 0; i < n; ++i) x[i] = 0.5f * x[i] * (1.0f + std::erf(x[i] * kInvSqrt2));
}

void gelu_quick_inplace(float* x, int64_t n) {
  const std::vector<float>& table = gelu_quick_table();
  for (int64_t i = 0; i < n; ++i) x[i] = table[f32_to_f16(x[i])];
}

void gelu_inplace(float* x, int64_t n, ThreadPool& pool) {
  constexpr int64_t kChunk = 4096;
  pool.parallel_for((n + kChunk - 1) / kChunk, [&](int64_t begin, int64_t end, int) {
    const int64_t lo = begin * kChunk, hi = std::min(n, end * kChunk);
    engine::ops::gelu(x + lo, x + lo, hi - lo);
  });
}

Result<Vit> Vit::load(engine::TensorLoader& loader, const VisionHparams& hp) {
  Vit v;
  v.hp_ = hp;
  const int64_t E = hp.n_embd;
  HEARTH_ASSIGN_OR_RETURN(v.patch_embd_, load_patch_kernel(loader, hp));
  HEARTH_ASSIGN_OR_RETURN(v.patch_bias_, loader.vector("v.patch_embd.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(v.class_embd_, loader.vector("v.class_embd", E, true));
  const int64_t side = hp.patches_per_side();
  v.n_pos_ = static_cast<int32_t>(side * side + (v.class_embd_.empty() ? 0 : 1));
  HEARTH_ASSIGN_OR_RETURN(auto positions, loader.vectors("v.position_embd.weight", E, v.n_pos_));
  v.position_embd_.reserve(size_t(E) * size_t(v.n_pos_));
  for (const auto& row : positions)
    v.position_embd_.insert(v.position_embd_.end(), row.begin(), row.end());
  HEARTH_ASSIGN_OR_RETURN(v.pre_ln_w_, loader.vector("v.pre_ln.weight", E, true));
  HEARTH_ASSIGN_OR_RETURN(v.pre_ln_b_, loader.vector("v.pre_ln.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(v.post_ln_w_, loader.vector("v.post_ln.weight", E, true));
  HEARTH_ASSIGN_OR_RETURN(v.post_ln_b_, loader.vector("v.post_ln.bias", E, true));
  for (int32_t il = 0; il < hp.n_layer; ++il) {
    HEARTH_ASSIGN_OR_RETURN(VitLayer layer, load_layer(loader, hp, il, "v"));
    v.layers_.push_back(std::move(layer));
  }
  return v;
}

Result<Vit> Vit::load_blocks(engine::TensorLoader& loader, const VisionHparams& hp,
                             std::string_view prefix) {
  Vit v;
  v.hp_ = hp;
  for (int32_t il = 0; il < hp.n_layer; ++il) {
    HEARTH_ASSIGN_OR_RETURN(VitLayer layer, load_layer(loader, hp, il, prefix));
    v.layers_.push_back(std::move(layer));
  }
  const int64_t E = hp.n_embd;
  const std::string post = fmt::format("{}.post_ln.", prefix);
  HEARTH_ASSIGN_OR_RETURN(v.post_ln_w_, loader.vector(post + "weight", E, true));
  HEARTH_ASSIGN_OR_RETURN(v.post_ln_b_, loader.vector(post + "bias", E, true));
  return v;
}

std::vector<float> Vit::embed(const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool) const {
  const int64_t P = hp_.patch_size, E = hp_.n_embd;
  const int64_t n_patches = (nx / P) * (ny / P);
  std::vector<float> h(size_t(n_pos_ * E), 0.0f);
  embed_patches(patch_embd_, patch_bias_, pixels, nx, ny, hp_.patch_size, pool, h.data());
  if (has_class_embedding())
    std::copy(class_embd_.begin(), class_embd_.end(), h.begin() + n_patches * E);
  engine::ops::add_inplace(h.data(), position_embd_.data(), n_pos_ * E);
  if (!pre_ln_w_.empty())
    layer_norm_rows(h.data(), pre_ln_w_, pre_ln_b_, h.data(), n_pos_, E, hp_.eps, pool);
  return h;
}

void attend_query_blocks(const float* q, const float* k_tiles, const float* v_tiles,
                         const std::vector<int32_t>& tile_valid, int64_t H, int64_t D,
                         const std::vector<VitQueryBlock>& blocks, float* merged,
                         ThreadPool& pool) {
  const int64_t E = H * D, tile_floats = D * kernels::kAttentionTileKeys;
  const auto n_tiles = static_cast<int64_t>(tile_valid.size());
  const auto n_blocks = static_cast<int64_t>(blocks.size());
  const float scale = 1.0f / std::sqrt(static_cast<float>(D));
  pool.parallel_for(H * n_blocks, [&](int64_t begin, int64_t end, int) {
    std::vector<float> qb(size_t(kVitQueryBlock * D)), m(kVitQueryBlock), sum(kVitQueryBlock),
        acc(size_t(kVitQueryBlock * D));
    std::vector<int> n_valid(kVitQueryBlock);
    for (int64_t it = begin; it < end; ++it) {
      const VitQueryBlock& block = blocks[size_t(it % n_blocks)];
      const int64_t h = it / n_blocks, t0 = block.first, nq = block.count;
      for (int64_t i = 0; i < nq; ++i) std::copy_n(q + (t0 + i) * E + h * D, D, qb.data() + i * D);
      std::fill(m.begin(), m.end(), -INFINITY);
      std::fill(sum.begin(), sum.end(), 0.0f);
      std::fill(acc.begin(), acc.end(), 0.0f);
      kernels::AttentionTile tile;
      tile.q = qb.data();
      tile.n_q = static_cast<int>(nq);
      tile.n_valid = n_valid.data();
      tile.d_k = static_cast<int>(D);
      tile.d_v = static_cast<int>(D);
      tile.scale = scale;
      tile.m = m.data();
      tile.sum = sum.data();
      tile.acc = acc.data();
      for (int64_t jt = block.tile_begin; jt < block.tile_end; ++jt) {
        std::fill(n_valid.begin(), n_valid.end(), tile_valid[size_t(jt)]);
        tile.k_t = k_tiles + (h * n_tiles + jt) * tile_floats;
        tile.v = v_tiles + (h * n_tiles + jt) * tile_floats;
        kernels::attend_tile(tile);
      }
      for (int64_t i = 0; i < nq; ++i) {
        const float inv = 1.0f / sum[size_t(i)];
        float* dst = merged + (t0 + i) * E + h * D;
        for (int64_t d = 0; d < D; ++d) dst[d] = acc[size_t(i * D + d)] * inv;
      }
    }
  });
}

namespace {

// Rows the K/V projections and the FFN run at a time: their scratch is a block of rows, not
// the whole image (a 4096-patch image's FFN activations are 4096 x 4304 floats, 70 MB).
// matmul() gives each row the same bits whatever the number of rows.
constexpr int64_t kRowBlock = 512;

// rows[t] = w * rows[t] + b for the n rows of a square projection, a block of rows at a time
// (the product goes to a block buffer, then back over the rows it was computed from).
void project_in_place(const WeightMatrix& w, const std::vector<float>& b, float* rows, int64_t n,
                      ThreadPool& pool) {
  const int64_t E = w.n_cols;
  std::vector<float> block(size_t(std::min(kRowBlock, n) * E));
  for (int64_t r0 = 0; r0 < n; r0 += kRowBlock) {
    const int64_t nb = std::min(kRowBlock, n - r0);
    kernels::matmul(w, rows + r0 * E, nb, block.data(), pool);
    add_bias_rows(block.data(), b, nb);
    std::copy_n(block.data(), nb * E, rows + r0 * E);
  }
}

}  // namespace

void Vit::project_kv_tiles(const VitLayer& l, const float* xn, int64_t n, float* k_tiles,
                           float* v_tiles, ThreadPool& pool) const {
  constexpr int64_t kT = kernels::kAttentionTileKeys;
  const int64_t E = hp_.n_embd, H = hp_.n_head, D = E / H;
  const int64_t n_tiles = (n + kT - 1) / kT, tile_floats = D * kT;
  std::vector<float> k(size_t(kRowBlock * E)), v(size_t(kRowBlock * E));
  for (int64_t r0 = 0; r0 < n; r0 += kRowBlock) {
    const int64_t nb = std::min(kRowBlock, n - r0);
    kernels::matmul(l.wk, xn + r0 * E, nb, k.data(), pool);
    kernels::matmul(l.wv, xn + r0 * E, nb, v.data(), pool);
    add_bias_rows(k.data(), l.bk, nb);
    add_bias_rows(v.data(), l.bv, nb);
    // Block rows r0.. fill whole tiles (kRowBlock is a multiple of kT): per head and tile,
    // keys transposed to [D][kT], values as [kT][D].
    const int64_t tile0 = r0 / kT, nt = (nb + kT - 1) / kT;
    pool.parallel_for(H * nt, [&](int64_t begin, int64_t end, int) {
      for (int64_t it = begin; it < end; ++it) {
        const int64_t h = it / nt, jt = it % nt;
        float* kt = k_tiles + (h * n_tiles + tile0 + jt) * tile_floats;
        float* vt = v_tiles + (h * n_tiles + tile0 + jt) * tile_floats;
        for (int64_t j = 0; j < std::min(kT, nb - jt * kT); ++j) {
          const int64_t row = (jt * kT + j) * E + h * D;
          for (int64_t d = 0; d < D; ++d) kt[d * kT + j] = k[size_t(row + d)];
          std::copy_n(v.data() + row, D, vt + j * D);
        }
      }
    });
  }
}

void Vit::attention(const VitLayer& l, float* xn, int64_t n, ThreadPool& pool) const {
  static_assert(kRowBlock % kernels::kAttentionTileKeys == 0);
  constexpr int64_t kT = kernels::kAttentionTileKeys;
  const int64_t H = hp_.n_head, D = hp_.n_embd / H;
  // Each head's keys and values in tiles of kT positions, zero past the last position:
  // [H][n_tiles] tiles each. Then the queries replace the normed rows (q: [n][E]).
  const int64_t n_tiles = (n + kT - 1) / kT, tile_floats = D * kT;
  std::vector<float> k_tiles(size_t(H * n_tiles * tile_floats), 0.0f),
      v_tiles(size_t(H * n_tiles * tile_floats), 0.0f);
  project_kv_tiles(l, xn, n, k_tiles.data(), v_tiles.data(), pool);
  project_in_place(l.wq, l.bq, xn, n, pool);
  float* q = xn;
  // Every query attends to every position (non-causal); q becomes the merged heads in place.
  std::vector<int32_t> tile_valid(static_cast<size_t>(n_tiles));
  for (int64_t jt = 0; jt < n_tiles; ++jt)
    tile_valid[size_t(jt)] = static_cast<int32_t>(std::min(kT, n - jt * kT));
  std::vector<VitQueryBlock> blocks;
  for (int64_t t0 = 0; t0 < n; t0 += kVitQueryBlock)
    blocks.push_back({.first = t0,
                      .count = std::min(kVitQueryBlock, n - t0),
                      .tile_begin = 0,
                      .tile_end = n_tiles});
  attend_query_blocks(q, k_tiles.data(), v_tiles.data(), tile_valid, H, D, blocks, q, pool);
  k_tiles = {};
  v_tiles = {};
  project_in_place(l.wo, l.bo, xn, n, pool);
}

void Vit::ffn(const VitLayer& l, float* xn, int64_t n, ThreadPool& pool) const {
  const int64_t F = l.ffn_up.n_rows, E = hp_.n_embd;
  std::vector<float> up(size_t(std::min(kRowBlock, n) * F));
  // Block by block: the up projection reads the block's rows of xn before the down
  // projection overwrites them.
  for (int64_t r0 = 0; r0 < n; r0 += kRowBlock) {
    const int64_t nb = std::min(kRowBlock, n - r0);
    kernels::matmul(l.ffn_up, xn + r0 * E, nb, up.data(), pool);
    add_bias_rows(up.data(), l.ffn_up_b, nb);
    constexpr int64_t kChunk = 4096;
    const int64_t total = nb * F;
    pool.parallel_for((total + kChunk - 1) / kChunk, [&](int64_t begin, int64_t end, int) {
      const int64_t lo = begin * kChunk, hi = std::min(total, end * kChunk);
      activate(hp_.ffn_act, up.data() + lo, hi - lo);
    });
    kernels::matmul(l.ffn_down, up.data(), nb, xn + r0 * E, pool);
    add_bias_rows(xn + r0 * E, l.ffn_down_b, nb);
  }
}

void Vit::run_layer(int32_t il, float* x, int64_t n, ThreadPool& pool) const {
  const VitLayer& l = layers_[size_t(il)];
  const int64_t E = hp_.n_embd;
  // x: [n][E], the residual stream; xn: the normed rows, then each block's output.
  std::vector<float> xn(size_t(n * E));
  layer_norm_rows(x, l.ln1_w, l.ln1_b, xn.data(), n, E, hp_.eps, pool);
  attention(l, xn.data(), n, pool);
  engine::ops::add_inplace(x, xn.data(), n * E);
  layer_norm_rows(x, l.ln2_w, l.ln2_b, xn.data(), n, E, hp_.eps, pool);
  ffn(l, xn.data(), n, pool);
  engine::ops::add_inplace(x, xn.data(), n * E);
}

void Vit::post_norm(float* x, int64_t n, ThreadPool& pool) const {
  if (post_ln_w_.empty()) return;
  layer_norm_rows(x, post_ln_w_, post_ln_b_, x, n, hp_.n_embd, hp_.eps, pool);
}

}  // namespace hearth::media

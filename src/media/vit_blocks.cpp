#include "media/vit_blocks.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/ops.h"
#include "kernels/attention_ops.h"
#include "kernels/quant.h"
#include "media/vit.h"

namespace hearth::media {
namespace {

using engine::WeightMatrix;

// q_norm / k_norm: [E] (over the whole projection) or [D] (per head), or absent.
Result<std::vector<float>> qk_norm(engine::TensorLoader& loader, const std::string& name, int64_t E,
                                   int64_t D) {
  const gguf::TensorInfo* t = loader.find_info(name);
  if (t == nullptr) return std::vector<float>{};
  return loader.vector(name, t->ne[0] == D ? D : E);
}

Result<VitBlockLayer> load_layer(engine::TensorLoader& loader, const VisionHparams& hp,
                                 int32_t il) {
  const std::string b = fmt::format("v.blk.{}.", il);
  const int64_t E = hp.n_embd, F = hp.n_ff, D = hp.n_embd / hp.n_head;
  VitBlockLayer l;
  HEARTH_ASSIGN_OR_RETURN(l.ln1_w, loader.vector(b + "ln1.weight", E));
  HEARTH_ASSIGN_OR_RETURN(l.ln1_b, loader.vector(b + "ln1.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(l.ln2_w, loader.vector(b + "ln2.weight", E));
  HEARTH_ASSIGN_OR_RETURN(l.ln2_b, loader.vector(b + "ln2.bias", E, true));
  if (loader.has(b + "attn_qkv.weight")) {
    HEARTH_ASSIGN_OR_RETURN(l.wqkv, loader.matrix(b + "attn_qkv.weight", E, 3 * E));
    HEARTH_ASSIGN_OR_RETURN(l.bqkv, loader.vector(b + "attn_qkv.bias", 3 * E, true));
  } else {
    HEARTH_ASSIGN_OR_RETURN(l.wq, loader.matrix(b + "attn_q.weight", E, E));
    HEARTH_ASSIGN_OR_RETURN(l.wk, loader.matrix(b + "attn_k.weight", E, E));
    HEARTH_ASSIGN_OR_RETURN(l.wv, loader.matrix(b + "attn_v.weight", E, E));
    HEARTH_ASSIGN_OR_RETURN(l.bq, loader.vector(b + "attn_q.bias", E, true));
    HEARTH_ASSIGN_OR_RETURN(l.bk, loader.vector(b + "attn_k.bias", E, true));
    HEARTH_ASSIGN_OR_RETURN(l.bv, loader.vector(b + "attn_v.bias", E, true));
  }
  HEARTH_ASSIGN_OR_RETURN(l.wo, loader.matrix(b + "attn_out.weight", E, E));
  HEARTH_ASSIGN_OR_RETURN(l.bo, loader.vector(b + "attn_out.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(l.q_norm, qk_norm(loader, b + "attn_q_norm.weight", E, D));
  HEARTH_ASSIGN_OR_RETURN(l.k_norm, qk_norm(loader, b + "attn_k_norm.weight", E, D));
  HEARTH_ASSIGN_OR_RETURN(l.ls1, loader.vector(b + "ls1.weight", E, true));
  HEARTH_ASSIGN_OR_RETURN(l.ls2, loader.vector(b + "ls2.weight", E, true));
  HEARTH_ASSIGN_OR_RETURN(l.ffn_up, loader.matrix(b + "ffn_up.weight", E, F));
  HEARTH_ASSIGN_OR_RETURN(l.ffn_up_b, loader.vector(b + "ffn_up.bias", F, true));
  HEARTH_ASSIGN_OR_RETURN(l.ffn_gate, loader.matrix(b + "ffn_gate.weight", E, F, true));
  HEARTH_ASSIGN_OR_RETURN(l.ffn_gate_b, loader.vector(b + "ffn_gate.bias", F, true));
  HEARTH_ASSIGN_OR_RETURN(l.ffn_down, loader.matrix(b + "ffn_down.weight", F, E));
  HEARTH_ASSIGN_OR_RETURN(l.ffn_down_b, loader.vector(b + "ffn_down.bias", E, true));
  return l;
}

void multiply_rows(float* x, const std::vector<float>& w, int64_t n_tokens) {
  if (w.empty()) return;
  const auto n = static_cast<int64_t>(w.size());
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t i = 0; i < n; ++i) x[t * n + i] *= w[size_t(i)];
}

// q, k, v [n][E] each: three products, or one fused [n][3E] product split by columns.
void project_qkv(const VitBlockLayer& l, const float* xn, int64_t n, float* q, float* k, float* v,
                 ThreadPool& pool) {
  if (!engine::present(l.wqkv)) {
    kernels::matmul(l.wq, xn, n, q, pool);
    kernels::matmul(l.wk, xn, n, k, pool);
    kernels::matmul(l.wv, xn, n, v, pool);
    add_bias_rows(q, l.bq, n);
    add_bias_rows(k, l.bk, n);
    add_bias_rows(v, l.bv, n);
    return;
  }
  const int64_t E = l.wqkv.n_rows / 3;
  std::vector<float> qkv(size_t(n * 3 * E));
  kernels::matmul(l.wqkv, xn, n, qkv.data(), pool);
  add_bias_rows(qkv.data(), l.bqkv, n);
  for (int64_t t = 0; t < n; ++t) {
    const float* row = qkv.data() + t * 3 * E;
    std::copy_n(row, E, q + t * E);
    std::copy_n(row + E, E, k + t * E);
    std::copy_n(row + 2 * E, E, v + t * E);
  }
}

// Soft-max attention of q over k, v ([n][H*D] each, n = the windows' end) with each query seeing
// only the keys of its window, through the engine's online soft-max tiles; merged [n][H*D].
void attend_windows(const float* q, const float* k, const float* v, int64_t H, int64_t D,
                    const std::vector<std::pair<int64_t, int64_t>>& windows, float* merged,
                    ThreadPool& pool) {
  constexpr int64_t kT = kernels::kAttentionTileKeys;
  const int64_t E = H * D;
  // Each window's keys in tiles of kT positions (a tile never crosses a window), per head:
  // keys transposed ([D][kT]), values [kT][D]. tiles[i] = {window, first token}.
  struct Span {
    int64_t window, first;
  };
  std::vector<Span> tiles, blocks;
  std::vector<int64_t> first_tile(windows.size());
  for (size_t w = 0; w < windows.size(); ++w) {
    first_tile[w] = static_cast<int64_t>(tiles.size());
    for (int64_t j = windows[w].first; j < windows[w].second; j += kT)
      tiles.push_back({int64_t(w), j});
    for (int64_t t = windows[w].first; t < windows[w].second; t += kVitQueryBlock)
      blocks.push_back({int64_t(w), t});
  }
  const auto n_tiles = static_cast<int64_t>(tiles.size());
  const int64_t tile_floats = D * kT;
  std::vector<float> k_tiles(size_t(H * n_tiles * tile_floats), 0.0f),
      v_tiles(size_t(H * n_tiles * tile_floats), 0.0f);
  pool.parallel_for(H * n_tiles, [&](int64_t begin, int64_t end, int) {
    for (int64_t it = begin; it < end; ++it) {
      const Span& tile = tiles[size_t(it % n_tiles)];
      const int64_t h = it / n_tiles, j0 = tile.first;
      const int64_t len = std::min(kT, windows[size_t(tile.window)].second - j0);
      float* kt = k_tiles.data() + it * tile_floats;
      float* vt = v_tiles.data() + it * tile_floats;
      for (int64_t j = 0; j < len; ++j) {
        const int64_t row = (j0 + j) * E + h * D;
        for (int64_t d = 0; d < D; ++d) kt[d * kT + j] = k[row + d];
        std::copy_n(v + row, D, vt + j * D);
      }
    }
  });
  // Each block of a window's queries attends over that window's tiles.
  std::vector<int32_t> tile_valid(static_cast<size_t>(n_tiles));
  for (int64_t jt = 0; jt < n_tiles; ++jt) {
    const Span& tile = tiles[size_t(jt)];
    tile_valid[size_t(jt)] =
        static_cast<int32_t>(std::min(kT, windows[size_t(tile.window)].second - tile.first));
  }
  std::vector<VitQueryBlock> query_blocks;
  for (const Span& block : blocks) {
    const auto w = static_cast<size_t>(block.window);
    const int64_t tile_end = w + 1 < windows.size() ? first_tile[w + 1] : n_tiles;
    query_blocks.push_back({.first = block.first,
                            .count = std::min(kVitQueryBlock, windows[w].second - block.first),
                            .tile_begin = first_tile[w],
                            .tile_end = tile_end});
  }
  attend_query_blocks(q, k_tiles.data(), v_tiles.data(), tile_valid, H, D, query_blocks, merged,
                      pool);
}

}  // namespace

void activate_values(FfnActivation act, float* x, int64_t n, ThreadPool& pool) {
  switch (act) {
    case FfnActivation::kGelu:
      gelu_inplace(x, n, pool);
      return;
    case FfnActivation::kSilu:
      for (int64_t i = 0; i < n; ++i) x[i] = x[i] / (1.0f + std::exp(-x[i]));
      return;
    case FfnActivation::kGeluErf:
      gelu_erf(x, n);
      return;
    case FfnActivation::kGeluQuick:
      gelu_quick_inplace(x, n);
      return;
  }
}

Result<VitBlocks> VitBlocks::load(engine::TensorLoader& loader, const VisionHparams& hp,
                                  VitBlocksOptions options) {
  if (hp.n_head <= 0 || hp.n_embd % hp.n_head != 0 || (hp.n_embd / hp.n_head) % 4 != 0)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("projector: n_embd {} does not split into {} heads of a multiple "
                             "of 4 values",
                             hp.n_embd, hp.n_head));
  VitBlocks v;
  v.hp_ = hp;
  v.options_ = options;
  const int64_t E = hp.n_embd;
  HEARTH_ASSIGN_OR_RETURN(v.patch_embd_, load_patch_kernel(loader, hp));
  HEARTH_ASSIGN_OR_RETURN(v.patch_bias_, loader.vector("v.patch_embd.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(v.pre_ln_w_, loader.vector("v.pre_ln.weight", E, true));
  HEARTH_ASSIGN_OR_RETURN(v.pre_ln_b_, loader.vector("v.pre_ln.bias", E, true));
  HEARTH_ASSIGN_OR_RETURN(v.post_ln_w_, loader.vector("v.post_ln.weight", E, true));
  HEARTH_ASSIGN_OR_RETURN(v.post_ln_b_, loader.vector("v.post_ln.bias", E, true));
  for (int32_t il = 0; il < hp.n_layer; ++il) {
    HEARTH_ASSIGN_OR_RETURN(VitBlockLayer layer, load_layer(loader, hp, il));
    v.layers_.push_back(std::move(layer));
  }
  return v;
}

std::vector<float> VitBlocks::patch_embed(const float* pixels, int32_t nx, int32_t ny,
                                          ThreadPool& pool) const {
  const int64_t P = hp_.patch_size, n_patches = (nx / P) * (ny / P);
  std::vector<float> h(size_t(n_patches * hp_.n_embd));
  embed_patches(patch_embd_, patch_bias_, pixels, nx, ny, hp_.patch_size, pool, h.data());
  return h;
}

void VitBlocks::norm_rows(const float* x, const std::vector<float>& w, const std::vector<float>& b,
                          float* y, int64_t n_tokens, int64_t n, float eps,
                          ThreadPool& pool) const {
  if (options_.norm == VitNorm::kLayer) {
    layer_norm_rows(x, w, b, y, n_tokens, n, eps, pool);
    return;
  }
  pool.parallel_for(n_tokens, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t)
      engine::ops::rms_norm(x + t * n, w.data(), y + t * n, n, eps);
  });
  add_bias_rows(y, b, n_tokens);
}

void VitBlocks::pre_norm(float* x, int64_t n, ThreadPool& pool) const {
  if (!pre_ln_w_.empty()) norm_rows(x, pre_ln_w_, pre_ln_b_, x, n, hp_.n_embd, hp_.eps, pool);
}

void VitBlocks::post_norm(float* x, int64_t n, ThreadPool& pool) const {
  if (!post_ln_w_.empty()) norm_rows(x, post_ln_w_, post_ln_b_, x, n, hp_.n_embd, hp_.eps, pool);
}

void VitBlocks::run(float* x, int64_t n, int32_t grid_x, ThreadPool& pool) const {
  VitRunPlan plan;
  plan.row.resize(size_t(n));
  plan.col.resize(size_t(n));
  for (int64_t t = 0; t < n; ++t) {
    plan.row[size_t(t)] = static_cast<int32_t>(t / grid_x);
    plan.col[size_t(t)] = static_cast<int32_t>(t % grid_x);
  }
  run(x, n, plan, pool);
}

void VitBlocks::run(float* x, int64_t n, const VitRunPlan& plan, ThreadPool& pool,
                    const std::function<void(int32_t il, const float* x)>& after_layer) const {
  const Windows whole = {{0, n}};
  for (size_t il = 0; il < layers_.size(); ++il) {
    const bool windowed = il < plan.windowed.size() && plan.windowed[il] && !plan.windows.empty();
    run_layer(layers_[il], x, n, plan, windowed ? plan.windows : whole, pool);
    if (after_layer) after_layer(static_cast<int32_t>(il), x);
  }
}

void VitBlocks::run_layer(const VitBlockLayer& l, float* x, int64_t n, const VitRunPlan& plan,
                          const Windows& windows, ThreadPool& pool) const {
  const int64_t E = hp_.n_embd;
  std::vector<float> xn(size_t(n * E)), delta(size_t(n * E));
  norm_rows(x, l.ln1_w, l.ln1_b, xn.data(), n, E, hp_.eps, pool);
  attention(l, xn.data(), n, plan, windows, delta.data(), pool);
  multiply_rows(delta.data(), l.ls1, n);
  engine::ops::add_inplace(x, delta.data(), n * E);
  norm_rows(x, l.ln2_w, l.ln2_b, xn.data(), n, E, hp_.eps, pool);
  ffn(l, xn.data(), n, delta.data(), pool);
  multiply_rows(delta.data(), l.ls2, n);
  engine::ops::add_inplace(x, delta.data(), n * E);
}

// The reference's build_rope_2d: each head's first D/2 values rotate (in adjacent pairs) by
// the patch row, the second D/2 by the column at frequencies shifted by theta^(-2/D), so the
// two halves interleave the frequencies of one D-wide rotation. Angles as ggml's rope forms
// them: p * freq_scale * theta_scale^i, the power built by repeated f32 products.
void VitBlocks::rope(float* q, int64_t n, const VitRunPlan& plan) const {
  const int64_t E = hp_.n_embd, H = hp_.n_head, D = E / H, half = D / 2;
  const float base = options_.rope_theta;
  const float theta_scale = std::pow(base, -2.0f / static_cast<float>(half));
  const float scale_odd = std::pow(base, -2.0f / static_cast<float>(D));
  std::vector<float> cos_v(static_cast<size_t>(half)), sin_v(static_cast<size_t>(half));
  for (int64_t t = 0; t < n; ++t) {
    const float pos[2] = {static_cast<float>(plan.row[size_t(t)]),
                          static_cast<float>(plan.col[size_t(t)])};
    const float freq_scale[2] = {1.0f, scale_odd};
    for (int part = 0; part < 2; ++part) {
      float theta = pos[part];
      for (int64_t i = 0; i < half / 2; ++i) {
        const float angle = freq_scale[part] * theta;
        cos_v[size_t(part * (half / 2) + i)] = std::cos(angle);
        sin_v[size_t(part * (half / 2) + i)] = std::sin(angle);
        theta *= theta_scale;
      }
    }
    for (int64_t h = 0; h < H; ++h) {
      float* head = q + t * E + h * D;
      for (int64_t i = 0; i < D / 2; ++i) {
        const float x0 = head[2 * i], x1 = head[2 * i + 1];
        const float c = cos_v[size_t(i)], s = sin_v[size_t(i)];
        head[2 * i] = x0 * c - x1 * s;
        head[2 * i + 1] = x0 * s + x1 * c;
      }
    }
  }
}

// ggml's vision rope (rope_multi, GGML_ROPE_TYPE_VISION, n_dims = D/2, sections D/4 x 4):
// pair (i, i + D/2) of each head turns by row * s^i for i < D/4 and by col * s^(i - D/4)
// after, s = theta^(-4/D), the powers built by repeated f32 products from the position.
void VitBlocks::rope_halves(float* q, int64_t n, const VitRunPlan& plan) const {
  const int64_t E = hp_.n_embd, H = hp_.n_head, D = E / H, half = D / 2, quarter = D / 4;
  const float theta_scale = std::pow(options_.rope_theta, -2.0f / static_cast<float>(half));
  std::vector<float> cos_v(static_cast<size_t>(half)), sin_v(static_cast<size_t>(half));
  for (int64_t t = 0; t < n; ++t) {
    const float pos[2] = {static_cast<float>(plan.row[size_t(t)]),
                          static_cast<float>(plan.col[size_t(t)])};
    for (int part = 0; part < 2; ++part) {
      float theta = pos[part];
      for (int64_t i = 0; i < quarter; ++i) {
        cos_v[size_t(part * quarter + i)] = std::cos(theta);
        sin_v[size_t(part * quarter + i)] = std::sin(theta);
        theta *= theta_scale;
      }
    }
    for (int64_t h = 0; h < H; ++h) {
      float* head = q + t * E + h * D;
      for (int64_t i = 0; i < half; ++i) {
        const float x0 = head[i], x1 = head[i + half];
        const float c = cos_v[size_t(i)], s = sin_v[size_t(i)];
        head[i] = x0 * c - x1 * s;
        head[i + half] = x0 * s + x1 * c;
      }
    }
  }
}

void VitBlocks::attention(const VitBlockLayer& l, const float* xn, int64_t n,
                          const VitRunPlan& plan, const Windows& windows, float* out,
                          ThreadPool& pool) const {
  const int64_t E = hp_.n_embd, H = hp_.n_head, D = E / H;
  std::vector<float> q(size_t(n * E)), k(size_t(n * E)), v(size_t(n * E));
  project_qkv(l, xn, n, q.data(), k.data(), v.data(), pool);
  // q/k norms: [E] over each token's row, [D] over each head's slice (no bias).
  for (auto [x, w] : {std::pair{q.data(), &l.q_norm}, std::pair{k.data(), &l.k_norm}}) {
    if (w->empty()) continue;
    const auto width = static_cast<int64_t>(w->size());
    norm_rows(x, *w, {}, x, n * (E / width), width, hp_.eps, pool);
  }
  if (options_.rope_2d) {
    for (float* x : {q.data(), k.data()}) {
      if (options_.rope_halves)
        rope_halves(x, n, plan);
      else
        rope(x, n, plan);
    }
  }
  std::vector<float> merged(size_t(n * E));
  attend_windows(q.data(), k.data(), v.data(), H, D, windows, merged.data(), pool);
  kernels::matmul(l.wo, merged.data(), n, out, pool);
  add_bias_rows(out, l.bo, n);
}

void VitBlocks::ffn(const VitBlockLayer& l, const float* xn, int64_t n, float* out,
                    ThreadPool& pool) const {
  const int64_t F = l.ffn_up.n_rows, total = n * F;
  std::vector<float> up(static_cast<size_t>(total));
  kernels::matmul(l.ffn_up, xn, n, up.data(), pool);
  add_bias_rows(up.data(), l.ffn_up_b, n);
  if (engine::present(l.ffn_gate)) {
    // The reference's parallel gated FFN: act(gate(x)) * up(x).
    std::vector<float> gate(static_cast<size_t>(total));
    kernels::matmul(l.ffn_gate, xn, n, gate.data(), pool);
    add_bias_rows(gate.data(), l.ffn_gate_b, n);
    if (hp_.ffn_act == FfnActivation::kSilu) {
      engine::ops::swiglu(gate.data(), up.data(), up.data(), total);
    } else {
      activate_values(hp_.ffn_act, gate.data(), total, pool);
      for (int64_t i = 0; i < total; ++i) up[size_t(i)] *= gate[size_t(i)];
    }
  } else {
    activate_values(hp_.ffn_act, up.data(), total, pool);
  }
  kernels::matmul(l.ffn_down, up.data(), n, out, pool);
  add_bias_rows(out, l.ffn_down_b, n);
}

}  // namespace hearth::media

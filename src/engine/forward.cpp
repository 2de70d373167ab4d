#include "engine/forward.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "base/half.h"
#include "engine/model.h"
#include "kernels/attention_ops.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"

namespace hearth::engine {

void norm_rows(ForwardState& st, const float* in, const std::vector<float>& w, float* out,
               int64_t width) {
  const float eps = st.model.hparams().rms_eps;
  for (int64_t t = 0; t < st.n_tokens(); ++t)
    ops::rms_norm(in + t * width, w.data(), out + t * width, width, eps);
}

void project(ForwardState& st, const WeightMatrix& w, const std::vector<float>& bias,
             const float* in, float* out) {
  kernels::matmul(w, in, st.n_tokens(), out, st.pool, st.precision);
  if (bias.empty()) return;
  for (int64_t t = 0; t < st.n_tokens(); ++t)
    ops::add_inplace(out + t * w.n_rows, bias.data(), w.n_rows);
}

void swiglu_ffn(ForwardState& st, const LayerWeights& w) {
  const int64_t n_ff = w.ffn_gate.n_rows;
  const int64_t T = st.n_tokens();
  project(st, w.ffn_gate, w.ffn_gate_b, st.s.cur.data(), st.s.gate.data());
  project(st, w.ffn_up, w.ffn_up_b, st.s.cur.data(), st.s.up.data());
  float* gate = st.s.gate.data();
  const float* up = st.s.up.data();
  st.pool.parallel_for(T, [=](int64_t begin, int64_t end, int) {
    ops::swiglu(gate + begin * n_ff, up + begin * n_ff, gate + begin * n_ff, (end - begin) * n_ff);
  });
  project(st, w.ffn_down, w.ffn_down_b, st.s.gate.data(), st.s.out.data());
}

void add_residual(ForwardState& st) {
  const int64_t E = st.model.hparams().n_embd;
  ops::add_inplace(st.s.x.data(), st.s.out.data(), st.n_tokens() * E);
}

namespace {

// Per-head RMSNorm (qwen3, gemma3): each head vector of `dim` values is normalized on its own.
void norm_heads(ForwardState& st, float* rows, int32_t n_heads, int32_t dim,
                const std::vector<float>& w) {
  const float eps = st.model.hparams().rms_eps;
  const int64_t n = st.n_tokens() * n_heads;
  for (int64_t i = 0; i < n; ++i) ops::rms_norm(rows + i * dim, w.data(), rows + i * dim, dim, eps);
}

void apply_rope(ForwardState& st, float* rows, int32_t n_heads, int32_t dim, ops::RopeKind kind) {
  const int32_t n_rot = st.model.hparams().n_rot;
  const int32_t half = n_rot / 2;
  for (int64_t t = 0; t < st.n_tokens(); ++t) {
    const float* c = st.s.rope_cos.data() + t * half;
    const float* s = st.s.rope_sin.data() + t * half;
    for (int32_t h = 0; h < n_heads; ++h)
      ops::rope_apply(kind, rows + (t * n_heads + h) * dim, c, s, n_rot);
  }
}

// Appends this block's K and V rows of every batch token to the cache, converted to the
// cache's element types.
void store_kv(ForwardState& st, int32_t il) {
  const auto& hp = st.model.hparams();
  const int64_t kw = hp.n_embd_k(), vw = hp.n_embd_v();
  for (int64_t t = 0; t < st.n_tokens(); ++t) {
    const BatchToken& bt = st.tokens[static_cast<size_t>(t)];
    kernels::quantize_row(st.type_k, st.s.k.data() + t * kw, st.kv.k_row(il, bt.seq, bt.pos), kw);
    kernels::quantize_row(st.type_v, st.s.v.data() + t * vw, st.kv.v_row(il, bt.seq, bt.pos), vw);
  }
}

// Scratch of one attention worker, reused across items. G = the query heads that share one
// KV head (n_head / n_head_kv); per-head arrays are [G][...].
struct AttendScratch {
  std::vector<uint8_t> q;       // [G][q_bytes] the queries in the K cache's activation format
  std::vector<float> row;       // one dequantized V row (f32 accumulation)
  std::vector<float> k_row;     // one dequantized K head (MatmulPrecision::kF32)
  std::vector<float> acc;       // [G][Dv] f32 accumulators
  std::vector<f16_bits> acc16;  // [G][Dv] f16 accumulators (F16 V cache)
  std::vector<float> max_score, sum, weight;  // [G] online soft-max state, this row's weights
  // A chunk of positions of the F16-V path: scores [G][n], then per position and head the
  // accumulator's rescale flag and factor and the row's weight [n][G], and the V rows.
  std::vector<float> scores, factor, row_weight;
  std::vector<uint8_t> rescale;
  std::vector<const uint8_t*> v_rows;
};

// Where one KV head's K and V rows sit in a layer's cache blocks.
struct KvHeadRows {
  const ForwardState& st;
  int32_t il;
  std::span<const int32_t> table;
  int32_t block_size;
  size_t k_stride, v_stride, k_head, v_head;

  KvHeadRows(const ForwardState& s, int32_t layer, SeqId seq, int32_t kv_head)
      : st(s), il(layer), table(s.kv.block_table(seq)), block_size(s.kv.block_size()) {
    const auto& hp = st.model.hparams();
    k_stride = static_cast<size_t>(st.kv.config().shape.k_row_bytes);
    v_stride = static_cast<size_t>(st.kv.config().shape.v_row_bytes);
    k_head = row_bytes(traits_of(st.type_k),
                       static_cast<uint64_t>(kv_head) * static_cast<uint64_t>(hp.head_dim));
    v_head = row_bytes(traits_of(st.type_v),
                       static_cast<uint64_t>(kv_head) * static_cast<uint64_t>(hp.head_dim_v));
  }
  const uint8_t* k(int32_t j) const {
    return st.kv.block_k(table[static_cast<size_t>(j / block_size)], il) +
           static_cast<size_t>(j % block_size) * k_stride + k_head;
  }
  const uint8_t* v(int32_t j) const {
    return st.kv.block_v(table[static_cast<size_t>(j / block_size)], il) +
           static_cast<size_t>(j % block_size) * v_stride + v_head;
  }
};

// The weighted sums of V rows of G heads, with the rounding of the reference's CPU flash
// attention: for an F16 V cache each accumulator itself is f16 (every rescale and every
// added row rounds to f16); otherwise it is f32 over dequantized rows.
class VAccumulators {
 public:
  // f16_accumulator: accumulate in f16 as the reference does (F16 V cache, kReference).
  VAccumulators(TensorType type_v, bool f16_accumulator, int32_t dim, int32_t heads,
                AttendScratch& s)
      : type_v_(type_v), f16_(f16_accumulator && type_v == TensorType::kF16), dim_(dim), s_(s) {
    const auto n = static_cast<size_t>(dim_) * static_cast<size_t>(heads);
    if (f16_) {
      s_.acc16.assign(n, 0);
    } else {
      s_.acc.assign(n, 0.0f);
      s_.row.resize(static_cast<size_t>(dim_));
    }
  }
  void scale(int32_t g, float m) {
    if (f16_) {
      kernels::f16_scale(acc16(g), m, dim_);
    } else {
      kernels::f32_scale(acc(g), m, dim_);
    }
  }
  // acc[g] += weight[g] * v for one cached V row and each of the first `heads` heads, by
  // single-rounding fused multiply-adds (the row is dequantized once for all of them).
  void add(const uint8_t* v, const float* weight, int32_t heads) {
    if (f16_) {
      for (int32_t g = 0; g < heads; ++g)
        kernels::f16_fma_row(acc16(g), reinterpret_cast<const f16_bits*>(v), weight[g], dim_);
      return;
    }
    kernels::dequantize_row(type_v_, v, s_.row.data(), dim_);
    for (int32_t g = 0; g < heads; ++g)
      kernels::f32_fma_row(acc(g), s_.row.data(), weight[g], dim_);
  }
  void finish(int32_t g, float inv_sum, float* out) {
    for (int32_t i = 0; i < dim_; ++i)
      out[i] = (f16_ ? f16_to_f32(acc16(g)[i]) : acc(g)[i]) * inv_sum;
  }

 private:
  f16_bits* acc16(int32_t g) {
    return s_.acc16.data() + static_cast<size_t>(g) * static_cast<size_t>(dim_);
  }
  float* acc(int32_t g) {
    return s_.acc.data() + static_cast<size_t>(g) * static_cast<size_t>(dim_);
  }

  TensorType type_v_;
  bool f16_;
  int32_t dim_;
  AttendScratch& s_;
};

// Attention of G query heads that share KV head `kv_head`, for one token over positions
// [0, pos] of its sequence, with the arithmetic of the reference's CPU flash attention
// (quantization.md §9.4), head by head exactly as if each were computed alone: q is
// converted once to the K cache's activation format (f16 for an F16 cache) and scored
// against each K row by that type's dot product; a running max M and sum S give an online
// soft-max over the positions in order; the V accumulator is scaled by 1/S at the end.
// Each K and V row is read once for the G heads instead of once per head.
// q: [G][D] the token's queries of those heads; out: [G][Dv].
void attend_group(const ForwardState& st, int32_t il, const BatchToken& bt, int32_t kv_head,
                  int32_t G, const float* q, float scale, AttendScratch& scratch, float* out) {
  const auto& hp = st.model.hparams();
  const int32_t D = hp.head_dim, Dv = hp.head_dim_v;
  const int32_t bs = st.kv.block_size();
  const size_t k_stride = static_cast<size_t>(st.kv.config().shape.k_row_bytes);
  const size_t v_stride = static_cast<size_t>(st.kv.config().shape.v_row_bytes);
  const size_t k_head =
      row_bytes(traits_of(st.type_k), static_cast<uint64_t>(kv_head) * static_cast<uint64_t>(D));
  const size_t v_head =
      row_bytes(traits_of(st.type_v), static_cast<uint64_t>(kv_head) * static_cast<uint64_t>(Dv));
  const auto table = st.kv.block_table(bt.seq);
  const bool exact = st.precision == kernels::MatmulPrecision::kF32;
  const size_t q_bytes = exact ? 0 : kernels::converted_row_bytes(st.type_k, D);
  if (exact) {
    scratch.k_row.resize(static_cast<size_t>(D));
  } else {
    scratch.q.resize(q_bytes * static_cast<size_t>(G));
    for (int32_t g = 0; g < G; ++g)
      kernels::convert_for_dot(st.type_k, q + g * D, scratch.q.data() + g * q_bytes, D);
  }
  // q_g . k, in the reference's arithmetic or (exact) in f64 over the dequantized K head,
  // which is dequantized once per row (`fresh`) for all heads.
  const auto score = [&](const uint8_t* k, int32_t g, bool fresh) {
    if (!exact) return kernels::dot_converted(st.type_k, k, scratch.q.data() + g * q_bytes, D);
    if (fresh) kernels::dequantize_row(st.type_k, k, scratch.k_row.data(), D);
    double dot = 0.0;
    for (int32_t i = 0; i < D; ++i)
      dot += static_cast<double>(q[g * D + i]) * scratch.k_row[static_cast<size_t>(i)];
    return static_cast<float>(dot);
  };
  VAccumulators acc(st.type_v, !exact, Dv, G, scratch);
  scratch.max_score.assign(static_cast<size_t>(G), -INFINITY);
  scratch.sum.assign(static_cast<size_t>(G), 0.0f);
  scratch.weight.resize(static_cast<size_t>(G));
  float* max_score = scratch.max_score.data();
  float* sum = scratch.sum.data();
  float* weight = scratch.weight.data();
  for (int32_t j = 0; j <= bt.pos; ++j) {
    const auto block = table[static_cast<size_t>(j / bs)];
    const size_t cell = static_cast<size_t>(j % bs);
    const uint8_t* k = st.kv.block_k(block, il) + cell * k_stride + k_head;
    for (int32_t g = 0; g < G; ++g) {
      const float s = score(k, g, g == 0) * scale;
      float ms = 1.0f;  // rescale of what was accumulated so far
      float vs = 1.0f;  // weight of this position
      if (s > max_score[g]) {
        ms = std::exp(max_score[g] - s);
        max_score[g] = s;
        acc.scale(g, ms);
      } else {
        vs = std::exp(s - max_score[g]);
      }
      weight[g] = vs;
      sum[g] = sum[g] * ms + vs;
    }
    acc.add(st.kv.block_v(block, il) + cell * v_stride + v_head, weight, G);
  }
  for (int32_t g = 0; g < G; ++g)
    acc.finish(g, sum[g] == 0.0f ? 0.0f : 1.0f / sum[g], out + g * Dv);
}

// Positions per chunk of attend_group_f16v.
constexpr int32_t kAttendChunk = 32;

// attend_group for an F16 V cache in the reference arithmetic, with the same bits, by chunks
// of positions within one cache block: the chunk's scores for the G heads come from the
// K type's tile (dot_converted's bits), the online soft-max runs over them position by
// position as in attend_group, and kernels::f16_accumulate then advances the G f16
// accumulators over the chunk's V rows, each element in the same sequence of roundings.
void attend_group_f16v(const ForwardState& st, int32_t il, const BatchToken& bt, int32_t kv_head,
                       int32_t G, const float* q, float scale, AttendScratch& scratch, float* out) {
  const auto& hp = st.model.hparams();
  const int32_t D = hp.head_dim, Dv = hp.head_dim_v;
  const KvHeadRows rows(st, il, bt.seq, kv_head);
  const size_t q_bytes = kernels::converted_row_bytes(st.type_k, D);
  scratch.q.resize(q_bytes * static_cast<size_t>(G));
  for (int32_t g = 0; g < G; ++g)
    kernels::convert_for_dot(st.type_k, q + g * D, scratch.q.data() + g * q_bytes, D);
  const auto chunk = static_cast<size_t>(kAttendChunk) * static_cast<size_t>(G);
  scratch.scores.resize(chunk);
  scratch.factor.resize(chunk);
  scratch.row_weight.resize(chunk);
  scratch.rescale.resize(chunk);
  scratch.v_rows.resize(static_cast<size_t>(kAttendChunk));
  scratch.acc16.assign(static_cast<size_t>(G) * static_cast<size_t>(Dv), 0);
  scratch.max_score.assign(static_cast<size_t>(G), -INFINITY);
  scratch.sum.assign(static_cast<size_t>(G), 0.0f);
  kernels::F16Accumulate fa;
  fa.acc = scratch.acc16.data();
  fa.n_heads = G;
  fa.dim = Dv;
  fa.v = scratch.v_rows.data();
  fa.rescale = scratch.rescale.data();
  fa.factor = scratch.factor.data();
  fa.weight = scratch.row_weight.data();
  for (int32_t j0 = 0; j0 <= bt.pos;) {
    // Positions [j0, j0 + n) share a block, so their K rows are k_stride apart.
    const int32_t in_block = rows.block_size - j0 % rows.block_size;
    const int32_t n = std::min({kAttendChunk, in_block, bt.pos + 1 - j0});
    kernels::dot_converted_rows(st.type_k, rows.k(j0), rows.k_stride, n, scratch.q.data(), q_bytes,
                                G, D, scratch.scores.data());
    for (int32_t i = 0; i < n; ++i) {
      scratch.v_rows[static_cast<size_t>(i)] = rows.v(j0 + i);
      for (int32_t g = 0; g < G; ++g) {
        const auto gi = static_cast<size_t>(g);
        const auto ig = static_cast<size_t>(i) * static_cast<size_t>(G) + gi;
        const float s =
            scratch.scores[gi * static_cast<size_t>(n) + static_cast<size_t>(i)] * scale;
        float ms = 1.0f, vs = 1.0f;
        scratch.rescale[ig] = s > scratch.max_score[gi] ? 1 : 0;
        if (scratch.rescale[ig] != 0) {
          ms = std::exp(scratch.max_score[gi] - s);
          scratch.max_score[gi] = s;
        } else {
          vs = std::exp(s - scratch.max_score[gi]);
        }
        scratch.factor[ig] = ms;
        scratch.row_weight[ig] = vs;
        scratch.sum[gi] = scratch.sum[gi] * ms + vs;
      }
    }
    fa.n_rows = n;
    kernels::f16_accumulate(fa);
    j0 += n;
  }
  for (int32_t g = 0; g < G; ++g) {
    const float sum = scratch.sum[static_cast<size_t>(g)];
    const float inv = sum == 0.0f ? 0.0f : 1.0f / sum;
    const f16_bits* acc = scratch.acc16.data() + static_cast<size_t>(g) * static_cast<size_t>(Dv);
    for (int32_t i = 0; i < Dv; ++i) out[g * Dv + i] = f16_to_f32(acc[i]) * inv;
  }
}

}  // namespace

void self_attention(ForwardState& st, int32_t il, const LayerWeights& w,
                    const AttentionOptions& opt) {
  const auto& hp = st.model.hparams();
  const int32_t H = hp.n_head, Hkv = hp.n_head_kv, D = hp.head_dim, Dv = hp.head_dim_v;
  project(st, w.wq, w.bq, st.s.cur.data(), st.s.q.data());
  project(st, w.wk, w.bk, st.s.cur.data(), st.s.k.data());
  project(st, w.wv, w.bv, st.s.cur.data(), st.s.v.data());
  if (!w.q_norm.empty()) norm_heads(st, st.s.q.data(), H, D, w.q_norm);
  if (!w.k_norm.empty()) norm_heads(st, st.s.k.data(), Hkv, D, w.k_norm);
  if (opt.apply_rope) {
    apply_rope(st, st.s.q.data(), H, D, opt.rope);
    apply_rope(st, st.s.k.data(), Hkv, D, opt.rope);
  }
  store_kv(st, il);
  const float scale = opt.kq_scale != 0.0f ? opt.kq_scale : 1.0f / std::sqrt(static_cast<float>(D));
  // One item per token and group of G query heads sharing a KV head (consecutive in q): all
  // H / Hkv of them, or fewer when that would leave too few items for the threads (decode).
  int32_t G = H / Hkv;
  while (G % 2 == 0 && st.n_tokens() * (H / G) < 4 * st.pool.n_threads()) G /= 2;
  const int64_t n_items = st.n_tokens() * (H / G);
  // The reference arithmetic with an F16 V cache (the default) has the chunked path.
  const bool f16v =
      st.precision == kernels::MatmulPrecision::kReference && st.type_v == TensorType::kF16;
  st.pool.parallel_for(n_items, [&](int64_t begin, int64_t end, int) {
    AttendScratch scratch;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / (H / G);
      const int32_t h = static_cast<int32_t>(item % (H / G)) * G;  // first head of the group
      const int64_t h0 = t * H + h;
      const auto attend = f16v ? attend_group_f16v : attend_group;
      attend(st, il, st.tokens[static_cast<size_t>(t)], h / (H / Hkv), G, st.s.q.data() + h0 * D,
             scale, scratch, st.s.attn.data() + h0 * Dv);
    }
  });
  project(st, w.wo, w.bo, st.s.attn.data(), st.s.out.data());
}

}  // namespace hearth::engine

// Attention over the paged KV cache in the reference engine's arithmetic.
//
// With an F16 V cache (the default) each query runs the reference's decode arithmetic (f16
// accumulators, quantization.md §9.4) over its first kExactPositions positions; then, for
// F16 and F32 K caches, the reference's prompt arithmetic (f32 tiles of 16 keys,
// kernels::attend_tile) over the rest. The switch depends on the position alone, so a token
// gets the same bits in any batch; short contexts keep the decode path's bits exactly, and
// long prompts run at GEMM-like speed, the queries of consecutive tokens sharing each
// converted tile.
#include "engine/attention.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <span>
#include <utility>
#include <vector>

#include "base/half.h"
#include "engine/model.h"
#include "kernels/attention_ops.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"

namespace hearth::engine {
namespace {

// Positions every query takes through the f16-accumulator path before the f32 tiles (a
// multiple of the tile size, so tiles start at fixed positions).
constexpr int32_t kExactPositions = 64;
// Consecutive tokens of one sequence whose queries share the converted tiles.
constexpr int64_t kQueryBlock = 16;

// The cached positions one query sees and the additive bias of its scores: [first, last] of
// its sequence, and for ALiBi the head slopes (nullptr: no bias) with the query's position.
struct KeyRange {
  int32_t first = 0;
  int32_t last = 0;
  int32_t query_pos = 0;
  const float* slopes = nullptr;  // [G] the slopes of the group's heads
  float softcap = 0.0f;           // > 0: score = softcap * tanh(score), the scale pre-divided
  const float* sinks = nullptr;   // [G] the group's heads' attention sinks, or null
};

// A head's attention sink s joins the softmax after all positions, as the reference applies
// it: with s above the running max M, the accumulator is rescaled by exp(M - s) (returned)
// and the sum becomes sum * exp(M - s) + 1; otherwise the sum gains exp(s - M).
inline float apply_sink(float sink, float max_score, float& sum) {
  if (sink > max_score) {
    const float ms = std::exp(max_score - sink);
    sum = sum * ms + 1.0f;
    return ms;
  }
  sum += std::exp(sink - max_score);
  return 1.0f;
}

// The first position a query at `pos` sees: 0, or the start of its sliding window.
inline int32_t first_visible(int32_t pos, int32_t window) {
  return window > 0 ? std::max(0, pos - window + 1) : 0;
}

// A scaled score through the soft cap, as the reference's flash attention applies it.
inline float capped(const KeyRange& r, float s) {
  return r.softcap > 0.0f ? r.softcap * std::tanh(s) : s;
}

// The ALiBi term of a score at key position j: slope * -|query - j|, the distance rounded to
// f16 as the reference's mask holds it.
float alibi_term(const KeyRange& r, int32_t g, int32_t j) {
  const auto distance = static_cast<float>(-std::abs(r.query_pos - j));
  return r.slopes[g] * f16_to_f32(f32_to_f16(distance));
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
      : st(s), il(layer), table(s.kv.block_table(seq, layer)), block_size(s.kv.block_size()) {
    const auto& hp = st.model.hparams();
    k_stride = static_cast<size_t>(st.kv.config().shape.k_bytes(layer));
    v_stride = static_cast<size_t>(st.kv.config().shape.v_bytes(layer));
    k_head = row_bytes(traits_of(st.type_k),
                       static_cast<uint64_t>(kv_head) * static_cast<uint64_t>(hp.head_dim));
    v_head = row_bytes(traits_of(st.type_v),
                       static_cast<uint64_t>(kv_head) * static_cast<uint64_t>(hp.head_dim_v));
  }
  // False for a position whose block a windowed layer released (outside every window).
  bool held(int32_t j) const { return table[static_cast<size_t>(j / block_size)] >= 0; }
  const uint8_t* k(int32_t j) const {
    return st.kv.block_k(table[static_cast<size_t>(j / block_size)], il) +
           static_cast<size_t>(j % block_size) * k_stride + k_head;
  }
  const uint8_t* v(int32_t j) const {
    return st.kv.block_v(table[static_cast<size_t>(j / block_size)], il) +
           static_cast<size_t>(j % block_size) * v_stride + v_head;
  }
};

// The f32 weighted sums of V rows of G heads, over dequantized rows: the arithmetic of every
// V cache but F16 under MatmulPrecision::kReference (which has attend_group_f16v), and of
// MatmulPrecision::kF32.
class VAccumulators {
 public:
  VAccumulators(TensorType type_v, int32_t dim, int32_t heads, AttendScratch& s)
      : type_v_(type_v), dim_(dim), s_(s) {
    s_.acc.assign(static_cast<size_t>(dim_) * static_cast<size_t>(heads), 0.0f);
    s_.row.resize(static_cast<size_t>(dim_));
  }
  void scale(int32_t g, float m) { kernels::f32_scale(acc(g), m, dim_); }
  // acc[g] += weight[g] * v for one cached V row and each of the first `heads` heads, by
  // single-rounding fused multiply-adds (the row is dequantized once for all of them).
  void add(const uint8_t* v, const float* weight, int32_t heads) {
    kernels::dequantize_row(type_v_, v, s_.row.data(), dim_);
    for (int32_t g = 0; g < heads; ++g)
      kernels::f32_fma_row(acc(g), s_.row.data(), weight[g], dim_);
  }
  void finish(int32_t g, float inv_sum, float* out) {
    for (int32_t i = 0; i < dim_; ++i) out[i] = acc(g)[i] * inv_sum;
  }

 private:
  float* acc(int32_t g) {
    return s_.acc.data() + static_cast<size_t>(g) * static_cast<size_t>(dim_);
  }

  TensorType type_v_;
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
void attend_group(const ForwardState& st, int32_t il, const BatchToken& bt, const KeyRange& range,
                  int32_t kv_head, int32_t G, const float* q, float scale, AttendScratch& scratch,
                  float* out) {
  const auto& hp = st.model.hparams();
  const int32_t D = hp.head_dim, Dv = hp.head_dim_v;
  const KvHeadRows rows(st, il, bt.seq, kv_head);
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
  VAccumulators acc(st.type_v, Dv, G, scratch);
  scratch.max_score.assign(static_cast<size_t>(G), -INFINITY);
  scratch.sum.assign(static_cast<size_t>(G), 0.0f);
  scratch.weight.resize(static_cast<size_t>(G));
  float* max_score = scratch.max_score.data();
  float* sum = scratch.sum.data();
  float* weight = scratch.weight.data();
  for (int32_t j = range.first; j <= range.last; ++j) {
    const uint8_t* k = rows.k(j);
    for (int32_t g = 0; g < G; ++g) {
      float s = capped(range, score(k, g, g == 0) * scale);
      if (range.slopes != nullptr) s += alibi_term(range, g, j);
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
    acc.add(rows.v(j), weight, G);
  }
  for (int32_t g = 0; g < G; ++g) {
    if (range.sinks != nullptr) acc.scale(g, apply_sink(range.sinks[g], max_score[g], sum[g]));
    acc.finish(g, sum[g] == 0.0f ? 0.0f : 1.0f / sum[g], out + g * Dv);
  }
}

// Positions per chunk of attend_group_f16v.
constexpr int32_t kAttendChunk = 32;

// attend_group for an F16 V cache in the reference arithmetic, with the same bits, by chunks
// of positions within one cache block: the chunk's scores for the G heads come from the
// K type's tile (dot_converted's bits), the online soft-max runs over them position by
// position as in attend_group, and kernels::f16_accumulate then advances the G f16
// accumulators over the chunk's V rows, each element in the same sequence of roundings.
// Leaves the G heads' f16 accumulators, maxima and sums of positions [range.first, end) in
// scratch (acc16, max_score, sum).
void f16v_prefix(const ForwardState& st, int32_t il, SeqId seq, const KeyRange& range,
                 int32_t kv_head, int32_t G, const float* q, float scale, int32_t end,
                 AttendScratch& scratch) {
  const auto& hp = st.model.hparams();
  const int32_t D = hp.head_dim, Dv = hp.head_dim_v;
  const KvHeadRows rows(st, il, seq, kv_head);
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
  for (int32_t j0 = range.first; j0 < end;) {
    // Positions [j0, j0 + n) share a block, so their K rows are k_stride apart.
    const int32_t in_block = rows.block_size - j0 % rows.block_size;
    const int32_t n = std::min({kAttendChunk, in_block, end - j0});
    kernels::dot_converted_rows(st.type_k, rows.k(j0), rows.k_stride, n, scratch.q.data(), q_bytes,
                                G, D, scratch.scores.data());
    for (int32_t i = 0; i < n; ++i) {
      scratch.v_rows[static_cast<size_t>(i)] = rows.v(j0 + i);
      for (int32_t g = 0; g < G; ++g) {
        const auto gi = static_cast<size_t>(g);
        const auto ig = static_cast<size_t>(i) * static_cast<size_t>(G) + gi;
        float s = capped(
            range, scratch.scores[gi * static_cast<size_t>(n) + static_cast<size_t>(i)] * scale);
        if (range.slopes != nullptr) s += alibi_term(range, g, j0 + i);
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
}

void attend_group_f16v(const ForwardState& st, int32_t il, const BatchToken& bt,
                       const KeyRange& range, int32_t kv_head, int32_t G, const float* q,
                       float scale, AttendScratch& scratch, float* out) {
  const int32_t Dv = st.model.hparams().head_dim_v;
  f16v_prefix(st, il, bt.seq, range, kv_head, G, q, scale, range.last + 1, scratch);
  for (int32_t g = 0; g < G; ++g) {
    float sum = scratch.sum[static_cast<size_t>(g)];
    const float ms =
        range.sinks == nullptr
            ? 1.0f
            : apply_sink(range.sinks[g], scratch.max_score[static_cast<size_t>(g)], sum);
    const float inv = sum == 0.0f ? 0.0f : 1.0f / sum;
    const f16_bits* acc = scratch.acc16.data() + static_cast<size_t>(g) * static_cast<size_t>(Dv);
    for (int32_t i = 0; i < Dv; ++i) out[g * Dv + i] = (f16_to_f32(acc[i]) * ms) * inv;
  }
}

// The queries of a block of consecutive tokens of one sequence for the G heads of one KV
// head: [nq = tokens * G] rows.
struct BlockQueries {
  std::vector<float> q;      // [nq][D]
  std::vector<float> m, s;   // [nq] running maxima and sums
  std::vector<float> acc;    // [nq][Dv] f32 accumulators
  std::vector<int> n_valid;  // [nq] visible keys of the current tile
  std::vector<int> n_skip;   // [nq] of those, hidden below a sliding window's start
  std::vector<float> k_tile, v_tile, k_row;
};

// Each query's f16 prefix (positions < kExactPositions), continued in f32.
void start_block(const ForwardState& st, int32_t il, int64_t t_begin, int64_t t_end,
                 int32_t kv_head, float scale, int32_t window, AttendScratch& scratch,
                 BlockQueries& bq) {
  const auto& hp = st.model.hparams();
  const int32_t H = hp.n_head, D = hp.head_dim, Dv = hp.head_dim_v, G = H / hp.n_head_kv;
  const auto nq = static_cast<size_t>((t_end - t_begin) * G);
  bq.q.resize(nq * static_cast<size_t>(D));
  bq.m.resize(nq);
  bq.s.resize(nq);
  bq.acc.resize(nq * static_cast<size_t>(Dv));
  bq.n_valid.resize(nq);
  bq.n_skip.resize(nq);
  for (int64_t t = t_begin; t < t_end; ++t) {
    const BatchToken& bt = st.tokens[static_cast<size_t>(t)];
    const float* q = st.s.q.data() + (t * H + static_cast<int64_t>(kv_head) * G) * D;
    const auto i0 = static_cast<size_t>((t - t_begin) * G);
    std::copy(q, q + G * D, bq.q.begin() + static_cast<std::ptrdiff_t>(i0) * D);
    KeyRange range;
    range.first = first_visible(bt.pos, window);
    range.last = bt.last_visible();
    f16v_prefix(st, il, bt.seq, range, kv_head, G, q, scale,
                std::min(range.last + 1, kExactPositions), scratch);
    for (int32_t g = 0; g < G; ++g) {
      const auto i = i0 + static_cast<size_t>(g);
      bq.m[i] = scratch.max_score[static_cast<size_t>(g)];
      bq.s[i] = scratch.sum[static_cast<size_t>(g)];
      for (int32_t e = 0; e < Dv; ++e)
        bq.acc[i * static_cast<size_t>(Dv) + static_cast<size_t>(e)] =
            f16_to_f32(scratch.acc16[static_cast<size_t>(g * Dv + e)]);
    }
  }
}

// K tile j0 (transposed, [D][16]) and V tile ([16][Dv]) widened to f32; n positions.
void load_tile(const ForwardState& st, const KvHeadRows& rows, int32_t j0, int n,
               BlockQueries& bq) {
  constexpr int kT = kernels::kAttentionTileKeys;
  const int32_t D = st.model.hparams().head_dim, Dv = st.model.hparams().head_dim_v;
  // Rows widened by the F16C path where the cache is F16 (exact either way).
  const auto widen = [&](TensorType type, const uint8_t* src, float* dst, int32_t count) {
    if (type == TensorType::kF16) {
      kernels::widen_f16(src, dst, count);
    } else {
      kernels::dequantize_row(type, src, dst, count);
    }
  };
  for (int kk = 0; kk < n; ++kk) {
    if (!rows.held(j0 + kk)) {
      // Released: below every query's window (the tile skips it), so any finite value does.
      for (int32_t d = 0; d < D; ++d) bq.k_tile[static_cast<size_t>(d * kT + kk)] = 0.0f;
      std::fill_n(bq.v_tile.data() + static_cast<size_t>(kk) * static_cast<size_t>(Dv), Dv, 0.0f);
      continue;
    }
    widen(st.type_k, rows.k(j0 + kk), bq.k_row.data(), D);
    for (int32_t d = 0; d < D; ++d)
      bq.k_tile[static_cast<size_t>(d * kT + kk)] = bq.k_row[static_cast<size_t>(d)];
    widen(st.type_v, rows.v(j0 + kk),
          bq.v_tile.data() + static_cast<size_t>(kk) * static_cast<size_t>(Dv), Dv);
  }
}

void attend_block(const ForwardState& st, int32_t il, int64_t t_begin, int64_t t_end,
                  int32_t kv_head, float scale, int32_t window, const float* sinks,
                  AttendScratch& scratch, BlockQueries& bq) {
  constexpr int kT = kernels::kAttentionTileKeys;
  const auto& hp = st.model.hparams();
  const int32_t H = hp.n_head, D = hp.head_dim, Dv = hp.head_dim_v, G = H / hp.n_head_kv;
  start_block(st, il, t_begin, t_end, kv_head, scale, window, scratch, bq);
  // The block's last visible position (a media row may see past the block's last row).
  int32_t last_pos = 0;
  for (int64_t t = t_begin; t < t_end; ++t)
    last_pos = std::max(last_pos, st.tokens[static_cast<size_t>(t)].last_visible());
  const KvHeadRows rows(st, il, st.tokens[static_cast<size_t>(t_begin)].seq, kv_head);
  bq.k_tile.resize(static_cast<size_t>(D) * kT);
  bq.v_tile.assign(static_cast<size_t>(Dv) * kT, 0.0f);
  bq.k_row.resize(static_cast<size_t>(D));
  kernels::AttentionTile tile;
  tile.q = bq.q.data();
  tile.n_q = static_cast<int>(bq.m.size());
  tile.n_valid = bq.n_valid.data();
  tile.n_skip = window > 0 ? bq.n_skip.data() : nullptr;
  tile.k_t = bq.k_tile.data();
  tile.v = bq.v_tile.data();
  tile.d_k = D;
  tile.d_v = Dv;
  tile.scale = scale;
  tile.m = bq.m.data();
  tile.sum = bq.s.data();
  tile.acc = bq.acc.data();
  // Tiles start at fixed positions (kExactPositions + a multiple of kT); those wholly below
  // every query's window are skipped, which changes no query's result.
  const int32_t lowest = first_visible(st.tokens[static_cast<size_t>(t_begin)].pos, window);
  const int32_t start = std::max(kExactPositions, lowest / kT * kT);
  for (int32_t j0 = start; j0 <= last_pos; j0 += kT) {
    const int n = std::min<int32_t>(kT, last_pos + 1 - j0);
    load_tile(st, rows, j0, n, bq);
    for (int64_t t = t_begin; t < t_end; ++t) {
      const int32_t pos = st.tokens[static_cast<size_t>(t)].pos;
      const int visible =
          std::clamp(st.tokens[static_cast<size_t>(t)].last_visible() + 1 - j0, 0, n);
      const int hidden = std::clamp(first_visible(pos, window) - j0, 0, n);
      for (int32_t g = 0; g < G; ++g) {
        bq.n_valid[static_cast<size_t>((t - t_begin) * G + g)] = visible;
        bq.n_skip[static_cast<size_t>((t - t_begin) * G + g)] = hidden;
      }
    }
    kernels::attend_tile(tile);
  }
  for (int64_t t = t_begin; t < t_end; ++t) {
    float* out = st.s.attn.data() + (t * H + static_cast<int64_t>(kv_head) * G) * Dv;
    for (int32_t g = 0; g < G; ++g) {
      const auto i = static_cast<size_t>((t - t_begin) * G + g);
      const float ms =
          sinks == nullptr ? 1.0f : apply_sink(sinks[kv_head * G + g], bq.m[i], bq.s[i]);
      const float inv = bq.s[i] == 0.0f ? 0.0f : 1.0f / bq.s[i];
      const float* acc = bq.acc.data() + i * static_cast<size_t>(Dv);
      for (int32_t e = 0; e < Dv; ++e) out[g * Dv + e] = (acc[e] * ms) * inv;
    }
  }
}

// Runs of at most kQueryBlock consecutive tokens of one sequence at consecutive positions.
std::vector<std::pair<int64_t, int64_t>> query_blocks(const ForwardState& st) {
  std::vector<std::pair<int64_t, int64_t>> blocks;
  int64_t begin = 0;
  for (int64_t t = 1; t <= st.n_tokens(); ++t) {
    const auto at = [&](int64_t i) { return st.tokens[static_cast<size_t>(i)]; };
    // Equal positions: a non-causal view, where a sequence's tokens all see the same range.
    if (t == st.n_tokens() || t - begin == kQueryBlock || at(t).seq != at(t - 1).seq ||
        (at(t).pos != at(t - 1).pos + 1 && at(t).pos != at(t - 1).pos)) {
      blocks.emplace_back(begin, t);
      begin = t;
    }
  }
  return blocks;
}

// The slope of each head's ALiBi bias, as the reference derives it from max_bias: powers of
// 2^(-max_bias / n) for the first n = 2^floor(log2 H) heads, odd powers of 2^(-max_bias / 2n)
// for the rest.
std::vector<float> alibi_slopes(int32_t n_head, float max_bias) {
  const uint32_t n_log2 = 1u << static_cast<uint32_t>(std::floor(std::log2(n_head)));
  const float m0 = std::pow(2.0f, -max_bias / static_cast<float>(n_log2));
  const float m1 = std::pow(2.0f, -(max_bias / 2.0f) / static_cast<float>(n_log2));
  std::vector<float> slopes(static_cast<size_t>(n_head));
  for (int32_t h = 0; h < n_head; ++h) {
    const auto uh = static_cast<uint32_t>(h);
    slopes[static_cast<size_t>(h)] = uh < n_log2
                                         ? std::pow(m0, static_cast<float>(uh + 1))
                                         : std::pow(m1, static_cast<float>(2 * (uh - n_log2) + 1));
  }
  return slopes;
}

// Per token and group of G query heads sharing a KV head: the keys in ranges[t], one item
// each (all H / Hkv heads of a group, or fewer when that leaves too few items for the threads).
void attend_tokens(ForwardState& st, int32_t il, float scale, const std::vector<KeyRange>& ranges,
                   const std::vector<float>& slopes, const float* sinks = nullptr) {
  const auto& hp = st.model.hparams();
  const int32_t H = hp.n_head, Hkv = hp.n_head_kv, D = hp.head_dim, Dv = hp.head_dim_v;
  const bool f16v =
      st.precision == kernels::MatmulPrecision::kReference && st.type_v == TensorType::kF16;
  int32_t G = H / Hkv;
  while (G % 2 == 0 && st.n_tokens() * (H / G) < 4 * st.pool.n_threads()) G /= 2;
  const int64_t n_items = st.n_tokens() * (H / G);
  st.pool.parallel_for(n_items, [&](int64_t begin, int64_t end, int) {
    AttendScratch scratch;
    for (int64_t item = begin; item < end; ++item) {
      const int64_t t = item / (H / G);
      const int32_t h = static_cast<int32_t>(item % (H / G)) * G;  // first head of the group
      const int64_t h0 = t * H + h;
      KeyRange range = ranges[static_cast<size_t>(t)];
      if (!slopes.empty()) range.slopes = slopes.data() + h;
      if (sinks != nullptr) range.sinks = sinks + h;
      const auto attend = f16v ? attend_group_f16v : attend_group;
      attend(st, il, st.tokens[static_cast<size_t>(t)], range, h / (H / Hkv), G,
             st.s.q.data() + h0 * D, scale, scratch, st.s.attn.data() + h0 * Dv);
    }
  });
}

// Causal attention; a window (> 0) limits each query to its last `window` positions (the
// tiles hide the keys below it), a soft cap passes the scaled scores through
// cap * tanh(s / cap) (the per-token path: the tiles have no cap), and sinks ([H], may be
// null) join each head's softmax.
void attend_causal(ForwardState& st, int32_t il, float scale, int32_t window = 0,
                   float softcap = 0.0f, const float* sinks = nullptr) {
  const bool f16v =
      st.precision == kernels::MatmulPrecision::kReference && st.type_v == TensorType::kF16;
  if (softcap <= 0.0f && f16v && (st.type_k == TensorType::kF16 || st.type_k == TensorType::kF32)) {
    // One item per block of tokens and KV head.
    const int32_t Hkv = st.model.hparams().n_head_kv;
    const auto blocks = query_blocks(st);
    const int64_t n_items = static_cast<int64_t>(blocks.size()) * Hkv;
    st.pool.parallel_for(n_items, [&](int64_t begin, int64_t end, int) {
      AttendScratch scratch;
      BlockQueries bq;
      for (int64_t item = begin; item < end; ++item) {
        const auto& b = blocks[static_cast<size_t>(item / Hkv)];
        attend_block(st, il, b.first, b.second, static_cast<int32_t>(item % Hkv), scale, window,
                     sinks, scratch, bq);
      }
    });
    return;
  }
  std::vector<KeyRange> ranges(static_cast<size_t>(st.n_tokens()));
  for (size_t t = 0; t < ranges.size(); ++t) {
    const int32_t pos = st.tokens[t].pos;
    ranges[t].first = first_visible(pos, window);
    ranges[t].last = st.tokens[t].last_visible();
    ranges[t].query_pos = pos;
    ranges[t].softcap = softcap;
  }
  attend_tokens(st, il, softcap > 0.0f ? scale / softcap : scale, ranges, {}, sinks);
}

// Non-causal attention: every token sees its sequence up to the sequence's last position in
// this batch. Without a window or bias, the tokens are handed to attend_causal() as if each
// stood at that position (only the visible range depends on a token's position there).
void attend_whole_sequences(ForwardState& st, int32_t il, float scale,
                            const AttentionOptions& opt) {
  std::map<SeqId, int32_t> last;
  for (const BatchToken& t : st.tokens) last[t.seq] = std::max(last[t.seq], t.pos);
  if (opt.half_window < 0 && opt.max_alibi_bias <= 0.0f) {
    std::vector<BatchToken> seen(st.tokens.begin(), st.tokens.end());
    for (BatchToken& t : seen) t.pos = last[t.seq];
    ForwardState view{st.model,
                      st.kv,
                      st.type_k,
                      st.type_v,
                      st.precision,
                      st.pool,
                      std::span<const BatchToken>(seen),
                      st.s};
    attend_causal(view, il, scale);
    return;
  }
  std::vector<KeyRange> ranges(static_cast<size_t>(st.n_tokens()));
  for (size_t t = 0; t < ranges.size(); ++t) {
    const BatchToken& bt = st.tokens[t];
    KeyRange& r = ranges[t];
    r.query_pos = bt.pos;
    r.first = opt.half_window < 0 ? 0 : std::max(0, bt.pos - opt.half_window);
    r.last = opt.half_window < 0 ? last[bt.seq] : std::min(last[bt.seq], bt.pos + opt.half_window);
  }
  const std::vector<float> slopes =
      opt.max_alibi_bias > 0.0f ? alibi_slopes(st.model.hparams().n_head, opt.max_alibi_bias)
                                : std::vector<float>{};
  attend_tokens(st, il, scale, ranges, slopes);
}

}  // namespace

void attend_all(ForwardState& st, int32_t il, float scale, const AttentionOptions& opt) {
  if (opt.causal) {
    attend_causal(st, il, scale, opt.window, opt.softcap, opt.sinks);
  } else {
    attend_whole_sequences(st, il, scale, opt);
  }
}

}  // namespace hearth::engine

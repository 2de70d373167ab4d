// lfm2's gated short convolution. The reference keeps each sequence's last L - 1 B*x rows as
// a recurrent state; here every token's B*x row is the layer's cached row at its position in
// the paged KV cache (a windowed layer of window L), so prefix reuse, truncation, snapshots
// and shared prefixes need nothing of their own, and a token's output reads only its own
// sequence's rows: it does not depend on the other tokens of its step.
#include <algorithm>
#include <cstring>
#include <vector>

#include "engine/forward.h"
#include "engine/model.h"

namespace hearth::engine {

namespace {

// Writes each token's B*x row ([E] f32) as its cached state row. The rows are copied as
// bytes: the cache does not promise f32 alignment.
void store_bx(ForwardState& st, int32_t il, int64_t E) {
  const float* bcx = st.s.conv.data();
  st.pool.parallel_for(st.n_tokens(), [&](int64_t begin, int64_t end, int) {
    std::vector<float> bx(static_cast<size_t>(E));
    for (int64_t t = begin; t < end; ++t) {
      const float* b = bcx + t * 3 * E;
      const float* x = b + 2 * E;
      for (int64_t i = 0; i < E; ++i) bx[static_cast<size_t>(i)] = b[i] * x[i];
      const BatchToken& tok = st.tokens[static_cast<size_t>(t)];
      std::memcpy(st.kv.k_row(il, tok.seq, tok.pos), bx.data(), static_cast<size_t>(E) * 4);
    }
  });
}

// y[t] = C[t] * sum_j kernel[:, j] * Bx[pos - L + 1 + j] (j = 0 the oldest row, positions
// before 0 zero), summed in that order as the reference's ssm_conv does; into s.cur [T][E].
void convolve(ForwardState& st, int32_t il, int64_t E, int32_t L,
              const std::vector<float>& kernel) {
  const float* bcx = st.s.conv.data();
  float* y = st.s.cur.data();
  st.pool.parallel_for(st.n_tokens(), [&](int64_t begin, int64_t end, int) {
    std::vector<float> row(static_cast<size_t>(E)), sum(static_cast<size_t>(E));
    for (int64_t t = begin; t < end; ++t) {
      const BatchToken& tok = st.tokens[static_cast<size_t>(t)];
      std::fill(sum.begin(), sum.end(), 0.0f);
      for (int32_t j = 0; j < L; ++j) {
        const int32_t pos = tok.pos - (L - 1) + j;
        if (pos < 0) continue;  // the zero initial state adds nothing
        std::memcpy(row.data(), st.kv.k_row(il, tok.seq, pos), static_cast<size_t>(E) * 4);
        for (int64_t c = 0; c < E; ++c)
          sum[static_cast<size_t>(c)] +=
              row[static_cast<size_t>(c)] * kernel[static_cast<size_t>(c * L + j)];
      }
      const float* c_gate = bcx + t * 3 * E + E;
      for (int64_t c = 0; c < E; ++c) y[t * E + c] = c_gate[c] * sum[static_cast<size_t>(c)];
    }
  });
}

}  // namespace

void short_conv(ForwardState& st, int32_t il, const LayerWeights& w) {
  const int64_t E = st.model.hparams().n_embd;
  const int32_t L = st.model.attention_window(il);
  st.s.conv.resize(static_cast<size_t>(st.n_tokens() * 3 * E));
  project(st, w.conv_in, {}, st.s.cur.data(), st.s.conv.data());
  // Every row of the step is cached before any token reads its window.
  store_bx(st, il, E);
  convolve(st, il, E, L, w.conv_kernel);
  if (st.keep_rows != nullptr) prune_rows(st, st.s.cur, E);
  project(st, w.conv_out, {}, st.s.cur.data(), st.s.out.data());
}

}  // namespace hearth::engine

#include "engine/moe.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "engine/model.h"
#include "kernels/matmul.h"

namespace hearth::engine {
namespace {

// One token's routing: the chosen experts in order of decreasing probability, and weights.
struct Route {
  std::vector<int32_t> expert;
  std::vector<float> weight;
};

// The reference's softmax in place: f32 exponentials of v - max, their sum in f64, each
// multiplied by the f32 reciprocal.
void softmax(std::vector<float>& p) {
  const float top = *std::max_element(p.begin(), p.end());
  double sum = 0.0;
  for (float& v : p) {
    v = std::exp(v - top);
    sum += v;
  }
  const auto inv = static_cast<float>(1.0 / sum);
  for (float& v : p) v *= inv;
}

// The k experts of the largest router scores, by opt.gating: softmax probabilities then the
// top k, the top k logits then a softmax over them, or sigmoids chosen with their selection
// bias; their weights optionally normalized by their sum (clamped below at the smallest
// normal f16, as the reference does). The experts come in order of their (biased) scores.
Route route(const float* logits, int32_t n_expert, const MoeOptions& opt) {
  std::vector<float> p(logits, logits + n_expert);
  if (opt.gating == MoeGating::kSoftmaxThenTopK) softmax(p);
  if (opt.gating == MoeGating::kSigmoid)
    for (float& v : p) v = 1.0f / (1.0f + std::exp(-v));
  std::vector<float> chosen_by = p;
  if (opt.gating == MoeGating::kSigmoid && opt.selection_bias != nullptr)
    for (int32_t e = 0; e < n_expert; ++e)
      chosen_by[static_cast<size_t>(e)] += opt.selection_bias[e];
  std::vector<int32_t> order(static_cast<size_t>(n_expert));
  std::iota(order.begin(), order.end(), 0);
  std::partial_sort(order.begin(), order.begin() + opt.n_used, order.end(),
                    [&](int32_t a, int32_t b) {
                      return chosen_by[static_cast<size_t>(a)] > chosen_by[static_cast<size_t>(b)];
                    });
  Route r;
  r.expert.assign(order.begin(), order.begin() + opt.n_used);
  for (int32_t e : r.expert) r.weight.push_back(p[static_cast<size_t>(e)]);
  if (opt.gating == MoeGating::kTopKThenSoftmax) softmax(r.weight);
  if (opt.norm_weights) {
    double total = 0.0;
    for (float v : r.weight) total += v;
    const float denom = std::max(static_cast<float>(total), 6.103515625e-5f);
    for (float& v : r.weight) v /= denom;
  }
  return r;
}

float silu(float x) {
  return x / (1.0f + std::exp(-x));
}

// One expert: its three matrices, its biases (empty: none), and its activation.
struct Expert {
  const WeightMatrix& gate;
  const WeightMatrix& up;
  const WeightMatrix& down;
  const std::vector<float>* gate_b = nullptr;  // [F]
  const std::vector<float>* up_b = nullptr;    // [F]
  const std::vector<float>* down_b = nullptr;  // [E]
  MoeActivation activation = MoeActivation::kSilu;
};

// rows[r] += b for the n rows of width b.size(); nothing when b is absent or empty.
void add_bias(float* rows, int64_t n, const std::vector<float>* b) {
  if (b == nullptr || b->empty()) return;
  const auto width = static_cast<int64_t>(b->size());
  for (int64_t r = 0; r < n; ++r) ops::add_inplace(rows + r * width, b->data(), width);
}

// gpt-oss's clamped SwiGLU (alpha 1.702, limit 7) into g, in the reference's operations.
void clamped_swiglu(float* g, const float* u, int64_t n) {
  constexpr float kAlpha = 1.702f, kLimit = 7.0f;
  for (int64_t i = 0; i < n; ++i) {
    const float x = std::min(g[i], kLimit);
    const float y = std::clamp(u[i], -kLimit, kLimit);
    g[i] = x / (1.0f + std::exp(kAlpha * (-x))) * (y + 1.0f);
  }
}

// y[r] = W_down act(W_gate x[r], W_up x[r]) for the n rows of x, with the expert's biases.
void expert_ffn(ThreadPool& pool, kernels::MatmulPrecision precision, const Expert& e,
                const float* x, int64_t n, float* y) {
  const int64_t F = e.gate.n_rows;
  thread_local std::vector<float> g, u;  // reused: this runs per expert, layer and step
  g.resize(static_cast<size_t>(n * F));
  u.resize(static_cast<size_t>(n * F));
  kernels::matmul(e.gate, x, n, g.data(), pool, precision);
  kernels::matmul(e.up, x, n, u.data(), pool, precision);
  add_bias(g.data(), n, e.gate_b);
  add_bias(u.data(), n, e.up_b);
  if (e.activation == MoeActivation::kClampedSwiglu) {
    clamped_swiglu(g.data(), u.data(), n * F);
  } else {
    ops::swiglu(g.data(), u.data(), g.data(), n * F);
  }
  kernels::matmul(e.down, g.data(), n, y, pool, precision);
  add_bias(y, n, e.down_b);
}

// Expert e of the layer, its biases where the layer has them.
Expert routed_expert(const MoeWeights& m, size_t e, MoeActivation activation) {
  Expert x{m.gate[e], m.up[e], m.down[e]};
  if (!m.gate_b.empty()) {
    x.gate_b = &m.gate_b[e];
    x.up_b = &m.up_b[e];
    x.down_b = &m.down_b[e];
  }
  x.activation = activation;
  return x;
}

}  // namespace

void moe_ffn(ForwardState& st, const LayerWeights& w, const MoeOptions& opt) {
  const MoeWeights& m = w.moe;
  const int64_t T = st.n_tokens(), E = st.model.hparams().n_embd;
  const auto n_expert = static_cast<int32_t>(m.gate.size());
  const int32_t K = opt.n_used;
  std::vector<float> logits(static_cast<size_t>(T * n_expert));
  kernels::matmul(m.router, st.s.cur.data(), T, logits.data(), st.pool, st.precision);
  add_bias(logits.data(), T, &m.router_b);
  std::vector<Route> routes;
  routes.reserve(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t)
    routes.push_back(route(logits.data() + t * n_expert, n_expert, opt));
  // Each active expert's rows: (token, slot k), gathered, multiplied once, scattered into
  // expert_out [T][K][E].
  std::vector<std::vector<std::pair<int64_t, int32_t>>> rows(static_cast<size_t>(n_expert));
  for (int64_t t = 0; t < T; ++t)
    for (int32_t k = 0; k < K; ++k)
      rows[static_cast<size_t>(routes[static_cast<size_t>(t)].expert[static_cast<size_t>(k)])]
          .emplace_back(t, k);
  std::vector<float> expert_out(static_cast<size_t>(T * K * E));
  // Runs expert e over its rows (gathered, one matmul each, scattered), on `pool`.
  const auto run_expert = [&](int32_t e, ThreadPool& pool, std::vector<float>& xs,
                              std::vector<float>& ys) {
    const auto& mine = rows[static_cast<size_t>(e)];
    const auto n = static_cast<int64_t>(mine.size());
    xs.resize(static_cast<size_t>(n * E));
    ys.resize(static_cast<size_t>(n * E));
    for (int64_t i = 0; i < n; ++i)
      std::copy_n(st.s.cur.data() + mine[static_cast<size_t>(i)].first * E, E, xs.data() + i * E);
    expert_ffn(pool, st.precision, routed_expert(m, static_cast<size_t>(e), opt.activation),
               xs.data(), n, ys.data());
    for (int64_t i = 0; i < n; ++i) {
      const auto [t, k] = mine[static_cast<size_t>(i)];
      std::copy_n(ys.data() + i * E, E, expert_out.data() + (t * K + k) * E);
    }
  };
  std::vector<int32_t> active;
  for (int32_t e = 0; e < n_expert; ++e)
    if (!rows[static_cast<size_t>(e)].empty()) active.push_back(e);
  if (static_cast<int64_t>(active.size()) >= 2 * st.pool.n_threads() && st.pool.n_threads() > 1) {
    // Enough experts to share: each thread runs whole experts on its own (no hand-off per
    // matmul), the busiest first so the last ones even the load out.
    std::stable_sort(active.begin(), active.end(), [&](int32_t a, int32_t b) {
      return rows[static_cast<size_t>(a)].size() > rows[static_cast<size_t>(b)].size();
    });
    st.pool.parallel_for(static_cast<int64_t>(active.size()), [&](int64_t begin, int64_t end, int) {
      thread_local ThreadPool alone(1);
      thread_local std::vector<float> xs, ys;
      for (int64_t i = begin; i < end; ++i)
        run_expert(active[static_cast<size_t>(i)], alone, xs, ys);
    });
  } else {
    std::vector<float> xs, ys;
    for (int32_t e : active) run_expert(e, st.pool, xs, ys);
  }
  // out[t] = ((o_0 w_0 + o_1 w_1) + o_2 w_2) ...: each product rounded, then added in order.
  for (int64_t t = 0; t < T; ++t) {
    float* out = st.s.out.data() + t * E;
    const Route& r = routes[static_cast<size_t>(t)];
    for (int32_t k = 0; k < K; ++k) {
      const float* o = expert_out.data() + (t * K + k) * E;
      const float wk = r.weight[static_cast<size_t>(k)];
      for (int64_t i = 0; i < E; ++i) out[i] = k == 0 ? o[i] * wk : out[i] + o[i] * wk;
    }
  }
  if (!present(m.shared_gate)) return;
  // The shared expert, scaled per row by sigmoid(g) computed as silu(g) / g (the reference's).
  std::vector<float> shared(static_cast<size_t>(T * E)), g(static_cast<size_t>(T));
  expert_ffn(st.pool, st.precision, Expert{m.shared_gate, m.shared_up, m.shared_down},
             st.s.cur.data(), T, shared.data());
  kernels::matmul(m.shared_router, st.s.cur.data(), T, g.data(), st.pool, st.precision);
  for (int64_t t = 0; t < T; ++t) {
    const float gate = silu(g[static_cast<size_t>(t)]) / g[static_cast<size_t>(t)];
    float* out = st.s.out.data() + t * E;
    for (int64_t i = 0; i < E; ++i) out[i] += shared[static_cast<size_t>(t * E + i)] * gate;
  }
}

}  // namespace hearth::engine

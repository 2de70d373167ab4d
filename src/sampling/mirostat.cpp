#include "sampling/mirostat.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace hearth::sampling {

MirostatStage::MirostatStage(int32_t n_vocab, uint32_t seed, float tau, float eta, int32_t m)
    : n_vocab_(n_vocab),
      seed_(seed),
      resolved_seed_(resolve_seed(seed)),
      tau_(tau),
      eta_(eta),
      m_(m),
      mu_(2.0f * tau),
      rng_(resolved_seed_) {}

void MirostatStage::reset() {
  mu_ = 2.0f * tau_;
  resolved_seed_ = resolve_seed(seed_);
  rng_.seed(resolved_seed_);
}

size_t MirostatStage::truncation(const Candidates& candidates) const {
  // Least-squares fit of ln(p_i / p_i+1) against ln((i + 2) / (i + 1)) over the top m.
  float sum_tb = 0.0f;
  float sum_tt = 0.0f;
  const size_t terms = std::min(static_cast<size_t>(std::max(m_ - 1, 0)), candidates.size() - 1);
  for (size_t i = 0; i < terms; ++i) {
    const float t = std::log(static_cast<float>(i + 2) / static_cast<float>(i + 1));
    const float b = std::log(candidates[i].p / candidates[i + 1].p);
    sum_tb += t * b;
    sum_tt += t * t;
  }
  const float s = sum_tb / sum_tt;
  const float epsilon = s - 1.0f;
  const float n_vocab =
      static_cast<float>(n_vocab_ > 0 ? static_cast<size_t>(n_vocab_) : candidates.size());
  const float k =
      std::pow(epsilon * std::pow(2.0f, mu_) / (1.0f - std::pow(n_vocab, -epsilon)), 1.0f / s);
  // int(k) truncates toward zero. A k that int cannot hold (NaN, infinite or too large, e.g.
  // with one candidate, where the fit is 0 / 0) converts to INT_MIN on the x86 builds the
  // reference ships, and max(., 1) then keeps one token; that is reproduced here.
  if (!(k < 2147483648.0f)) return 1;
  return static_cast<size_t>(std::max(static_cast<int32_t>(k), 1));
}

void MirostatStage::apply(Candidates& candidates) {
  if (candidates.empty()) return;
  candidates.sort();
  // Everything masked (e.g. by a grammar): nothing to choose, as with dist.
  if (candidates[0].logit == -std::numeric_limits<float>::infinity()) return;
  candidates.softmax();
  candidates.truncate(truncation(candidates));
  candidates.softmax();
  const size_t chosen = discrete_draw(candidates.entries(), rng_);
  candidates.select(static_cast<int32_t>(chosen));
  const float surprise = -std::log2(candidates[chosen].p);
  mu_ = mu_ - eta_ * (surprise - tau_);
}

}  // namespace hearth::sampling

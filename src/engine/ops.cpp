#include "engine/ops.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <vector>

#include "base/half.h"
#include "kernels/activation.h"
#include "kernels/quant.h"

namespace hearth::engine::ops {

void rms_norm(const float* x, const float* w, float* y, int64_t n, float eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i] * x[i]);
  const float mean = static_cast<float>(sum / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(mean + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] * scale) * w[i];
}

void layer_norm(const float* x, const float* w, const float* b, float* y, int64_t n, float eps) {
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) sum += static_cast<double>(x[i]);
  const auto mean = static_cast<float>(sum / static_cast<double>(n));
  double sum2 = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    const float v = x[i] - mean;
    y[i] = v;
    sum2 += static_cast<double>(v * v);
  }
  const auto variance = static_cast<float>(sum2 / static_cast<double>(n));
  const float scale = 1.0f / std::sqrt(variance + eps);
  for (int64_t i = 0; i < n; ++i) {
    y[i] = (y[i] * scale) * w[i];
    if (b != nullptr) y[i] += b[i];
  }
}

namespace {

// gelu of every f16 value, rounded to f16 and widened (the reference's lookup table).
const std::vector<float>& gelu_table() {
  static const std::vector<float> table = [] {
    std::vector<float> t(65536);
    for (uint32_t i = 0; i < 65536; ++i) {
      const float x = f16_to_f32(static_cast<f16_bits>(i));
      const float inner = 0.7978845608028654f * x * (1.0f + 0.044715f * x * x);
      t[i] = f16_to_f32(f32_to_f16(0.5f * x * (1.0f + std::tanh(inner))));
    }
    return t;
  }();
  return table;
}

}  // namespace

void gelu(const float* x, float* y, int64_t n) {
  const std::vector<float>& table = gelu_table();
  constexpr int64_t kChunk = 256;
  f16_bits codes[kChunk];
  for (int64_t at = 0; at < n; at += kChunk) {
    const int64_t m = std::min(kChunk, n - at);
    kernels::quantize_row(TensorType::kF16, x + at, codes, m);
    for (int64_t i = 0; i < m; ++i) {
      const float v = x[at + i];
      y[at + i] = v <= -10.0f ? 0.0f : v >= 10.0f ? v : table[codes[i]];
    }
  }
}

void add_inplace(float* x, const float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] += y[i];
}

void swiglu(const float* gate, const float* up, float* out, int64_t n) {
  kernels::swiglu(gate, up, out, n);
}

namespace {

// YaRN correction range: the pair indices between which interpolation ramps in.
void yarn_corr_dims(const RopeParams& r, int32_t n_rot, float& low, float& high) {
  auto corr = [&](float beta) {
    return static_cast<float>(n_rot) *
           std::log(static_cast<float>(r.n_ctx_orig) / (beta * 2.0f * std::numbers::pi_v<float>)) /
           (2.0f * std::log(r.freq_base));
  };
  low = std::max(0.0f, std::floor(corr(r.yarn_beta_fast)));
  high = std::min(static_cast<float>(n_rot - 1), std::ceil(corr(r.yarn_beta_slow)));
}

// The rope angle of pair i whose unscaled angle is `theta` (position * theta_scale^i), with
// frequency scaling, YaRN (low/high from yarn_corr_dims) and the pair's divisor.
void pair_angle(const RopeParams& r, int32_t i, float theta, const float* freq_factors, float low,
                float high, float* cos_out, float* sin_out) {
  const float extrap = freq_factors ? theta / freq_factors[i] : theta;
  const float interp = r.freq_scale * extrap;
  float angle = interp;
  float mscale = r.attn_factor;
  if (r.yarn_ext_factor != 0.0f) {
    const float y = (static_cast<float>(i) - low) / std::max(0.001f, high - low);
    const float ramp = 1.0f - std::min(1.0f, std::max(0.0f, y));
    const float mix = ramp * r.yarn_ext_factor;
    angle = interp * (1.0f - mix) + extrap * mix;
    mscale *= 1.0f + 0.1f * std::log(1.0f / r.freq_scale);
  }
  *cos_out = std::cos(angle) * mscale;
  *sin_out = std::sin(angle) * mscale;
}

}  // namespace

void rope_angles(const RopeParams& r, int32_t n_rot, const float* freq_factors, int32_t pos,
                 float* cos_out, float* sin_out) {
  const float theta_scale = std::pow(r.freq_base, -2.0f / static_cast<float>(n_rot));
  float low = 0.0f, high = 0.0f;
  if (r.yarn_ext_factor != 0.0f) yarn_corr_dims(r, n_rot, low, high);
  float theta = static_cast<float>(pos);  // theta_i, computed iteratively as the reference does
  for (int32_t i = 0; i < n_rot / 2; ++i) {
    pair_angle(r, i, theta, freq_factors, low, high, &cos_out[i], &sin_out[i]);
    theta *= theta_scale;
  }
}

int32_t mrope_component(const std::array<int32_t, 4>& sections, bool interleaved, int32_t pair) {
  const int32_t total = sections[0] + sections[1] + sections[2] + sections[3];
  const int32_t sector = total > 0 ? pair % total : 0;
  if (interleaved) {  // t, h, w in turn while each has pairs left, then e
    if (sector % 3 == 1 && sector < 3 * sections[1]) return 1;
    if (sector % 3 == 2 && sector < 3 * sections[2]) return 2;
    if (sector % 3 == 0 && sector < 3 * sections[0]) return 0;
    return 3;
  }
  if (sector < sections[0]) return 0;
  if (sector < sections[0] + sections[1]) return 1;
  if (sector < sections[0] + sections[1] + sections[2]) return 2;
  return 3;
}

void mrope_angles(const RopeParams& r, int32_t n_rot, const float* freq_factors,
                  const int32_t pos[4], const uint8_t* component, float* cos_out, float* sin_out) {
  const float theta_scale = std::pow(r.freq_base, -2.0f / static_cast<float>(n_rot));
  float low = 0.0f, high = 0.0f;
  if (r.yarn_ext_factor != 0.0f) yarn_corr_dims(r, n_rot, low, high);
  // Each component's angle advances by theta_scale at every pair, whichever component the
  // pair takes (as the reference's cache), so pair i of component c is exactly the 1-D
  // angle of position pos[c] at pair i.
  float theta[4];
  for (int c = 0; c < 4; ++c) theta[c] = static_cast<float>(pos[c]);
  for (int32_t i = 0; i < n_rot / 2; ++i) {
    pair_angle(r, i, theta[component[i]], freq_factors, low, high, &cos_out[i], &sin_out[i]);
    for (float& t : theta) t *= theta_scale;
  }
}

void rope_apply(RopeKind kind, float* head, const float* cos_v, const float* sin_v, int32_t n_rot) {
  const int32_t half = n_rot / 2;
  for (int32_t i = 0; i < half; ++i) {
    float* a = kind == RopeKind::kNorm ? &head[2 * i] : &head[i];
    float* b = kind == RopeKind::kNorm ? &head[2 * i + 1] : &head[i + half];
    const float x0 = *a, x1 = *b;
    *a = x0 * cos_v[i] - x1 * sin_v[i];
    *b = x0 * sin_v[i] + x1 * cos_v[i];
  }
}

}  // namespace hearth::engine::ops

// See fft.h. Every float operation below is one the reference performs, in its order; the file
// is built with -ffp-contract=off so no multiply-add is fused.
#include "media/audio/fft.h"

#include <cmath>

namespace hearth::media::audio_detail {

namespace {
constexpr double kTwoPi = 2 * 3.14159265358979323846;
}  // namespace

RealFft::RealFft(int32_t n) : n_(n), sin_(n), cos_(n), scratch_(static_cast<size_t>(6 * n + 16)) {
  for (int32_t i = 0; i < n; ++i) {
    // The angle in double, the sine and cosine in float (sinf/cosf), as the reference's table.
    const double theta = (kTwoPi * i) / n;
    sin_[i] = std::sin(static_cast<float>(theta));
    cos_[i] = std::cos(static_cast<float>(theta));
  }
}

void RealFft::forward(const float* in, float* out) {
  transform(in, n_, out, scratch_.data());
}

// in: n reals; out: n complex. scratch holds 3n floats for this level plus the levels below.
void RealFft::transform(const float* in, int32_t n, float* out, float* scratch) {
  if (n == 1) {
    out[0] = in[0];
    out[1] = 0.0f;
    return;
  }
  const int32_t step = n_ / n;  // twiddle table stride for this length
  if (n % 2 == 1) {
    // Odd length: the DFT by its definition, float accumulation in t order.
    for (int32_t k = 0; k < n; ++k) {
      float re = 0, im = 0;
      for (int32_t t = 0; t < n; ++t) {
        const int32_t idx = static_cast<int32_t>((static_cast<int64_t>(k) * t * step) % n_);
        const float x = in[t];
        re += x * cos_[idx];
        im += -1.0f * x * sin_[idx];
      }
      out[2 * k] = re;
      out[2 * k + 1] = im;
    }
    return;
  }
  const int32_t half = n / 2;
  float* even = scratch;
  float* odd = scratch + half;
  float* even_fft = scratch + n;
  float* odd_fft = scratch + 2 * n;
  float* below = scratch + 3 * n;
  for (int32_t i = 0; i < half; ++i) {
    even[i] = in[2 * i];
    odd[i] = in[2 * i + 1];
  }
  transform(even, half, even_fft, below);
  transform(odd, half, odd_fft, below);
  // Butterflies with w = e^{-2 pi i k / n} = cos - i sin.
  for (int32_t k = 0; k < half; ++k) {
    const float wr = cos_[k * step];
    const float wi = -1.0f * sin_[k * step];
    const float er = even_fft[2 * k], ei = even_fft[2 * k + 1];
    const float orr = odd_fft[2 * k], oi = odd_fft[2 * k + 1];
    out[2 * k] = er + wr * orr - wi * oi;
    out[2 * k + 1] = ei + wr * oi + wi * orr;
    out[2 * (k + half)] = er - wr * orr + wi * oi;
    out[2 * (k + half) + 1] = ei - wr * oi - wi * orr;
  }
}

void reference_dft(const float* in, int32_t n, double* out) {
  for (int32_t k = 0; k < n; ++k) {
    double re = 0, im = 0;
    for (int32_t t = 0; t < n; ++t) {
      const double angle = kTwoPi * static_cast<double>((static_cast<int64_t>(k) * t) % n) / n;
      re += in[t] * std::cos(angle);
      im -= in[t] * std::sin(angle);
    }
    out[2 * k] = re;
    out[2 * k + 1] = im;
  }
}

}  // namespace hearth::media::audio_detail

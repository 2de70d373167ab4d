// miniaudio's default resampler, reproduced from its documented behaviour and arithmetic
// (f32 state, double-precision filter design rounded to float coefficients), so the samples
// are bit-identical with the reference's decoder.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "media/audio/audio_steps.h"

namespace hearth::media::audio_detail {
namespace {

constexpr double kPi = 3.14159265358979323846264;
constexpr uint32_t kLowPassOrder = 4;  // miniaudio's MA_DEFAULT_RESAMPLER_LPF_ORDER

// miniaudio computes cosines as sin(pi/2 - x); keep that so the coefficients round the same.
double cosine_as_miniaudio(double x) {
  return std::sin(kPi * 0.5 - x);
}

// One second-order low-pass section, transposed direct form II, f32 state.
struct Biquad {
  float b0 = 0, b1 = 0, b2 = 0, a1 = 0, a2 = 0;
  float r1 = 0, r2 = 0;

  float step(float x) {
    // Separate statements: no fused multiply-add (the file is built with -ffp-contract=off).
    const float y = b0 * x + r1;
    r1 = b1 * x - a1 * y + r2;
    r2 = b2 * x - a2 * y;
    return y;
  }
};

// The RBJ low-pass for cutoff / sample_rate with quality q, normalised by a0 in double.
Biquad low_pass_section(uint32_t sample_rate, double cutoff, double q) {
  const double w = 2 * kPi * cutoff / sample_rate;
  const double s = std::sin(w);
  const double c = cosine_as_miniaudio(w);
  const double a = s / (2 * q);
  const double b0 = (1 - c) / 2, b1 = 1 - c, b2 = (1 - c) / 2;
  const double a0 = 1 + a, a1 = -2 * c, a2 = 1 - a;
  Biquad bq;
  bq.b0 = static_cast<float>(b0 / a0);
  bq.b1 = static_cast<float>(b1 / a0);
  bq.b2 = static_cast<float>(b2 / a0);
  bq.a1 = static_cast<float>(a1 / a0);
  bq.a2 = static_cast<float>(a2 / a0);
  return bq;
}

struct LinearResampler {
  uint32_t rate_in = 0;  // reduced by the greatest common factor, as miniaudio does
  uint32_t rate_out = 0;
  uint32_t advance_int = 0;
  uint32_t advance_frac = 0;
  uint32_t time_int = 1;  // 1: the first output frame always loads one input frame
  uint32_t time_frac = 0;
  float x0 = 0, x1 = 0;
  Biquad sections[kLowPassOrder / 2];

  LinearResampler(uint32_t in, uint32_t out) {
    const uint32_t gcf = std::gcd(in, out);
    rate_in = in / gcf;
    rate_out = out / gcf;
    advance_int = rate_in / rate_out;
    advance_frac = rate_in % rate_out;
    // The filter runs at the higher (reduced) rate with its cutoff at half the lower one.
    const uint32_t lpf_rate = std::max(rate_in, rate_out);
    const double cutoff = static_cast<double>(std::min(rate_in, rate_out)) * 0.5 * 1;
    for (uint32_t i = 0; i < kLowPassOrder / 2; ++i) {
      // Butterworth: section i of an even order n has Q = 1 / (2 cos((2i + 1) pi / (2n))).
      const double angle = (1 + i * 2) * (kPi / (kLowPassOrder * 2));
      const double q = 1 / (2 * cosine_as_miniaudio(angle));
      sections[i] = low_pass_section(lpf_rate, cutoff, q);
    }
  }

  float filter(float x) {
    for (Biquad& s : sections) x = s.step(x);
    return x;
  }

  float interpolate() const {
    const float a = static_cast<float>(time_frac) / static_cast<float>(rate_out);
    const float diff = x1 - x0;
    const float scaled = diff * a;
    return x0 + scaled;
  }

  void advance() {
    time_int += advance_int;
    time_frac += advance_frac;
    if (time_frac >= rate_out) {
      time_frac -= rate_out;
      time_int += 1;
    }
  }
};

}  // namespace

uint64_t frame_count_after_resampling(uint32_t rate_out, uint32_t rate_in, uint64_t frames_in) {
  if (rate_in == 0 || rate_out == 0 || frames_in == 0) return 0;
  if (rate_out == rate_in) return frames_in;
  uint64_t out = frames_in * rate_out / rate_in;
  // miniaudio's own estimate of the input those frames consume (its formula, kept as is).
  const uint64_t from_frac = out * (rate_in / rate_out) / rate_out;
  const uint64_t consumed = out * (rate_in % rate_out) + from_frac;
  if (consumed <= frames_in) out += 1;
  return out;
}

std::vector<float> resample_linear(std::span<const float> in, uint32_t rate_in, uint32_t rate_out,
                                   uint64_t out_frames) {
  std::vector<float> out(out_frames, 0.0f);
  if (rate_in == rate_out) {
    std::copy_n(in.begin(), std::min<uint64_t>(in.size(), out_frames), out.begin());
    return out;
  }
  LinearResampler rs(rate_in, rate_out);
  const bool downsampling = rs.rate_in > rs.rate_out;
  size_t next_in = 0;
  for (uint64_t produced = 0; produced < out_frames; ++produced) {
    // Load input until the integer part of the time is used up; downsampling filters each
    // input sample as it is loaded.
    while (rs.time_int > 0 && next_in < in.size()) {
      rs.x0 = rs.x1;
      rs.x1 = downsampling ? rs.filter(in[next_in]) : in[next_in];
      ++next_in;
      rs.time_int -= 1;
    }
    if (rs.time_int > 0) break;  // out of input: the reference stops here too
    const float y = rs.interpolate();
    out[produced] = downsampling ? y : rs.filter(y);
    rs.advance();
  }
  return out;
}

}  // namespace hearth::media::audio_detail

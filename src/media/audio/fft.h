// The reference's real-input FFT for the log-mel (a size that halves down to an odd length:
// 400 -> 200 -> 100 -> 50 -> 25): radix-2 decimation in time while the length is even, a plain
// DFT for the odd leaves, all in float with twiddles from one sin/cos table of the full length.
// Kept in this order of operations so the spectrum matches the reference to the bit.
#pragma once

#include <cstdint>
#include <vector>

namespace hearth::media::audio_detail {

class RealFft {
 public:
  explicit RealFft(int32_t n);

  int32_t size() const { return n_; }

  // in: n real samples. out: n complex values (re, im interleaved), X[k] = sum x[t] e^{-2 pi i k t
  // / n}.
  void forward(const float* in, float* out);

 private:
  void transform(const float* in, int32_t n, float* out, float* scratch);

  int32_t n_ = 0;
  std::vector<float> sin_;  // sinf(2 pi i / n), i < n
  std::vector<float> cos_;
  std::vector<float> scratch_;
};

// The same transform by the definition (double accumulation), for tests.
void reference_dft(const float* in, int32_t n, double* out);

}  // namespace hearth::media::audio_detail

// See log_mel.h. The arithmetic follows the reference step by step (float window and power,
// mel sums of four float products accumulated in double, log10 in double stored as float), so
// the features are bit-identical; the file is built with -ffp-contract=off.
#include "media/audio/log_mel.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "media/audio/fft.h"

namespace hearth::media {

namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr float kMelFloor = 5.960464477539063e-08f;  // the reference's power floor (2^-24)
constexpr int32_t kFramesPerChunk = 3000;            // 30 s at a 160-sample hop

Status bad(const std::string& what) {
  return error(ErrorCode::kInvalidArgument, "audio: " + what);
}

// Slaney mel scale: linear below 1 kHz, logarithmic above.
double hz_to_mel(double hz) {
  const double log_step = std::log(6.4) / 27.0;
  return hz < 1000.0 ? hz * (3 / 200.) : 1000.0 * (3 / 200.) + std::log(hz / 1000.0) / log_step;
}
double mel_to_hz(double mel) {
  const double log_step = std::log(6.4) / 27.0;
  const double min_log_mel = 1000.0 * (3 / 200.);
  return mel < min_log_mel ? mel / (3 / 200.) : 1000.0 * std::exp((mel - min_log_mel) * log_step);
}

// Periodic Hann window: sin/cos in float of a double angle, the rest in double.
std::vector<float> hann_window(int32_t length) {
  std::vector<float> w(length);
  for (int32_t i = 0; i < length; ++i) {
    const double angle = (2.0 * kPi * i) / static_cast<uint32_t>(length);
    w[i] = static_cast<float>(0.5 * (1.0 - std::cos(static_cast<float>(angle))));
  }
  return w;
}

// Audio laid out as the reference pads it: 'pad' samples mirrored from samples[1..pad] at the
// front, then the audio, then 30 s of zeros and 'pad' more.
std::vector<float> pad_for_frames(std::span<const float> samples, int32_t pad, int32_t rate) {
  const size_t n = samples.size();
  std::vector<float> padded(n + static_cast<size_t>(rate) * 30 + 2 * static_cast<size_t>(pad),
                            0.0f);
  for (int32_t i = 0; i < pad; ++i) padded[i] = samples[pad - i];
  std::copy(samples.begin(), samples.end(), padded.begin() + pad);
  return padded;
}

// log10 of the mel energies of one windowed frame's power spectrum (n_bins values).
void mel_column(const float* power, const std::vector<float>& filters, int32_t n_mel,
                int32_t n_bins, float* column, size_t stride) {
  for (int32_t m = 0; m < n_mel; ++m) {
    const float* f = filters.data() + static_cast<size_t>(m) * n_bins;
    double sum = 0.0;
    int32_t k = 0;
    // Four float products summed in float, then added in double (the reference's unrolling).
    for (; k < n_bins - 3; k += 4) {
      sum += power[k] * f[k] + power[k + 1] * f[k + 1] + power[k + 2] * f[k + 2] +
             power[k + 3] * f[k + 3];
    }
    for (; k < n_bins; ++k) sum += power[k] * f[k];
    sum = std::max(sum, static_cast<double>(kMelFloor));
    column[static_cast<size_t>(m) * stride] = static_cast<float>(std::log10(sum));
  }
}

Status check_params(const MelParams& p) {
  if (p.n_mel <= 0 || p.n_mel > 256)
    return bad("n_mel " + std::to_string(p.n_mel) + " is out of range");
  if (p.n_fft < 2 || p.n_fft > 8192 || p.window_length <= 0 || p.window_length > p.n_fft ||
      p.hop_length <= 0 || p.sample_rate <= 0) {
    return bad("log-mel parameters are out of range");
  }
  const size_t bins = static_cast<size_t>(p.n_fft / 2 + 1);
  if (!p.filters.empty() && p.filters.size() != static_cast<size_t>(p.n_mel) * bins) {
    return bad("mel filter bank has " + std::to_string(p.filters.size()) + " values, expected " +
               std::to_string(static_cast<size_t>(p.n_mel) * bins));
  }
  return Status::ok();
}

}  // namespace

bool uses_whisper_log_mel(std::string_view type) {
  return type == "ultravox" || type == "qwen2a" || type == "qwen2.5o" || type == "voxtral" ||
         type == "musicflamingo" || type == "glma" || type == "meralion";
}

std::vector<float> mel_filter_bank(int32_t n_mel, int32_t n_fft, int32_t sample_rate) {
  const double fmax = static_cast<double>(0.5f * static_cast<float>(sample_rate));
  const double bin_hz = static_cast<double>(sample_rate) / static_cast<double>(n_fft);
  const double m_lo = hz_to_mel(0.0), m_hi = hz_to_mel(fmax);
  std::vector<double> hz(static_cast<size_t>(n_mel) + 2);
  for (int32_t i = 0; i < n_mel + 2; ++i) {
    hz[i] = mel_to_hz(m_lo + (m_hi - m_lo) * (static_cast<double>(i) / (n_mel + 1)));
  }
  const int32_t n_bins = n_fft / 2 + 1;
  std::vector<float> out(static_cast<size_t>(n_mel) * n_bins, 0.0f);
  for (int32_t m = 0; m < n_mel; ++m) {
    const double left = hz[m], center = hz[m + 1], right = hz[m + 2];
    const double rise = std::max(1e-30, center - left), fall = std::max(1e-30, right - center);
    const double area_norm = 2.0 / std::max(1e-30, right - left);
    for (int32_t k = 0; k < n_bins; ++k) {
      const double f = k * bin_hz;
      double w = 0.0;
      if (f >= left && f <= center) {
        w = (f - left) / rise;
      } else if (f > center && f <= right) {
        w = (right - f) / fall;
      }
      out[static_cast<size_t>(m) * n_bins + k] = static_cast<float>(w * area_norm * 1.0f);
    }
  }
  return out;
}

Result<std::vector<MelChunk>> whisper_log_mel(std::span<const float> samples,
                                              const MelParams& params) {
  if (Status s = check_params(params); !s) return s;
  if (samples.empty()) return bad("no samples for the log-mel");
  // The reflection needs half a window plus one sample: shorter audio is zero-extended first.
  const int32_t pad = params.n_fft / 2;
  std::vector<float> extended;
  if (samples.size() < static_cast<size_t>(pad) + 1) {
    extended.assign(samples.begin(), samples.end());
    extended.resize(static_cast<size_t>(pad) + 1, 0.0f);
    samples = extended;
  }
  const std::vector<float> padded = pad_for_frames(samples, pad, params.sample_rate);
  const int32_t frame = params.n_fft, hop = params.hop_length;
  const size_t n_frames = (padded.size() - static_cast<size_t>(frame)) / hop + 1;
  const int32_t n_bins = frame / 2 + 1;
  const std::vector<float> filters = params.filters.empty()
                                         ? mel_filter_bank(params.n_mel, frame, params.sample_rate)
                                         : params.filters;

  // A window shorter than the FFT sits centred in it, zeros around.
  std::vector<float> window(frame, 0.0f);
  const std::vector<float> hann = hann_window(params.window_length);
  std::copy(hann.begin(), hann.end(), window.begin() + (frame - params.window_length) / 2);

  // All frames, mel-major: mel[m * n_frames + t].
  std::vector<float> mel(static_cast<size_t>(params.n_mel) * n_frames);
  audio_detail::RealFft fft(frame);
  std::vector<float> windowed(frame), spectrum(2 * static_cast<size_t>(frame)), power(n_bins);
  // A frame whose windowed samples are all zero has zero power in every bin (the FFT of zeros is
  // zeros), so its column is the same for every such frame: most frames of short audio, which
  // is padded with 30 s of silence.
  std::vector<float> silent_column(params.n_mel);
  mel_column(power.data(), filters, params.n_mel, n_bins, silent_column.data(), 1);
  for (size_t t = 0; t < n_frames; ++t) {
    const float* x = padded.data() + t * hop;
    bool silent = true;
    for (int32_t j = 0; j < frame; ++j) {
      windowed[j] = window[j] * x[j];
      silent = silent && windowed[j] == 0.0f;
    }
    if (silent) {
      for (int32_t m = 0; m < params.n_mel; ++m)
        mel[static_cast<size_t>(m) * n_frames + t] = silent_column[m];
      continue;
    }
    fft.forward(windowed.data(), spectrum.data());
    for (int32_t k = 0; k < n_bins; ++k) {
      power[k] = spectrum[2 * k] * spectrum[2 * k] + spectrum[2 * k + 1] * spectrum[2 * k + 1];
    }
    mel_column(power.data(), filters, params.n_mel, n_bins, mel.data() + t, n_frames);
  }

  // Whisper's dynamic range: nothing below (max - 8), then (x + 4) / 4.
  double floor_value = -1e20;
  for (float v : mel) floor_value = std::max(floor_value, static_cast<double>(v));
  floor_value -= 8.0;
  for (float& v : mel) {
    if (v < floor_value) v = static_cast<float>(floor_value);
    v = static_cast<float>((v + 4.0) / 4.0);
  }

  std::vector<MelChunk> chunks;
  for (size_t off = 0; off + kFramesPerChunk <= n_frames; off += kFramesPerChunk) {
    MelChunk c;
    c.n_mel = params.n_mel;
    c.n_frames = kFramesPerChunk;
    c.data.reserve(static_cast<size_t>(params.n_mel) * kFramesPerChunk);
    for (int32_t m = 0; m < params.n_mel; ++m) {
      const float* row = mel.data() + static_cast<size_t>(m) * n_frames + off;
      c.data.insert(c.data.end(), row, row + kFramesPerChunk);
    }
    chunks.push_back(std::move(c));
  }
  return chunks;
}

}  // namespace hearth::media

// WAV (RIFF/WAVE) parsing and sample conversion, following the RIFF/WAVE specification and
// the behaviour of the reference's decoder (dr_wav inside miniaudio) with f32 output: which
// chunks it reads, how it clamps a data chunk that runs past the end of the file, and how each
// sample format becomes a float.
#include <cmath>
#include <cstring>
#include <string>

#include "media/audio/audio_steps.h"

namespace hearth::media::audio_detail {
namespace {

constexpr uint16_t kFormatPcm = 0x0001;
constexpr uint16_t kFormatAdpcm = 0x0002;
constexpr uint16_t kFormatIeeeFloat = 0x0003;
constexpr uint16_t kFormatAlaw = 0x0006;
constexpr uint16_t kFormatMulaw = 0x0007;
constexpr uint16_t kFormatDviAdpcm = 0x0011;
constexpr uint16_t kFormatExtensible = 0xFFFE;

// dr_wav's bounds on the fmt chunk, and miniaudio's channel limit (MA_MAX_CHANNELS) for the
// converter that follows.
constexpr uint32_t kMaxSampleRate = 384000;
constexpr uint32_t kMaxChannels = 254;
constexpr uint32_t kMaxBitsPerSample = 64;

uint16_t le16(const uint8_t* p) {
  return static_cast<uint16_t>(p[0] | (p[1] << 8));
}
uint32_t le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | (static_cast<uint32_t>(p[1]) << 8) |
         (static_cast<uint32_t>(p[2]) << 16) | (static_cast<uint32_t>(p[3]) << 24);
}

Status bad(const std::string& what) {
  return error(ErrorCode::kInvalidArgument, "audio: " + what);
}

struct WavFormat {
  uint16_t format_tag = 0;  // after resolving WAVE_FORMAT_EXTENSIBLE's sub-format
  uint16_t channels = 0;
  uint32_t sample_rate = 0;
  uint16_t block_align = 0;
  uint16_t bits_per_sample = 0;
};

struct WavLayout {
  WavFormat format;
  size_t data_offset = 0;
  uint64_t data_size = 0;  // clamped to the file
};

// Reads the fmt chunk body of `size` bytes at p (size bytes are known to be present).
Result<WavFormat> parse_fmt(const uint8_t* p, uint32_t size) {
  if (size < 16) return bad("WAV fmt chunk of " + std::to_string(size) + " bytes is too short");
  WavFormat f;
  f.format_tag = le16(p);
  f.channels = le16(p + 2);
  f.sample_rate = le32(p + 4);
  f.block_align = le16(p + 12);
  f.bits_per_sample = le16(p + 14);
  if (f.format_tag != kFormatExtensible) return f;
  // WAVE_FORMAT_EXTENSIBLE: cbSize 22, valid bits, channel mask, then the sub-format GUID whose
  // first two bytes are the format tag (dr_wav reads only those two).
  if (size < 18 || le16(p + 16) != 22 || size < 40) {
    return bad("WAV WAVE_FORMAT_EXTENSIBLE fmt chunk is malformed (needs cbSize 22)");
  }
  f.format_tag = le16(p + 24);
  return f;
}

Status check_format(const WavFormat& f) {
  if (f.channels == 0 || f.channels > kMaxChannels) {
    return bad("WAV has " + std::to_string(f.channels) + " channels (1 to 254 supported)");
  }
  if (f.sample_rate == 0 || f.sample_rate > kMaxSampleRate) {
    return bad("WAV sample rate " + std::to_string(f.sample_rate) + " Hz is out of range (1 to " +
               std::to_string(kMaxSampleRate) + ")");
  }
  if (f.bits_per_sample == 0 || f.bits_per_sample > kMaxBitsPerSample || f.block_align == 0) {
    return bad("WAV fmt chunk has " + std::to_string(f.bits_per_sample) +
               " bits per sample and block align " + std::to_string(f.block_align));
  }
  switch (f.format_tag) {
    case kFormatPcm:
    case kFormatIeeeFloat:
      return Status::ok();
    case kFormatAlaw:
      return error(ErrorCode::kUnsupported, "audio: A-law WAV is not supported");
    case kFormatMulaw:
      return error(ErrorCode::kUnsupported, "audio: mu-law WAV is not supported");
    case kFormatAdpcm:
    case kFormatDviAdpcm:
      return error(ErrorCode::kUnsupported, "audio: ADPCM WAV is not supported");
    default:
      return error(ErrorCode::kUnsupported,
                   "audio: WAV encoding tag " + std::to_string(f.format_tag) + " is not supported");
  }
}

// Walks the chunks after "WAVE" until the data chunk, as dr_wav does: fmt is parsed, other
// chunks (LIST, fact, ...) are skipped with their pad byte, and a chunk that claims to run past
// the end of the file ends the walk.
Result<WavLayout> parse_layout(std::span<const uint8_t> bytes) {
  WavLayout layout;
  bool have_fmt = false;
  size_t pos = 12;
  while (bytes.size() - pos >= 8) {
    const uint8_t* header = bytes.data() + pos;
    const uint32_t size = le32(header + 4);
    pos += 8;
    const size_t left = bytes.size() - pos;
    if (std::memcmp(header, "fmt ", 4) == 0) {
      if (size > left) return bad("WAV fmt chunk runs past the end of the file");
      auto fmt = parse_fmt(bytes.data() + pos, size);
      if (!fmt) return fmt.status();
      layout.format = fmt.value();
      have_fmt = true;
    } else if (std::memcmp(header, "data", 4) == 0) {
      layout.data_offset = pos;
      layout.data_size = std::min<uint64_t>(size, left);  // a truncated file keeps what it has
      if (!have_fmt) return bad("WAV data chunk comes before its fmt chunk");
      return layout;
    }
    const uint64_t skip = uint64_t{size} + (size % 2);
    if (skip > left) break;
    pos += skip;
  }
  if (!have_fmt) return bad("WAV has no fmt chunk");
  return bad("WAV has no data chunk");
}

// One sample of `width` bytes at p as dr_wav converts it to f32.
float pcm_to_f32(const uint8_t* p, uint32_t width) {
  switch (width) {
    case 1: {
      float x = p[0];
      x = x * 0.00784313725490196078f;  // 1 / 127.5, in float
      return x - 1;
    }
    case 2:
      return static_cast<float>(static_cast<int16_t>(le16(p))) * 0.000030517578125f;
    case 3: {
      const uint32_t v = (uint32_t{p[0]} << 8) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 24);
      const double x = static_cast<double>(static_cast<int32_t>(v) >> 8);
      return static_cast<float>(x * 0.00000011920928955078125);
    }
    case 4:
      return static_cast<float>(static_cast<int32_t>(le32(p)) / 2147483648.0);
    default: {
      if (width > 8) return 0.0f;  // dr_wav writes silence for wider samples
      // 5 to 8 bytes: left-aligned into 64 bits, scaled by 1 / (2^63 - 1).
      uint64_t sample = 0;
      uint32_t shift = (8 - width) * 8;
      for (uint32_t j = 0; j < width; ++j, shift += 8) sample |= uint64_t{p[j]} << shift;
      return static_cast<float>(static_cast<int64_t>(sample) / 9223372036854775807.0);
    }
  }
}

float ieee_to_f32(const uint8_t* p, uint32_t width) {
  if (width == 4) {
    float v;
    std::memcpy(&v, p, 4);
    return v;
  }
  if (width == 8) {
    double v;
    std::memcpy(&v, p, 8);
    return static_cast<float>(v);
  }
  return 0.0f;
}

}  // namespace

Result<SourcePcm> decode_wav(std::span<const uint8_t> bytes, const AudioLimits& limits) {
  auto layout_or = parse_layout(bytes);
  if (!layout_or) return layout_or.status();
  const WavLayout& layout = layout_or.value();
  const WavFormat& f = layout.format;
  if (Status s = check_format(f); !s) return s;

  // Bytes per frame as dr_wav counts them: whole-byte samples pack tightly, others use the
  // block alignment; each channel's sample then takes an equal share.
  const uint32_t frame_bytes =
      (f.bits_per_sample % 8 == 0) ? f.bits_per_sample * f.channels / 8 : f.block_align;
  const uint32_t width = frame_bytes / f.channels;
  if (width == 0 || frame_bytes % f.channels != 0) {
    return bad("WAV frame of " + std::to_string(frame_bytes) + " bytes does not split into " +
               std::to_string(f.channels) + " samples");
  }
  const uint64_t frames = layout.data_size / frame_bytes;
  if (frames == 0) return bad("WAV data chunk holds no samples");
  const double seconds = static_cast<double>(frames) / f.sample_rate;
  if (seconds > limits.max_seconds) {
    return error(ErrorCode::kOutOfRange, "audio: WAV lasts " + std::to_string(seconds) +
                                             " s, more than the limit of " +
                                             std::to_string(limits.max_seconds) + " s");
  }

  SourcePcm out;
  out.sample_rate = static_cast<int32_t>(f.sample_rate);
  out.mono.resize(frames);
  const uint8_t* p = bytes.data() + layout.data_offset;
  const bool is_float = f.format_tag == kFormatIeeeFloat;
  const float divisor = static_cast<float>(f.channels);
  for (uint64_t i = 0; i < frames; ++i, p += frame_bytes) {
    if (f.channels == 1) {  // miniaudio passes mono through untouched
      out.mono[i] = is_float ? ieee_to_f32(p, width) : pcm_to_f32(p, width);
      continue;
    }
    float sum = 0;
    for (uint32_t c = 0; c < f.channels; ++c) {
      sum += is_float ? ieee_to_f32(p + c * width, width) : pcm_to_f32(p + c * width, width);
    }
    out.mono[i] = sum / divisor;
  }
  return out;
}

}  // namespace hearth::media::audio_detail

// decode_audio: sniff the container as the reference does, decode to mono at the source rate,
// then resample to the projector's rate with miniaudio's default resampler.
#include "media/audio/audio_decode.h"

#include <cstring>
#include <string>

#include "media/audio/audio_steps.h"

namespace hearth::media {

namespace {

bool starts_with(std::span<const uint8_t> bytes, size_t offset, const char* tag) {
  const size_t n = std::strlen(tag);
  return bytes.size() >= offset + n && std::memcmp(bytes.data() + offset, tag, n) == 0;
}

bool is_wav(std::span<const uint8_t> b) {
  return starts_with(b, 0, "RIFF") && starts_with(b, 8, "WAVE");
}
bool is_flac(std::span<const uint8_t> b) {
  return starts_with(b, 0, "fLaC");
}

}  // namespace

bool looks_like_audio(std::span<const uint8_t> bytes) {
  if (bytes.size() < 12) return false;  // the reference's first test
  const bool mpeg_sync = bytes[0] == 0xFF && (bytes[1] & 0xE0) == 0xE0;
  return is_wav(bytes) || starts_with(bytes, 0, "ID3") || mpeg_sync || is_flac(bytes);
}

Result<AudioPcm> decode_audio(std::span<const uint8_t> bytes, int32_t target_rate,
                              const AudioLimits& limits) {
  if (bytes.empty()) return error(ErrorCode::kInvalidArgument, "audio: empty input");
  if (static_cast<int64_t>(bytes.size()) > limits.max_bytes) {
    return error(ErrorCode::kOutOfRange, "audio: " + std::to_string(bytes.size()) +
                                             " bytes, more than the limit of " +
                                             std::to_string(limits.max_bytes));
  }
  if (target_rate <= 0 || target_rate > 384000) {
    return error(ErrorCode::kInvalidArgument,
                 "audio: target sample rate " + std::to_string(target_rate) + " is out of range");
  }
  if (!looks_like_audio(bytes)) {
    return error(ErrorCode::kInvalidArgument, "audio: not a WAV, MP3 or FLAC file");
  }
  auto source = is_wav(bytes)    ? audio_detail::decode_wav(bytes, limits)
                : is_flac(bytes) ? audio_detail::decode_flac(bytes, limits)
                                 : audio_detail::decode_mp3(bytes, limits);
  if (!source) return source.status();
  const auto& src = source.value();
  const auto rate_in = static_cast<uint32_t>(src.sample_rate);
  const auto rate_out = static_cast<uint32_t>(target_rate);
  const uint64_t declared = src.declared_frames != 0 ? src.declared_frames : src.mono.size();
  const uint64_t out_frames =
      audio_detail::frame_count_after_resampling(rate_out, rate_in, declared);
  if (static_cast<double>(out_frames) / target_rate > limits.max_seconds + 1.0) {
    return error(ErrorCode::kOutOfRange, "audio: resampled length is over the duration limit");
  }
  AudioPcm out;
  out.sample_rate = target_rate;
  out.samples = audio_detail::resample_linear(src.mono, rate_in, rate_out, out_frames);
  return out;
}

}  // namespace hearth::media

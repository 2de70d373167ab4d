// libFuzzer target for audio decoding and the whisper log-mel: arbitrary bytes through
// decode_audio (target rate picked by the last byte, which WAV and MP3 ignore after their data)
// and, when they decode to at most half a second and bits 2-4 of the last byte are set (one input
// in eight), through whisper_log_mel (always 30 s of frames: slow under the sanitizers, so not on
// every input). A failure must be a clean "audio: ..." error; a success must give consistent sizes.
//
//   build-fuzz/bin/audio_fuzz -dict=tests/fuzz/audio.dict NEW_CORPUS tests/fuzz/corpus/audio
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "media/audio/audio_decode.h"
#include "media/audio/log_mel.h"

namespace {

[[noreturn]] void fail(const std::string& problem) {
  std::fprintf(stderr, "audio_fuzz: %s\n", problem.c_str());
  std::abort();
}

void check_error(const hearth::Status& status) {
  if (status.message().rfind("audio: ", 0) != 0)
    fail("error without the audio prefix: " + status.message());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  static constexpr int32_t kRates[] = {16000, 24000, 8000, 44100};
  const int32_t rate = size == 0 ? 16000 : kRates[data[size - 1] % 4];
  hearth::media::AudioLimits limits;
  limits.max_seconds = 5.0;  // keeps each run short; the checks are the same
  auto pcm = hearth::media::decode_audio(bytes, rate, limits);
  if (!pcm) {
    check_error(pcm.status());
    return 0;
  }
  if (pcm.value().sample_rate != rate) fail("wrong output rate");
  if (pcm.value().samples.empty()) fail("success with no samples");
  if (pcm.value().samples.size() > static_cast<size_t>(rate) * 6) fail("longer than the limit");
  if (pcm.value().samples.size() > static_cast<size_t>(rate) / 2 ||
      (data[size - 1] & 0x1C) != 0x1C) {
    return 0;
  }
  hearth::media::MelParams params;
  params.sample_rate = rate;
  auto mel = hearth::media::whisper_log_mel(pcm.value().samples, params);
  if (!mel) {
    check_error(mel.status());
    return 0;
  }
  for (const auto& chunk : mel.value()) {
    if (chunk.data.size() != static_cast<size_t>(chunk.n_mel) * chunk.n_frames) fail("chunk size");
  }
  return 0;
}

// The whisper log-mel against the reference's features (bit-exact: SHA-256 of every chunk),
// the FFT against the DFT by definition, and parameters it must refuse.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "media/audio/audio_decode.h"
#include "media/audio/fft.h"
#include "media/audio/log_mel.h"
#include "unit/media_audio/audio_reference.h"

namespace hearth::media {
namespace {

using testing::audio_reference;
using testing::sha256_of_floats;

void expect_mel_matches(const std::vector<float>& pcm, const nlohmann::json& ref) {
  for (int n_mel : {80, 128}) {
    SCOPED_TRACE("n_mel " + std::to_string(n_mel));
    MelParams params;
    params.n_mel = n_mel;
    auto chunks = whisper_log_mel(pcm, params);
    ASSERT_TRUE(chunks) << chunks.status().message();
    const auto& expected = ref.at("mel" + std::to_string(n_mel)).at("chunks");
    ASSERT_EQ(chunks.value().size(), expected.size());
    for (size_t c = 0; c < expected.size(); ++c) {
      const MelChunk& got = chunks.value()[c];
      EXPECT_EQ(got.n_mel, expected[c].at("n_mel").get<int>());
      EXPECT_EQ(got.n_frames, expected[c].at("n_len").get<int>());
      ASSERT_EQ(got.data.size(), static_cast<size_t>(got.n_mel) * got.n_frames);
      for (const auto& s : expected[c].at("samples")) {
        const auto i = s.at(0).get<size_t>();
        EXPECT_EQ(got.data[i], s.at(1).get<float>()) << "chunk " << c << " value " << i;
      }
      EXPECT_EQ(sha256_of_floats(got.data), expected[c].at("sha256").get<std::string>())
          << "chunk " << c;
    }
  }
}

TEST(LogMel, WavAndFlacClipsEqualTheReferenceBitForBit) {
  for (const auto& [name, ref] : audio_reference().items()) {
    if (name == "test-2.mp3" || name == "long_u8_8k.wav" || name.find('[') != std::string::npos) {
      continue;
    }
    SCOPED_TRACE(name);
    auto pcm = decode_audio(testing::audio_bytes(name), 16000);
    ASSERT_TRUE(pcm) << pcm.status().message();
    expect_mel_matches(pcm.value().samples, ref);
  }
}

// 31 s: two 30 s chunks, the second holding the last second and padding.
TEST(LogMel, LongClipSplitsIntoTwoChunksAsTheReference) {
  auto pcm = decode_audio(testing::long_u8_clip(), 16000);
  ASSERT_TRUE(pcm) << pcm.status().message();
  expect_mel_matches(pcm.value().samples, audio_reference().at("long_u8_8k.wav"));
}

// Through libmpg123 the samples differ slightly from the reference's (see decode_test), so the
// features are compared with a tolerance: measured over the whole first chunk (128 x 3000), the
// largest difference was 6.8e-3 (in a quiet frame, where log10 magnifies it) and the RMS
// 1.8e-4. (Fed the reference's own samples, every value is equal.)
TEST(LogMel, Mp3FeaturesAreCloseToTheReference) {
  auto pcm = decode_audio(testing::audio_bytes("test-2.mp3"), 16000);
  ASSERT_TRUE(pcm) << pcm.status().message();
  MelParams params;
  params.n_mel = 128;
  auto chunks = whisper_log_mel(pcm.value().samples, params);
  ASSERT_TRUE(chunks) << chunks.status().message();
  const auto& expected = audio_reference().at("test-2.mp3").at("mel128").at("chunks");
  ASSERT_EQ(chunks.value().size(), expected.size());
  for (const auto& s : expected[0].at("samples")) {
    const auto i = s.at(0).get<size_t>();
    EXPECT_NEAR(chunks.value()[0].data[i], s.at(1).get<float>(), 1e-2) << "value " << i;
  }
}

TEST(LogMel, FftAgreesWithTheDefinition) {
  for (int32_t n : {400, 256, 50, 25}) {
    SCOPED_TRACE(n);
    std::mt19937 rng(n);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> x(n);
    for (float& v : x) v = dist(rng);
    std::vector<float> got(2 * static_cast<size_t>(n));
    audio_detail::RealFft fft(n);
    fft.forward(x.data(), got.data());
    std::vector<double> want(2 * static_cast<size_t>(n));
    audio_detail::reference_dft(x.data(), n, want.data());
    for (int32_t k = 0; k < 2 * n; ++k) EXPECT_NEAR(got[k], want[k], 2e-4 * std::sqrt(n)) << k;
  }
}

TEST(LogMel, FilterBankHasUnitAreaTriangles) {
  const auto f = mel_filter_bank(80, 400, 16000);
  ASSERT_EQ(f.size(), 80u * 201u);
  for (int m = 0; m < 80; ++m) {
    int nonzero = 0;
    for (int k = 0; k < 201; ++k) {
      EXPECT_GE(f[m * 201 + k], 0.0f);
      nonzero += f[m * 201 + k] > 0.0f;
    }
    EXPECT_GE(nonzero, 1) << "mel " << m;
  }
}

TEST(LogMel, VeryShortAudioIsZeroExtended) {
  std::vector<float> three = {0.5f, -0.25f, 0.125f};
  auto chunks = whisper_log_mel(three, MelParams{});
  ASSERT_TRUE(chunks) << chunks.status().message();
  ASSERT_EQ(chunks.value().size(), 1u);
  EXPECT_EQ(chunks.value()[0].n_frames, 3000);
}

TEST(LogMel, RefusesWhatItCannotCompute) {
  std::vector<float> pcm(1000, 0.1f);
  EXPECT_EQ(whisper_log_mel({}, MelParams{}).status().message(),
            "audio: no samples for the log-mel");
  MelParams bad_mel;
  bad_mel.n_mel = 0;
  EXPECT_FALSE(whisper_log_mel(pcm, bad_mel));
  MelParams bad_filters;
  bad_filters.filters.assign(10, 1.0f);
  EXPECT_EQ(whisper_log_mel(pcm, bad_filters).status().message(),
            "audio: mel filter bank has 10 values, expected 16080");
  MelParams bad_hop;
  bad_hop.hop_length = 0;
  EXPECT_FALSE(whisper_log_mel(pcm, bad_hop));
}

TEST(LogMel, WhisperFamiliesAreTheReferences) {
  for (const char* t :
       {"ultravox", "qwen2a", "qwen2.5o", "voxtral", "musicflamingo", "glma", "meralion"}) {
    EXPECT_TRUE(uses_whisper_log_mel(t)) << t;
  }
  for (const char* t : {"qwen3a", "lfm2a", "gemma4a", "parakeet", "granite_speech", "gemma3"}) {
    EXPECT_FALSE(uses_whisper_log_mel(t)) << t;
  }
}

}  // namespace
}  // namespace hearth::media

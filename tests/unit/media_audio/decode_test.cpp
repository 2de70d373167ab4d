// decode_audio against the reference's miniaudio output (bit-exact for WAV, a stated tolerance
// for MP3, whose decoder differs), and bad input.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "media/audio/audio_decode.h"
#include "media/audio/audio_steps.h"
#include "unit/media_audio/audio_reference.h"

namespace hearth::media {
namespace {

using testing::audio_bytes;
using testing::audio_reference;
using testing::sha256_of_floats;

constexpr int32_t kRate = 16000;

// Every sample the reference listed, compared exactly, then the whole buffer by digest.
void expect_matches_reference(const std::vector<float>& pcm, const nlohmann::json& ref) {
  ASSERT_EQ(pcm.size(), ref.at("n").get<size_t>());
  for (const auto& s : ref.at("samples")) {
    const auto i = s.at(0).get<size_t>();
    EXPECT_EQ(pcm[i], s.at(1).get<float>()) << "sample " << i;
  }
  EXPECT_EQ(sha256_of_floats(pcm), ref.at("sha256").get<std::string>());
}

TEST(AudioDecode, WavClipsEqualTheReferenceBitForBit) {
  int checked = 0;
  for (const auto& [name, ref] : audio_reference().items()) {
    if (name.size() < 4 || name.substr(name.size() - 4) != ".wav" || name == "long_u8_8k.wav")
      continue;
    SCOPED_TRACE(name);
    const auto bytes = audio_bytes(name);
    auto pcm = decode_audio(bytes, kRate);
    ASSERT_TRUE(pcm) << pcm.status().message();
    EXPECT_EQ(pcm.value().sample_rate, kRate);
    expect_matches_reference(pcm.value().samples, ref);
    ++checked;
  }
  EXPECT_EQ(checked, 9);
}

// libFLAC decodes the same integers as the reference's dr_flac (FLAC is lossless); the float
// conversion and mixing are then the reference's.
TEST(AudioDecode, FlacClipsEqualTheReferenceBitForBit) {
  for (const char* name : {"mono_16_44k.flac", "stereo_24_48k.flac", "stereo_16_16k.flac"}) {
    SCOPED_TRACE(name);
    auto pcm = decode_audio(audio_bytes(name), kRate);
    ASSERT_TRUE(pcm) << pcm.status().message();
    expect_matches_reference(pcm.value().samples, audio_reference().at(name));
  }
}

// A FLAC stream cut after its first frame: the reference sizes its output by STREAMINFO's total
// and leaves what it cannot decode at zero; cut inside the first frame, it fails.
TEST(AudioDecode, TruncatedFlacIsReadAsTheReferenceReadsIt) {
  auto flac = audio_bytes("stereo_24_48k.flac");
  std::vector<uint8_t> cut(flac.begin(), flac.begin() + 40000);
  auto pcm = decode_audio(cut, kRate);
  ASSERT_TRUE(pcm) << pcm.status().message();
  expect_matches_reference(pcm.value().samples, audio_reference().at("stereo_24_48k.flac[:40000]"));
  cut.resize(12000);
  EXPECT_EQ(decode_audio(cut, kRate).status().message(), "audio: FLAC holds no decodable frame");
}

TEST(AudioDecode, LongClipEqualsTheReference) {
  const auto bytes = testing::long_u8_clip();
  auto pcm = decode_audio(bytes, kRate);
  ASSERT_TRUE(pcm) << pcm.status().message();
  expect_matches_reference(pcm.value().samples, audio_reference().at("long_u8_8k.wav"));
}

// libmpg123 and the reference's dr_mp3 are different decoders (both float synthesis filters),
// so MP3 is not bit-exact: over all 279034 samples of test-2.mp3 the largest difference was
// 2.3e-5 (RMS 5.1e-6, signal RMS 0.16) with Debian's libmpg123 1.31. The sample count must
// agree, the listed samples stay within 5e-5 and the energy within 1e-4 relative.
TEST(AudioDecode, Mp3IsCloseToTheReference) {
  const auto& ref = audio_reference().at("test-2.mp3");
  auto pcm = decode_audio(audio_bytes("test-2.mp3"), kRate);
  ASSERT_TRUE(pcm) << pcm.status().message();
  const auto& s = pcm.value().samples;
  ASSERT_EQ(s.size(), ref.at("n").get<size_t>());
  for (const auto& pair : ref.at("samples")) {
    const auto i = pair.at(0).get<size_t>();
    EXPECT_NEAR(s[i], pair.at(1).get<float>(), 5e-5) << "sample " << i;
  }
  double sum_sq = 0;
  for (float v : s) sum_sq += static_cast<double>(v) * v;
  EXPECT_NEAR(sum_sq, ref.at("sum_sq").get<double>(), 1e-4 * ref.at("sum_sq").get<double>());
}

TEST(AudioDecode, SniffsAsTheReference) {
  // Literals hold NULs: take their full length, not up to the first NUL.
  auto sniff = [](const auto& literal) {
    return looks_like_audio(
        std::span(reinterpret_cast<const uint8_t*>(literal), sizeof(literal) - 1));
  };
  EXPECT_TRUE(sniff("RIFF\x10\0\0\0WAVEfmt "));
  EXPECT_FALSE(sniff("RIFF\x10\0\0\0WEBPVP8 "));
  EXPECT_TRUE(sniff("ID3\x04\0\0\0\0\0\0\0\0"));
  EXPECT_TRUE(sniff("\xFF\xFB\x90\0\0\0\0\0\0\0\0\0"));
  EXPECT_TRUE(sniff("fLaC\0\0\0\0\0\0\0\0"));
  EXPECT_FALSE(sniff("RIFF\0\0\0\0WAV"));  // under 12 bytes
  EXPECT_FALSE(sniff("\x89PNG\r\n\x1a\n\0\0\0\0"));
}

// The frame count the reference sizes its buffer to (miniaudio's formula, worked by hand).
TEST(AudioDecode, FrameCountAfterResamplingFollowsMiniaudio) {
  using audio_detail::frame_count_after_resampling;
  EXPECT_EQ(frame_count_after_resampling(16000, 16000, 123), 123u);
  EXPECT_EQ(frame_count_after_resampling(16000, 48000, 9600), 3201u);  // 3200, then +1
  EXPECT_EQ(frame_count_after_resampling(16000, 8000, 3200), 6400u);   // 6400; 6400*0+... > 3200
  EXPECT_EQ(frame_count_after_resampling(16000, 44100, 0), 0u);
}

// --- bad input -------------------------------------------------------------------------------

std::vector<uint8_t> wav_header(uint16_t tag, uint16_t channels, uint32_t rate, uint16_t bits,
                                uint32_t data_size, size_t data_present) {
  std::vector<uint8_t> out(44 + data_present, 0x40);
  auto put = [&](size_t at, uint64_t v, int n) {
    for (int i = 0; i < n; ++i) out[at + i] = static_cast<uint8_t>(v >> (8 * i));
  };
  const uint16_t block = static_cast<uint16_t>(channels * bits / 8);
  std::memcpy(out.data(), "RIFF", 4);
  put(4, 36 + data_present, 4);
  std::memcpy(out.data() + 8, "WAVEfmt ", 8);
  put(16, 16, 4);
  put(20, tag, 2);
  put(22, channels, 2);
  put(24, rate, 4);
  put(28, uint64_t{rate} * block, 4);
  put(32, block, 2);
  put(34, bits, 2);
  std::memcpy(out.data() + 36, "data", 4);
  put(40, data_size, 4);
  return out;
}

std::string decode_error(const std::vector<uint8_t>& bytes, const AudioLimits& limits = {}) {
  auto r = decode_audio(bytes, kRate, limits);
  return r ? std::string("decoded") : r.status().message();
}

TEST(AudioDecodeBadInput, EmptyAndGarbage) {
  EXPECT_EQ(decode_error({}), "audio: empty input");
  EXPECT_EQ(decode_error(std::vector<uint8_t>(100, 0x55)), "audio: not a WAV, MP3 or FLAC file");
  // An MPEG sync word or an ID3 tag followed by noise.
  std::vector<uint8_t> noise(4000);
  for (size_t i = 0; i < noise.size(); ++i)
    noise[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  noise[0] = 0xFF;
  noise[1] = 0xFB;
  EXPECT_EQ(decode_error(noise).rfind("audio: MP3", 0), 0u) << decode_error(noise);
  std::memcpy(noise.data(), "ID3\x04\0\0\0\0\0\x10", 10);
  EXPECT_EQ(decode_error(noise).rfind("audio: MP3", 0), 0u) << decode_error(noise);
}

TEST(AudioDecodeBadInput, TruncatedRiff) {
  auto wav = audio_bytes("mono_s16_16k.wav");
  for (size_t keep : {12u, 20u, 30u, 44u}) {
    std::vector<uint8_t> cut(wav.begin(), wav.begin() + keep);
    EXPECT_EQ(decode_error(cut).rfind("audio: WAV", 0), 0u) << keep << ": " << decode_error(cut);
  }
  // Cut inside the samples: the reference decodes what is there, and so do we.
  std::vector<uint8_t> cut(wav.begin(), wav.begin() + 44 + 1000);
  auto pcm = decode_audio(cut, kRate);
  ASSERT_TRUE(pcm) << pcm.status().message();
  EXPECT_EQ(pcm.value().samples.size(), 500u);
}

TEST(AudioDecodeBadInput, LyingChunkSizes) {
  auto wav = wav_header(1, 1, 16000, 16, 0xFFFFFFF0u, 400);
  auto pcm = decode_audio(wav, kRate);  // data size clamped to the file, as the reference does
  ASSERT_TRUE(pcm) << pcm.status().message();
  EXPECT_EQ(pcm.value().samples.size(), 200u);
  auto fmt_too_big = wav_header(1, 1, 16000, 16, 400, 400);
  fmt_too_big[16] = 0xF0;  // fmt chunk size
  fmt_too_big[19] = 0x7F;
  EXPECT_EQ(decode_error(fmt_too_big), "audio: WAV fmt chunk runs past the end of the file");
  auto fmt_short = wav_header(1, 1, 16000, 16, 400, 400);
  fmt_short[16] = 8;
  EXPECT_EQ(decode_error(fmt_short).rfind("audio: WAV", 0), 0u);
  auto no_data = wav_header(1, 1, 16000, 16, 400, 400);
  std::memcpy(no_data.data() + 36, "junk", 4);
  EXPECT_EQ(decode_error(no_data), "audio: WAV has no data chunk");
}

TEST(AudioDecodeBadInput, ImpossibleFormats) {
  EXPECT_EQ(decode_error(wav_header(1, 0, 16000, 16, 400, 400)),
            "audio: WAV has 0 channels (1 to 254 supported)");
  EXPECT_EQ(decode_error(wav_header(1, 1, 0, 16, 400, 400)).rfind("audio: WAV sample rate 0 Hz", 0),
            0u);
  EXPECT_EQ(decode_error(wav_header(1, 1, 4000000000u, 16, 400, 400))
                .rfind("audio: WAV sample rate 4000000000 Hz is out of range", 0),
            0u);
  EXPECT_EQ(decode_error(wav_header(1, 1, 16000, 0, 400, 400))
                .rfind("audio: WAV fmt chunk has 0 bits", 0),
            0u);
  EXPECT_EQ(decode_error(wav_header(6, 1, 8000, 8, 400, 400)), "audio: A-law WAV is not supported");
  EXPECT_EQ(decode_error(wav_header(2, 2, 8000, 4, 400, 400)), "audio: ADPCM WAV is not supported");
  EXPECT_EQ(decode_error(wav_header(0x55, 1, 8000, 16, 400, 400)),
            "audio: WAV encoding tag 85 is not supported");
  EXPECT_EQ(decode_error(wav_header(1, 1, 16000, 16, 0, 0)),
            "audio: WAV data chunk holds no samples");
  std::vector<uint8_t> flac = {'f', 'L', 'a', 'C', 0, 0, 0, 34, 0, 0, 0, 0, 0, 0};
  EXPECT_EQ(decode_error(flac), "audio: FLAC has no readable STREAMINFO block");
  // STREAMINFO's total sample count zeroed (bytes 21..25 hold its low 36 bits): the reference
  // sizes its buffer by it and reads nothing.
  auto no_length = audio_bytes("mono_16_44k.flac");
  no_length[21] &= 0xF0;
  std::fill(no_length.begin() + 22, no_length.begin() + 26, 0);
  EXPECT_EQ(decode_error(no_length),
            "audio: FLAC does not state its length (STREAMINFO total is 0)");
}

TEST(AudioDecodeBadInput, DurationAndSizeLimitsComeFromTheHeader) {
  // Ten hours at 1 Hz: 36000 samples present, refused before any sample buffer.
  auto ten_hours = wav_header(1, 1, 1, 8, 36000, 36000);
  EXPECT_EQ(decode_error(ten_hours).rfind("audio: WAV lasts 36000", 0), 0u)
      << decode_error(ten_hours);
  AudioLimits small;
  small.max_bytes = 100;
  EXPECT_EQ(
      decode_error(audio_bytes("mono_u8_8k.wav"), small).rfind("audio: 3244 bytes, more than", 0),
      0u);
  AudioLimits short_audio;
  short_audio.max_seconds = 0.1;
  EXPECT_EQ(decode_error(audio_bytes("test-2.mp3"), short_audio).rfind("audio: MP3 lasts", 0), 0u);
  EXPECT_EQ(
      decode_error(audio_bytes("mono_16_44k.flac"), short_audio).rfind("audio: FLAC lasts", 0), 0u);
  EXPECT_EQ(decode_audio(audio_bytes("mono_u8_8k.wav"), 0).status().message(),
            "audio: target sample rate 0 is out of range");
}

}  // namespace
}  // namespace hearth::media

namespace hearth::media {
namespace {

// The fuzzer's corpus (seeds, and any input that once failed) replayed in ordinary builds:
// each decodes or fails with an "audio: " error.
TEST(AudioDecodeBadInput, FuzzCorpusDecodesOrFailsCleanly) {
  const std::filesystem::path dir(HEARTH_AUDIO_CORPUS_DIR);
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << "no corpus at " << dir;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    std::ifstream in(entry.path(), std::ios::binary);
    const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
    auto pcm = decode_audio(bytes, 16000);
    if (!pcm) {
      EXPECT_EQ(pcm.status().message().rfind("audio: ", 0), 0u) << entry.path();
    }
    ++files;
  }
  EXPECT_GT(files, 0);
}

}  // namespace
}  // namespace hearth::media

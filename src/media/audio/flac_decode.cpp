// FLAC through Debian's libFLAC (lossless: the integer samples are the reference's dr_flac's),
// converted to f32 as dr_flac does (left-aligned to 32 bits, divided by 2^31) and channels
// averaged as miniaudio does. The length is STREAMINFO's total, as the reference sizes its
// buffer by it; it is checked against the limits before the sample buffer is allocated.
#include <FLAC/stream_decoder.h>

#include <algorithm>
#include <memory>
#include <string>

#include "media/audio/audio_steps.h"

namespace hearth::media::audio_detail {
namespace {

struct FlacState {
  std::span<const uint8_t> bytes;
  size_t pos = 0;
  bool have_info = false;
  uint64_t total_frames = 0;
  uint32_t sample_rate = 0;
  uint32_t channels = 0;
  uint32_t bits = 0;
  bool collecting = false;  // false while only the metadata is read
  std::vector<float> mono;
};

FLAC__StreamDecoderReadStatus read_memory(const FLAC__StreamDecoder*, FLAC__byte out[],
                                          size_t* count, void* client) {
  auto* s = static_cast<FlacState*>(client);
  const size_t n = std::min(*count, s->bytes.size() - s->pos);
  std::copy_n(s->bytes.data() + s->pos, n, out);
  s->pos += n;
  *count = n;
  return n == 0 ? FLAC__STREAM_DECODER_READ_STATUS_END_OF_STREAM
                : FLAC__STREAM_DECODER_READ_STATUS_CONTINUE;
}

void on_metadata(const FLAC__StreamDecoder*, const FLAC__StreamMetadata* m, void* client) {
  if (m->type != FLAC__METADATA_TYPE_STREAMINFO) return;
  auto* s = static_cast<FlacState*>(client);
  s->have_info = true;
  s->total_frames = m->data.stream_info.total_samples;
  s->sample_rate = m->data.stream_info.sample_rate;
  s->channels = m->data.stream_info.channels;
  s->bits = m->data.stream_info.bits_per_sample;
}

// One decoded frame: left-align each sample to 32 bits, scale by 2^-31, average the channels.
FLAC__StreamDecoderWriteStatus on_frame(const FLAC__StreamDecoder*, const FLAC__Frame* frame,
                                        const FLAC__int32* const channels[], void* client) {
  auto* s = static_cast<FlacState*>(client);
  const uint32_t n_ch = frame->header.channels;
  const uint32_t bits = frame->header.bits_per_sample;
  if (!s->collecting || n_ch != s->channels || bits == 0 || bits > 32) {
    return FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
  }
  const uint32_t shift = 32 - bits;
  auto to_f32 = [shift](FLAC__int32 v) {
    const auto aligned = static_cast<int32_t>(static_cast<uint32_t>(v) << shift);
    return static_cast<float>(aligned / 2147483648.0);
  };
  for (uint32_t i = 0; i < frame->header.blocksize && s->mono.size() < s->total_frames; ++i) {
    if (n_ch == 1) {
      s->mono.push_back(to_f32(channels[0][i]));
      continue;
    }
    float sum = 0;
    for (uint32_t c = 0; c < n_ch; ++c) sum += to_f32(channels[c][i]);
    s->mono.push_back(sum / static_cast<float>(n_ch));
  }
  return s->mono.size() < s->total_frames ? FLAC__STREAM_DECODER_WRITE_STATUS_CONTINUE
                                          : FLAC__STREAM_DECODER_WRITE_STATUS_ABORT;
}

void on_error(const FLAC__StreamDecoder*, FLAC__StreamDecoderErrorStatus, void*) {
  // Lost sync, bad headers and CRC mismatches: libFLAC skips or silences the frame and goes on.
}

struct DecoderDeleter {
  void operator()(FLAC__StreamDecoder* d) const { FLAC__stream_decoder_delete(d); }
};

Status bad(const std::string& what) {
  return error(ErrorCode::kInvalidArgument, "audio: FLAC " + what);
}

}  // namespace

Result<SourcePcm> decode_flac(std::span<const uint8_t> bytes, const AudioLimits& limits) {
  FlacState state;
  state.bytes = bytes;
  std::unique_ptr<FLAC__StreamDecoder, DecoderDeleter> d(FLAC__stream_decoder_new());
  if (!d) return error(ErrorCode::kInternal, "audio: libFLAC could not start a decoder");
  FLAC__stream_decoder_set_md5_checking(d.get(), false);
  if (FLAC__stream_decoder_init_stream(d.get(), read_memory, nullptr, nullptr, nullptr, nullptr,
                                       on_frame, on_metadata, on_error,
                                       &state) != FLAC__STREAM_DECODER_INIT_STATUS_OK) {
    return error(ErrorCode::kInternal, "audio: libFLAC could not start a decoder");
  }
  if (!FLAC__stream_decoder_process_until_end_of_metadata(d.get()) || !state.have_info) {
    return bad("has no readable STREAMINFO block");
  }
  if (state.channels < 1 || state.channels > 8 || state.sample_rate == 0 || state.bits < 4 ||
      state.bits > 32) {
    return bad("STREAMINFO is invalid");
  }
  // The reference sizes its buffer by this total and reads nothing when it is unknown (0).
  if (state.total_frames == 0) return bad("does not state its length (STREAMINFO total is 0)");
  const double seconds = static_cast<double>(state.total_frames) / state.sample_rate;
  if (seconds > limits.max_seconds) {
    return error(ErrorCode::kOutOfRange, "audio: FLAC lasts " + std::to_string(seconds) +
                                             " s, more than the limit of " +
                                             std::to_string(limits.max_seconds) + " s");
  }
  state.mono.reserve(static_cast<size_t>(state.total_frames));
  state.collecting = true;
  FLAC__stream_decoder_process_until_end_of_stream(d.get());  // stops early once total is reached
  if (state.mono.empty()) return bad("holds no decodable frame");
  SourcePcm out;
  out.sample_rate = static_cast<int32_t>(state.sample_rate);
  out.declared_frames = state.total_frames;
  out.mono = std::move(state.mono);
  return out;
}

}  // namespace hearth::media::audio_detail

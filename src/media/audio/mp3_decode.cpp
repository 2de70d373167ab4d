// MP3 through Debian's libmpg123 (gapless: the encoder delay and padding named by a LAME/Xing
// header are dropped, as the reference's dr_mp3 does), f32 output, channels averaged as
// miniaudio does. The stream is scanned first so its length is known, and checked against the
// limits, before the sample buffer is allocated.
#include <mpg123.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>

#include "media/audio/audio_steps.h"

namespace hearth::media::audio_detail {
namespace {

struct MemoryStream {
  std::span<const uint8_t> bytes;
  size_t pos = 0;
};

mpg123_ssize_t read_memory(void* handle, void* out, size_t count) {
  auto* s = static_cast<MemoryStream*>(handle);
  const size_t n = std::min(count, s->bytes.size() - s->pos);
  std::copy_n(s->bytes.data() + s->pos, n, static_cast<uint8_t*>(out));
  s->pos += n;
  return static_cast<mpg123_ssize_t>(n);
}

off_t seek_memory(void* handle, off_t offset, int whence) {
  auto* s = static_cast<MemoryStream*>(handle);
  const off_t size = static_cast<off_t>(s->bytes.size());
  off_t base = whence == SEEK_SET ? 0 : whence == SEEK_CUR ? static_cast<off_t>(s->pos) : size;
  if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END) return -1;
  if (offset > size || offset < -size) return -1;
  const off_t target = base + offset;
  if (target < 0 || target > size) return -1;
  s->pos = static_cast<size_t>(target);
  return target;
}

struct HandleDeleter {
  void operator()(mpg123_handle* h) const {
    mpg123_close(h);
    mpg123_delete(h);
  }
};
using Handle = std::unique_ptr<mpg123_handle, HandleDeleter>;

Status mpg_error(const std::string& what, mpg123_handle* h) {
  return error(ErrorCode::kInvalidArgument,
               "audio: MP3 " + what + (h ? std::string(" (") + mpg123_strerror(h) + ")" : ""));
}

// A handle reading `stream`, asking for 32-bit float at any rate, one or two channels.
Result<Handle> open_stream(MemoryStream* stream) {
  int err = MPG123_OK;
  Handle h(mpg123_new(nullptr, &err));
  if (!h) return error(ErrorCode::kInternal, "audio: libmpg123 could not start a decoder");
  const long flags = MPG123_QUIET | MPG123_GAPLESS | MPG123_FORCE_FLOAT;
  if (mpg123_param(h.get(), MPG123_ADD_FLAGS, flags, 0) != MPG123_OK ||
      mpg123_format_none(h.get()) != MPG123_OK) {
    return mpg_error("decoder setup failed", h.get());
  }
  const long* rates = nullptr;
  size_t n_rates = 0;
  mpg123_rates(&rates, &n_rates);
  for (size_t i = 0; i < n_rates; ++i) {
    mpg123_format(h.get(), rates[i], MPG123_MONO | MPG123_STEREO, MPG123_ENC_FLOAT_32);
  }
  if (mpg123_replace_reader_handle(h.get(), read_memory, seek_memory, nullptr) != MPG123_OK ||
      mpg123_open_handle(h.get(), stream) != MPG123_OK) {
    return mpg_error("stream could not be opened", h.get());
  }
  return h;
}

}  // namespace

Result<SourcePcm> decode_mp3(std::span<const uint8_t> bytes, const AudioLimits& limits) {
  MemoryStream stream{bytes, 0};
  auto h_or = open_stream(&stream);
  if (!h_or) return h_or.status();
  mpg123_handle* h = h_or.value().get();
  long rate = 0;
  int channels = 0, encoding = 0;
  if (mpg123_scan(h) != MPG123_OK ||
      mpg123_getformat(h, &rate, &channels, &encoding) != MPG123_OK) {
    return mpg_error("holds no decodable frame", h);
  }
  const off_t length = mpg123_length(h);
  if (length <= 0) return mpg_error("holds no samples", nullptr);
  if (rate <= 0 || channels < 1 || channels > 2 || encoding != MPG123_ENC_FLOAT_32) {
    return mpg_error("decoder gave an unexpected format", nullptr);
  }
  const double seconds = static_cast<double>(length) / static_cast<double>(rate);
  if (seconds > limits.max_seconds) {
    return error(ErrorCode::kOutOfRange, "audio: MP3 lasts " + std::to_string(seconds) +
                                             " s, more than the limit of " +
                                             std::to_string(limits.max_seconds) + " s");
  }

  SourcePcm out;
  out.sample_rate = static_cast<int32_t>(rate);
  out.mono.reserve(static_cast<size_t>(length));
  float buffer[4096];
  for (;;) {
    size_t done = 0;
    const int rc = mpg123_read(h, buffer, sizeof(buffer), &done);
    const size_t frames = done / sizeof(float) / static_cast<size_t>(channels);
    for (size_t i = 0; i < frames && out.mono.size() < static_cast<size_t>(length); ++i) {
      out.mono.push_back(channels == 1 ? buffer[i] : (buffer[2 * i] + buffer[2 * i + 1]) / 2.0f);
    }
    if (rc == MPG123_DONE || out.mono.size() >= static_cast<size_t>(length)) break;
    if (rc == MPG123_NEW_FORMAT) {
      int new_channels = 0;
      if (mpg123_getformat(h, &rate, &new_channels, &encoding) != MPG123_OK ||
          new_channels != channels || rate != out.sample_rate) {
        return mpg_error("changes its format mid-stream", nullptr);
      }
      continue;
    }
    if (rc != MPG123_OK) return mpg_error("data is corrupt", h);
  }
  if (out.mono.empty()) return mpg_error("holds no samples", nullptr);
  return out;
}

}  // namespace hearth::media::audio_detail

// Images and audio for prompts: a file's bytes decoded (an image, or an audio clip where the
// reference's sniff says audio), preprocessed as the projector's family wants (the pixel
// tensors, or the whisper log-mel in 30 s windows) and encoded by the projector into rows of
// the text model's width (an audio clip's windows one after the other, in one chunk; an
// image's tiles in one chunk, or one chunk each with the projector's texts between them), on
// a thread pool of its own (one encode at a time), with each distinct content's chunks given
// placeholder ids for the prompt (never reused) and its pieces remembered for a while, so a
// follow-up turn about the same image neither encodes it again nor misses the prefix cache.
// Internal to the library; the façade's encode_media() calls it from the server's threads.
#pragma once

#include <atomic>
#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <utility>

#include "base/status.h"
#include "base/thread_pool.h"
#include "media/audio_projector.h"
#include "media/image/image_preprocess.h"
#include "media/projector.h"
#include "scheduler/scheduler.h"

namespace hearth::scheduler::detail {

class MediaEncoder {
 public:
  // `mrope_positions`: the text model takes M-RoPE positions, so images get a grid (chunk
  // grid_nx/grid_ny), as the reference decides by the text model's rope type.
  static Result<std::unique_ptr<MediaEncoder>> create(const MediaConfig& config, int32_t n_threads,
                                                      bool mrope_positions = false);

  MediaSupport support() const {
    return {.vision = projector_ != nullptr, .audio = audio_ != nullptr};
  }
  Result<EncodedMedia> encode(std::span<const uint8_t> bytes, const std::atomic<bool>* cancel);

 private:
  MediaEncoder(const MediaConfig& config, media::PreprocessParams params, int32_t n_threads,
               bool mrope_positions);

  using Key = std::pair<uint64_t, uint64_t>;  // two independent 64-bit hashes of the bytes
  struct Remembered {
    int32_t first_placeholder = 0;  // its chunks take first, first - 1, ... (0: none yet)
    int32_t n_chunks = 0;
    std::shared_ptr<const EncodedMedia> encoded;  // null once dropped from the cache
    size_t bytes = 0;                             // of the kept embeddings
  };
  // The file's pieces, chunks without placeholders.
  Result<EncodedMedia> run(std::span<const uint8_t> bytes);
  Result<EncodedMedia> run_image(std::span<const uint8_t> bytes);
  Result<EncodedMedia> run_audio(std::span<const uint8_t> bytes);
  // Gives the chunks of `out` the content's placeholders (new ones the first time).
  void assign_placeholders(const Key& key, EncodedMedia& out);
  void remember(const Key& key, const EncodedMedia& encoded);

  std::shared_ptr<const media::Projector> projector_;   // null: no images
  std::shared_ptr<const media::AudioProjector> audio_;  // null: no audio
  media::PreprocessParams params_;
  size_t cache_bytes_;
  bool mrope_positions_;
  std::mutex encode_mu_;  // one encode at a time: the pool is the machine's cores
  ThreadPool pool_;
  std::mutex mu_;  // what follows
  std::map<Key, Remembered> known_;
  std::list<Key> lru_;  // most recent first: contents whose embeddings are kept
  size_t kept_bytes_ = 0;
  int32_t next_placeholder_ = -1;
};

}  // namespace hearth::scheduler::detail

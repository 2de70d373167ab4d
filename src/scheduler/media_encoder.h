// Images and audio for prompts: a file's bytes decoded (an image, or an audio clip where the
// reference's sniff says audio), preprocessed as the projector's family wants (the pixel
// tensor, or the whisper log-mel in 30 s windows) and encoded by the projector into rows of
// the text model's width (an audio clip's windows one after the other, in one chunk), on a thread
// pool of its own (one encode at a time), with each distinct content given one placeholder id for
// the prompt (never reused) and its embeddings remembered for a while, so a follow-up turn about
// the same image neither encodes it again nor misses the prefix cache. Internal to the
// library; the façade's encode_media() calls it from the server's threads.
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
  using Grid = media::Projector::TokenGrid;
  struct Remembered {
    int32_t placeholder = -1;
    std::shared_ptr<const std::vector<float>> embd;  // null once dropped from the cache
    Grid grid;                                       // the rows' M-RoPE grid ({0, 0}: none)
  };
  // The rows of a file, their count and (images of M-RoPE models) their grid.
  Result<std::shared_ptr<const std::vector<float>>> run(std::span<const uint8_t> bytes,
                                                        int32_t& n_tokens, Grid& grid);
  Result<std::shared_ptr<const std::vector<float>>> run_image(std::span<const uint8_t> bytes,
                                                              int32_t& n_tokens, Grid& grid);
  Result<std::shared_ptr<const std::vector<float>>> run_audio(std::span<const uint8_t> bytes,
                                                              int32_t& n_tokens);
  int32_t placeholder_for(const Key& key);
  void remember(const Key& key, std::shared_ptr<const std::vector<float>> embd, Grid grid);

  std::shared_ptr<const media::Projector> projector_;   // null: no images
  std::shared_ptr<const media::AudioProjector> audio_;  // null: no audio
  media::PreprocessParams params_;
  bool mrope_positions_;
  size_t cache_bytes_;
  std::mutex encode_mu_;  // one encode at a time: the pool is the machine's cores
  ThreadPool pool_;
  std::mutex mu_;  // what follows
  std::map<Key, Remembered> known_;
  std::list<Key> lru_;  // most recent first: contents whose embeddings are kept
  size_t kept_bytes_ = 0;
  int32_t next_placeholder_ = -1;
};

}  // namespace hearth::scheduler::detail

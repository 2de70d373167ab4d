#include "scheduler/media_encoder.h"

#include <fmt/format.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif

#include <climits>
#include <utility>
#include <vector>

#include "media/audio/audio_decode.h"
#include "media/audio/log_mel.h"
#include "media/image/image_decode.h"

namespace hearth::scheduler::detail {

namespace {

// An encode's scratch (a large image's activations: tens of MB per buffer, freed by then)
// goes back to the system instead of staying in the allocator's arenas, whose dynamic
// mmap threshold would otherwise keep it: the server's resident memory returns to the
// weights and the KV between images.
void release_free_memory() {
#ifdef __GLIBC__
  malloc_trim(0);
#endif
}

// Two independent 64-bit hashes (FNV-1a and a multiply-xorshift mix): equal keys mean equal
// bytes for every practical purpose, which the prompt cache relies on.
std::pair<uint64_t, uint64_t> content_key(std::span<const uint8_t> bytes) {
  uint64_t fnv = 14695981039346656037ull;
  uint64_t mix = 0x9e3779b97f4a7c15ull ^ bytes.size();
  for (uint8_t b : bytes) {
    fnv = (fnv ^ b) * 1099511628211ull;
    mix = (mix ^ (b + 0x100ull)) * 0xff51afd7ed558ccdull;
    mix ^= mix >> 29;
  }
  return {fnv, mix};
}

// The preprocessing parameters of the projector's family, from its file's keys and the
// options' token bounds.
Result<media::PreprocessParams> preprocess_params(const media::Projector& projector,
                                                  const MediaConfig& config) {
  HEARTH_ASSIGN_OR_RETURN(media::ProjectorFamily family,
                          media::projector_family_from_name(projector.projector_type()));
  const media::VisionHparams& hp = projector.hparams();
  media::ProjectorHparams file;
  file.family = family;
  file.image_size = hp.image_size;
  file.patch_size = hp.patch_size;
  file.image_mean = hp.image_mean;
  file.image_std = hp.image_std;
  file.n_merge = hp.n_merge;
  file.preproc_min_tiles = hp.preproc_min_tiles;
  file.preproc_max_tiles = hp.preproc_max_tiles;
  file.preproc_image_size = hp.preproc_image_size;
  file.grid_pinpoints = hp.grid_pinpoints;
  file.image_min_tokens = config.image_min_tokens > 0 ? config.image_min_tokens : -1;
  file.image_max_tokens = config.image_max_tokens > 0 ? config.image_max_tokens : -1;
  return media::preprocess_params_for(file);
}

}  // namespace

Result<std::unique_ptr<MediaEncoder>> MediaEncoder::create(const MediaConfig& config,
                                                           int32_t n_threads,
                                                           bool mrope_positions) {
  if (!config.projector && !config.audio_projector) {
    return error(ErrorCode::kInvalidArgument, "no projector");
  }
  media::PreprocessParams params;
  if (config.projector) {
    HEARTH_ASSIGN_OR_RETURN(params, preprocess_params(*config.projector, config));
  }
  if (config.audio_projector &&
      !media::uses_whisper_log_mel(config.audio_projector->projector_type())) {
    return error(ErrorCode::kUnsupported, "audio projector type " +
                                              config.audio_projector->projector_type() +
                                              " does not take the whisper log-mel features");
  }
  return std::unique_ptr<MediaEncoder>(
      new MediaEncoder(config, std::move(params), n_threads, mrope_positions));
}

MediaEncoder::MediaEncoder(const MediaConfig& config, media::PreprocessParams params,
                           int32_t n_threads, bool mrope_positions)
    : projector_(config.projector),
      audio_(config.audio_projector),
      params_(std::move(params)),
      cache_bytes_(config.cache_bytes),
      mrope_positions_(mrope_positions),
      pool_(std::max(n_threads, 1)) {}

Result<EncodedMedia> MediaEncoder::run(std::span<const uint8_t> bytes) {
  // As the reference: what its sniff calls audio is audio, anything else an image.
  const bool audio = media::looks_like_audio(bytes);
  if (audio && !audio_) {
    return error(ErrorCode::kUnsupported, "the model does not take audio input");
  }
  if (!audio && !projector_) {
    return error(ErrorCode::kUnsupported, "the model does not take image input");
  }
  auto out = audio ? run_audio(bytes) : run_image(bytes);
  release_free_memory();
  return out;
}

// The whole clip at 16 kHz, its log-mel over 30 s windows, each window encoded; the rows of
// the windows follow one another in one chunk (the reference's consecutive chunks of one clip).
Result<EncodedMedia> MediaEncoder::run_audio(std::span<const uint8_t> bytes) {
  media::MelParams mel;
  mel.n_mel = audio_->n_mel();
  Result<media::AudioPcm> pcm = media::decode_audio(bytes, mel.sample_rate);
  if (!pcm.is_ok()) return error(ErrorCode::kInvalidArgument, pcm.status().message());
  Result<std::vector<media::MelChunk>> windows = media::whisper_log_mel(pcm->samples, mel);
  if (!windows.is_ok()) return error(ErrorCode::kInvalidArgument, windows.status().message());
  const auto width = static_cast<size_t>(audio_->n_embd_out());
  auto embd = std::make_shared<std::vector<float>>();
  MediaChunk chunk;
  chunk.non_causal = audio_->non_causal_decode();
  std::lock_guard<std::mutex> lock(encode_mu_);
  for (const media::MelChunk& window : *windows) {
    const int32_t n = audio_->n_output_tokens(window.n_frames);
    const size_t at = embd->size();
    embd->resize(at + static_cast<size_t>(n) * width);
    HEARTH_RETURN_IF_ERROR(audio_->encode(window.data.data(), window.n_mel, window.n_frames, pool_,
                                          embd->data() + at));
    chunk.n_tokens += n;
  }
  chunk.embd = std::move(embd);
  EncodedMedia out;
  out.add_text(std::string(audio_->audio_begin()));
  out.add_chunk(std::move(chunk));
  out.add_text(std::string(audio_->audio_end()));
  return out;
}

namespace {

// The grid of an image chunk's rows when the text model takes M-RoPE positions: the
// projector's output_grid (Qwen-VL's merged patches), which must cover the rows exactly (such
// projectors never join tiles into one chunk); for other projectors one row of all the
// chunk's rows, as the reference's clip_n_output_tokens_x/_y give them (n_tokens x 1).
Result<media::Projector::TokenGrid> output_grid(
    const media::Projector& projector, const std::vector<const media::PixelTensor*>& entries,
    int32_t n_tokens) {
  const media::Projector::TokenGrid grid = projector.output_grid(entries[0]->nx, entries[0]->ny);
  if (grid.nx <= 0 && grid.ny <= 0) return media::Projector::TokenGrid{n_tokens, 1};
  if (entries.size() != 1 || grid.nx <= 0 || grid.ny <= 0 ||
      int64_t{grid.nx} * grid.ny != n_tokens) {
    return error(
        ErrorCode::kInternal,
        fmt::format("projector {}: a {} x {} position grid for {} rows in {} tile(s)",
                    projector.projector_type(), grid.nx, grid.ny, n_tokens, entries.size()));
  }
  return grid;
}

// The images of `entries` encoded one after the other into one chunk's rows (with their
// M-RoPE grid where `mrope_positions`).
Result<MediaChunk> encode_entries(const media::Projector& projector,
                                  const std::vector<const media::PixelTensor*>& entries,
                                  bool mrope_positions, ThreadPool& pool) {
  const auto width = static_cast<size_t>(projector.n_embd_out());
  MediaChunk chunk;
  chunk.non_causal = projector.non_causal_decode();
  for (const media::PixelTensor* e : entries)
    chunk.n_tokens += projector.n_output_tokens(e->nx, e->ny);
  auto embd = std::make_shared<std::vector<float>>(static_cast<size_t>(chunk.n_tokens) * width);
  size_t at = 0;
  for (const media::PixelTensor* e : entries) {
    HEARTH_RETURN_IF_ERROR(projector.encode(e->data.data(), e->nx, e->ny, pool, embd->data() + at));
    at += static_cast<size_t>(projector.n_output_tokens(e->nx, e->ny)) * width;
  }
  chunk.embd = std::move(embd);
  if (mrope_positions) {
    HEARTH_ASSIGN_OR_RETURN(media::Projector::TokenGrid grid,
                            output_grid(projector, entries, chunk.n_tokens));
    chunk.grid_nx = grid.nx;
    chunk.grid_ny = grid.ny;
  }
  return chunk;
}

// The projector's tile layout made into pieces: its texts, and each tile or the overview
// encoded into a chunk of its own.
Status add_tiled_pieces(const media::Projector& projector, const media::PreprocessedImage& pre,
                        const std::vector<media::Projector::LayoutPart>& layout,
                        bool mrope_positions, ThreadPool& pool, EncodedMedia& out) {
  using Kind = media::Projector::LayoutPart::Kind;
  for (const media::Projector::LayoutPart& part : layout) {
    if (part.kind == Kind::kText) {
      out.add_text(part.text);
    } else if (part.kind == Kind::kToken) {
      out.add_token(part.text);
    } else {
      const bool overview = part.kind == Kind::kOverview;
      if ((overview && !pre.has_overview()) ||
          (!overview && (part.tile < 0 || static_cast<size_t>(part.tile) >= pre.entries.size())))
        return error(ErrorCode::kInternal, "the projector's tile layout names a missing tile");
      const media::PixelTensor* e = overview ? &pre.overview : &pre.entries[size_t(part.tile)];
      HEARTH_ASSIGN_OR_RETURN(MediaChunk chunk,
                              encode_entries(projector, {e}, mrope_positions, pool));
      out.add_chunk(std::move(chunk));
    }
  }
  return Status::ok();
}

}  // namespace

Result<EncodedMedia> MediaEncoder::run_image(std::span<const uint8_t> bytes) {
  // A file that does not decode, or is beyond the limits, is the client's mistake.
  Result<media::ImageRgb8> image = media::decode_image(bytes);
  if (!image.is_ok()) return error(ErrorCode::kInvalidArgument, image.status().message());
  Result<media::PreprocessedImage> preprocessed = media::preprocess_image(*image, params_);
  if (!preprocessed.is_ok()) {
    return error(ErrorCode::kInvalidArgument, preprocessed.status().message());
  }
  const media::PreprocessedImage& pre = *preprocessed;
  // The entries in the prompt's order for one chunk: tiles row by row, then the overview
  // (families that join tiles put no text between entries and the overview last, mtmd's
  // ov_img_first false).
  std::vector<const media::PixelTensor*> entries;
  for (const media::PixelTensor& e : pre.entries) entries.push_back(&e);
  if (pre.has_overview()) entries.push_back(&pre.overview);
  if (entries.empty()) return error(ErrorCode::kInvalidArgument, "the image gave no pixels");
  const std::vector<media::Projector::LayoutPart> layout =
      entries.size() == 1 || projector_->joins_tiles()
          ? std::vector<media::Projector::LayoutPart>{}
          : projector_->tile_layout(pre.grid_x, pre.grid_y);
  if (entries.size() != 1 && !projector_->joins_tiles() && layout.empty()) {
    return error(ErrorCode::kUnsupported,
                 fmt::format("images split into tiles ({} for this one) are not supported yet "
                             "for projector type {}",
                             entries.size(), projector_->projector_type()));
  }
  EncodedMedia out;
  out.add_text(std::string(projector_->image_begin()));
  std::lock_guard<std::mutex> lock(encode_mu_);
  if (layout.empty()) {
    HEARTH_ASSIGN_OR_RETURN(MediaChunk chunk,
                            encode_entries(*projector_, entries, mrope_positions_, pool_));
    out.add_chunk(std::move(chunk));
  } else {
    HEARTH_RETURN_IF_ERROR(
        add_tiled_pieces(*projector_, pre, layout, mrope_positions_, pool_, out));
  }
  out.add_text(std::string(projector_->image_end()));
  return out;
}

void MediaEncoder::assign_placeholders(const Key& key, EncodedMedia& out) {
  // Placeholders are never reused: a prompt cached under one stays about that content (and
  // that tile of it). The table forgets the least recent contents past a bound (they get new
  // ids if seen again).
  constexpr size_t kMaxKnown = size_t{1} << 16;
  int32_t n_chunks = 0;
  for (const MediaPiece& p : out.pieces) n_chunks += p.kind == MediaPiece::Kind::kChunk ? 1 : 0;
  auto it = known_.find(key);
  if (it == known_.end()) {
    if (known_.size() >= kMaxKnown) {
      auto old = known_.begin();
      if (old->second.encoded) {
        kept_bytes_ -= old->second.bytes;
        lru_.remove(old->first);
      }
      known_.erase(old);
    }
    it = known_.emplace(key, Remembered{}).first;
  }
  Remembered& r = it->second;
  // Equal contents give equal chunk counts; a mismatch (never expected) gets fresh ids.
  if (r.first_placeholder == 0 || r.n_chunks != n_chunks) {
    if (next_placeholder_ < INT32_MIN + 1 + n_chunks) next_placeholder_ = -1;
    r.first_placeholder = next_placeholder_;
    r.n_chunks = n_chunks;
    next_placeholder_ -= n_chunks;
  }
  int32_t id = r.first_placeholder;
  for (MediaPiece& p : out.pieces)
    if (p.kind == MediaPiece::Kind::kChunk) p.chunk.placeholder = id--;
}

void MediaEncoder::remember(const Key& key, const EncodedMedia& encoded) {
  auto it = known_.find(key);
  if (it == known_.end() || it->second.encoded) return;
  size_t bytes = 0;
  for (const MediaPiece& p : encoded.pieces)
    if (p.kind == MediaPiece::Kind::kChunk && p.chunk.embd)
      bytes += p.chunk.embd->size() * sizeof(float);
  it->second.encoded = std::make_shared<const EncodedMedia>(encoded);
  it->second.bytes = bytes;
  kept_bytes_ += bytes;
  lru_.push_front(key);
  while (kept_bytes_ > cache_bytes_ && !lru_.empty()) {
    auto old = known_.find(lru_.back());
    lru_.pop_back();
    if (old == known_.end() || !old->second.encoded) continue;
    kept_bytes_ -= old->second.bytes;
    old->second.encoded.reset();
    old->second.bytes = 0;
  }
}

Result<EncodedMedia> MediaEncoder::encode(std::span<const uint8_t> bytes,
                                          const std::atomic<bool>* cancel) {
  const Key key = content_key(bytes);
  {
    std::lock_guard<std::mutex> lock(mu_);
    auto it = known_.find(key);
    if (it != known_.end() && it->second.encoded) {
      lru_.remove(key);
      lru_.push_front(key);
      return *it->second.encoded;
    }
  }
  if (cancel != nullptr && cancel->load()) {
    return error(ErrorCode::kResourceExhausted, "the request was cancelled");
  }
  HEARTH_ASSIGN_OR_RETURN(EncodedMedia out, run(bytes));
  std::lock_guard<std::mutex> lock(mu_);
  assign_placeholders(key, out);
  remember(key, out);
  return out;
}

}  // namespace hearth::scheduler::detail

#include "scheduler/media_encoder.h"

#include <fmt/format.h>

#include <utility>
#include <vector>

#include "media/audio/audio_decode.h"
#include "media/audio/log_mel.h"
#include "media/image/image_decode.h"

namespace hearth::scheduler::detail {

namespace {

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
  file.image_min_tokens = config.image_min_tokens > 0 ? config.image_min_tokens : -1;
  file.image_max_tokens = config.image_max_tokens > 0 ? config.image_max_tokens : -1;
  return media::preprocess_params_for(file);
}

// The grid of an image's rows when the text model takes M-RoPE positions: the projector's
// output_grid (Qwen-VL's merged patches), which must cover the rows exactly (such projectors
// never split an image into tiles); for other projectors one row of all the image's rows, as
// the reference's clip_n_output_tokens_x/_y give them (n_tokens x 1).
Result<media::Projector::TokenGrid> output_grid(
    const media::Projector& projector, const std::vector<const media::PixelTensor*>& entries,
    int32_t n_tokens) {
  const media::Projector::TokenGrid grid = projector.output_grid(entries[0]->nx, entries[0]->ny);
  if (grid.nx <= 0 && grid.ny <= 0) return media::Projector::TokenGrid{n_tokens, 1};
  if (entries.size() != 1 || grid.nx <= 0 || grid.ny <= 0 || int64_t{grid.nx} * grid.ny != n_tokens)
    return error(
        ErrorCode::kInternal,
        fmt::format("projector {}: a {} x {} position grid for {} rows in {} tile(s)",
                    projector.projector_type(), grid.nx, grid.ny, n_tokens, entries.size()));
  return grid;
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
      mrope_positions_(mrope_positions),
      cache_bytes_(config.cache_bytes),
      pool_(std::max(n_threads, 1)) {}

Result<std::shared_ptr<const std::vector<float>>> MediaEncoder::run(std::span<const uint8_t> bytes,
                                                                    int32_t& n_tokens, Grid& grid) {
  // As the reference: what its sniff calls audio is audio, anything else an image.
  if (media::looks_like_audio(bytes)) {
    if (!audio_) return error(ErrorCode::kUnsupported, "the model does not take audio input");
    return run_audio(bytes, n_tokens);
  }
  if (!projector_) return error(ErrorCode::kUnsupported, "the model does not take image input");
  return run_image(bytes, n_tokens, grid);
}

// The whole clip at 16 kHz, its log-mel over 30 s windows, each window encoded; the rows of
// the windows follow one another (the reference's consecutive chunks of one clip).
Result<std::shared_ptr<const std::vector<float>>> MediaEncoder::run_audio(
    std::span<const uint8_t> bytes, int32_t& n_tokens) {
  media::MelParams mel;
  mel.n_mel = audio_->n_mel();
  Result<media::AudioPcm> pcm = media::decode_audio(bytes, mel.sample_rate);
  if (!pcm.is_ok()) return error(ErrorCode::kInvalidArgument, pcm.status().message());
  Result<std::vector<media::MelChunk>> windows = media::whisper_log_mel(pcm->samples, mel);
  if (!windows.is_ok()) return error(ErrorCode::kInvalidArgument, windows.status().message());
  const auto width = static_cast<size_t>(audio_->n_embd_out());
  auto embd = std::make_shared<std::vector<float>>();
  n_tokens = 0;
  std::lock_guard<std::mutex> lock(encode_mu_);
  for (const media::MelChunk& window : *windows) {
    const int32_t n = audio_->n_output_tokens(window.n_frames);
    const size_t at = embd->size();
    embd->resize(at + static_cast<size_t>(n) * width);
    HEARTH_RETURN_IF_ERROR(audio_->encode(window.data.data(), window.n_mel, window.n_frames, pool_,
                                          embd->data() + at));
    n_tokens += n;
  }
  return std::shared_ptr<const std::vector<float>>(std::move(embd));
}

Result<std::shared_ptr<const std::vector<float>>> MediaEncoder::run_image(
    std::span<const uint8_t> bytes, int32_t& n_tokens, Grid& grid) {
  // A file that does not decode, or is beyond the limits, is the client's mistake.
  Result<media::ImageRgb8> image = media::decode_image(bytes);
  if (!image.is_ok()) return error(ErrorCode::kInvalidArgument, image.status().message());
  Result<media::PreprocessedImage> preprocessed = media::preprocess_image(*image, params_);
  if (!preprocessed.is_ok()) {
    return error(ErrorCode::kInvalidArgument, preprocessed.status().message());
  }
  const media::PreprocessedImage& pre = *preprocessed;
  // The entries in the prompt's order: tiles row by row, then the overview (families that
  // join tiles put no text between entries and the overview last, mtmd's ov_img_first false).
  std::vector<const media::PixelTensor*> entries;
  for (const media::PixelTensor& e : pre.entries) entries.push_back(&e);
  if (pre.has_overview()) entries.push_back(&pre.overview);
  if (entries.size() != 1 && !projector_->joins_tiles()) {
    return error(ErrorCode::kUnsupported,
                 fmt::format("images split into tiles ({} for this one) are not supported yet "
                             "for projector type {}",
                             entries.size(), projector_->projector_type()));
  }
  if (entries.empty()) return error(ErrorCode::kInvalidArgument, "the image gave no pixels");
  const auto width = static_cast<size_t>(projector_->n_embd_out());
  n_tokens = 0;
  for (const media::PixelTensor* e : entries) n_tokens += projector_->n_output_tokens(e->nx, e->ny);
  if (mrope_positions_) {
    HEARTH_ASSIGN_OR_RETURN(grid, output_grid(*projector_, entries, n_tokens));
  }
  auto embd = std::make_shared<std::vector<float>>(static_cast<size_t>(n_tokens) * width);
  std::lock_guard<std::mutex> lock(encode_mu_);
  size_t at = 0;
  for (const media::PixelTensor* e : entries) {
    HEARTH_RETURN_IF_ERROR(
        projector_->encode(e->data.data(), e->nx, e->ny, pool_, embd->data() + at));
    at += static_cast<size_t>(projector_->n_output_tokens(e->nx, e->ny)) * width;
  }
  return std::shared_ptr<const std::vector<float>>(std::move(embd));
}

int32_t MediaEncoder::placeholder_for(const Key& key) {
  // Placeholders are never reused: a prompt cached under one stays about that content. The
  // table forgets the least recent contents past a bound (they get a new id if seen again).
  constexpr size_t kMaxKnown = size_t{1} << 16;
  auto it = known_.find(key);
  if (it != known_.end()) return it->second.placeholder;
  if (known_.size() >= kMaxKnown) known_.erase(known_.begin());
  Remembered r;
  r.placeholder = next_placeholder_;
  next_placeholder_ = next_placeholder_ > INT32_MIN + 1 ? next_placeholder_ - 1 : -1;
  known_.emplace(key, r);
  return r.placeholder;
}

void MediaEncoder::remember(const Key& key, std::shared_ptr<const std::vector<float>> embd,
                            Grid grid) {
  auto it = known_.find(key);
  if (it == known_.end() || it->second.embd) return;
  kept_bytes_ += embd->size() * sizeof(float);
  it->second.embd = std::move(embd);
  it->second.grid = grid;
  lru_.push_front(key);
  while (kept_bytes_ > cache_bytes_ && !lru_.empty()) {
    auto old = known_.find(lru_.back());
    lru_.pop_back();
    if (old == known_.end() || !old->second.embd) continue;
    kept_bytes_ -= old->second.embd->size() * sizeof(float);
    old->second.embd.reset();
  }
}

Result<EncodedMedia> MediaEncoder::encode(std::span<const uint8_t> bytes,
                                          const std::atomic<bool>* cancel) {
  const Key key = content_key(bytes);
  EncodedMedia out;
  const bool audio = media::looks_like_audio(bytes);
  if (audio && audio_) {
    out.begin_text = std::string(audio_->audio_begin());
    out.end_text = std::string(audio_->audio_end());
    out.chunk.non_causal = audio_->non_causal_decode();
  } else if (!audio && projector_) {
    out.begin_text = std::string(projector_->image_begin());
    out.end_text = std::string(projector_->image_end());
    out.chunk.non_causal = projector_->non_causal_decode();
  }
  const int32_t width = audio && audio_ ? audio_->n_embd_out()
                        : projector_    ? projector_->n_embd_out()
                                        : 1;
  {
    std::lock_guard<std::mutex> lock(mu_);
    out.chunk.placeholder = placeholder_for(key);
    auto it = known_.find(key);
    if (it->second.embd) {
      out.chunk.embd = it->second.embd;
      out.chunk.n_tokens =
          static_cast<int32_t>(out.chunk.embd->size() / static_cast<size_t>(width));
      out.chunk.grid_nx = it->second.grid.nx;
      out.chunk.grid_ny = it->second.grid.ny;
      lru_.remove(key);
      lru_.push_front(key);
      return out;
    }
  }
  if (cancel != nullptr && cancel->load()) {
    return error(ErrorCode::kResourceExhausted, "the request was cancelled");
  }
  Grid grid;
  HEARTH_ASSIGN_OR_RETURN(out.chunk.embd, run(bytes, out.chunk.n_tokens, grid));
  // An audio clip's rows keep 1-D positions under M-RoPE too (the reference's
  // set_position_mrope_1d): no grid.
  out.chunk.grid_nx = grid.nx;
  out.chunk.grid_ny = grid.ny;
  std::lock_guard<std::mutex> lock(mu_);
  // The content may have been forgotten meanwhile: it then keeps the placeholder it was given
  // (no other content can have that one).
  if (known_.count(key) != 0) remember(key, out.chunk.embd, grid);
  return out;
}

}  // namespace hearth::scheduler::detail

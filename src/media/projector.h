// A projector file loaded for encoding images: the vision encoder and the projector that
// maps its output into the text model's embedding space. One family per file under
// src/media (gemma3_projector.cpp, llava_projector.cpp, pixtral_projector.cpp,
// internvl_projector.cpp, idefics3_projector.cpp, lfm2_projector.cpp, qwen2vl_projector.cpp,
// qwen3vl_projector.cpp) behind the registry in
// projector_registry.cpp, keyed by clip.projector_type.
//
//   auto proj = Projector::load("mmproj.gguf", model_n_embd);
//   std::vector<float> out(size_t(proj->n_output_tokens(nx, ny)) * proj->n_embd_out());
//   proj->encode(pixels, nx, ny, pool, out.data());
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/weights.h"
#include "media/clip_file.h"
#include "media/vit.h"

namespace hearth::media {

class Projector {
 public:
  virtual ~Projector() = default;

  // Opens and loads `path`. n_embd_text > 0 is the text model's input width (its n_embd, or
  // for deepstack models n_embd * (1 + n_deepstack)), which the projector's whole output row
  // must equal (a mismatch, as in the reference, is refused naming both widths).
  // Unknown or unsupported projector types are refused naming the type and the supported ones.
  static Result<std::unique_ptr<Projector>> load(const std::string& path, int32_t n_embd_text,
                                                 engine::LoadOptions options = {});

  // The projector families Hearth runs, by clip.projector_type ("gemma3, mlp, ...").
  static std::string supported_types();

  // The family's name ("gemma3", "llava") and the file's clip.projector_type.
  virtual std::string_view family() const = 0;
  const std::string& projector_type() const { return file_->projector_type; }
  const VisionHparams& hparams() const { return file_->vision; }
  const std::string& path() const { return file_->path; }

  // The embeddings one nx x ny image (already sized for the encoder) gives.
  virtual int32_t n_output_tokens(int32_t nx, int32_t ny) const = 0;
  // Width of each output embedding (the text model's n_embd; deepstack projectors append
  // their extra layers' features: n_embd * (1 + n_deepstack)).
  virtual int32_t n_embd_out() const = 0;
  // The width of the rows' main part: n_embd_out() but for deepstack projectors (qwen3vl: the
  // merger's T, the text model's n_embd).
  virtual int32_t n_embd_main() const { return n_embd_out(); }
  // For projectors whose text models use M-RoPE (qwen2vl, qwen25vl, qwen3vl): the grid the
  // n_output_tokens(nx, ny) rows form, {columns, rows} in raster order, which gives their
  // 2-D rope positions. {0, 0}: ordinary 1-D positions.
  struct TokenGrid {
    int32_t nx = 0;
    int32_t ny = 0;
  };
  virtual TokenGrid output_grid(int32_t nx, int32_t ny) const {
    (void)nx;
    (void)ny;
    return {};
  }
  // Whether the text model attends to an image's tokens without the causal mask (the
  // reference's mtmd_decode_use_non_causal).
  virtual bool non_causal_decode() const { return false; }
  // The text the reference puts around an image's embeddings (empty: none).
  virtual std::string_view image_begin() const { return {}; }
  virtual std::string_view image_end() const { return {}; }
  // Whether an image the preprocessor splits into several entries (tiles, then the overview)
  // is encoded entry by entry into one run of rows with no text between them (internvl:
  // mtmd's empty slice texts, overview last). False: such images are refused.
  virtual bool joins_tiles() const { return false; }
  // The prompt layout of an image the preprocessor cut into grid_x x grid_y tiles (row by
  // row) plus an overview, for families with text between the tiles (mtmd's slice
  // templates): the texts, the tiles and the overview in prompt order, between image_begin()
  // and image_end(). Empty (the default): the family lays out no tiles (joins_tiles(), or
  // such images are refused).
  struct LayoutPart {
    enum class Kind {
      kText,      // `text`, tokenized with special tokens parsed
      kToken,     // the vocabulary token whose piece is `text` (mtmd's lookup_token)
      kTile,      // entry `tile` of the preprocessed image
      kOverview,  // the overview image
    };
    Kind kind = Kind::kText;
    std::string text;
    int32_t tile = 0;
  };
  virtual std::vector<LayoutPart> tile_layout(int32_t grid_x, int32_t grid_y) const {
    (void)grid_x;
    (void)grid_y;
    return {};
  }

  // Encodes one image. pixels: nx * ny * 3 floats, interleaved RGB rows (the reference's
  // clip_image_f32), normalized with hparams().image_mean/std; nx and ny must be the
  // encoder's image_size (pixtral: any multiples of patch_size x n_merge, the dynamic size
  // its preprocessor picks). out: [n_output_tokens(nx, ny)][n_embd_out()].
  virtual Status encode(const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool,
                        float* out) const = 0;

 protected:
  // `owned`: the storage of the matrices repacked or transposed at load.
  Projector(std::unique_ptr<ClipFile> file, Vit vit, std::vector<engine::OwnedBytes> owned)
      : file_(std::move(file)), vit_(std::move(vit)), owned_(std::move(owned)) {}
  // kInvalidArgument unless nx x ny is the native image size.
  Status check_image(const float* pixels, int32_t nx, int32_t ny) const;

  std::unique_ptr<ClipFile> file_;  // the mapped tensors the weights point into
  Vit vit_;
  std::vector<engine::OwnedBytes> owned_;  // repacked or transposed matrices
};

}  // namespace hearth::media

// The projector file (llama.cpp's "mmproj", GGUF with general.architecture = clip): its
// vision hyper-parameters and projector type, read as the reference's clip loader reads them
// (tools/mtmd/clip.cpp), with each value checked before anything is sized by it.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/file.h"

namespace hearth::media {

// The ViT's FFN activation, from clip.use_gelu / clip.use_silu (neither: CLIP's quick GELU).
enum class FfnActivation {
  kGelu,       // tanh approximation (the reference's f16 table on CPU)
  kGeluQuick,  // x * sigmoid(1.702 x) (also through an f16 table)
  kSilu,
  kGeluErf,  // 0.5 x (1 + erf(x / sqrt 2)), computed in f32 (the audio encoders')
};

struct VisionHparams {
  int32_t image_size = 0;  // the side the encoder was trained at (pixels)
  int32_t patch_size = 0;
  int32_t n_embd = 0;  // the ViT's width
  int32_t n_ff = 0;
  int32_t n_layer = 0;
  int32_t n_head = 0;
  int32_t projection_dim = 0;  // recorded by converters; the output width comes from tensors
  float eps = 1e-6f;           // clip.vision.attention.layer_norm_epsilon
  std::array<float, 3> image_mean{};
  std::array<float, 3> image_std{};
  // Patches merged per side by the projector (gemma3: average pooling, default 4).
  int32_t n_merge = 1;
  FfnActivation ffn_act = FfnActivation::kGeluQuick;
  // clip.vision.feature_layer: the layers whose inputs (index = layer number; n_layer: the
  // final output) the LLaVA projector reads, concatenated. Empty: the output of layer n-2.
  std::vector<int32_t> feature_layers;
  // clip.vision.preproc_min_tiles / preproc_max_tiles (internvl; 0: absent, the family's
  // defaults apply).
  int32_t preproc_min_tiles = 0;
  int32_t preproc_max_tiles = 0;
  // clip.vision.preproc_image_size (idefics3: the longest edge images are resized to before
  // tiling; 0: absent).
  int32_t preproc_image_size = 0;
  // clip.vision.image_grid_pinpoints (LLaVA-1.6): tile grids as w0, h0, w1, h1... pixels;
  // empty when absent.
  std::vector<int32_t> grid_pinpoints;

  int32_t patches_per_side() const { return patch_size > 0 ? image_size / patch_size : 0; }
};

// The audio encoder's sizes (clip.audio.*): a Whisper encoder's width, FFN width, blocks and
// heads, the mel bins it reads, and how many encoder frames the projector stacks into one
// input row (clip.audio.projector.stack_factor; 0 when the file has none).
struct AudioHparams {
  int32_t n_embd = 0;
  int32_t n_ff = 0;
  int32_t n_layer = 0;
  int32_t n_head = 0;
  int32_t n_mel = 0;           // clip.audio.num_mel_bins (1..256)
  int32_t projection_dim = 0;  // recorded by converters; the output width comes from tensors
  float eps = 1e-5f;           // clip.audio.attention.layer_norm_epsilon
  int32_t stack_factor = 0;
};

// An opened projector file: its archive (tensor data stays mapped) and what its keys say.
struct ClipFile {
  gguf::Archive archive;
  std::string path;
  std::string projector_type;  // clip.projector_type, e.g. "gemma3", "mlp" (vision's)
  bool has_vision = false;
  bool has_audio = false;
  VisionHparams vision;  // read when has_vision
  // The audio encoder's type (clip.projector_type, else clip.audio.projector_type; the legacy
  // "qwen2.5o" reads as "qwen2a", as the reference does) and sizes, read when has_audio.
  std::string audio_projector_type;
  AudioHparams audio;
};

// Opens `path` and reads its keys. Errors (kCorruptFile / kInvalidArgument) name the file and
// the key: a model that is not a projector (general.architecture != clip), a file with neither
// a vision nor an audio encoder, missing or out-of-range sizes, mean/std arrays of fewer than 3
// values. Whether the file has the encoder a caller needs is the caller's check.
Result<ClipFile> open_clip_file(const std::string& path);

// Every projector type name the reference knows (clip-impl.h), so that a type Hearth does not
// run yet can be told apart from a misspelt one.
bool is_reference_projector_type(const std::string& name);

}  // namespace hearth::media

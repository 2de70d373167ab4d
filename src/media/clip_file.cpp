#include "media/clip_file.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <string_view>

namespace hearth::media {
namespace {

// The reference's projector type names (clip-impl.h PROJECTOR_TYPE_NAMES, b10573).
constexpr std::array<std::string_view, 60> kReferenceTypes = {
    "mlp",
    "ldp",
    "ldpv2",
    "resampler",
    "adapter",
    "qwen2vl_merger",
    "qwen2.5vl_merger",
    "qwen3vl_merger",
    "step3vl",
    "gemma3",
    "gemma3nv",
    "gemma3na",
    "gemma4v",
    "gemma4a",
    "gemma4uv",
    "gemma4ua",
    "phi4",
    "idefics3",
    "pixtral",
    "ultravox",
    "internvl",
    "llama4",
    "qwen2a",
    "qwen3a",
    "glma",
    "qwen2.5o",
    "voxtral",
    "meralion",
    "musicflamingo",
    "lfm2",
    "kimivl",
    "paddleocr",
    "lightonocr",
    "cogvlm",
    "janus_pro",
    "dots_ocr",
    "deepseekocr",
    "deepseekocr2",
    "lfm2a",
    "glm4v",
    "youtuvl",
    "yasa2",
    "kimik25",
    "nemotron_v2_vl",
    "exaone4_5",
    "hunyuanvl",
    "minicpmv4_6",
    "granite_speech",
    "mimovl",
    "minimax_m3",
    "granite4_vision",
    "mimo_audio",
    "parakeet",
    "qwen3tts_spkenc",
    "qwen3tts_gen",
    "pockettts_spkenc",
    "pockettts_gen",
    "muse-glimmer",
    "minicpmv",
    "glm_edge",
};

Status corrupt(const std::string& path, const std::string& what) {
  return error(ErrorCode::kCorruptFile, fmt::format("{}: {}", path, what));
}

// A positive u32 key no larger than `max` (required unless `fallback` > 0 is given).
Result<int32_t> read_size(const gguf::File& f, const std::string& key, int64_t max,
                          int32_t fallback = 0) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) {
    if (fallback > 0) return fallback;
    return corrupt(f.name(), fmt::format("projector key '{}' is missing", key));
  }
  const auto n = v->as_int();
  if (v->is_array() || !n || *n <= 0 || *n > max)
    return corrupt(f.name(),
                   fmt::format("projector key '{}' must be an integer in 1..{}", key, max));
  return static_cast<int32_t>(*n);
}

Result<bool> read_flag(const gguf::File& f, const std::string& key) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return false;
  const auto b = v->as_bool();
  if (!b) return corrupt(f.name(), fmt::format("projector key '{}' must be a bool", key));
  return *b;
}

// image_mean / image_std: at least 3 floats (the reference reads the first 3).
Result<std::array<float, 3>> read_rgb(const gguf::File& f, const std::string& key) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr || !v->is_array() || v->size() < 3 ||
      (v->element_type() != gguf::ValueType::kF32 && v->element_type() != gguf::ValueType::kF64))
    return corrupt(f.name(), fmt::format("projector key '{}' must be an array of 3 floats", key));
  std::array<float, 3> out{};
  for (uint64_t i = 0; i < 3; ++i) out[i] = static_cast<float>(v->float_at(i));
  return out;
}

Status read_activation(const gguf::File& f, VisionHparams& hp) {
  HEARTH_ASSIGN_OR_RETURN(bool gelu, read_flag(f, "clip.use_gelu"));
  HEARTH_ASSIGN_OR_RETURN(bool silu, read_flag(f, "clip.use_silu"));
  if (gelu && silu) return corrupt(f.name(), "both clip.use_gelu and clip.use_silu are set");
  hp.ffn_act = gelu   ? FfnActivation::kGelu
               : silu ? FfnActivation::kSilu
                      : FfnActivation::kGeluQuick;
  return Status::ok();
}

Status read_feature_layers(const gguf::File& f, VisionHparams& hp) {
  const gguf::Value* v = f.find("clip.vision.feature_layer");
  if (v == nullptr) return Status::ok();
  if (!v->is_array() || v->size() > 64 || !gguf::is_integer_type(v->element_type()))
    return corrupt(f.name(), "clip.vision.feature_layer must be an array of layer indices");
  for (uint64_t i = 0; i < v->size(); ++i) {
    const int64_t layer = v->int_at(i);
    if (layer < 0) continue;  // converters mark unset entries with -1
    if (layer > hp.n_layer)
      return corrupt(f.name(), fmt::format("clip.vision.feature_layer {} is past the {} layers",
                                           layer, hp.n_layer));
    hp.feature_layers.push_back(static_cast<int32_t>(layer));
  }
  return Status::ok();
}

// clip.vision.image_grid_pinpoints (LLaVA-1.6): the tile grids as w0, h0, w1, h1... pixels.
Status read_grid_pinpoints(const gguf::File& f, VisionHparams& hp) {
  const gguf::Value* v = f.find("clip.vision.image_grid_pinpoints");
  if (v == nullptr) return Status::ok();
  if (!v->is_array() || v->size() > 256 || v->size() % 2 != 0 ||
      !gguf::is_integer_type(v->element_type()))
    return corrupt(f.name(),
                   "clip.vision.image_grid_pinpoints must be an even array of at most 256 sizes");
  for (uint64_t i = 0; i < v->size(); ++i) {
    const int64_t side = v->int_at(i);
    if (side <= 0 || side > 65536)
      return corrupt(f.name(), "clip.vision.image_grid_pinpoints has a size out of 1..65536");
    hp.grid_pinpoints.push_back(static_cast<int32_t>(side));
  }
  return Status::ok();
}

Result<VisionHparams> read_vision(const gguf::File& f) {
  VisionHparams hp;
  HEARTH_ASSIGN_OR_RETURN(hp.image_size, read_size(f, "clip.vision.image_size", 8192));
  HEARTH_ASSIGN_OR_RETURN(hp.patch_size, read_size(f, "clip.vision.patch_size", 1024));
  HEARTH_ASSIGN_OR_RETURN(hp.n_embd, read_size(f, "clip.vision.embedding_length", 1 << 16));
  HEARTH_ASSIGN_OR_RETURN(hp.n_ff, read_size(f, "clip.vision.feed_forward_length", 1 << 18));
  HEARTH_ASSIGN_OR_RETURN(hp.n_layer, read_size(f, "clip.vision.block_count", 1024));
  HEARTH_ASSIGN_OR_RETURN(hp.n_head, read_size(f, "clip.vision.attention.head_count", 1024));
  HEARTH_ASSIGN_OR_RETURN(hp.projection_dim,
                          read_size(f, "clip.vision.projection_dim", 1 << 18, 1));
  HEARTH_ASSIGN_OR_RETURN(hp.eps, f.get_f32("clip.vision.attention.layer_norm_epsilon"));
  if (!(hp.eps >= 0.0f && hp.eps < 1.0f))
    return corrupt(f.name(), "clip.vision.attention.layer_norm_epsilon is out of range");
  if (hp.n_embd % hp.n_head != 0)
    return corrupt(f.name(), fmt::format("vision width {} is not a multiple of {} heads", hp.n_embd,
                                         hp.n_head));
  if (const gguf::Value* kv = f.find("clip.vision.attention.head_count_kv");
      kv != nullptr && kv->as_int() != hp.n_head)
    return error(
        ErrorCode::kUnsupported,
        fmt::format("{}: vision attention with grouped KV heads is not supported", f.name()));
  if (hp.image_size % hp.patch_size != 0)
    return corrupt(f.name(), fmt::format("image_size {} is not a multiple of patch_size {}",
                                         hp.image_size, hp.patch_size));
  HEARTH_ASSIGN_OR_RETURN(hp.image_mean, read_rgb(f, "clip.vision.image_mean"));
  HEARTH_ASSIGN_OR_RETURN(hp.image_std, read_rgb(f, "clip.vision.image_std"));
  for (float s : hp.image_std)
    if (!(s > 0.0f)) return corrupt(f.name(), "clip.vision.image_std must be positive");
  HEARTH_RETURN_IF_ERROR(read_activation(f, hp));
  HEARTH_RETURN_IF_ERROR(read_feature_layers(f, hp));
  HEARTH_RETURN_IF_ERROR(read_grid_pinpoints(f, hp));
  return hp;
}

// clip.projector_type, else the mixed-modality clip.<modality>.projector_type, else (vision)
// the legacy files' clip.has_llava_projector (LLaVA's MLP).
Result<std::string> read_projector_type(const gguf::File& f, const char* modality_key) {
  for (const char* key : {"clip.projector_type", modality_key}) {
    if (const gguf::Value* v = f.find(key)) {
      const auto s = v->as_string();
      if (!s || s->empty())
        return corrupt(f.name(), fmt::format("projector key '{}' must be a string", key));
      return std::string(*s);
    }
  }
  if (std::string_view(modality_key) == "clip.vision.projector_type") {
    HEARTH_ASSIGN_OR_RETURN(bool llava, read_flag(f, "clip.has_llava_projector"));
    if (llava) return std::string("mlp");
  }
  return corrupt(f.name(), "the projector file has no clip.projector_type");
}

Result<AudioHparams> read_audio(const gguf::File& f) {
  AudioHparams hp;
  HEARTH_ASSIGN_OR_RETURN(hp.n_embd, read_size(f, "clip.audio.embedding_length", 1 << 16));
  HEARTH_ASSIGN_OR_RETURN(hp.n_ff, read_size(f, "clip.audio.feed_forward_length", 1 << 18));
  HEARTH_ASSIGN_OR_RETURN(hp.n_layer, read_size(f, "clip.audio.block_count", 1024));
  HEARTH_ASSIGN_OR_RETURN(hp.n_head, read_size(f, "clip.audio.attention.head_count", 1024));
  // The reference's bound: mel filter banks of more than 256 bins are refused.
  HEARTH_ASSIGN_OR_RETURN(hp.n_mel, read_size(f, "clip.audio.num_mel_bins", 256));
  HEARTH_ASSIGN_OR_RETURN(hp.projection_dim, read_size(f, "clip.audio.projection_dim", 1 << 18, 1));
  HEARTH_ASSIGN_OR_RETURN(hp.eps, f.get_f32("clip.audio.attention.layer_norm_epsilon"));
  if (!(hp.eps >= 0.0f && hp.eps < 1.0f))
    return corrupt(f.name(), "clip.audio.attention.layer_norm_epsilon is out of range");
  if (hp.n_embd % hp.n_head != 0)
    return corrupt(f.name(), fmt::format("audio width {} is not a multiple of {} heads", hp.n_embd,
                                         hp.n_head));
  if (const gguf::Value* kv = f.find("clip.audio.attention.head_count_kv");
      kv != nullptr && kv->as_int() != hp.n_head)
    return error(
        ErrorCode::kUnsupported,
        fmt::format("{}: audio attention with grouped KV heads is not supported", f.name()));
  if (f.find("clip.audio.projector.stack_factor") != nullptr) {
    HEARTH_ASSIGN_OR_RETURN(hp.stack_factor,
                            read_size(f, "clip.audio.projector.stack_factor", 1024));
  }
  return hp;
}

}  // namespace

bool is_reference_projector_type(const std::string& name) {
  return std::find(kReferenceTypes.begin(), kReferenceTypes.end(), name) != kReferenceTypes.end();
}

Result<ClipFile> open_clip_file(const std::string& path) {
  HEARTH_ASSIGN_OR_RETURN(gguf::Archive archive, gguf::Archive::open(path));
  const gguf::File& f = archive.primary();
  const gguf::Value* arch = f.find("general.architecture");
  const auto arch_name = arch ? arch->as_string() : std::nullopt;
  if (!arch_name || *arch_name != "clip")
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("{}: not a projector file: general.architecture is '{}', expected "
                             "'clip' (is this the text model?)",
                             path, arch_name ? std::string(*arch_name) : std::string("<none>")));
  ClipFile out{.archive = std::move(archive),
               .path = path,
               .projector_type = {},
               .has_vision = false,
               .has_audio = false,
               .vision = {},
               .audio_projector_type = {},
               .audio = {}};
  const gguf::File& file = out.archive.primary();
  HEARTH_ASSIGN_OR_RETURN(out.has_vision, read_flag(file, "clip.has_vision_encoder"));
  HEARTH_ASSIGN_OR_RETURN(out.has_audio, read_flag(file, "clip.has_audio_encoder"));
  if (!out.has_vision && !out.has_audio)
    return error(
        ErrorCode::kUnsupported,
        fmt::format("{}: the projector file has neither a vision nor an audio encoder", path));
  if (out.has_vision) {
    HEARTH_ASSIGN_OR_RETURN(out.projector_type,
                            read_projector_type(file, "clip.vision.projector_type"));
    HEARTH_ASSIGN_OR_RETURN(out.vision, read_vision(file));
  }
  if (out.has_audio) {
    HEARTH_ASSIGN_OR_RETURN(out.audio_projector_type,
                            read_projector_type(file, "clip.audio.projector_type"));
    if (out.audio_projector_type == "qwen2.5o") out.audio_projector_type = "qwen2a";
    HEARTH_ASSIGN_OR_RETURN(out.audio, read_audio(file));
  }
  return out;
}

}  // namespace hearth::media

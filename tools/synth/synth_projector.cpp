// Random-weight projector files (mmproj) with the keys and tensor names of llama.cpp's clip
// loader (tools/mtmd/clip.cpp): a ViT (patch embedding as a [P, P, 3, E] convolution kernel,
// learned positions, pre-norm blocks with biased Q/K/V/out and an up/down FFN) and one of
// two projectors:
//   gemma3: SigLIP with a post-LN; the projector pools n_merge x n_merge patches, RMS-norms
//           them (mm.soft_emb_norm) and projects with mm.input_projection [T, E] (used
//           transposed by the reference, so its rows are the vision width).
//   idefics3: the same SigLIP; the projector shuffles n_merge x n_merge patches into one row
//           and maps it with mm.model.fc [E*k*k, T] (no bias); clip.vision.preproc_image_size
//           from --preproc-image-size.
//   mlp:    LLaVA's CLIP with a class embedding and a pre-LN, no post-LN; the projector is
//           mm.0 [E, T] + bias, GELU, mm.2 [T, T] + bias. --grid-pinpoints writes LLaVA-1.6's
//           clip.vision.image_grid_pinpoints.
// Matrices are N(0, 1/fan_in) so activations keep unit scale; LayerNorm weights sit near 1,
// biases near 0. The patch kernel and gemma3's projection are F16 for any --type but f32
// (then F32): the reference convolves through an im2col of the kernel's type and transposes
// the projection at run time, which neither a block type nor (on its CPU) BF16 allows. The
// position table is F32: gemma3's graph adds it to the patches as it is, which needs F32.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

#include "kernels/quant.h"
#include "tools/synth/synth_parts.h"

namespace hearth::synth {
namespace {

using detail::add_random;

Status check_projector_params(const SynthParams& p) {
  if (p.projector != "gemma3" && p.projector != "mlp" && p.projector != "idefics3")
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("unknown projector '{}' (gemma3, mlp, idefics3, pixtral, internvl, "
                             "lfm2, qwen2vl_merger, qwen2.5vl_merger, qwen3vl_merger, ultravox, "
                             "voxtral, qwen2a)",
                             p.projector));
  if (p.text_n_embd <= 0)
    return error(ErrorCode::kInvalidArgument, "a projector needs --text-n-embd > 0");
  if (p.n_embd <= 0 || p.n_layer <= 0 || p.n_head <= 0 || p.n_ff <= 0 || p.n_embd % p.n_head)
    return error(ErrorCode::kInvalidArgument,
                 "projector sizes must be positive, n_embd a multiple of n_head");
  if (p.patch_size <= 0 || p.image_size <= 0 || p.image_size % p.patch_size != 0)
    return error(ErrorCode::kInvalidArgument, "image_size must be a multiple of patch_size");
  // The reference reads an FFN whose ffn_down rows are n_embd wide as a legacy swapped pair.
  if (p.n_ff == p.n_embd)
    return error(ErrorCode::kInvalidArgument, "a projector needs n_ff != n_embd");
  const int32_t side = p.image_size / p.patch_size;
  if (p.projector == "gemma3" && (p.n_merge <= 0 || side % p.n_merge != 0))
    return error(ErrorCode::kInvalidArgument, "gemma3: the patch grid must divide by n_merge");
  if (p.projector == "idefics3" && (p.n_merge < 2 || side % p.n_merge != 0))
    return error(ErrorCode::kInvalidArgument,
                 "idefics3: n_merge must be at least 2 and divide the patch grid");
  for (int32_t layer : p.feature_layers)
    if (layer < 0 || layer > p.n_layer)
      return error(ErrorCode::kInvalidArgument, "feature layers must be in 0..n_layer");
  if (!kernels::can_quantize(p.type))
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("cannot write weights of type {}", tensor_type_name(p.type)));
  return Status::ok();
}

// gemma3 here means SigLIP (gemma3 or idefics3).
void write_projector_keys(gguf::Writer& w, const SynthParams& p, bool gemma3) {
  w.set_string("general.architecture", "clip");
  w.set_string("general.name", fmt::format("hearth-synth mmproj {}", p.projector));
  detail::set_file_type(w, p.type);
  w.set_string("clip.projector_type", p.projector);
  w.set_bool("clip.has_vision_encoder", true);
  w.set_bool("clip.has_audio_encoder", false);
  w.set_bool("clip.use_gelu", gemma3 ? true : p.use_gelu);
  w.set_u32("clip.vision.image_size", static_cast<uint32_t>(p.image_size));
  w.set_u32("clip.vision.patch_size", static_cast<uint32_t>(p.patch_size));
  w.set_u32("clip.vision.embedding_length", static_cast<uint32_t>(p.n_embd));
  w.set_u32("clip.vision.feed_forward_length", static_cast<uint32_t>(p.n_ff));
  w.set_u32("clip.vision.block_count", static_cast<uint32_t>(p.n_layer));
  w.set_u32("clip.vision.attention.head_count", static_cast<uint32_t>(p.n_head));
  w.set_u32("clip.vision.projection_dim", static_cast<uint32_t>(p.text_n_embd));
  w.set_f32("clip.vision.attention.layer_norm_epsilon", gemma3 ? 1e-6f : 1e-5f);
  // SigLIP normalizes to [-1, 1]; CLIP uses OpenAI's dataset statistics.
  const std::array<float, 3> siglip_mean{0.5f, 0.5f, 0.5f}, siglip_std{0.5f, 0.5f, 0.5f};
  const std::array<float, 3> clip_mean{0.48145466f, 0.4578275f, 0.40821073f};
  const std::array<float, 3> clip_std{0.26862954f, 0.26130258f, 0.27577711f};
  w.set_f32_array("clip.vision.image_mean", gemma3 ? siglip_mean : clip_mean);
  w.set_f32_array("clip.vision.image_std", gemma3 ? siglip_std : clip_std);
  if (gemma3) w.set_u32("clip.vision.projector.scale_factor", static_cast<uint32_t>(p.n_merge));
  if (p.preproc_image_size > 0)
    w.set_u32("clip.vision.preproc_image_size", static_cast<uint32_t>(p.preproc_image_size));
  if (!p.feature_layers.empty()) w.set_i32_array("clip.vision.feature_layer", p.feature_layers);
  if (!p.grid_pinpoints.empty())
    w.set_i32_array("clip.vision.image_grid_pinpoints", p.grid_pinpoints);
}

Status add_layer_norm(gguf::Writer& w, const SynthParams& p, const std::string& name, int64_t n) {
  HEARTH_RETURN_IF_ERROR(add_random(w, p, name + ".weight", {n}, TensorType::kF32, 0.05f, 1.0f));
  return add_random(w, p, name + ".bias", {n}, TensorType::kF32, 0.02f, 0.0f);
}

// A linear layer: weight [n_in, n_out] of `type`, bias [n_out].
Status add_linear(gguf::Writer& w, const SynthParams& p, const std::string& name, int64_t n_in,
                  int64_t n_out, TensorType type) {
  const float scale = 1.0f / std::sqrt(static_cast<float>(n_in));
  HEARTH_RETURN_IF_ERROR(add_random(w, p, name + ".weight", {n_in, n_out}, type, scale, 0.0f));
  return add_random(w, p, name + ".bias", {n_out}, TensorType::kF32, 0.02f, 0.0f);
}

Status add_vit_block(gguf::Writer& w, const SynthParams& p, int32_t il) {
  const std::string b = fmt::format("v.blk.{}.", il);
  const int64_t E = p.n_embd, F = p.n_ff;
  HEARTH_RETURN_IF_ERROR(add_layer_norm(w, p, b + "ln1", E));
  for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_out"})
    HEARTH_RETURN_IF_ERROR(add_linear(w, p, b + m, E, E, p.type));
  HEARTH_RETURN_IF_ERROR(add_layer_norm(w, p, b + "ln2", E));
  HEARTH_RETURN_IF_ERROR(add_linear(w, p, b + "ffn_up", E, F, p.type));
  return add_linear(w, p, b + "ffn_down", F, E, p.type);
}

}  // namespace

Status synthesize_projector(const SynthParams& p, const std::string& out_path) {
  if (detail::is_audio_projector(p.projector))
    return detail::synthesize_audio_projector(p, out_path);
  if (detail::is_vision_family_projector(p.projector))
    return detail::synthesize_vision_family_projector(p, out_path);
  if (detail::is_qwen_vl_projector(p.projector))
    return detail::synthesize_qwen_vl_projector(p, out_path);
  HEARTH_RETURN_IF_ERROR(check_projector_params(p));
  const bool idefics3 = p.projector == "idefics3";
  const bool gemma3 = p.projector == "gemma3" || idefics3;  // SigLIP
  const TensorType side_type = p.type == TensorType::kF32 ? p.type : TensorType::kF16;
  const int64_t E = p.n_embd, T = p.text_n_embd, P = p.patch_size;
  const int64_t n_patches = (p.image_size / P) * (p.image_size / P);
  gguf::Writer w;
  write_projector_keys(w, p, gemma3);
  // The kernel [P, P, 3, E]: one row of 3*P*P inputs per output channel.
  HEARTH_RETURN_IF_ERROR(add_random(w, p, "v.patch_embd.weight", {P, P, 3, E}, side_type,
                                    1.0f / std::sqrt(static_cast<float>(3 * P * P)), 0.0f));
  if (gemma3) {
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, "v.patch_embd.bias", {E}, TensorType::kF32, 0.02f, 0.0f));
  } else {
    HEARTH_RETURN_IF_ERROR(add_random(w, p, "v.class_embd", {E}, TensorType::kF32, 0.5f, 0.0f));
    HEARTH_RETURN_IF_ERROR(add_layer_norm(w, p, "v.pre_ln", E));
  }
  const int64_t n_pos = n_patches + (gemma3 ? 0 : 1);
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, "v.position_embd.weight", {E, n_pos}, TensorType::kF32, 0.2f, 0.0f));
  for (int32_t il = 0; il < p.n_layer; ++il) HEARTH_RETURN_IF_ERROR(add_vit_block(w, p, il));
  if (idefics3) {
    HEARTH_RETURN_IF_ERROR(add_layer_norm(w, p, "v.post_ln", E));
    const int64_t K = E * p.n_merge * p.n_merge;
    HEARTH_RETURN_IF_ERROR(add_random(w, p, "mm.model.fc.weight", {K, T},
                                      detail::fitting_type(p.type, K),
                                      1.0f / std::sqrt(static_cast<float>(K)), 0.0f));
  } else if (gemma3) {
    HEARTH_RETURN_IF_ERROR(add_layer_norm(w, p, "v.post_ln", E));
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, "mm.soft_emb_norm.weight", {E}, TensorType::kF32, 0.05f, 1.0f));
    HEARTH_RETURN_IF_ERROR(add_random(w, p, "mm.input_projection.weight", {T, E}, side_type,
                                      1.0f / std::sqrt(static_cast<float>(E)), 0.0f));
  } else {
    const auto n_features = static_cast<int64_t>(std::max<size_t>(1, p.feature_layers.size()));
    HEARTH_RETURN_IF_ERROR(add_linear(w, p, "mm.0", E * n_features, T, p.type));
    HEARTH_RETURN_IF_ERROR(add_linear(w, p, "mm.2", T, T, p.type));
  }
  return w.write(out_path);
}

}  // namespace hearth::synth

// Random-weight projector files of the vision families whose ViT differs from CLIP's, with
// the keys and tensor names llama.cpp's clip loader reads (tools/mtmd/clip.cpp):
//   pixtral:  RMSNorm ViT (v.pre_ln, ln1/ln2 weights only), bias-free attention, a SiLU-gated
//             FFN, no learned positions (2-D RoPE); Mistral Small 3.1's patch merger
//             (mm.input_norm, mm.patch_merger [E*k*k, E], k = --n-merge as
//             clip.vision.spatial_merge_size), mm.1 [E, T] + bias, mm.2 [T, T] + bias and the
//             [IMG_BREAK] embedding v.token_embd.img_break [T].
//   internvl: InternViT 300M style: biased patch kernel, class embedding, positions
//             [E, n_patches + 1], LayerNorm blocks with biases and layer scales ls1/ls2, a
//             GELU FFN; pixel shuffle by --n-merge (clip.vision.projector.scale_factor), then
//             mm.model.mlp.0 LayerNorm [E*k*k], mm.model.mlp.1 [E*k*k, T], mm.model.mlp.3 [T, T].
//   lfm2:     SigLIP2 (LFM2-VL): biased patch kernel, positions [E, (image_size / P)^2] (the
//             reference resizes them to each image's patch grid), LayerNorm blocks with biases,
//             a GELU FFN, v.post_ln; pixel unshuffle by --n-merge
//             (clip.vision.projector.scale_factor), mm.input_norm LayerNorm [E*k*k],
//             mm.1 [E*k*k, T] + bias, mm.2 [T, T] + bias.
// As in synth_projector.cpp: matrices N(0, 1/fan_in), norms near 1, the patch kernel F16 for
// a quantized --type.
#include <fmt/format.h>

#include <array>
#include <cmath>

#include "tools/synth/synth_parts.h"

namespace hearth::synth::detail {
namespace {

void write_keys(gguf::Writer& w, const SynthParams& p, bool pixtral, bool siglip) {
  w.set_string("general.architecture", "clip");
  w.set_string("general.name", fmt::format("hearth-synth mmproj {}", p.projector));
  set_file_type(w, p.type);
  w.set_string("clip.projector_type", p.projector);
  w.set_bool("clip.has_vision_encoder", true);
  w.set_bool("clip.has_audio_encoder", false);
  if (pixtral)
    w.set_bool("clip.use_silu", true);
  else
    w.set_bool("clip.use_gelu", true);
  w.set_u32("clip.vision.image_size", static_cast<uint32_t>(p.image_size));
  w.set_u32("clip.vision.patch_size", static_cast<uint32_t>(p.patch_size));
  w.set_u32("clip.vision.embedding_length", static_cast<uint32_t>(p.n_embd));
  w.set_u32("clip.vision.feed_forward_length", static_cast<uint32_t>(p.n_ff));
  w.set_u32("clip.vision.block_count", static_cast<uint32_t>(p.n_layer));
  w.set_u32("clip.vision.attention.head_count", static_cast<uint32_t>(p.n_head));
  w.set_u32("clip.vision.projection_dim", static_cast<uint32_t>(p.text_n_embd));
  w.set_f32("clip.vision.attention.layer_norm_epsilon", pixtral ? 1e-5f : 1e-6f);
  const std::array<float, 3> clip_mean{0.48145466f, 0.4578275f, 0.40821073f};
  const std::array<float, 3> clip_std{0.26862954f, 0.26130258f, 0.27577711f};
  const std::array<float, 3> imagenet_mean{0.485f, 0.456f, 0.406f};
  const std::array<float, 3> imagenet_std{0.229f, 0.224f, 0.225f};
  const std::array<float, 3> siglip_mean_std{0.5f, 0.5f, 0.5f};
  w.set_f32_array("clip.vision.image_mean", pixtral  ? clip_mean
                                            : siglip ? siglip_mean_std
                                                     : imagenet_mean);
  w.set_f32_array("clip.vision.image_std", pixtral  ? clip_std
                                           : siglip ? siglip_mean_std
                                                    : imagenet_std);
  const auto k = static_cast<uint32_t>(p.n_merge);
  w.set_u32(pixtral ? "clip.vision.spatial_merge_size" : "clip.vision.projector.scale_factor", k);
}

Status add_block(gguf::Writer& w, const SynthParams& p, int32_t il, bool pixtral,
                 bool layer_scales) {
  const std::string b = fmt::format("v.blk.{}.", il);
  const int64_t E = p.n_embd, F = p.n_ff;
  HEARTH_RETURN_IF_ERROR(add_norm(w, p, b + "ln1", E, !pixtral));
  for (const char* m : {"attn_q", "attn_k", "attn_v", "attn_out"})
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + m, E, E, !pixtral));
  HEARTH_RETURN_IF_ERROR(add_norm(w, p, b + "ln2", E, !pixtral));
  if (pixtral) HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + "ffn_gate", E, F, false));
  HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + "ffn_up", E, F, !pixtral));
  HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + "ffn_down", F, E, !pixtral));
  if (layer_scales) {
    // InternViT's layer scales start near 0.1 in the trained models.
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ls1.weight", {E}, TensorType::kF32, 0.05f, 0.5f));
    HEARTH_RETURN_IF_ERROR(add_random(w, p, b + "ls2.weight", {E}, TensorType::kF32, 0.05f, 0.5f));
  }
  return Status::ok();
}

}  // namespace

bool is_vision_family_projector(std::string_view family) {
  return family == "pixtral" || family == "internvl" || family == "lfm2";
}

Status synthesize_vision_family_projector(const SynthParams& p, const std::string& out_path) {
  const bool pixtral = p.projector == "pixtral", lfm2 = p.projector == "lfm2";
  const int64_t E = p.n_embd, T = p.text_n_embd, P = p.patch_size, k = p.n_merge;
  if (T <= 0) return error(ErrorCode::kInvalidArgument, "a projector needs --text-n-embd > 0");
  if (E <= 0 || p.n_head <= 0 || E % p.n_head != 0 || (E / p.n_head) % 4 != 0 || p.n_ff <= 0 ||
      p.n_layer <= 0 || P <= 0 || k <= 0 || p.image_size <= 0 || p.image_size % (P * k) != 0)
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("{}: sizes must be positive, heads a multiple of 4 wide, the image "
                             "side a multiple of patch size x n_merge",
                             p.projector));
  const TensorType kernel_type =
      p.type == TensorType::kF32 || p.type == TensorType::kBF16 ? p.type : TensorType::kF16;
  gguf::Writer w;
  write_keys(w, p, pixtral, lfm2);
  HEARTH_RETURN_IF_ERROR(add_random(w, p, "v.patch_embd.weight", {P, P, 3, E}, kernel_type,
                                    1.0f / std::sqrt(static_cast<float>(3 * P * P)), 0.0f));
  if (pixtral) {
    HEARTH_RETURN_IF_ERROR(add_norm(w, p, "v.pre_ln", E, false));
  } else {
    const int64_t n_pos = (p.image_size / P) * (p.image_size / P) + (lfm2 ? 0 : 1);
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, "v.patch_embd.bias", {E}, TensorType::kF32, 0.02f, 0.0f));
    if (!lfm2)
      HEARTH_RETURN_IF_ERROR(add_random(w, p, "v.class_embd", {E}, TensorType::kF32, 0.5f, 0.0f));
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, "v.position_embd.weight", {E, n_pos}, TensorType::kF32, 0.2f, 0.0f));
  }
  for (int32_t il = 0; il < p.n_layer; ++il)
    HEARTH_RETURN_IF_ERROR(add_block(w, p, il, pixtral, !pixtral && !lfm2));
  if (pixtral) {
    if (k > 1) {
      HEARTH_RETURN_IF_ERROR(add_norm(w, p, "mm.input_norm", E, false));
      HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.patch_merger", E * k * k, E, false));
    }
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.1", E, T, true));
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.2", T, T, true));
    HEARTH_RETURN_IF_ERROR(
        add_random(w, p, "v.token_embd.img_break", {T}, TensorType::kF32, 0.5f, 0.0f));
  } else if (lfm2) {
    HEARTH_RETURN_IF_ERROR(add_norm(w, p, "v.post_ln", E, true));
    HEARTH_RETURN_IF_ERROR(add_norm(w, p, "mm.input_norm", E * k * k, true));
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.1", E * k * k, T, true));
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.2", T, T, true));
  } else {
    HEARTH_RETURN_IF_ERROR(add_norm(w, p, "mm.model.mlp.0", E * k * k, true));
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.model.mlp.1", E * k * k, T, true));
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.model.mlp.3", T, T, true));
  }
  return w.write(out_path);
}

}  // namespace hearth::synth::detail

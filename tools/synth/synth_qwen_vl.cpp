// Random-weight Qwen-VL projector files with the keys and tensor names llama.cpp's converter
// writes (conversion/qwenvl.py) and its clip loader reads (tools/mtmd/clip.cpp):
//   qwen2vl_merger:   the temporal patch as two kernels v.patch_embd.weight and .weight.1
//                     [P, P, 3, E] (no bias), LayerNorm blocks with biases, attention with
//                     biases, a quick-GELU up/down FFN with biases, v.post_ln (LayerNorm),
//                     then the merger mm.0 [4E, 4E] + bias and mm.2 [4E, T] + bias.
//   qwen2.5vl_merger: the same with RMSNorm (weights only) and a SiLU-gated FFN with biases
//                     (clip.use_silu), and clip.vision.n_wa_pattern (--n-wa-pattern).
//   qwen3vl_merger:   the kernels with v.patch_embd.bias, learned positions v.position_embd
//                     [E, (image_size / P)^2] (F32), LayerNorm blocks with fused attn_qkv
//                     [E, 3E], a GELU up/down FFN (clip.use_gelu), v.post_ln, the merger, and
//                     for each --deepstack-layers block il v.deepstack.il.norm [4E] (+ bias),
//                     .fc1 [4E, 4E] and .fc2 [4E, T] with biases.
// clip.vision.spatial_merge_size is 2 (the reference's graph merges 2 x 2). Matrices are
// N(0, 1/fan_in), norms near 1; the kernels are F16 for a quantized --type, and a matrix whose
// rows are not whole blocks of --type (Qwen2.5-VL-7B's FFN width 3420) F16.
#include <fmt/format.h>

#include <array>
#include <cmath>

#include "tools/synth/synth_parts.h"

namespace hearth::synth::detail {
namespace {

enum class Kind { kQwen2, kQwen25, kQwen3 };

void write_keys(gguf::Writer& w, const SynthParams& p, Kind kind) {
  const bool v25 = kind == Kind::kQwen25;
  w.set_string("general.architecture", "clip");
  w.set_string("general.name", fmt::format("hearth-synth mmproj {}", p.projector));
  set_file_type(w, p.type);
  w.set_string("clip.projector_type", p.projector);
  w.set_bool("clip.has_vision_encoder", true);
  w.set_bool("clip.has_audio_encoder", false);
  if (v25) w.set_bool("clip.use_silu", true);
  if (kind == Kind::kQwen3) w.set_bool("clip.use_gelu", true);
  w.set_u32("clip.vision.image_size", static_cast<uint32_t>(p.image_size));
  w.set_u32("clip.vision.patch_size", static_cast<uint32_t>(p.patch_size));
  w.set_u32("clip.vision.embedding_length", static_cast<uint32_t>(p.n_embd));
  w.set_u32("clip.vision.feed_forward_length", static_cast<uint32_t>(p.n_ff));
  w.set_u32("clip.vision.block_count", static_cast<uint32_t>(p.n_layer));
  w.set_u32("clip.vision.attention.head_count", static_cast<uint32_t>(p.n_head));
  w.set_u32("clip.vision.projection_dim", static_cast<uint32_t>(p.text_n_embd));
  w.set_f32("clip.vision.attention.layer_norm_epsilon", 1e-6f);
  const std::array<float, 3> clip_mean{0.48145466f, 0.4578275f, 0.40821073f};
  const std::array<float, 3> clip_std{0.26862954f, 0.26130258f, 0.27577711f};
  w.set_f32_array("clip.vision.image_mean", clip_mean);
  w.set_f32_array("clip.vision.image_std", clip_std);
  w.set_u32("clip.vision.spatial_merge_size", 2);
  if (v25) w.set_u32("clip.vision.n_wa_pattern", static_cast<uint32_t>(p.n_wa_pattern));
}

Status add_block(gguf::Writer& w, const SynthParams& p, int32_t il, Kind kind) {
  const std::string b = fmt::format("v.blk.{}.", il);
  const int64_t E = p.n_embd, F = p.n_ff;
  const bool v25 = kind == Kind::kQwen25;
  HEARTH_RETURN_IF_ERROR(add_norm(w, p, b + "ln1", E, !v25));
  if (kind == Kind::kQwen3) {
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + "attn_qkv", E, 3 * E));
  } else {
    for (const char* m : {"attn_q", "attn_k", "attn_v"})
      HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + m, E, E));
  }
  HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + "attn_out", E, E));
  HEARTH_RETURN_IF_ERROR(add_norm(w, p, b + "ln2", E, !v25));
  if (v25) HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + "ffn_gate", E, F));
  HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + "ffn_up", E, F));
  return add_matrix(w, p, b + "ffn_down", F, E);
}

// Qwen3-VL's patch bias, positions and deepstack mergers.
Status add_qwen3_parts(gguf::Writer& w, const SynthParams& p) {
  const int64_t E = p.n_embd, T = p.text_n_embd, side = p.image_size / p.patch_size;
  HEARTH_RETURN_IF_ERROR(add_random(w, p, "v.patch_embd.bias", {E}, TensorType::kF32, 0.02f, 0.0f));
  HEARTH_RETURN_IF_ERROR(
      add_random(w, p, "v.position_embd.weight", {E, side * side}, TensorType::kF32, 0.2f, 0.0f));
  for (int32_t il : p.deepstack_layers) {
    const std::string d = fmt::format("v.deepstack.{}.", il);
    HEARTH_RETURN_IF_ERROR(add_norm(w, p, d + "norm", 4 * E, true));
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, d + "fc1", 4 * E, 4 * E));
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, d + "fc2", 4 * E, T));
  }
  return Status::ok();
}

}  // namespace

bool is_qwen_vl_projector(std::string_view family) {
  return family == "qwen2vl_merger" || family == "qwen2.5vl_merger" || family == "qwen3vl_merger";
}

Status synthesize_qwen_vl_projector(const SynthParams& p, const std::string& out_path) {
  const Kind kind = p.projector == "qwen2.5vl_merger" ? Kind::kQwen25
                    : p.projector == "qwen3vl_merger" ? Kind::kQwen3
                                                      : Kind::kQwen2;
  const int64_t E = p.n_embd, T = p.text_n_embd, P = p.patch_size;
  if (T <= 0) return error(ErrorCode::kInvalidArgument, "a projector needs --text-n-embd > 0");
  if (E <= 0 || p.n_head <= 0 || E % p.n_head != 0 || (E / p.n_head) % 4 != 0 || p.n_ff <= 0 ||
      p.n_ff == E || p.n_layer <= 0 || P <= 0 || p.image_size <= 0 || p.n_wa_pattern < 0 ||
      p.image_size % (2 * P) != 0)
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("{}: sizes must be positive, heads a multiple of 4 wide, n_ff other "
                             "than n_embd, the image side a multiple of 2 patches",
                             p.projector));
  for (int32_t il : p.deepstack_layers)
    if (kind != Kind::kQwen3 || il < 0 || il >= p.n_layer)
      return error(ErrorCode::kInvalidArgument,
                   "deepstack layers are qwen3vl_merger's, each in 0..n_layer-1");
  const TensorType kernel_type =
      p.type == TensorType::kF32 || p.type == TensorType::kBF16 ? p.type : TensorType::kF16;
  const float kernel_scale = 1.0f / std::sqrt(static_cast<float>(2 * 3 * P * P));
  gguf::Writer w;
  write_keys(w, p, kind);
  for (const char* name : {"v.patch_embd.weight", "v.patch_embd.weight.1"})
    HEARTH_RETURN_IF_ERROR(add_random(w, p, name, {P, P, 3, E}, kernel_type, kernel_scale, 0.0f));
  if (kind == Kind::kQwen3) HEARTH_RETURN_IF_ERROR(add_qwen3_parts(w, p));
  for (int32_t il = 0; il < p.n_layer; ++il) HEARTH_RETURN_IF_ERROR(add_block(w, p, il, kind));
  HEARTH_RETURN_IF_ERROR(add_norm(w, p, "v.post_ln", E, kind != Kind::kQwen25));
  HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.0", 4 * E, 4 * E));
  HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.2", 4 * E, T));
  return w.write(out_path);
}

}  // namespace hearth::synth::detail

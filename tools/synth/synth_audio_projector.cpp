// Random-weight audio projector files (mmproj with clip.has_audio_encoder) with the keys and
// tensor names of llama.cpp's clip loader (tools/mtmd/clip.cpp) for the Whisper-based families:
// a Whisper encoder (two convolutions over time, kernels [3, C, E] with biases [1, E] as the
// converter writes them, a position table of 1500 rows, pre-norm blocks whose K has no bias,
// a post-LN) and one of three projectors:
//   ultravox: stack_factor (default 8) frames stacked, RMS norm mm.a.norm_pre [S], mm.a.mlp.1
//             [S, 2T], SwiGLU, RMS norm mm.a.norm_mid [T], mm.a.mlp.2 [T, T] (no biases);
//   voxtral:  frame pairs pooled, stack_factor (default 4) frames stacked, mm.a.mlp.1 [S, T],
//             GELU, mm.a.mlp.2 [T, T] (no biases);
//   qwen2a:   frame pairs pooled, mm.a.fc [E, T] + bias.
// The convolution kernels stay F16 (F32 when --type f32) as the converter forces them; the
// position table is F32.
#include <fmt/format.h>

#include <cmath>

#include "kernels/quant.h"
#include "tools/synth/synth_parts.h"

namespace hearth::synth::detail {
namespace {

constexpr int64_t kWhisperPositions = 1500;  // 30 s of mel frames, halved by the second conv

Status check_audio_params(const SynthParams& p) {
  if (p.text_n_embd <= 0)
    return error(ErrorCode::kInvalidArgument, "a projector needs --text-n-embd > 0");
  if (p.n_embd <= 0 || p.n_layer <= 0 || p.n_head <= 0 || p.n_ff <= 0 || p.n_embd % p.n_head)
    return error(ErrorCode::kInvalidArgument,
                 "projector sizes must be positive, n_embd a multiple of n_head");
  if (p.n_mel <= 0 || p.n_mel > 256)
    return error(ErrorCode::kInvalidArgument, "an audio projector needs --n-mel in 1..256");
  if (p.stack_factor < 0 || p.stack_factor > 64)
    return error(ErrorCode::kInvalidArgument, "--stack-factor must be in 0..64");
  if (!kernels::can_quantize(p.type))
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("cannot write weights of type {}", tensor_type_name(p.type)));
  return Status::ok();
}

int32_t stack_factor_of(const SynthParams& p) {
  if (p.projector == "qwen2a") return 0;
  if (p.stack_factor > 0) return p.stack_factor;
  return p.projector == "ultravox" ? 8 : 4;
}

void write_audio_keys(gguf::Writer& w, const SynthParams& p) {
  w.set_string("general.architecture", "clip");
  w.set_string("general.name", fmt::format("hearth-synth mmproj {}", p.projector));
  set_file_type(w, p.type);
  w.set_string("clip.projector_type", p.projector);
  w.set_bool("clip.has_vision_encoder", false);
  w.set_bool("clip.has_audio_encoder", true);
  w.set_u32("clip.audio.embedding_length", static_cast<uint32_t>(p.n_embd));
  w.set_u32("clip.audio.feed_forward_length", static_cast<uint32_t>(p.n_ff));
  w.set_u32("clip.audio.block_count", static_cast<uint32_t>(p.n_layer));
  w.set_u32("clip.audio.attention.head_count", static_cast<uint32_t>(p.n_head));
  w.set_u32("clip.audio.projection_dim", static_cast<uint32_t>(p.text_n_embd));
  w.set_f32("clip.audio.attention.layer_norm_epsilon", 1e-5f);
  w.set_u32("clip.audio.num_mel_bins", static_cast<uint32_t>(p.n_mel));
  if (const int32_t sf = stack_factor_of(p); sf > 0)
    w.set_u32("clip.audio.projector.stack_factor", static_cast<uint32_t>(sf));
}

// One Whisper block: LayerNorms, Q/K/V/out (K without a bias, as Whisper has), up/down FFN.
Status add_whisper_block(gguf::Writer& w, const SynthParams& p, int32_t il) {
  const std::string b = fmt::format("a.blk.{}.", il);
  const int64_t E = p.n_embd, F = p.n_ff;
  HEARTH_RETURN_IF_ERROR(add_norm(w, p, b + "ln1", E, true));
  HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + "attn_q", E, E, true));
  HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + "attn_k", E, E, false));
  HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + "attn_v", E, E, true));
  HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + "attn_out", E, E, true));
  HEARTH_RETURN_IF_ERROR(add_norm(w, p, b + "ln2", E, true));
  HEARTH_RETURN_IF_ERROR(add_matrix(w, p, b + "ffn_up", E, F, true));
  return add_matrix(w, p, b + "ffn_down", F, E, true);
}

// The encoder: convolutions (kernel [3, C, E], bias [1, E]), positions, blocks, post-LN.
Status add_whisper_encoder(gguf::Writer& w, const SynthParams& p) {
  const TensorType conv_type = p.type == TensorType::kF32 ? TensorType::kF32 : TensorType::kF16;
  const int64_t E = p.n_embd;
  for (const auto& [index, C] : {std::pair<int, int64_t>{1, p.n_mel}, {2, E}}) {
    const std::string name = fmt::format("a.conv1d.{}", index);
    HEARTH_RETURN_IF_ERROR(add_random(w, p, name + ".weight", {3, C, E}, conv_type,
                                      1.0f / std::sqrt(static_cast<float>(3 * C)), 0.0f));
    HEARTH_RETURN_IF_ERROR(add_random(w, p, name + ".bias", {1, E}, TensorType::kF32, 0.02f, 0.0f));
  }
  HEARTH_RETURN_IF_ERROR(add_random(w, p, "a.position_embd.weight", {E, kWhisperPositions},
                                    TensorType::kF32, 0.2f, 0.0f));
  for (int32_t il = 0; il < p.n_layer; ++il) HEARTH_RETURN_IF_ERROR(add_whisper_block(w, p, il));
  return add_norm(w, p, "a.post_ln", E, true);
}

}  // namespace

bool is_audio_projector(std::string_view family) {
  return family == "ultravox" || family == "voxtral" || family == "qwen2a";
}

Status synthesize_audio_projector(const SynthParams& p, const std::string& out_path) {
  HEARTH_RETURN_IF_ERROR(check_audio_params(p));
  const int64_t E = p.n_embd, T = p.text_n_embd, S = E * std::max(1, stack_factor_of(p));
  gguf::Writer w;
  write_audio_keys(w, p);
  HEARTH_RETURN_IF_ERROR(add_whisper_encoder(w, p));
  if (p.projector == "ultravox") {
    HEARTH_RETURN_IF_ERROR(add_norm(w, p, "mm.a.norm_pre", S, false));
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.a.mlp.1", S, 2 * T, false));
    HEARTH_RETURN_IF_ERROR(add_norm(w, p, "mm.a.norm_mid", T, false));
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.a.mlp.2", T, T, false));
  } else if (p.projector == "voxtral") {
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.a.mlp.1", S, T, false));
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.a.mlp.2", T, T, false));
  } else {
    HEARTH_RETURN_IF_ERROR(add_matrix(w, p, "mm.a.fc", E, T, true));
  }
  return w.write(out_path);
}

}  // namespace hearth::synth::detail

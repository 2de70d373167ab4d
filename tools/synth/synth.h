// Writing model files for tests and benchmarks: random-weight models of a given
// architecture and shape (borrowing a real tokenizer), and type conversion of an
// existing model.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/tensor_type.h"

namespace hearth::synth {

struct SynthParams {
  // llama | qwen2 | qwen3 | smollm3 | gemma | gemma2 | gemma3 | granite | phi3 | olmo2 |
  // qwen2moe | qwen3moe | olmoe | gpt-oss | qwen2vl | qwen3vl | qwen3vlmoe | lfm2 | bert |
  // nomic-bert | jina-bert-v2 | modern-bert
  std::string arch = "llama";
  int32_t n_embd = 2048;
  int32_t n_layer = 16;
  int32_t n_head = 32;
  int32_t n_head_kv = 8;
  int32_t head_dim = 0;  // 0 = n_embd / n_head
  int32_t n_ff = 8192;
  int32_t n_ctx = 4096;  // context_length written to the file
  float rope_base = 10000.0f;
  float rms_eps = 1e-5f;
  bool tied_output = false;               // omit output.weight
  TensorType type = TensorType::kQ4_0;    // 2-D weights (MXFP4: the experts; the rest Q8_0)
  std::optional<TensorType> output_type;  // output.weight; default: `type`
  uint64_t seed = 1;
  std::string vocab_path;  // a GGUF whose tokenizer.* keys are copied
  // Tokens appended to the borrowed vocabulary as CONTROL tokens (score 0), e.g. the ones a
  // projector's prompt layout names (idefics3's "<fake_token_around_image>").
  std::vector<std::string> add_tokens;
  // Encoders (bert, nomic-bert): LayerNorm epsilon, the pooling_type key (-1: none written),
  // and a classifier head of n_cls_out outputs for rank pooling (0: none; bert only).
  float norm_eps = 1e-12f;
  int32_t pooling = -1;
  int32_t n_cls_out = 0;
  // jina-bert-v2: q/k LayerNorms, the second attention norm, a separate FFN gate (else fused
  // into ffn_up's 2F rows).
  bool qk_norm = false;
  bool attn_norm_2 = false;
  bool separate_gate = false;
  // modern-bert, gemma2, gemma3: sliding window (0: none), its layer pattern, the local rope
  // base; modern-bert's hidden_activation key ("": not written).
  int32_t n_swa = 0;
  int32_t swa_pattern = 3;
  float rope_base_swa = 10000.0f;
  std::string hidden_act;
  // gemma2/3: attn_logit_softcapping and final_logit_softcapping keys (0: not written).
  float attn_softcap = 0.0f;
  float final_softcap = 0.0f;
  // granite: logit_scale (written as 1 when 0), residual_scale, embedding_scale and
  // attention.scale (0: not written).
  float logit_scale = 0.0f;
  float residual_scale = 0.0f;
  float embedding_scale = 0.0f;
  float attention_scale = 0.0f;
  // Mixture of experts (llama = Mixtral, qwen2moe, qwen3moe, olmoe): experts, used per token,
  // their FFN width (0: n_ff), and qwen2moe's shared expert width (0: n_ff).
  int32_t n_expert = 0;
  int32_t n_expert_used = 0;
  int32_t n_ff_exp = 0;
  int32_t n_ff_shexp = 0;
  // mistral3: attention.temperature_scale (0: not written).
  float attn_temp_scale = 0.0f;
  // phi3: > 0 writes LongRoPE (this original context length, long and short factors).
  int32_t n_ctx_orig = 0;
  // > 0: YaRN rope scaling by this factor, from an original context of n_ctx / factor.
  float yarn_factor = 0.0f;
  // qwen2vl, qwen3vl, qwen3vlmoe: rope.dimension_sections (empty: about the real models'
  // proportions of head_dim / 2 pairs) and qwen3vl's deepstack layers.
  std::vector<int32_t> rope_sections;
  int32_t n_deepstack = 0;
  // lfm2: the layers that attend (the others are short convolutions) and the convolution's
  // taps (shortconv.l_cache).
  std::vector<int32_t> attention_layers;
  int32_t l_cache = 3;
  // lfm2moe: the leading layers with a dense FFN (the others route to --n-expert experts).
  int32_t n_dense_lead = 1;
  // A projector file (mmproj) instead of a text model when not empty: "gemma3" (SigLIP,
  // average pooling, RMSNorm, input projection) or "mlp" (LLaVA's CLIP with a class
  // embedding and pre-LN, and the two-layer GELU projector). n_embd, n_layer, n_head, n_ff and
  // norm_eps shape the vision encoder; text_n_embd is the width of the text model it feeds.
  std::string projector;
  int32_t text_n_embd = 0;
  int32_t image_size = 224;
  int32_t patch_size = 14;
  int32_t n_merge = 4;    // gemma3: the pooling kernel (projector.scale_factor)
  bool use_gelu = false;  // mlp: clip.use_gelu (GELU instead of CLIP's quick GELU)
  // idefics3: clip.vision.preproc_image_size, the longest edge before tiling (0: not written).
  int32_t preproc_image_size = 0;
  // mlp: clip.vision.image_grid_pinpoints (LLaVA-1.6 tile grids, w0, h0, w1, h1...); empty:
  // not written.
  std::vector<int32_t> grid_pinpoints;
  // Audio projectors ("ultravox", "voxtral", "qwen2a": a Whisper encoder shaped by n_embd,
  // n_layer, n_head, n_ff): the mel bins it reads and the frames its projector stacks (0: the
  // family's default, ultravox 8, voxtral 4).
  int32_t n_mel = 128;
  int32_t stack_factor = 0;
  // mlp: clip.vision.feature_layer (the layers whose inputs the projector reads side by
  // side; n_layer: the output); empty: not written (the second-to-last layer's output).
  std::vector<int32_t> feature_layers;
  // qwen2.5vl_merger: clip.vision.n_wa_pattern (every n-th block attends over the whole image,
  // the others inside windows; 0: none).
  int32_t n_wa_pattern = 0;
  // qwen3vl_merger: the blocks whose outputs feed a deepstack merger (v.deepstack.N.*).
  std::vector<int32_t> deepstack_layers;
};

// Writes a GGUF with seeded random weights (the same params and seed give the same file).
Status synthesize(const SynthParams& params, const std::string& out_path);

// Writes a random-weight projector GGUF (params.projector names the family: gemma3, mlp,
// idefics3, pixtral, internvl, lfm2, qwen2vl_merger, qwen2.5vl_merger, qwen3vl_merger, ultravox,
// voxtral, qwen2a) with every key llama.cpp's clip loader needs.
Status synthesize_projector(const SynthParams& params, const std::string& out_path);

// Rewrites `in_path` with every 2-D weight converted to `type` (dequantize, then the
// reference quantizer). Rows whose length is not a multiple of the type's block size
// keep a type that fits (F16). Metadata and 1-D tensors are copied.
Status convert(const std::string& in_path, TensorType type, const std::string& out_path);

}  // namespace hearth::synth

// Architecture hyper-parameters read from GGUF metadata (`<arch>.*` keys), with the
// reference's defaults and strict value types.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/pooling.h"
#include "gguf/file.h"

namespace hearth::engine {

enum class RopeScaling { kNone, kLinear, kYarn, kLongRope };

// Multi-axis rope (M-RoPE: qwen2vl, qwen3vl): each rotated pair takes one of four position
// components (time, height, width, extra) as <arch>.rope.dimension_sections assigns them,
// in contiguous sections (kSections, the reference's MROPE) or interleaved (kInterleaved,
// its IMROPE: qwen3vl). kNone: one position per token.
enum class MultiRope { kNone, kSections, kInterleaved };

struct RopeParams {
  float freq_base = 10000.0f;
  RopeScaling scaling = RopeScaling::kLinear;
  float freq_scale = 1.0f;       // 1 / rope.scaling.factor
  int32_t n_ctx_orig = 0;        // rope.scaling.original_context_length
  float attn_factor = 1.0f;      // magnitude multiplier on cos/sin
  float yarn_ext_factor = 0.0f;  // 1 for YaRN, else 0
  float yarn_beta_fast = 32.0f;
  float yarn_beta_slow = 1.0f;
  float yarn_log_multiplier = 0.0f;
};

struct ModelHparams {
  std::string arch;         // general.architecture
  std::string name;         // general.name
  int32_t n_ctx_train = 0;  // <arch>.context_length
  int32_t n_embd = 0;       // E
  int32_t n_layer = 0;      // L
  int32_t n_ff = 0;         // F
  int32_t n_head = 0;       // H
  int32_t n_head_kv = 0;    // Hkv
  int32_t head_dim = 0;     // D (key_length)
  int32_t head_dim_v = 0;   // Dv (value_length)
  int32_t n_rot = 0;        // R, rotated dims per head
  int32_t n_vocab = 0;      // V
  float rms_eps = 1e-5f;    // RMSNorm epsilon (decoders)
  float norm_eps = 0.0f;    // LayerNorm epsilon (encoders: <arch>.attention.layer_norm_epsilon)
  bool causal = true;       // <arch>.attention.causal; encoders attend to their whole input
  int32_t n_cls_out = 1;    // rank head outputs: <arch>.classifier.output_labels, else 1
  RopeParams rope;
  // Mixture of experts: <arch>.expert_count (0: dense), .expert_used_count, the experts'
  // FFN width (.expert_feed_forward_length) and the shared expert's
  // (.expert_shared_feed_forward_length).
  int32_t n_expert = 0;
  int32_t n_expert_used = 0;
  int32_t n_ff_exp = 0;
  int32_t n_ff_shexp = 0;
  // The rope of sliding-window layers where it differs (<arch>.rope.freq_base_swa and the
  // like); the context computes a second table when there is one.
  std::optional<RopeParams> rope_swa;
  // > 0: logits divided by it (granite's logit_scale; multiplied by its inverse as the
  // reference does).
  float logit_scale = 0.0f;
  // > 0: final logit soft-capping, logit = cap * tanh(logit / cap) (gemma2, gemma3).
  float final_logit_softcap = 0.0f;
  // Rows of ffn_up when it holds the gate and up halves together (GEGLU encoders): 2F; else 0.
  int32_t n_ff_up = 0;
  // <arch>.pooling_type: the model's pooling for embeddings (kUnspecified when absent).
  PoolingType pooling = PoolingType::kUnspecified;
  // M-RoPE models: how pairs take position components, and the pairs of each component
  // (t, h, w, e), set by the architecture's loader.
  MultiRope mrope = MultiRope::kNone;
  std::array<int32_t, 4> rope_sections{};
  // qwen3vl's deepstack: media rows carry the main embedding then one n_embd slice per
  // deepstack layer, slice k added to the hidden state after layer k - 1
  // (<arch>.n_deepstack_layers).
  int32_t n_deepstack = 0;
  // Hybrid models (lfm2): per layer, whether it is an attention layer, from the zeros of a
  // per-layer <arch>.attention.head_count_kv (n_head_kv is then the attention layers'
  // value). Empty: every layer attends.
  std::vector<uint8_t> layer_attends;
  bool attends(int32_t il) const {
    return layer_attends.empty() || layer_attends[static_cast<size_t>(il)] != 0;
  }

  int32_t n_embd_q() const { return n_head * head_dim; }
  int32_t n_embd_k() const { return n_head_kv * head_dim; }
  int32_t n_embd_v() const { return n_head_kv * head_dim_v; }
  // Width of an input row given as an embedding (BatchToken::embd): n_embd, or with
  // deepstack n_embd * (1 + n_deepstack), as the projector writes it.
  int32_t n_embd_inp() const { return n_embd * (1 + n_deepstack); }
};

// An optional u32 key (`fallback` when absent; a per-layer array whose values all agree is
// read as one value) and an optional f32 key, for the architecture loaders' own keys.
Result<int64_t> read_u32_key(const gguf::File& file, const std::string& key, int64_t fallback);
Result<float> read_f32_key(const gguf::File& file, const std::string& key, float fallback);

// Reads the llama-family keys of `file` for its general.architecture. `n_vocab` comes
// from <arch>.vocab_size or the token list (0 when neither exists: the model loader then
// takes it from the embedding matrix). Checks the values for consistency
// (positive sizes, H divisible by Hkv, R <= D and even, ...).
Result<ModelHparams> read_hparams(const gguf::File& file);

}  // namespace hearth::engine

// Internal to hearth-synth: the helpers the decoder and encoder writers share.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "base/tensor_type.h"
#include "gguf/writer.h"
#include "tools/synth/synth.h"

namespace hearth::synth {

inline bool is_encoder(std::string_view arch) {
  return arch == "bert" || arch == "nomic-bert" || arch == "jina-bert-v2" || arch == "modern-bert";
}

inline bool is_gemma(std::string_view arch) {
  return arch == "gemma" || arch == "gemma2" || arch == "gemma3";
}

inline bool is_mrope(std::string_view arch) {
  return arch == "qwen2vl" || arch == "qwen3vl" || arch == "qwen3vlmoe";
}

namespace detail {

// Rows of `values` ([n_rows][n_cols]) encoded as `type`.
std::vector<uint8_t> encode(TensorType type, const std::vector<float>& values, int64_t n_cols);
// `wanted`, or F16 when a row is not whole blocks of it.
TensorType fitting_type(TensorType wanted, int64_t n_cols);
// A tensor of seeded values offset + scale * N(0, 1) (1-D tensors are F32).
Status add_random(gguf::Writer& w, const SynthParams& p, const std::string& name,
                  std::vector<int64_t> ne, TensorType type, float scale, float offset);
// A norm's `name`.weight (around 1) and, with `bias`, `name`.bias (around 0), [n] F32 each.
Status add_norm(gguf::Writer& w, const SynthParams& p, const std::string& name, int64_t n,
                bool bias);
// A linear layer's `name`.weight [n_in, n_out] (the file's type where rows fit its blocks) scaled
// by 1/sqrt(n_in) and, with `bias`, `name`.bias [n_out].
Status add_matrix(gguf::Writer& w, const SynthParams& p, const std::string& name, int64_t n_in,
                  int64_t n_out, bool bias = true);
// Copies the tokenizer.* keys of a vocabulary GGUF, `add_tokens` appended as CONTROL tokens;
// n_vocab gets the token count.
Status copy_tokenizer(gguf::Writer& w, const std::string& vocab_path, int32_t& n_vocab,
                      const std::vector<std::string>& add_tokens);
void set_file_type(gguf::Writer& w, TensorType type);
// general.architecture and .name, and the <arch>.* sizes every architecture has.
void write_shape_keys(gguf::Writer& w, const SynthParams& p);
// lfm2: short-convolution and attention layers (synth_lfm2.cpp).
Status synthesize_lfm2(const SynthParams& p, const std::string& out_path);
// bert / nomic-bert / jina-bert-v2 / modern-bert (synth_encoder.cpp).
Status synthesize_encoder(const SynthParams& p, const std::string& out_path);

// ultravox / voxtral / qwen2a: a Whisper encoder and its projector (synth_audio_projector.cpp).
bool is_audio_projector(std::string_view family);
Status synthesize_audio_projector(const SynthParams& p, const std::string& out_path);

// pixtral / internvl: the vision families with their own ViT (synth_vision_families.cpp).
bool is_vision_family_projector(std::string_view family);
Status synthesize_vision_family_projector(const SynthParams& p, const std::string& out_path);

// qwen2vl_merger / qwen2.5vl_merger: Qwen-VL's ViT and merger (synth_qwen_vl.cpp).
bool is_qwen_vl_projector(std::string_view family);
Status synthesize_qwen_vl_projector(const SynthParams& p, const std::string& out_path);

}  // namespace detail
}  // namespace hearth::synth

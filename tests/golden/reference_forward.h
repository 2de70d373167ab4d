// An independent float64 forward pass for llama-family GGUF models, written plainly for
// tests: weights are dequantized to double, every position is recomputed from scratch,
// and nothing is shared with the engine but the GGUF reader and the dequantizers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace hearth::test {

struct ReferenceOptions {
  // Round K and V to f16 as they enter attention, the way the engine's F16 KV cache
  // stores them, so the comparison measures arithmetic error rather than storage format.
  bool round_kv_to_f16 = true;
};

// Logits [n_vocab] after the last of `tokens`, or an empty vector (with `error` set) when
// the model cannot be read.
std::vector<double> reference_logits(const std::string& model_path,
                                     const std::vector<int32_t>& tokens,
                                     const ReferenceOptions& options, std::string* error);

}  // namespace hearth::test

// A small random Gemma 3 with sliding-window layers, shared by the tests of the KV cache's
// windows: four layers, windows of 16 positions on layers 0, 1 and 3 (pattern 3, the last
// layer of each period global) with the local rope base, F16 weights, stories260K's
// vocabulary. Synthesized in a few milliseconds.
#pragma once

#include <string>

#include "support/test_paths.h"
#include "tools/synth/synth.h"

namespace hearth::test {

inline constexpr int32_t kWindowedModelWindow = 16;

inline synth::SynthParams windowed_model_params() {
  synth::SynthParams p;
  p.arch = "gemma3";
  p.n_embd = 128;
  p.n_layer = 4;
  p.n_head = 4;
  p.n_head_kv = 2;
  p.n_ff = 256;
  p.n_swa = kWindowedModelWindow;
  p.swa_pattern = 3;
  p.type = TensorType::kF16;
  p.vocab_path = shared_path("models/stories260K.gguf");
  return p;
}

// Token ids 1, then n - 1 ids of a fixed pattern shifted by `salt`, below n_vocab.
inline std::vector<int32_t> patterned_tokens(int32_t n, int32_t salt, int32_t n_vocab) {
  std::vector<int32_t> p = {1};
  for (int32_t i = 1; i < n; ++i) p.push_back((37 + salt + i * 13 + i * i) % n_vocab);
  return p;
}

}  // namespace hearth::test

// A small random lfm2 (LiquidAI's hybrid): four layers, short convolutions of 3 taps on
// layers 0 and 2, GQA attention on layers 1 and 3, n_embd 64, F16 weights, stories260K's
// vocabulary. Synthesized in a few milliseconds.
#pragma once

#include "support/test_paths.h"
#include "tools/synth/synth.h"

namespace hearth::test {

inline synth::SynthParams hybrid_model_params() {
  synth::SynthParams p;
  p.arch = "lfm2";
  p.n_embd = 64;
  p.n_layer = 4;
  p.n_head = 4;
  p.n_head_kv = 2;
  p.n_ff = 128;
  p.n_ctx = 512;
  p.attention_layers = {1, 3};
  p.l_cache = 3;
  p.type = TensorType::kF16;
  p.vocab_path = shared_path("models/stories260K.gguf");
  return p;
}

}  // namespace hearth::test

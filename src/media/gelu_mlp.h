// The two-layer GELU MLP most projector families end with: fc2(gelu(fc1(x) + b1)) + b2
// (pixtral's and lfm2's mm.1/mm.2, internvl's mm.model.mlp.1/3, the Qwen-VL mergers'
// mm.0/mm.2 and Qwen3-VL's deepstack mergers).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/weights.h"

namespace hearth::media {

struct GeluMlp {
  engine::WeightMatrix fc1, fc2;  // [K, H] [H, T]
  std::vector<float> b1, b2;      // [H] [T] (empty: none)
};

// The n rows x [n][K] through the MLP into out[r * stride + i], i < T (stride >= T, so that
// deepstack rows can sit side by side; stride 0: T).
void run_gelu_mlp(const GeluMlp& mlp, const float* x, int64_t n, float* out, ThreadPool& pool,
                  int64_t stride = 0);

// The rows of the matrix `name` (its ne[1]); kCorruptFile naming it when it is missing or
// implausibly large.
Result<int64_t> matrix_rows(const engine::TensorLoader& loader, const std::string& name,
                            const std::string& path);

// Loads `<fc1>.weight` [K, H] and `<fc2>.weight` [H, T] (H and T from the tensors) and their
// biases, required unless `optional_biases`.
Result<GeluMlp> load_gelu_mlp(engine::TensorLoader& loader, const std::string& fc1,
                              const std::string& fc2, int64_t K, const std::string& path,
                              bool optional_biases = false);

}  // namespace hearth::media

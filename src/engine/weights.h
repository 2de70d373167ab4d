// Model weights as views into the mapped GGUF file: matrices stay where the file put them
// (zero-copy); small 1-D tensors (norms, biases) are converted to f32 vectors at load.
#pragma once

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/file.h"
#include "kernels/matmul.h"

namespace hearth::engine {

using kernels::WeightMatrix;

inline bool present(const WeightMatrix& w) {
  return w.data != nullptr;
}

// One transformer block of the llama family. Shapes in GGUF order.
struct LayerWeights {
  std::vector<float> attn_norm;       // [E]
  WeightMatrix wq, wk, wv, wo;        // [E, H*D] [E, Hkv*D] [E, Hkv*Dv] [H*Dv, E]
  std::vector<float> bq, bk, bv, bo;  // optional biases [H*D] [Hkv*D] [Hkv*Dv] [E]
  std::vector<float> q_norm, k_norm;  // optional per-head RMSNorm weights [D]
  std::vector<float> ffn_norm;        // [E]
  WeightMatrix ffn_gate, ffn_up;      // [E, F]
  WeightMatrix ffn_down;              // [F, E]
  std::vector<float> ffn_gate_b, ffn_up_b, ffn_down_b;  // optional biases
};

struct ModelWeights {
  WeightMatrix token_embd;         // [E, V]; row t is token t's embedding
  std::vector<float> output_norm;  // [E]
  WeightMatrix output;             // [E, V]; the embedding matrix when tied
  std::vector<float> output_bias;  // optional [V]
  std::vector<float> rope_freqs;   // optional per-pair divisors [R/2]
  std::vector<LayerWeights> layers;
};

// Looks tensors up by name with exact shape checks, and remembers which were used so
// that a file with tensors the architecture does not know can be refused.
class TensorLoader {
 public:
  explicit TensorLoader(const gguf::Archive& archive) : archive_(archive) {}

  // A matrix with GGUF shape [n_cols, n_rows] of a type matmul can run. An absent optional
  // tensor yields an empty view.
  Result<WeightMatrix> matrix(const std::string& name, int64_t n_cols, int64_t n_rows,
                              bool optional = false);
  // A 1-D tensor of n elements, converted to f32. Absent and optional: empty vector.
  Result<std::vector<float>> vector(const std::string& name, int64_t n, bool optional = false);
  bool has(const std::string& name) const { return archive_.find_tensor(name) != nullptr; }
  // kCorruptFile naming the first tensor no lookup asked for.
  Status check_all_used() const;

 private:
  Result<const gguf::TensorInfo*> find(const std::string& name, bool optional);

  const gguf::Archive& archive_;
  std::set<std::string, std::less<>> used_;
};

}  // namespace hearth::engine

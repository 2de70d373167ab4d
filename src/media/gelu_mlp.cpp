#include "media/gelu_mlp.h"

#include <fmt/format.h>

#include <algorithm>

#include "kernels/matmul.h"
#include "media/vit.h"

namespace hearth::media {

void run_gelu_mlp(const GeluMlp& mlp, const float* x, int64_t n, float* out, ThreadPool& pool,
                  int64_t stride) {
  const int64_t H = mlp.fc1.n_rows, T = mlp.fc2.n_rows;
  std::vector<float> hidden(size_t(n * H));
  kernels::matmul(mlp.fc1, x, n, hidden.data(), pool);
  add_bias_rows(hidden.data(), mlp.b1, n);
  gelu_inplace(hidden.data(), n * H, pool);
  if (stride == 0 || stride == T) {
    kernels::matmul(mlp.fc2, hidden.data(), n, out, pool);
    add_bias_rows(out, mlp.b2, n);
    return;
  }
  std::vector<float> projected(size_t(n * T));
  kernels::matmul(mlp.fc2, hidden.data(), n, projected.data(), pool);
  add_bias_rows(projected.data(), mlp.b2, n);
  for (int64_t r = 0; r < n; ++r) std::copy_n(projected.data() + r * T, T, out + r * stride);
}

Result<int64_t> matrix_rows(const engine::TensorLoader& loader, const std::string& name,
                            const std::string& path) {
  const gguf::TensorInfo* t = loader.find_info(name);
  if (t == nullptr || t->ne[1] <= 0 || t->ne[1] > (int64_t{1} << 20))
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: projector tensor '{}' is missing or malformed", path, name));
  return t->ne[1];
}

Result<GeluMlp> load_gelu_mlp(engine::TensorLoader& loader, const std::string& fc1,
                              const std::string& fc2, int64_t K, const std::string& path,
                              bool optional_biases) {
  GeluMlp m;
  HEARTH_ASSIGN_OR_RETURN(const int64_t H, matrix_rows(loader, fc1 + ".weight", path));
  HEARTH_ASSIGN_OR_RETURN(const int64_t T, matrix_rows(loader, fc2 + ".weight", path));
  HEARTH_ASSIGN_OR_RETURN(m.fc1, loader.matrix(fc1 + ".weight", K, H));
  HEARTH_ASSIGN_OR_RETURN(m.b1, loader.vector(fc1 + ".bias", H, optional_biases));
  HEARTH_ASSIGN_OR_RETURN(m.fc2, loader.matrix(fc2 + ".weight", H, T));
  HEARTH_ASSIGN_OR_RETURN(m.b2, loader.vector(fc2 + ".bias", T, optional_biases));
  return m;
}

}  // namespace hearth::media

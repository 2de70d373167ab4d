#include "engine/weights.h"

#include <fmt/format.h>

#include "base/mapped_file.h"
#include "kernels/interleaved.h"
#include "kernels/quant.h"

namespace hearth::engine {

Result<const gguf::TensorInfo*> TensorLoader::find(const std::string& name, bool optional) {
  const gguf::TensorInfo* t = archive_.find_tensor(name);
  if (t == nullptr) {
    if (optional) return static_cast<const gguf::TensorInfo*>(nullptr);
    return error(ErrorCode::kCorruptFile, fmt::format("{}: required tensor '{}' is missing",
                                                      archive_.primary().name(), name));
  }
  used_.insert(name);
  return t;
}

Result<WeightMatrix> TensorLoader::matrix(const std::string& name, int64_t n_cols, int64_t n_rows,
                                          bool optional) {
  HEARTH_ASSIGN_OR_RETURN(WeightMatrix w, row_matrix(name, n_cols, n_rows, optional));
  if (!options_.repack || !kernels::can_interleave(w)) return w;
  return repack(w);
}

// Copies w into the interleaved layout and drops the file's pages of it, so the tensor is
// resident once (peak: the model plus one matrix).
WeightMatrix TensorLoader::repack(const WeightMatrix& w) {
  const size_t bytes = kernels::interleaved_bytes(w);
  constexpr size_t kAlign = 64;
  OwnedBytes storage(
      static_cast<uint8_t*>(std::aligned_alloc(kAlign, (bytes + kAlign - 1) / kAlign * kAlign)));
  if (storage == nullptr) return w;  // no memory for a copy: the row layout still works
  const WeightMatrix packed = kernels::interleave(w, storage.get());
  // After one failed lock the limit is reached: stop trying (and warning) for each matrix.
  if (load_mode_locks(options_.load_mode) && !lock_failed_)
    lock_failed_ = !lock_in_ram(storage.get(), bytes);
  archive_.release_pages(w.data, w.row_stride * static_cast<size_t>(w.n_rows));
  repacked_.push_back(std::move(storage));
  return packed;
}

Result<WeightMatrix> TensorLoader::row_matrix(const std::string& name, int64_t n_cols,
                                              int64_t n_rows, bool optional) {
  HEARTH_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, find(name, optional));
  if (t == nullptr) return WeightMatrix{};
  if (t->ne[0] != n_cols || t->ne[1] != n_rows || t->ne[2] != 1 || t->ne[3] != 1)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: tensor '{}' has shape {}, expected [{}, {}]",
                             archive_.primary().name(), name, t->shape_string(), n_cols, n_rows));
  if (!kernels::can_matmul(t->type))
    return error(ErrorCode::kUnsupported,
                 fmt::format("{}: tensor '{}' has type {}, which Hearth cannot multiply yet",
                             archive_.primary().name(), name, tensor_type_name(t->type)));
  WeightMatrix w;
  w.type = t->type;
  w.n_cols = n_cols;
  w.n_rows = n_rows;
  w.row_stride = row_bytes(traits_of(t->type), static_cast<uint64_t>(n_cols));
  w.data = t->data;
  return w;
}

Result<std::vector<WeightMatrix>> TensorLoader::matrices(const std::string& name, int64_t n_cols,
                                                         int64_t n_rows, int64_t n_mats) {
  HEARTH_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, find(name, false));
  if (t->ne[0] != n_cols || t->ne[1] != n_rows || t->ne[2] != n_mats || t->ne[3] != 1)
    return error(
        ErrorCode::kCorruptFile,
        fmt::format("{}: tensor '{}' has shape {}, expected [{}, {}, {}]",
                    archive_.primary().name(), name, t->shape_string(), n_cols, n_rows, n_mats));
  if (!kernels::can_matmul(t->type))
    return error(ErrorCode::kUnsupported,
                 fmt::format("{}: tensor '{}' has type {}, which Hearth cannot multiply yet",
                             archive_.primary().name(), name, tensor_type_name(t->type)));
  std::vector<WeightMatrix> out;
  const size_t stride = row_bytes(traits_of(t->type), static_cast<uint64_t>(n_cols));
  for (int64_t m = 0; m < n_mats; ++m) {
    WeightMatrix w;
    w.type = t->type;
    w.n_cols = n_cols;
    w.n_rows = n_rows;
    w.row_stride = stride;
    w.data = t->data + static_cast<size_t>(m) * static_cast<size_t>(n_rows) * stride;
    out.push_back(options_.repack && kernels::can_interleave(w) ? repack(w) : w);
  }
  return out;
}

Result<std::vector<float>> TensorLoader::vector(const std::string& name, int64_t n, bool optional) {
  HEARTH_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, find(name, optional));
  if (t == nullptr) return std::vector<float>{};
  if (t->n_elements() != n || t->ne[0] != n)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: tensor '{}' has shape {}, expected [{}]",
                             archive_.primary().name(), name, t->shape_string(), n));
  if (!kernels::can_dequantize(t->type))
    return error(ErrorCode::kUnsupported,
                 fmt::format("{}: tensor '{}' has unsupported type {}", archive_.primary().name(),
                             name, tensor_type_name(t->type)));
  std::vector<float> out(static_cast<size_t>(n));
  kernels::dequantize_row(t->type, t->data, out.data(), n);
  return out;
}

Result<std::vector<std::vector<float>>> TensorLoader::vectors(const std::string& name, int64_t n,
                                                              int64_t n_vecs) {
  HEARTH_ASSIGN_OR_RETURN(const gguf::TensorInfo* t, find(name, false));
  if (t->ne[0] != n || t->ne[1] != n_vecs || t->n_elements() != n * n_vecs)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: tensor '{}' has shape {}, expected [{}, {}]",
                             archive_.primary().name(), name, t->shape_string(), n, n_vecs));
  if (!kernels::can_dequantize(t->type))
    return error(ErrorCode::kUnsupported,
                 fmt::format("{}: tensor '{}' has unsupported type {}", archive_.primary().name(),
                             name, tensor_type_name(t->type)));
  const size_t stride = row_bytes(traits_of(t->type), static_cast<uint64_t>(n));
  std::vector<std::vector<float>> out(static_cast<size_t>(n_vecs));
  for (int64_t v = 0; v < n_vecs; ++v) {
    out[static_cast<size_t>(v)].resize(static_cast<size_t>(n));
    kernels::dequantize_row(t->type, t->data + static_cast<size_t>(v) * stride,
                            out[static_cast<size_t>(v)].data(), n);
  }
  return out;
}

Status TensorLoader::check_all_used() const {
  for (const gguf::TensorInfo* t : archive_.tensors()) {
    if (used_.find(t->name) == used_.end())
      return error(ErrorCode::kCorruptFile,
                   fmt::format("{}: unexpected tensor '{}' for this architecture",
                               archive_.primary().name(), t->name));
  }
  return Status::ok();
}

}  // namespace hearth::engine

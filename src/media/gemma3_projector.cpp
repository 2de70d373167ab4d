// Gemma 3's projector (llama.cpp tools/mtmd/models/siglip.cpp, PROJECTOR_TYPE_GEMMA3): the
// SigLIP ViT's output [n_patches][E] is average-pooled over n_merge x n_merge squares of the
// patch grid, RMS-normed (eps = the ViT's) times mm.soft_emb_norm [E], then projected by
// mm.input_projection, stored [T, E] (T = the text width) and applied transposed: token t's
// output is sum_e pooled[e] * proj[e][t].
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "engine/ops.h"
#include "kernels/quant.h"
#include "media/projector_families.h"

namespace hearth::media::detail {
namespace {

using engine::WeightMatrix;

class Gemma3Projector final : public Projector {
 public:
  Gemma3Projector(std::unique_ptr<ClipFile> file, Vit vit, std::vector<engine::OwnedBytes> owned,
                  std::vector<float> soft_emb_norm, WeightMatrix input_proj)
      : Projector(std::move(file), std::move(vit), std::move(owned)),
        soft_emb_norm_(std::move(soft_emb_norm)),
        input_proj_(input_proj) {}

  std::string_view family() const override { return "gemma3"; }
  int32_t n_output_tokens(int32_t nx, int32_t ny) const override {
    const int32_t P = hparams().patch_size, k = hparams().n_merge;
    return (nx / P / k) * (ny / P / k);
  }
  int32_t n_embd_out() const override { return static_cast<int32_t>(input_proj_.n_rows); }
  bool non_causal_decode() const override { return true; }
  std::string_view image_begin() const override { return "<start_of_image>"; }
  std::string_view image_end() const override { return "<end_of_image>"; }

  Status encode(const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool,
                float* out) const override {
    HEARTH_RETURN_IF_ERROR(check_image(pixels, nx, ny));
    const VisionHparams& hp = hparams();
    const int64_t E = hp.n_embd, side = nx / hp.patch_size, k = hp.n_merge;
    std::vector<float> h = vit_.embed(pixels, nx, ny, pool);
    const int64_t n = side * side;
    for (int32_t il = 0; il < vit_.n_layers(); ++il) vit_.run_layer(il, h.data(), n, pool);
    vit_.post_norm(h.data(), n, pool);
    // Average pooling: output token (oy, ox) is the mean of patches (oy*k.., ox*k..).
    const int64_t out_side = side / k, n_out = out_side * out_side;
    std::vector<float> pooled(size_t(n_out * E), 0.0f);
    for (int64_t o = 0; o < n_out; ++o) {
      float* dst = pooled.data() + o * E;
      const int64_t oy = o / out_side, ox = o % out_side;
      for (int64_t dy = 0; dy < k; ++dy)
        for (int64_t dx = 0; dx < k; ++dx)
          engine::ops::add_inplace(dst, h.data() + ((oy * k + dy) * side + ox * k + dx) * E, E);
      const float inv = 1.0f / static_cast<float>(k * k);
      for (int64_t e = 0; e < E; ++e) dst[e] *= inv;
      engine::ops::rms_norm(dst, soft_emb_norm_.data(), dst, E, hp.eps);
    }
    kernels::matmul(input_proj_, pooled.data(), n_out, out, pool);
    return Status::ok();
  }

 private:
  std::vector<float> soft_emb_norm_;  // [E]
  WeightMatrix input_proj_;           // [E, T] (transposed from the file's [T, E])
};

// mm.input_projection [T, E] transposed into a matrix of T rows of E: float types keep
// their type (the reference's transposed copy does too, so products round as its do);
// other types become F32.
Result<WeightMatrix> transposed_projection(const gguf::TensorInfo& t, int64_t E,
                                           std::vector<engine::OwnedBytes>& owned) {
  const int64_t T = t.ne[0];
  if (t.ne[1] != E || t.ne[2] != 1 || t.ne[3] != 1 || T <= 0)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("projector tensor 'mm.input_projection.weight' has shape {}, "
                             "expected [n_embd_text, {}]",
                             t.shape_string(), E));
  const bool plain =
      t.type == TensorType::kF32 || t.type == TensorType::kF16 || t.type == TensorType::kBF16;
  if (!plain && !kernels::can_dequantize(t.type))
    return error(ErrorCode::kUnsupported,
                 fmt::format("projector tensor 'mm.input_projection.weight' has type {}",
                             tensor_type_name(t.type)));
  const TensorType type = plain ? t.type : TensorType::kF32;
  const size_t es = type == TensorType::kF32 ? 4 : 2;
  auto* bytes = static_cast<uint8_t*>(std::malloc(size_t(T * E) * es));
  if (bytes == nullptr)
    return error(ErrorCode::kResourceExhausted, "mm.input_projection: no memory");
  owned.emplace_back(bytes);
  std::vector<float> row(static_cast<size_t>(T));
  const size_t src_row = row_bytes(traits_of(t.type), uint64_t(T));
  for (int64_t e = 0; e < E; ++e) {
    const uint8_t* src = t.data + size_t(e) * src_row;
    if (!plain) kernels::dequantize_row(t.type, src, row.data(), T);
    for (int64_t r = 0; r < T; ++r) {
      uint8_t* dst = bytes + size_t(r * E + e) * es;
      if (plain)
        std::memcpy(dst, src + size_t(r) * es, es);
      else
        std::memcpy(dst, &row[size_t(r)], es);
    }
  }
  return WeightMatrix{.type = type,
                      .n_cols = E,
                      .n_rows = T,
                      .row_stride = size_t(E) * es,
                      .data = bytes,
                      .layout = kernels::WeightLayout::kRows};
}

}  // namespace

Result<std::unique_ptr<Projector>> load_gemma3(std::unique_ptr<ClipFile> file,
                                               const engine::LoadOptions& options) {
  VisionHparams& hp = file->vision;
  // The reference's default for every Gemma 3 size; tiny test models record their own.
  hp.n_merge = 4;
  if (const gguf::Value* v = file->archive.primary().find("clip.vision.projector.scale_factor")) {
    const auto k = v->as_int();
    if (!k || *k <= 0 || *k >= 65536)
      return error(
          ErrorCode::kCorruptFile,
          fmt::format("{}: clip.vision.projector.scale_factor must be in 1..65535", file->path));
    hp.n_merge = static_cast<int32_t>(*k);
  }
  if (hp.patches_per_side() % hp.n_merge != 0)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: the {}-patch side does not divide into {}x{} pools", file->path,
                             hp.patches_per_side(), hp.n_merge, hp.n_merge));
  engine::TensorLoader loader(file->archive, options);
  HEARTH_ASSIGN_OR_RETURN(Vit vit, Vit::load(loader, hp));
  HEARTH_ASSIGN_OR_RETURN(std::vector<float> norm,
                          loader.vector("mm.soft_emb_norm.weight", hp.n_embd));
  const gguf::TensorInfo* proj = loader.find_info("mm.input_projection.weight");
  if (proj == nullptr)
    return error(
        ErrorCode::kCorruptFile,
        fmt::format("{}: required tensor 'mm.input_projection.weight' is missing", file->path));
  std::vector<engine::OwnedBytes> owned = loader.take_repacked();
  HEARTH_ASSIGN_OR_RETURN(WeightMatrix wp, transposed_projection(*proj, hp.n_embd, owned));
  auto out = std::make_unique<Gemma3Projector>(std::move(file), std::move(vit), std::move(owned),
                                               std::move(norm), wp);
  return std::unique_ptr<Projector>(std::move(out));
}

}  // namespace hearth::media::detail

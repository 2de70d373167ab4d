// InternVL's projector (llama.cpp tools/mtmd/models/internvl.cpp, PROJECTOR_TYPE_INTERNVL).
// Each tile (and the overview) is one image_size square. InternViT: patches plus the class
// embedding as the last row, learned positions [E, n_patches + 1], LayerNorm blocks (RMSNorm
// for the 6B ViT: n_embd 3200, 45 layers, as the reference decides) with the layer scales
// ls1/ls2 and q/k norms when the file has them. The class row is dropped, the patches pixel-
// shuffled (k = clip.vision.projector.scale_factor: each output row gathers k x k patches,
// [E*k*k]), then mm.0 LayerNorm (eps 1e-5, + bias), mm.1 (+ bias), GELU, mm.3 (+ bias).
#include <fmt/format.h>

#include <optional>
#include <utility>

#include "engine/ops.h"

#include "media/gelu_mlp.h"
#include "media/projector_families.h"
#include "media/vit_blocks.h"

namespace hearth::media::detail {
namespace {

struct InternVlWeights {
  std::vector<float> class_embd;      // [E]
  std::vector<float> positions;       // [n_patches + 1][E]
  std::vector<float> norm_w, norm_b;  // mm.0 [E*k*k]
  GeluMlp mlp;                        // mm.model.mlp.1 [E*k*k, H], mm.model.mlp.3 [H, T]
};

// The reference's pixel shuffle as its reshapes and permutes lay the values out: the patch
// rows x [n][E] (n = w * h, w patches per row) viewed as A[w][h/k][E*k], swapped to
// [h/k][w][E*k] and viewed as C[w/k][h/k][E*k*k], swapped again to [h/k][w/k][E*k*k].
std::vector<float> pixel_shuffle(const std::vector<float>& x, int64_t E, int64_t w, int64_t h,
                                 int64_t k) {
  const int64_t a0 = E * k, a1 = h / k, c0 = E * k * k, c1 = h / k, c2 = w / k;
  std::vector<float> out(size_t(c0 * c1 * c2));
  for (int64_t k2 = 0; k2 < c1; ++k2)
    for (int64_t k1 = 0; k1 < c2; ++k1)
      for (int64_t k0 = 0; k0 < c0; ++k0) {
        // out[(k2 * c2 + k1)][k0] = C(k0, k2, k1); C's flat index in B's layout [a0][w][a1].
        const int64_t f = k0 + c0 * (k2 + c1 * k1);
        const int64_t j0 = f % a0, j1 = (f / a0) % w, j2 = f / (a0 * w);
        out[size_t((k2 * c2 + k1) * c0 + k0)] = x[size_t(j0 + a0 * (j2 + a1 * j1))];
      }
  return out;
}

class InternVlProjector final : public Projector {
 public:
  InternVlProjector(std::unique_ptr<ClipFile> file, VitBlocks vit, InternVlWeights w)
      : Projector(std::move(file), Vit{}, {}), blocks_(std::move(vit)), w_(std::move(w)) {}

  std::string_view family() const override { return "internvl"; }
  int32_t n_output_tokens(int32_t nx, int32_t ny) const override {
    const int32_t P = hparams().patch_size, k = hparams().n_merge;
    return (nx / P) * (ny / P) / (k * k);
  }
  int32_t n_embd_out() const override { return static_cast<int32_t>(w_.mlp.fc2.n_rows); }
  std::string_view image_begin() const override { return "<img>"; }
  std::string_view image_end() const override { return "</img>"; }
  bool joins_tiles() const override { return true; }

  Status encode(const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool,
                float* out) const override {
    HEARTH_RETURN_IF_ERROR(check_image(pixels, nx, ny));
    const VisionHparams& hp = hparams();
    const int64_t E = hp.n_embd, gx = nx / hp.patch_size, gy = ny / hp.patch_size;
    const int64_t n = gx * gy;
    std::vector<float> h = blocks_.patch_embed(pixels, nx, ny, pool);
    h.insert(h.end(), w_.class_embd.begin(), w_.class_embd.end());
    engine::ops::add_inplace(h.data(), w_.positions.data(), (n + 1) * E);
    blocks_.pre_norm(h.data(), n + 1, pool);
    blocks_.run(h.data(), n + 1, static_cast<int32_t>(gx), pool);
    blocks_.post_norm(h.data(), n + 1, pool);
    h.resize(size_t(n * E));  // the class row goes
    const int64_t k = hp.n_merge, n_out = n / (k * k), K = E * k * k;
    std::vector<float> shuffled = pixel_shuffle(h, E, gx, gy, k);
    layer_norm_rows(shuffled.data(), w_.norm_w, w_.norm_b, shuffled.data(), n_out, K, 1e-5f, pool);
    run_gelu_mlp(w_.mlp, shuffled.data(), n_out, out, pool);
    return Status::ok();
  }

  void keep(std::vector<engine::OwnedBytes> bytes) {
    for (auto& b : bytes) owned_.push_back(std::move(b));
  }

 private:
  VitBlocks blocks_;
  InternVlWeights w_;
};

}  // namespace

Result<std::unique_ptr<Projector>> load_internvl(std::unique_ptr<ClipFile> file,
                                                 const engine::LoadOptions& options) {
  VisionHparams& hp = file->vision;
  const gguf::Value* scale = file->archive.primary().find("clip.vision.projector.scale_factor");
  const auto k = scale ? scale->as_int() : std::nullopt;
  if (!k || *k <= 0 || *k > 16 || hp.patches_per_side() % *k != 0)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: clip.vision.projector.scale_factor must be in 1..16 and divide "
                             "the {} patches per side",
                             file->path, hp.patches_per_side()));
  hp.n_merge = static_cast<int32_t>(*k);
  for (auto [key, field] : {std::pair{"clip.vision.preproc_min_tiles", &hp.preproc_min_tiles},
                            std::pair{"clip.vision.preproc_max_tiles", &hp.preproc_max_tiles}}) {
    const gguf::Value* v = file->archive.primary().find(key);
    if (v == nullptr) continue;
    const auto n = v->as_int();
    if (!n || *n <= 0 || *n > 1024)
      return error(ErrorCode::kCorruptFile,
                   fmt::format("{}: {} must be in 1..1024", file->path, key));
    *field = static_cast<int32_t>(*n);
  }
  const bool vit_6b = hp.n_embd == 3200 && hp.n_layer == 45;
  engine::TensorLoader loader(file->archive, options);
  HEARTH_ASSIGN_OR_RETURN(
      VitBlocks blocks,
      VitBlocks::load(loader, hp, {.norm = vit_6b ? VitNorm::kRms : VitNorm::kLayer}));
  const int64_t E = hp.n_embd, n_pos = int64_t{hp.patches_per_side()} * hp.patches_per_side() + 1;
  const int64_t K = E * hp.n_merge * hp.n_merge;
  InternVlWeights w;
  HEARTH_ASSIGN_OR_RETURN(w.class_embd, loader.vector("v.class_embd", E));
  HEARTH_ASSIGN_OR_RETURN(auto rows, loader.vectors("v.position_embd.weight", E, n_pos));
  for (const auto& row : rows) w.positions.insert(w.positions.end(), row.begin(), row.end());
  HEARTH_ASSIGN_OR_RETURN(w.norm_w, loader.vector("mm.model.mlp.0.weight", K));
  HEARTH_ASSIGN_OR_RETURN(w.norm_b, loader.vector("mm.model.mlp.0.bias", K));
  HEARTH_ASSIGN_OR_RETURN(w.mlp,
                          load_gelu_mlp(loader, "mm.model.mlp.1", "mm.model.mlp.3", K, file->path));
  auto out = std::make_unique<InternVlProjector>(std::move(file), std::move(blocks), std::move(w));
  out->keep(loader.take_repacked());
  return std::unique_ptr<Projector>(std::move(out));
}

}  // namespace hearth::media::detail

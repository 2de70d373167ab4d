// Pixtral's projector (llama.cpp tools/mtmd/models/pixtral.cpp, PROJECTOR_TYPE_PIXTRAL):
// images of any size (sides multiples of the patch size), a ViT with RMSNorm, 2-D RoPE over
// the patch grid, no learned positions and a SiLU-gated FFN. Mistral Small 3.1 adds the patch
// merger: RMSNorm * mm.input_norm, then each k x k square of patches (k = spatial merge)
// concatenated as (value, dy, dx) [E*k*k] and projected by mm.patch_merger [E*k*k, E]. Then
// mm.1 (+ bias), GELU, mm.2 (+ bias), and the [IMG_BREAK] embedding (v.token_embd.img_break)
// after every row of output tokens but the last.
#include <fmt/format.h>

#include <algorithm>

#include "media/gelu_mlp.h"
#include "media/projector_families.h"
#include "media/vit_blocks.h"

namespace hearth::media::detail {
namespace {

using engine::WeightMatrix;

struct PixtralWeights {
  std::vector<float> merger_norm;  // [E] (with the merger)
  WeightMatrix merger;             // [E*k*k, E] (optional)
  GeluMlp mlp;                     // mm.1 [E, H], mm.2 [H, T] (biases optional)
  std::vector<float> img_break;    // [T]
};

class PixtralProjector final : public Projector {
 public:
  PixtralProjector(std::unique_ptr<ClipFile> file, VitBlocks vit, PixtralWeights w)
      : Projector(std::move(file), Vit{}, {}), blocks_(std::move(vit)), w_(std::move(w)) {}

  std::string_view family() const override { return "pixtral"; }
  int32_t n_output_tokens(int32_t nx, int32_t ny) const override {
    const int32_t side = hparams().patch_size * merge();
    const int32_t px = nx / side, py = ny / side;
    return px * py + std::max(py - 1, 0);
  }
  int32_t n_embd_out() const override { return static_cast<int32_t>(w_.mlp.fc2.n_rows); }
  std::string_view image_end() const override { return "[IMG_END]"; }

  Status encode(const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool,
                float* out) const override {
    const int32_t P = hparams().patch_size, k = merge();
    if (pixels == nullptr || nx <= 0 || ny <= 0 || nx % (P * k) != 0 || ny % (P * k) != 0)
      return error(ErrorCode::kInvalidArgument,
                   fmt::format("projector pixtral: the image sides must be multiples of {}, "
                               "got {}x{}",
                               P * k, nx, ny));
    const int64_t gx = nx / P, gy = ny / P, n = gx * gy;
    std::vector<float> h = blocks_.patch_embed(pixels, nx, ny, pool);
    blocks_.pre_norm(h.data(), n, pool);
    blocks_.run(h.data(), n, static_cast<int32_t>(gx), pool);
    blocks_.post_norm(h.data(), n, pool);
    int64_t n_rows = n;
    if (engine::present(w_.merger)) {
      h = merge_patches(h, gx, gy, pool);
      n_rows = n / (k * k);
    }
    const int64_t T = w_.mlp.fc2.n_rows;
    std::vector<float> projected(size_t(n_rows * T));
    run_gelu_mlp(w_.mlp, h.data(), n_rows, projected.data(), pool);
    // Rows of px tokens, each but the last followed by [IMG_BREAK].
    const int64_t px = gx / k, py = gy / k;
    float* dst = out;
    for (int64_t y = 0; y < py; ++y) {
      dst = std::copy_n(projected.data() + y * px * T, px * T, dst);
      if (y + 1 < py) dst = std::copy(w_.img_break.begin(), w_.img_break.end(), dst);
    }
    return Status::ok();
  }

  void keep(std::vector<engine::OwnedBytes> bytes) {
    for (auto& b : bytes) owned_.push_back(std::move(b));
  }

 private:
  int32_t merge() const { return engine::present(w_.merger) ? hparams().n_merge : 1; }

  // RMSNorm * mm.input_norm, then each k x k square (the reference's im2col: values ordered
  // (e, dy, dx)) projected by the merger: [gy/k * gx/k][E].
  std::vector<float> merge_patches(std::vector<float>& h, int64_t gx, int64_t gy,
                                   ThreadPool& pool) const {
    const int64_t E = hparams().n_embd, k = hparams().n_merge, n = gx * gy;
    blocks_.norm_rows(h.data(), w_.merger_norm, {}, h.data(), n, E, hparams().eps, pool);
    const int64_t ox_n = gx / k, n_out = ox_n * (gy / k), K = E * k * k;
    std::vector<float> gathered(size_t(n_out * K));
    for (int64_t o = 0; o < n_out; ++o) {
      const int64_t oy = o / ox_n, ox = o % ox_n;
      float* dst = gathered.data() + o * K;
      for (int64_t e = 0; e < E; ++e)
        for (int64_t dy = 0; dy < k; ++dy)
          for (int64_t dx = 0; dx < k; ++dx)
            dst[(e * k + dy) * k + dx] = h[size_t(((oy * k + dy) * gx + ox * k + dx) * E + e)];
    }
    std::vector<float> merged(size_t(n_out * E));
    kernels::matmul(w_.merger, gathered.data(), n_out, merged.data(), pool);
    return merged;
  }

  VitBlocks blocks_;
  PixtralWeights w_;
};

}  // namespace

Result<std::unique_ptr<Projector>> load_pixtral(std::unique_ptr<ClipFile> file,
                                                const engine::LoadOptions& options) {
  VisionHparams& hp = file->vision;
  hp.n_merge = 1;  // the original Pixtral merges nothing; Mistral Small 3.1 records 2
  if (const gguf::Value* v = file->archive.primary().find("clip.vision.spatial_merge_size")) {
    const auto k = v->as_int();
    if (!k || *k <= 0 || *k > 16)
      return error(ErrorCode::kCorruptFile,
                   fmt::format("{}: clip.vision.spatial_merge_size must be in 1..16", file->path));
    hp.n_merge = static_cast<int32_t>(*k);
  }
  engine::TensorLoader loader(file->archive, options);
  HEARTH_ASSIGN_OR_RETURN(
      VitBlocks blocks,
      VitBlocks::load(loader, hp, {.norm = VitNorm::kRms, .rope_2d = true, .rope_theta = 1e4f}));
  const int64_t E = hp.n_embd, k = hp.n_merge;
  PixtralWeights w;
  HEARTH_ASSIGN_OR_RETURN(w.merger, loader.matrix("mm.patch_merger.weight", E * k * k, E, true));
  if (engine::present(w.merger)) {
    HEARTH_ASSIGN_OR_RETURN(w.merger_norm, loader.vector("mm.input_norm.weight", E));
  }
  HEARTH_ASSIGN_OR_RETURN(w.mlp, load_gelu_mlp(loader, "mm.1", "mm.2", E, file->path, true));
  HEARTH_ASSIGN_OR_RETURN(w.img_break, loader.vector("v.token_embd.img_break", w.mlp.fc2.n_rows));
  auto out = std::make_unique<PixtralProjector>(std::move(file), std::move(blocks), std::move(w));
  out->keep(loader.take_repacked());
  return std::unique_ptr<Projector>(std::move(out));
}

}  // namespace hearth::media::detail

// Idefics3's projector (SmolVLM, SmolVLM2; llama.cpp tools/mtmd/models/siglip.cpp,
// PROJECTOR_TYPE_IDEFICS3): the SigLIP ViT (patch kernel + bias, learned positions, LayerNorm
// blocks, post-LN) over one image_size square (a tile or the overview) gives [n][E] for the
// gx x gy patches; the pixel shuffle gathers each k x k square of patches into one row
// [E*k*k] (k = clip.vision.projector.scale_factor), and mm.model.fc [E*k*k, T] (no bias)
// maps the rows to the text width. In the prompt each tile follows
// "<fake_token_around_image><row_R_col_C>", rows end with "\n", and the overview comes last
// between "\n\n<fake_token_around_image><global-img>" and "<fake_token_around_image>" (mtmd's
// idefics3 slice template, after transformers' processing_idefics3.py).
#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <utility>

#include "kernels/matmul.h"
#include "media/projector_families.h"

namespace hearth::media::detail {
namespace {

using engine::WeightMatrix;

// The reference's build_patch_merge_permute on a gx x gy grid divisible by k: output row
// (oy, ox), in raster order over the gx/k x gy/k merged grid, holds patch
// (oy*k + dy, ox*k + dx) at column (dy * k + dx) * E + e. x: [gy][gx][E] patch rows.
std::vector<float> merge_patches(const std::vector<float>& x, int64_t E, int64_t gx, int64_t gy,
                                 int64_t k) {
  const int64_t ox_n = gx / k, oy_n = gy / k, row = E * k * k;
  std::vector<float> out(size_t(ox_n * oy_n * row));
  for (int64_t oy = 0; oy < oy_n; ++oy)
    for (int64_t ox = 0; ox < ox_n; ++ox)
      for (int64_t dy = 0; dy < k; ++dy)
        for (int64_t dx = 0; dx < k; ++dx) {
          const float* src = x.data() + ((oy * k + dy) * gx + ox * k + dx) * E;
          float* dst = out.data() + (oy * ox_n + ox) * row + (dy * k + dx) * E;
          std::copy(src, src + E, dst);
        }
  return out;
}

class Idefics3Projector final : public Projector {
 public:
  Idefics3Projector(std::unique_ptr<ClipFile> file, Vit vit, std::vector<engine::OwnedBytes> owned,
                    WeightMatrix fc)
      : Projector(std::move(file), std::move(vit), std::move(owned)), fc_(fc) {}

  std::string_view family() const override { return "idefics3"; }
  int32_t n_output_tokens(int32_t nx, int32_t ny) const override {
    const int32_t P = hparams().patch_size, k = hparams().n_merge;
    return (nx / P) * (ny / P) / (k * k);
  }
  int32_t n_embd_out() const override { return static_cast<int32_t>(fc_.n_rows); }

  std::vector<LayoutPart> tile_layout(int32_t grid_x, int32_t grid_y) const override {
    using Kind = LayoutPart::Kind;
    std::vector<LayoutPart> parts;
    for (int32_t y = 0; y < grid_y; ++y) {
      for (int32_t x = 0; x < grid_x; ++x) {
        parts.push_back(
            {.kind = Kind::kText,
             .text = fmt::format("<fake_token_around_image><row_{}_col_{}>", y + 1, x + 1),
             .tile = 0});
        parts.push_back({.kind = Kind::kTile, .text = {}, .tile = y * grid_x + x});
      }
      if (y + 1 < grid_y) parts.push_back({.kind = Kind::kToken, .text = "\n", .tile = 0});
    }
    for (const char* t : {"\n\n", "<fake_token_around_image>", "<global-img>"})
      parts.push_back({.kind = Kind::kToken, .text = t, .tile = 0});
    parts.push_back({.kind = Kind::kOverview, .text = {}, .tile = 0});
    parts.push_back({.kind = Kind::kToken, .text = "<fake_token_around_image>", .tile = 0});
    return parts;
  }

  Status encode(const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool,
                float* out) const override {
    HEARTH_RETURN_IF_ERROR(check_image(pixels, nx, ny));
    const VisionHparams& hp = hparams();
    const int64_t E = hp.n_embd, gx = nx / hp.patch_size, gy = ny / hp.patch_size;
    std::vector<float> h = vit_.embed(pixels, nx, ny, pool);
    const int64_t n = gx * gy;
    for (int32_t il = 0; il < vit_.n_layers(); ++il) vit_.run_layer(il, h.data(), n, pool);
    vit_.post_norm(h.data(), n, pool);
    const int64_t k = hp.n_merge;
    const std::vector<float> merged = merge_patches(h, E, gx, gy, k);
    kernels::matmul(fc_, merged.data(), n / (k * k), out, pool);
    return Status::ok();
  }

 private:
  WeightMatrix fc_;  // mm.model.fc [E*k*k, T]
};

// A positive integer key, absent allowed (nullopt), else kCorruptFile naming it.
Result<std::optional<int64_t>> optional_int(const ClipFile& file, const char* key, int64_t lo,
                                            int64_t hi) {
  const gguf::Value* v = file.archive.primary().find(key);
  if (v == nullptr) return std::optional<int64_t>{};
  const auto n = v->as_int();
  if (!n || *n < lo || *n > hi)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: {} must be in {}..{}", file.path, key, lo, hi));
  return std::optional<int64_t>{*n};
}

}  // namespace

Result<std::unique_ptr<Projector>> load_idefics3(std::unique_ptr<ClipFile> file,
                                                 const engine::LoadOptions& options) {
  VisionHparams& hp = file->vision;
  // The reference's default merge is 1, on which its pixel shuffle asserts: the key is
  // required here, and the patch grid must divide into whole k x k squares (the reference
  // would pad the grid but count the tokens without the padding).
  HEARTH_ASSIGN_OR_RETURN(std::optional<int64_t> k,
                          optional_int(*file, "clip.vision.projector.scale_factor", 2, 16));
  if (!k || hp.patches_per_side() % *k != 0)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: clip.vision.projector.scale_factor must be in 2..16 and divide "
                             "the {} patches per side",
                             file->path, hp.patches_per_side()));
  hp.n_merge = static_cast<int32_t>(*k);
  HEARTH_ASSIGN_OR_RETURN(std::optional<int64_t> longest,
                          optional_int(*file, "clip.vision.preproc_image_size", 1, 65536));
  hp.preproc_image_size = static_cast<int32_t>(longest.value_or(0));
  engine::TensorLoader loader(file->archive, options);
  HEARTH_ASSIGN_OR_RETURN(Vit vit, Vit::load(loader, hp));
  if (vit.has_class_embedding())
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: an idefics3 ViT has no class embedding", file->path));
  const int64_t K = int64_t{hp.n_embd} * hp.n_merge * hp.n_merge;
  const gguf::TensorInfo* fc = loader.find_info("mm.model.fc.weight");
  if (fc == nullptr || fc->ne[0] != K || fc->ne[1] <= 0 || fc->ne[1] > (int64_t{1} << 20))
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: projector tensor 'mm.model.fc.weight' is missing or not "
                             "[{}, n_embd_text]",
                             file->path, K));
  HEARTH_ASSIGN_OR_RETURN(WeightMatrix w, loader.matrix("mm.model.fc.weight", K, fc->ne[1]));
  std::vector<engine::OwnedBytes> owned = loader.take_repacked();
  auto out =
      std::make_unique<Idefics3Projector>(std::move(file), std::move(vit), std::move(owned), w);
  return std::unique_ptr<Projector>(std::move(out));
}

}  // namespace hearth::media::detail

// LFM2-VL's projector (LFM2-VL, LFM2.5-VL; llama.cpp tools/mtmd/models/siglip.cpp,
// PROJECTOR_TYPE_LFM2): a SigLIP2-NaFlex ViT over one dynamic-size image (sides multiples of
// patch_size x k, k = clip.vision.projector.scale_factor): the patch kernel + bias, then the
// learned position table [n_side * n_side][E] resized to the image's gx x gy patch grid
// (bilinear with antialiasing, as torch's F.interpolate(antialias=True) and the reference's
// ggml_interpolate), LayerNorm blocks, post-LN. The pixel unshuffle gathers each k x k square
// of patches into one row [E*k*k] (the grid padded with zero patches to whole squares), then
// the optional mm.input_norm LayerNorm (eps 1e-5), mm.1 (+ bias), GELU, mm.2 (+ bias) give
// the text width. In the prompt the image sits between "<|image_start|>" and "<|image_end|>";
// a large image is 512-px tiles, each after "<|img_row_R_col_C|>", then the thumbnail after
// the "<|img_thumbnail|>" token (mtmd's lfm2 slice template).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>

#include "engine/ops.h"
#include "kernels/matmul.h"
#include "media/gelu_mlp.h"
#include "media/projector_families.h"
#include "media/vit_blocks.h"

namespace hearth::media::detail {
namespace {

struct Lfm2Weights {
  std::vector<float> positions;       // [n_side * n_side][E], raster order over the grid
  int64_t n_side = 0;                 // position grid side
  std::vector<float> norm_w, norm_b;  // mm.input_norm [E*k*k] (each optional)
  GeluMlp mlp;                        // mm.1 [E*k*k, H], mm.2 [H, T]
};

// The taps and weights of one output coordinate of the antialiased bilinear resize along an
// axis of n_in source cells to n_out (the reference's CPU upscale with
// GGML_SCALE_FLAG_ANTIALIAS, half-pixel centres), in its float arithmetic. Weights are not
// normalized (the caller divides by the 2-D total, as the reference does).
struct AxisTaps {
  int64_t first = 0;
  std::vector<float> weights;
};

std::vector<AxisTaps> antialias_taps(int64_t n_in, int64_t n_out) {
  const float scale = static_cast<float>(n_out) / static_cast<float>(n_in);
  const float support = std::max(1.0f, 1.0f / scale);
  const float invscale = 1.0f / support;
  std::vector<AxisTaps> taps(static_cast<size_t>(n_out));
  for (int64_t i = 0; i < n_out; ++i) {
    const float centre = (static_cast<float>(i) + 0.5f) / scale;
    const auto lo = std::max<int64_t>(static_cast<int64_t>(centre - support + 0.5f), 0);
    const auto hi = std::min<int64_t>(static_cast<int64_t>(centre + support + 0.5f), n_in);
    taps[size_t(i)].first = lo;
    for (int64_t s = lo; s < hi; ++s) {
      const float d = (static_cast<float>(s) - centre + 0.5f) * invscale;
      taps[size_t(i)].weights.push_back(std::max(1.0f - std::fabs(d), 0.0f));
    }
  }
  return taps;
}

// The position table [n_side][n_side][E] resized to [gy][gx][E]: each output is the weighted
// mean of the source cells its x and y taps reach (zero-weight products skipped, as the
// reference does, so the total only counts contributing cells).
std::vector<float> resize_positions(const std::vector<float>& table, int64_t n_side, int64_t E,
                                    int64_t gx, int64_t gy) {
  if (gx == n_side && gy == n_side) return table;
  const std::vector<AxisTaps> tx = antialias_taps(n_side, gx), ty = antialias_taps(n_side, gy);
  std::vector<float> out(size_t(gx * gy * E));
  std::vector<float> acc(static_cast<size_t>(E));
  for (int64_t oy = 0; oy < gy; ++oy) {
    const AxisTaps& ry = ty[size_t(oy)];
    for (int64_t ox = 0; ox < gx; ++ox) {
      const AxisTaps& rx = tx[size_t(ox)];
      std::fill(acc.begin(), acc.end(), 0.0f);
      float total = 0.0f;
      for (size_t sy = 0; sy < ry.weights.size(); ++sy) {
        for (size_t sx = 0; sx < rx.weights.size(); ++sx) {
          const float w = rx.weights[sx] * ry.weights[sy];
          if (w <= 0.0f) continue;
          const float* src =
              table.data() + ((ry.first + int64_t(sy)) * n_side + rx.first + int64_t(sx)) * E;
          for (int64_t e = 0; e < E; ++e) acc[size_t(e)] += src[e] * w;
          total += w;
        }
      }
      float* dst = out.data() + (oy * gx + ox) * E;
      for (int64_t e = 0; e < E; ++e) dst[e] = total > 0.0f ? acc[size_t(e)] / total : 0.0f;
    }
  }
  return out;
}

// The reference's build_patch_merge_permute: the gx x gy patch grid x [gy][gx][E], padded with
// zero patches to multiples of k, gives row (oy, ox) of the merged grid (raster order) holding
// patch (oy*k + dy, ox*k + dx) at columns (dy * k + dx) * E.
std::vector<float> unshuffle(const std::vector<float>& x, int64_t E, int64_t gx, int64_t gy,
                             int64_t k) {
  const int64_t ox_n = (gx + k - 1) / k, oy_n = (gy + k - 1) / k, row = E * k * k;
  std::vector<float> out(size_t(ox_n * oy_n * row), 0.0f);
  for (int64_t oy = 0; oy < oy_n; ++oy)
    for (int64_t ox = 0; ox < ox_n; ++ox)
      for (int64_t dy = 0; dy < k; ++dy)
        for (int64_t dx = 0; dx < k; ++dx) {
          const int64_t py = oy * k + dy, px = ox * k + dx;
          if (py >= gy || px >= gx) continue;  // padding stays zero
          const float* src = x.data() + (py * gx + px) * E;
          std::copy(src, src + E, out.data() + (oy * ox_n + ox) * row + (dy * k + dx) * E);
        }
  return out;
}

class Lfm2Projector final : public Projector {
 public:
  Lfm2Projector(std::unique_ptr<ClipFile> file, VitBlocks vit, Lfm2Weights w)
      : Projector(std::move(file), Vit{}, {}), blocks_(std::move(vit)), w_(std::move(w)) {}

  std::string_view family() const override { return "lfm2"; }
  // The reference counts whole k x k squares of the image rounded up (CLIP_ALIGN).
  int32_t n_output_tokens(int32_t nx, int32_t ny) const override {
    const int32_t side = hparams().patch_size * hparams().n_merge;
    return ((nx + side - 1) / side) * ((ny + side - 1) / side);
  }
  int32_t n_embd_out() const override { return static_cast<int32_t>(w_.mlp.fc2.n_rows); }
  std::string_view image_begin() const override { return "<|image_start|>"; }
  std::string_view image_end() const override { return "<|image_end|>"; }

  std::vector<LayoutPart> tile_layout(int32_t grid_x, int32_t grid_y) const override {
    using Kind = LayoutPart::Kind;
    std::vector<LayoutPart> parts;
    for (int32_t y = 0; y < grid_y; ++y) {
      for (int32_t x = 0; x < grid_x; ++x) {
        parts.push_back({.kind = Kind::kText,
                         .text = fmt::format("<|img_row_{}_col_{}|>", y + 1, x + 1),
                         .tile = 0});
        parts.push_back({.kind = Kind::kTile, .text = {}, .tile = y * grid_x + x});
      }
    }
    parts.push_back({.kind = Kind::kToken, .text = "<|img_thumbnail|>", .tile = 0});
    parts.push_back({.kind = Kind::kOverview, .text = {}, .tile = 0});
    return parts;
  }

  Status encode(const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool,
                float* out) const override {
    const VisionHparams& hp = hparams();
    const int32_t P = hp.patch_size;
    if (pixels == nullptr || nx < P || ny < P || nx % P != 0 || ny % P != 0)
      return error(ErrorCode::kInvalidArgument,
                   fmt::format("projector lfm2: the image sides must be positive multiples of {}, "
                               "got {}x{}",
                               P, nx, ny));
    const int64_t E = hp.n_embd, gx = nx / P, gy = ny / P, n = gx * gy;
    std::vector<float> h = blocks_.patch_embed(pixels, nx, ny, pool);
    const std::vector<float> pos = resize_positions(w_.positions, w_.n_side, E, gx, gy);
    engine::ops::add_inplace(h.data(), pos.data(), n * E);
    blocks_.pre_norm(h.data(), n, pool);
    blocks_.run(h.data(), n, static_cast<int32_t>(gx), pool);
    blocks_.post_norm(h.data(), n, pool);
    const int64_t k = hp.n_merge, K = E * k * k;
    const int64_t n_out = n_output_tokens(nx, ny);
    std::vector<float> merged = unshuffle(h, E, gx, gy, k);
    // The reference norms only with a weight, and adds the bias whenever there is one.
    if (!w_.norm_w.empty())
      layer_norm_rows(merged.data(), w_.norm_w, w_.norm_b, merged.data(), n_out, K, 1e-5f, pool);
    else
      add_bias_rows(merged.data(), w_.norm_b, n_out);
    run_gelu_mlp(w_.mlp, merged.data(), n_out, out, pool);
    return Status::ok();
  }

  void keep(std::vector<engine::OwnedBytes> bytes) {
    for (auto& b : bytes) owned_.push_back(std::move(b));
  }

 private:
  VitBlocks blocks_;
  Lfm2Weights w_;
};

// The position table v.position_embd.weight [E, n_side * n_side] (the reference takes the
// side as the square root of its rows, whatever image_size says).
Status load_positions(engine::TensorLoader& loader, const ClipFile& file, Lfm2Weights& w) {
  const int64_t E = file.vision.n_embd;
  const gguf::TensorInfo* t = loader.find_info("v.position_embd.weight");
  const int64_t rows = t != nullptr ? t->ne[1] : 0;
  const auto side = static_cast<int64_t>(std::llround(std::sqrt(static_cast<double>(rows))));
  if (t == nullptr || t->ne[0] != E || rows <= 0 || rows > (int64_t{1} << 20) ||
      side * side != rows)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: projector tensor 'v.position_embd.weight' is missing or not "
                             "[{}, n_side * n_side]",
                             file.path, E));
  HEARTH_ASSIGN_OR_RETURN(auto table, loader.vectors("v.position_embd.weight", E, rows));
  for (const auto& row : table) w.positions.insert(w.positions.end(), row.begin(), row.end());
  w.n_side = side;
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<Projector>> load_lfm2(std::unique_ptr<ClipFile> file,
                                             const engine::LoadOptions& options) {
  VisionHparams& hp = file->vision;
  // The reference's default merge is 1, on which its pixel unshuffle asserts: the key is
  // required here.
  const gguf::Value* scale = file->archive.primary().find("clip.vision.projector.scale_factor");
  const auto k = scale ? scale->as_int() : std::nullopt;
  if (!k || *k < 2 || *k > 16)
    return error(
        ErrorCode::kCorruptFile,
        fmt::format("{}: clip.vision.projector.scale_factor must be in 2..16", file->path));
  hp.n_merge = static_cast<int32_t>(*k);
  engine::TensorLoader loader(file->archive, options);
  HEARTH_ASSIGN_OR_RETURN(VitBlocks blocks, VitBlocks::load(loader, hp, {}));
  Lfm2Weights w;
  HEARTH_RETURN_IF_ERROR(load_positions(loader, *file, w));
  const int64_t K = int64_t{hp.n_embd} * hp.n_merge * hp.n_merge;
  HEARTH_ASSIGN_OR_RETURN(w.norm_w, loader.vector("mm.input_norm.weight", K, true));
  HEARTH_ASSIGN_OR_RETURN(w.norm_b, loader.vector("mm.input_norm.bias", K, true));
  HEARTH_ASSIGN_OR_RETURN(w.mlp, load_gelu_mlp(loader, "mm.1", "mm.2", K, file->path));
  auto out = std::make_unique<Lfm2Projector>(std::move(file), std::move(blocks), std::move(w));
  out->keep(loader.take_repacked());
  return std::unique_ptr<Projector>(std::move(out));
}

}  // namespace hearth::media::detail

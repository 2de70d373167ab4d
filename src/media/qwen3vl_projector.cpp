// Qwen3-VL's projector (llama.cpp tools/mtmd/models/qwen3vl.cpp, PROJECTOR_TYPE_QWEN3VL).
// As Qwen2-VL (qwen2vl_projector.cpp: the temporal patch pair, 2 x 2 squares of tokens, the
// vision M-RoPE, LayerNorm blocks, the merger mm.0 / GELU / mm.2 after v.post_ln), with:
//  - a patch bias, and learned positions v.position_embd [E, S*S] for an S x S patch grid,
//    resized to the image's gx x gy grid by bilinear interpolation with aligned corners (the
//    reference's ggml_interpolate) unless the grid is S x S;
//  - fused q/k/v projections (attn_qkv [E, 3E]) and a GELU up/down FFN;
//  - deepstack: after each block il that has v.deepstack.il.*, its output read as rows of 4E
//    (one per square), LayerNorm (v.deepstack.il.norm), fc1, GELU, fc2: T values more.
// Each output row is [main T][deepstack T]... in block order (the reference's concat along
// the features), so n_embd_out() is T * (1 + deepstack layers) while the text model's width
// is T.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "engine/ops.h"
#include "media/projector_families.h"
#include "media/qwen_vl_parts.h"
#include "media/vit_blocks.h"

namespace hearth::media::detail {
namespace {

struct Deepstack {
  int32_t layer = 0;
  std::vector<float> norm_w, norm_b;  // [4E]
  GeluMlp mlp;                        // [4E, H] [H, T]
};

// ggml's bilinear upscale with GGML_SCALE_FLAG_ALIGN_CORNERS on CPU, one axis: for output
// index i of n_out, the source indices i0, i1 of n_in and the weight of i1.
struct Tap {
  int64_t i0, i1;
  float frac;
};
std::vector<Tap> aligned_taps(int64_t n_in, int64_t n_out) {
  const float sf = n_out > 1 && n_in > 1
                       ? static_cast<float>(n_out - 1) / static_cast<float>(n_in - 1)
                       : static_cast<float>(n_out) / static_cast<float>(n_in);
  std::vector<Tap> taps(static_cast<size_t>(n_out));
  for (int64_t i = 0; i < n_out; ++i) {
    const float x = static_cast<float>(i) / sf;
    const auto lo = static_cast<int64_t>(std::floor(x));
    Tap& t = taps[size_t(i)];
    t.i0 = std::clamp<int64_t>(lo, 0, n_in - 1);
    t.i1 = std::clamp<int64_t>(lo + 1, 0, n_in - 1);
    t.frac = std::clamp(x - static_cast<float>(t.i0), 0.0f, 1.0f);
  }
  return taps;
}

class Qwen3VlProjector final : public Projector {
 public:
  Qwen3VlProjector(std::unique_ptr<ClipFile> file, VitBlocks vit, engine::WeightMatrix patch_1,
                   std::vector<float> positions, int64_t pos_side, GeluMlp merger,
                   std::vector<Deepstack> deepstack)
      : Projector(std::move(file), Vit{}, {}),
        blocks_(std::move(vit)),
        patch_embd_1_(patch_1),
        positions_(std::move(positions)),
        pos_side_(pos_side),
        merger_(std::move(merger)),
        deepstack_(std::move(deepstack)) {}

  std::string_view family() const override { return "qwen3vl"; }
  int32_t n_output_tokens(int32_t nx, int32_t ny) const override {
    const TokenGrid g = output_grid(nx, ny);
    return g.nx * g.ny;
  }
  TokenGrid output_grid(int32_t nx, int32_t ny) const override {
    const int32_t side = 2 * hparams().patch_size;
    return {.nx = nx / side, .ny = ny / side};
  }
  int32_t n_embd_out() const override {
    return static_cast<int32_t>(merger_.fc2.n_rows * (1 + int64_t(deepstack_.size())));
  }
  int32_t n_embd_main() const override { return static_cast<int32_t>(merger_.fc2.n_rows); }
  std::string_view image_begin() const override { return "<|vision_start|>"; }
  std::string_view image_end() const override { return "<|vision_end|>"; }

  Status encode(const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool,
                float* out) const override {
    const int32_t P = hparams().patch_size;
    HEARTH_RETURN_IF_ERROR(check_square_sides(projector_type(), pixels, nx, ny, P));
    const int64_t E = hparams().n_embd, gx = nx / P, gy = ny / P, n = gx * gy;
    const int64_t n_out = n / 4, T = merger_.fc2.n_rows, W = n_embd_out();
    std::vector<float> patches = embed_still_image(blocks_, patch_embd_1_, pixels, nx, ny, pool);
    add_positions(patches, gx, gy);
    VitRunPlan plan;
    std::vector<float> h = gather_squares(patches, gx, E, raster_squares(n_out), plan);
    blocks_.pre_norm(h.data(), n, pool);
    std::vector<float> normed(deepstack_.empty() ? 0 : size_t(n * E));
    blocks_.run(h.data(), n, plan, pool, [&](int32_t il, const float* x) {
      for (size_t k = 0; k < deepstack_.size(); ++k) {
        const Deepstack& ds = deepstack_[k];
        if (ds.layer != il) continue;
        blocks_.norm_rows(x, ds.norm_w, ds.norm_b, normed.data(), n_out, 4 * E, hparams().eps,
                          pool);
        run_gelu_mlp(ds.mlp, normed.data(), n_out, out + int64_t(k + 1) * T, pool, W);
      }
    });
    blocks_.post_norm(h.data(), n, pool);
    run_gelu_mlp(merger_, h.data(), n_out, out, pool, W);
    return Status::ok();
  }

  void keep(std::vector<engine::OwnedBytes> bytes) {
    for (auto& b : bytes) owned_.push_back(std::move(b));
  }

 private:
  // patches [gy][gx][E] += the position table resized from S x S to gx x gy.
  void add_positions(std::vector<float>& patches, int64_t gx, int64_t gy) const {
    const int64_t E = hparams().n_embd, S = pos_side_;
    if (gx == S && gy == S) {
      engine::ops::add_inplace(patches.data(), positions_.data(), S * S * E);
      return;
    }
    const std::vector<Tap> xs = aligned_taps(S, gx), ys = aligned_taps(S, gy);
    for (int64_t y = 0; y < gy; ++y)
      for (int64_t x = 0; x < gx; ++x) {
        const Tap &tx = xs[size_t(x)], &ty = ys[size_t(y)];
        const float dx = tx.frac, dy = ty.frac;
        const float* a = positions_.data() + (ty.i0 * S + tx.i0) * E;
        const float* b = positions_.data() + (ty.i0 * S + tx.i1) * E;
        const float* c = positions_.data() + (ty.i1 * S + tx.i0) * E;
        const float* d = positions_.data() + (ty.i1 * S + tx.i1) * E;
        float* dst = patches.data() + (y * gx + x) * E;
        for (int64_t e = 0; e < E; ++e)
          dst[e] += a[e] * (1 - dx) * (1 - dy) + b[e] * dx * (1 - dy) + c[e] * (1 - dx) * dy +
                    d[e] * dx * dy;
      }
  }

  VitBlocks blocks_;
  engine::WeightMatrix patch_embd_1_;  // [3*P*P, E]: the temporal patch's second frame
  std::vector<float> positions_;       // [S*S][E]
  int64_t pos_side_;
  GeluMlp merger_;  // mm.0 [4E, H], mm.2 [H, T]
  std::vector<Deepstack> deepstack_;
};

Result<std::vector<Deepstack>> load_deepstack(engine::TensorLoader& loader, const VisionHparams& hp,
                                              int64_t T, const std::string& path) {
  std::vector<Deepstack> out;
  const int64_t K = 4 * int64_t{hp.n_embd};
  for (int32_t il = 0; il < hp.n_layer; ++il) {
    const std::string p = fmt::format("v.deepstack.{}.", il);
    if (!loader.has(p + "fc1.weight")) continue;
    Deepstack ds;
    ds.layer = il;
    HEARTH_ASSIGN_OR_RETURN(ds.norm_w, loader.vector(p + "norm.weight", K, true));
    HEARTH_ASSIGN_OR_RETURN(ds.norm_b, loader.vector(p + "norm.bias", K, true));
    HEARTH_ASSIGN_OR_RETURN(ds.mlp, load_gelu_mlp(loader, p + "fc1", p + "fc2", K, path));
    if (ds.mlp.fc2.n_rows != T)
      return error(ErrorCode::kCorruptFile,
                   fmt::format("{}: deepstack layer {} gives {} values, the merger {}", path, il,
                               ds.mlp.fc2.n_rows, T));
    out.push_back(std::move(ds));
  }
  return out;
}

}  // namespace

Result<std::unique_ptr<Projector>> load_qwen3vl(std::unique_ptr<ClipFile> file,
                                                const engine::LoadOptions& options) {
  if (const gguf::Value* v = file->archive.primary().find("clip.vision.spatial_merge_size")) {
    const auto k = v->as_int();
    if (!k || *k != 2)
      return error(ErrorCode::kUnsupported,
                   fmt::format("{}: clip.vision.spatial_merge_size must be 2 for qwen3vl_merger",
                               file->path));
  }
  file->vision.n_merge = 2;
  const VisionHparams& hp = file->vision;
  engine::TensorLoader loader(file->archive, options);
  HEARTH_ASSIGN_OR_RETURN(
      VitBlocks blocks,
      VitBlocks::load(
          loader, hp,
          {.norm = VitNorm::kLayer, .rope_2d = true, .rope_theta = 1e4f, .rope_halves = true}));
  HEARTH_ASSIGN_OR_RETURN(engine::WeightMatrix patch_1,
                          load_patch_kernel(loader, hp, "v.patch_embd.weight.1"));
  const int64_t E = hp.n_embd;
  if (!loader.has("v.patch_embd.bias"))
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: projector tensor 'v.patch_embd.bias' is missing", file->path));
  const gguf::TensorInfo* pos = loader.find_info("v.position_embd.weight");
  const auto side = pos ? static_cast<int64_t>(std::lround(std::sqrt(double(pos->ne[1])))) : 0;
  if (pos == nullptr || side <= 0 || side > 4096 || side * side != pos->ne[1])
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: projector tensor 'v.position_embd.weight' is missing or not a "
                             "square grid of positions",
                             file->path));
  HEARTH_ASSIGN_OR_RETURN(auto rows, loader.vectors("v.position_embd.weight", E, side * side));
  std::vector<float> positions;
  positions.reserve(size_t(side * side * E));
  for (const auto& row : rows) positions.insert(positions.end(), row.begin(), row.end());
  HEARTH_ASSIGN_OR_RETURN(GeluMlp merger, load_gelu_mlp(loader, "mm.0", "mm.2", 4 * E, file->path));
  HEARTH_ASSIGN_OR_RETURN(std::vector<Deepstack> deepstack,
                          load_deepstack(loader, hp, merger.fc2.n_rows, file->path));
  auto out = std::make_unique<Qwen3VlProjector>(std::move(file), std::move(blocks), patch_1,
                                                std::move(positions), side, std::move(merger),
                                                std::move(deepstack));
  out->keep(loader.take_repacked());
  return std::unique_ptr<Projector>(std::move(out));
}

}  // namespace hearth::media::detail

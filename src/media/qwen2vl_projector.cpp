// Qwen2-VL's and Qwen2.5-VL's projector (llama.cpp tools/mtmd/models/qwen2vl.cpp,
// PROJECTOR_TYPE_QWEN2VL and QWEN25VL; "qwen2.5o" is Qwen2.5-Omni's vision half, read as 2.5).
// Images of any size whose sides are multiples of 2 patches. The temporal patch's two frames
// have one kernel each (v.patch_embd.weight and .weight.1, no bias); a still image goes through
// both and the two results are added. The patches are then reordered so that each 2 x 2 square
// is four consecutive tokens (square by square in raster order, inside (dy, dx)), which the
// merger later reads as one row of 4E values. The blocks: LayerNorm with biases and quick GELU
// (Qwen2-VL) or RMSNorm and a SiLU-gated FFN (Qwen2.5-VL), attention with biases and the
// vision M-RoPE over each patch's (row, column). Qwen2.5-VL attends inside 112-pixel windows
// except in every n_wa_pattern-th block: its tokens are regrouped window by window (whole 2 x 2
// squares) before the blocks and put back in raster order after the merger. Then v.post_ln,
// the merger mm.0 [4E, H] (+ bias), GELU, mm.2 [H, T] (+ bias). This file also defines the
// parts Qwen3-VL shares (qwen_vl_parts.h).
#include <fmt/format.h>

#include <algorithm>

#include "engine/ops.h"
#include "media/projector_families.h"
#include "media/qwen_vl_parts.h"
#include "media/vit_blocks.h"

namespace hearth::media::detail {

SquareOrder raster_squares(int64_t n_squares) {
  SquareOrder out;
  out.order.resize(size_t(n_squares));
  for (int64_t s = 0; s < n_squares; ++s) out.order[size_t(s)] = s;
  return out;
}

SquareOrder window_squares(int64_t pw, int64_t ph, int64_t side) {
  SquareOrder out;
  for (int64_t y = 0; y < ph; y += side)
    for (int64_t x = 0; x < pw; x += side) {
      const auto begin = static_cast<int64_t>(out.order.size());
      for (int64_t dy = 0; dy < std::min(side, ph - y); ++dy)
        for (int64_t dx = 0; dx < std::min(side, pw - x); ++dx)
          out.order.push_back((y + dy) * pw + x + dx);
      out.windows.push_back({begin, static_cast<int64_t>(out.order.size())});
    }
  return out;
}

std::vector<float> gather_squares(const std::vector<float>& patches, int64_t gx, int64_t E,
                                  const SquareOrder& squares, VitRunPlan& plan) {
  const int64_t pw = gx / 2, n_squares = static_cast<int64_t>(squares.order.size());
  const int64_t n = 4 * n_squares;
  std::vector<float> h(size_t(n * E));
  plan.row.resize(size_t(n));
  plan.col.resize(size_t(n));
  for (int64_t i = 0; i < n_squares; ++i) {
    const int64_t s = squares.order[size_t(i)], sy = s / pw, sx = s % pw;
    for (int64_t d = 0; d < 4; ++d) {
      const int64_t row = 2 * sy + d / 2, col = 2 * sx + d % 2, t = 4 * i + d;
      std::copy_n(patches.data() + (row * gx + col) * E, E, h.data() + t * E);
      plan.row[size_t(t)] = static_cast<int32_t>(row);
      plan.col[size_t(t)] = static_cast<int32_t>(col);
    }
  }
  plan.windows.clear();
  for (const auto& [begin, end] : squares.windows) plan.windows.push_back({4 * begin, 4 * end});
  return h;
}

std::vector<float> embed_still_image(const VitBlocks& blocks, const engine::WeightMatrix& second,
                                     const float* pixels, int32_t nx, int32_t ny,
                                     ThreadPool& pool) {
  std::vector<float> frame0 = blocks.patch_embed(pixels, nx, ny, pool);
  std::vector<float> frame1(frame0.size());
  embed_patches(second, {}, pixels, nx, ny, blocks.hparams().patch_size, pool, frame1.data());
  engine::ops::add_inplace(frame0.data(), frame1.data(), static_cast<int64_t>(frame0.size()));
  return frame0;
}

Status check_square_sides(const std::string& type, const float* pixels, int32_t nx, int32_t ny,
                          int32_t patch_size) {
  if (pixels == nullptr || nx <= 0 || ny <= 0 || nx % (2 * patch_size) != 0 ||
      ny % (2 * patch_size) != 0)
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("projector {}: the image sides must be multiples of {}, got {}x{}",
                             type, 2 * patch_size, nx, ny));
  return Status::ok();
}

namespace {

// The reference's window side in pixels (its default; Qwen2.5-VL files do not record one).
constexpr int32_t kWindowPixels = 112;

class QwenVlProjector final : public Projector {
 public:
  QwenVlProjector(std::unique_ptr<ClipFile> file, VitBlocks vit, engine::WeightMatrix patch_1,
                  GeluMlp merger, bool v25, int32_t n_wa_pattern)
      : Projector(std::move(file), Vit{}, {}),
        blocks_(std::move(vit)),
        patch_embd_1_(patch_1),
        merger_(std::move(merger)),
        v25_(v25),
        n_wa_pattern_(n_wa_pattern) {}

  std::string_view family() const override { return v25_ ? "qwen25vl" : "qwen2vl"; }
  int32_t n_output_tokens(int32_t nx, int32_t ny) const override {
    const TokenGrid g = output_grid(nx, ny);
    return g.nx * g.ny;
  }
  TokenGrid output_grid(int32_t nx, int32_t ny) const override {
    const int32_t side = 2 * hparams().patch_size;
    return {.nx = nx / side, .ny = ny / side};
  }
  int32_t n_embd_out() const override { return static_cast<int32_t>(merger_.fc2.n_rows); }
  std::string_view image_begin() const override { return "<|vision_start|>"; }
  std::string_view image_end() const override { return "<|vision_end|>"; }

  Status encode(const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool,
                float* out) const override {
    const int32_t P = hparams().patch_size;
    HEARTH_RETURN_IF_ERROR(check_square_sides(projector_type(), pixels, nx, ny, P));
    const int64_t E = hparams().n_embd, gx = nx / P, gy = ny / P, n = gx * gy;
    const int64_t pw = gx / 2, ph = gy / 2, n_out = pw * ph;
    const std::vector<float> patches =
        embed_still_image(blocks_, patch_embd_1_, pixels, nx, ny, pool);
    // Squares in the order the blocks see them (windows for Qwen2.5-VL), four tokens each.
    const SquareOrder squares =
        windowed() ? window_squares(pw, ph, kWindowPixels / P / 2) : raster_squares(n_out);
    VitRunPlan plan;
    std::vector<float> h = gather_squares(patches, gx, E, squares, plan);
    for (int32_t il = 0; il < hparams().n_layer; ++il)
      plan.windowed.push_back(windowed() && (il + 1) % n_wa_pattern_ != 0);
    blocks_.pre_norm(h.data(), n, pool);
    blocks_.run(h.data(), n, plan, pool);
    blocks_.post_norm(h.data(), n, pool);
    // The merger reads each square's four tokens as one row [4E]; rows go back to raster order.
    const int64_t T = merger_.fc2.n_rows;
    std::vector<float> merged(size_t(n_out * T));
    run_gelu_mlp(merger_, h.data(), n_out, merged.data(), pool, T);
    for (int64_t i = 0; i < n_out; ++i)
      std::copy_n(merged.data() + i * T, T, out + squares.order[size_t(i)] * T);
    return Status::ok();
  }

  void keep(std::vector<engine::OwnedBytes> bytes) {
    for (auto& b : bytes) owned_.push_back(std::move(b));
  }

 private:
  bool windowed() const { return v25_ && n_wa_pattern_ > 0; }

  VitBlocks blocks_;
  engine::WeightMatrix patch_embd_1_;  // [3*P*P, E]: the temporal patch's second frame
  GeluMlp merger_;                     // mm.0 [4E, H], mm.2 [H, T]
  bool v25_;
  int32_t n_wa_pattern_;
};

Result<int32_t> read_qwen_keys(ClipFile& file, bool v25) {
  const gguf::File& f = file.archive.primary();
  if (const gguf::Value* v = f.find("clip.vision.spatial_merge_size")) {
    const auto k = v->as_int();
    if (!k || *k != 2)
      return error(ErrorCode::kUnsupported,
                   fmt::format("{}: clip.vision.spatial_merge_size must be 2 for {}", file.path,
                               file.projector_type));
  }
  file.vision.n_merge = 2;
  if (kWindowPixels / file.vision.patch_size / 2 <= 0)
    return error(ErrorCode::kUnsupported,
                 fmt::format("{}: patch size {} is too large for {}", file.path,
                             file.vision.patch_size, file.projector_type));
  const gguf::Value* v = f.find("clip.vision.n_wa_pattern");
  if (v == nullptr) {
    if (!v25) return 0;
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: clip.vision.n_wa_pattern is missing", file.path));
  }
  const auto pattern = v->as_int();
  if (!pattern || *pattern < 0 || *pattern > 4096)
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: clip.vision.n_wa_pattern must be in 0..4096", file.path));
  return static_cast<int32_t>(*pattern);
}

Result<std::unique_ptr<Projector>> load_qwen(std::unique_ptr<ClipFile> file,
                                             const engine::LoadOptions& options, bool v25) {
  HEARTH_ASSIGN_OR_RETURN(const int32_t n_wa_pattern, read_qwen_keys(*file, v25));
  engine::TensorLoader loader(file->archive, options);
  // The converters record the text model's width as Qwen2-VL's feed_forward_length (and 0
  // in old files); the reference never reads it for these graphs, so the FFN width comes
  // from the first block's ffn_up.
  HEARTH_ASSIGN_OR_RETURN(const int64_t F,
                          matrix_rows(loader, "v.blk.0.ffn_up.weight", file->path));
  file->vision.n_ff = static_cast<int32_t>(F);
  const VisionHparams& hp = file->vision;
  HEARTH_ASSIGN_OR_RETURN(VitBlocks blocks,
                          VitBlocks::load(loader, hp,
                                          {.norm = v25 ? VitNorm::kRms : VitNorm::kLayer,
                                           .rope_2d = true,
                                           .rope_theta = 1e4f,
                                           .rope_halves = true}));
  HEARTH_ASSIGN_OR_RETURN(engine::WeightMatrix patch_1,
                          load_patch_kernel(loader, hp, "v.patch_embd.weight.1"));
  HEARTH_ASSIGN_OR_RETURN(
      GeluMlp merger, load_gelu_mlp(loader, "mm.0", "mm.2", 4 * int64_t{hp.n_embd}, file->path));
  auto out = std::make_unique<QwenVlProjector>(std::move(file), std::move(blocks), patch_1,
                                               std::move(merger), v25, n_wa_pattern);
  out->keep(loader.take_repacked());
  return std::unique_ptr<Projector>(std::move(out));
}

}  // namespace

Result<std::unique_ptr<Projector>> load_qwen2vl(std::unique_ptr<ClipFile> file,
                                                const engine::LoadOptions& options) {
  return load_qwen(std::move(file), options, false);
}

Result<std::unique_ptr<Projector>> load_qwen25vl(std::unique_ptr<ClipFile> file,
                                                 const engine::LoadOptions& options) {
  return load_qwen(std::move(file), options, true);
}

}  // namespace hearth::media::detail

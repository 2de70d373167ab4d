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
// the merger mm.0 [4E, H] (+ bias), GELU, mm.2 [H, T] (+ bias).
#include <fmt/format.h>

#include <algorithm>

#include "engine/ops.h"
#include "media/projector_families.h"
#include "media/vit_blocks.h"

namespace hearth::media::detail {
namespace {

using engine::WeightMatrix;

// The reference's window side in pixels (its default; Qwen2.5-VL files do not record one).
constexpr int32_t kWindowPixels = 112;

struct QwenVlWeights {
  WeightMatrix patch_embd_1;  // [3*P*P, E]: the temporal patch's second frame
  WeightMatrix mm0, mm2;      // [4E, H] [H, T]
  std::vector<float> mm0_b, mm2_b;
};

// The merged squares of a gx x gy patch grid in Qwen2.5-VL's window order: windows of `side`
// squares in raster order, squares in raster order inside each. order[i] = the raster index of
// the i-th square; windows: the [begin, end) square ranges.
struct WindowOrder {
  std::vector<int64_t> order;
  std::vector<std::pair<int64_t, int64_t>> windows;
};

WindowOrder window_order(int64_t pw, int64_t ph, int64_t side) {
  WindowOrder out;
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

class QwenVlProjector final : public Projector {
 public:
  QwenVlProjector(std::unique_ptr<ClipFile> file, VitBlocks vit, QwenVlWeights w, bool v25,
                  int32_t n_wa_pattern)
      : Projector(std::move(file), Vit{}, {}),
        blocks_(std::move(vit)),
        w_(std::move(w)),
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
  int32_t n_embd_out() const override { return static_cast<int32_t>(w_.mm2.n_rows); }
  std::string_view image_begin() const override { return "<|vision_start|>"; }
  std::string_view image_end() const override { return "<|vision_end|>"; }

  Status encode(const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool,
                float* out) const override {
    const int32_t P = hparams().patch_size;
    if (pixels == nullptr || nx <= 0 || ny <= 0 || nx % (2 * P) != 0 || ny % (2 * P) != 0)
      return error(ErrorCode::kInvalidArgument,
                   fmt::format("projector {}: the image sides must be multiples of {}, got {}x{}",
                               projector_type(), 2 * P, nx, ny));
    const int64_t E = hparams().n_embd, gx = nx / P, gy = ny / P, n = gx * gy;
    const int64_t pw = gx / 2, ph = gy / 2, n_out = pw * ph;
    std::vector<float> frame0 = blocks_.patch_embed(pixels, nx, ny, pool);
    std::vector<float> frame1(frame0.size());
    embed_patches(w_.patch_embd_1, {}, pixels, nx, ny, P, pool, frame1.data());
    engine::ops::add_inplace(frame0.data(), frame1.data(), n * E);
    // Squares in the order the blocks see them (windows for Qwen2.5-VL), four tokens each.
    WindowOrder squares = windowed() ? window_order(pw, ph, kWindowPixels / P / 2)
                                     : WindowOrder{.order = {}, .windows = {}};
    if (squares.order.empty())
      for (int64_t s = 0; s < n_out; ++s) squares.order.push_back(s);
    std::vector<float> h(size_t(n * E));
    VitRunPlan plan;
    plan.row.resize(size_t(n));
    plan.col.resize(size_t(n));
    for (int64_t i = 0; i < n_out; ++i) {
      const int64_t s = squares.order[size_t(i)], sy = s / pw, sx = s % pw;
      for (int64_t d = 0; d < 4; ++d) {
        const int64_t row = 2 * sy + d / 2, col = 2 * sx + d % 2, t = 4 * i + d;
        std::copy_n(frame0.data() + (row * gx + col) * E, E, h.data() + t * E);
        plan.row[size_t(t)] = static_cast<int32_t>(row);
        plan.col[size_t(t)] = static_cast<int32_t>(col);
      }
    }
    for (const auto& [begin, end] : squares.windows) plan.windows.push_back({4 * begin, 4 * end});
    for (int32_t il = 0; il < hparams().n_layer; ++il)
      plan.windowed.push_back(windowed() && (il + 1) % n_wa_pattern_ != 0);
    blocks_.pre_norm(h.data(), n, pool);
    blocks_.run(h.data(), n, plan, pool);
    blocks_.post_norm(h.data(), n, pool);
    // The merger reads each square's four tokens as one row [4E].
    const int64_t H = w_.mm0.n_rows, T = w_.mm2.n_rows;
    std::vector<float> hidden(size_t(n_out * H)), merged(size_t(n_out * T));
    kernels::matmul(w_.mm0, h.data(), n_out, hidden.data(), pool);
    add_bias_rows(hidden.data(), w_.mm0_b, n_out);
    gelu_inplace(hidden.data(), n_out * H, pool);
    kernels::matmul(w_.mm2, hidden.data(), n_out, merged.data(), pool);
    add_bias_rows(merged.data(), w_.mm2_b, n_out);
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
  QwenVlWeights w_;
  bool v25_;
  int32_t n_wa_pattern_;
};

Result<int64_t> out_width(const engine::TensorLoader& loader, const std::string& name,
                          const std::string& path) {
  const gguf::TensorInfo* t = loader.find_info(name);
  if (t == nullptr || t->ne[1] <= 0 || t->ne[1] > (int64_t{1} << 20))
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: projector tensor '{}' is missing or malformed", path, name));
  return t->ne[1];
}

// clip.vision.spatial_merge_size must be 2 (the reference's graph merges 2 x 2 whatever it
// says); clip.vision.n_wa_pattern is required for Qwen2.5-VL, as in the reference.
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
  HEARTH_ASSIGN_OR_RETURN(const int64_t F, out_width(loader, "v.blk.0.ffn_up.weight", file->path));
  file->vision.n_ff = static_cast<int32_t>(F);
  const VisionHparams& hp = file->vision;
  HEARTH_ASSIGN_OR_RETURN(VitBlocks blocks,
                          VitBlocks::load(loader, hp,
                                          {.norm = v25 ? VitNorm::kRms : VitNorm::kLayer,
                                           .rope_2d = true,
                                           .rope_theta = 1e4f,
                                           .rope_halves = true}));
  const int64_t E = hp.n_embd;
  QwenVlWeights w;
  HEARTH_ASSIGN_OR_RETURN(w.patch_embd_1, load_patch_kernel(loader, hp, "v.patch_embd.weight.1"));
  HEARTH_ASSIGN_OR_RETURN(const int64_t H, out_width(loader, "mm.0.weight", file->path));
  HEARTH_ASSIGN_OR_RETURN(const int64_t T, out_width(loader, "mm.2.weight", file->path));
  HEARTH_ASSIGN_OR_RETURN(w.mm0, loader.matrix("mm.0.weight", 4 * E, H));
  HEARTH_ASSIGN_OR_RETURN(w.mm0_b, loader.vector("mm.0.bias", H));
  HEARTH_ASSIGN_OR_RETURN(w.mm2, loader.matrix("mm.2.weight", H, T));
  HEARTH_ASSIGN_OR_RETURN(w.mm2_b, loader.vector("mm.2.bias", T));
  auto out = std::make_unique<QwenVlProjector>(std::move(file), std::move(blocks), std::move(w),
                                               v25, n_wa_pattern);
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

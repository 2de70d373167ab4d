// LLaVA's projector (llama.cpp tools/mtmd/models/llava.cpp, PROJECTOR_TYPE_MLP and, when
// the file has mm.3, MLP_NORM). The CLIP ViT runs up to its feature layer (by default all
// but the last block), and the projector reads the patch rows:
//   mlp:      mm.0 [Ein, H] + bias, GELU, mm.2 [H, T] + bias (mm.2 optional)
//   mlp_norm: mm.0 + bias, LayerNorm * mm.1 + mm.1.bias, GELU, mm.3 + bias,
//             LayerNorm * mm.4 + mm.4.bias
// As in the reference, the class embedding is the last row of the ViT's input (at position
// n_patches) and the projector reads rows 1..n_patches when there is one, i.e. the class row
// and every patch but the first. LLaVA-1.6 files (clip.vision.image_grid_pinpoints) have
// their images cut into image_size tiles plus an overview, each encoded the same way.
#include <fmt/format.h>

#include <algorithm>

#include "media/projector_families.h"

namespace hearth::media::detail {
namespace {

using engine::WeightMatrix;

struct Linear {
  WeightMatrix w;
  std::vector<float> b;
};

struct Norm {
  std::vector<float> w, b;
};

struct MlpWeights {
  bool with_norms = false;  // mlp_norm
  Linear in, out;           // mm.0, then mm.2 (mlp) or mm.3 (mlp_norm); out may be absent
  Norm norm_mid, norm_out;  // mlp_norm: mm.1, mm.4
};

class LlavaProjector final : public Projector {
 public:
  LlavaProjector(std::unique_ptr<ClipFile> file, Vit vit, std::vector<engine::OwnedBytes> owned,
                 MlpWeights mm)
      : Projector(std::move(file), std::move(vit), std::move(owned)), mm_(std::move(mm)) {}

  std::string_view family() const override { return "llava"; }
  // LLaVA-1.6 (files with clip.vision.image_grid_pinpoints): the reference's llava-uhd tiles,
  // row by row, then the overview, with no text between them (mtmd has no slice template for
  // mlp, and its graph does not use v.image_newline).
  bool joins_tiles() const override { return !hparams().grid_pinpoints.empty(); }
  int32_t n_output_tokens(int32_t nx, int32_t ny) const override {
    const int32_t P = hparams().patch_size;
    return (nx / P) * (ny / P);
  }
  int32_t n_embd_out() const override {
    return static_cast<int32_t>(engine::present(mm_.out.w) ? mm_.out.w.n_rows : mm_.in.w.n_rows);
  }

  Status encode(const float* pixels, int32_t nx, int32_t ny, ThreadPool& pool,
                float* out) const override {
    HEARTH_RETURN_IF_ERROR(check_image(pixels, nx, ny));
    const int64_t n_patches = n_output_tokens(nx, ny);
    const std::vector<float> features = vit_features(pixels, nx, ny, pool);
    const int64_t width = mm_.in.w.n_cols;
    const int64_t first = vit_.has_class_embedding() ? 1 : 0;
    project(features.data() + first * width, n_patches, pool, out);
    return Status::ok();
  }

 private:
  // The ViT's rows [n_positions][E * n_features]: the inputs of the feature layers (and the
  // post-normed output when it is one of them) side by side, or the output of the last
  // layer run when the file names none.
  std::vector<float> vit_features(const float* pixels, int32_t nx, int32_t ny,
                                  ThreadPool& pool) const {
    const VisionHparams& hp = hparams();
    const std::vector<int32_t>& wanted = hp.feature_layers;
    const auto is_feature = [&](int32_t il) {
      return std::find(wanted.begin(), wanted.end(), il) != wanted.end();
    };
    const int32_t last =
        wanted.empty() ? hp.n_layer - 1 : *std::max_element(wanted.begin(), wanted.end());
    const int64_t n = vit_.n_positions(), E = hp.n_embd;
    std::vector<float> x = vit_.embed(pixels, nx, ny, pool);
    std::vector<std::vector<float>> stack;
    for (int32_t il = 0; il < last; ++il) {
      if (is_feature(il)) stack.push_back(x);
      vit_.run_layer(il, x.data(), n, pool);
    }
    vit_.post_norm(x.data(), n, pool);
    if (is_feature(last)) stack.push_back(x);
    if (stack.size() <= 1) return stack.empty() ? x : stack.front();
    std::vector<float> merged(size_t(n * E) * stack.size());
    for (int64_t t = 0; t < n; ++t)
      for (size_t s = 0; s < stack.size(); ++s)
        std::copy_n(stack[s].data() + t * E, E,
                    merged.data() + (t * int64_t(stack.size()) + int64_t(s)) * E);
    return merged;
  }

  void project(const float* x, int64_t n, ThreadPool& pool, float* out) const {
    const int64_t H = mm_.in.w.n_rows;
    const bool has_out = engine::present(mm_.out.w);
    std::vector<float> hidden(size_t(n * H));
    float* mid = has_out ? hidden.data() : out;
    kernels::matmul(mm_.in.w, x, n, mid, pool);
    add_bias_rows(mid, mm_.in.b, n);
    if (mm_.with_norms)
      layer_norm_rows(mid, mm_.norm_mid.w, mm_.norm_mid.b, mid, n, H, hparams().eps, pool);
    gelu_inplace(mid, n * H, pool);
    if (!has_out) return;
    kernels::matmul(mm_.out.w, hidden.data(), n, out, pool);
    add_bias_rows(out, mm_.out.b, n);
    if (mm_.with_norms)
      layer_norm_rows(out, mm_.norm_out.w, mm_.norm_out.b, out, n, mm_.out.w.n_rows, hparams().eps,
                      pool);
  }

  MlpWeights mm_;
};

// A linear layer mm.<i> whose input width is n_in; its output width is read from the file.
Result<Linear> load_linear(engine::TensorLoader& loader, int index, int64_t n_in, bool optional) {
  const std::string name = fmt::format("mm.{}", index);
  const gguf::TensorInfo* t = loader.find_info(name + ".weight");
  if (t == nullptr && optional) return Linear{};
  const int64_t n_out = t != nullptr ? t->ne[1] : 0;
  Linear l;
  HEARTH_ASSIGN_OR_RETURN(l.w, loader.matrix(name + ".weight", n_in, n_out));
  HEARTH_ASSIGN_OR_RETURN(l.b, loader.vector(name + ".bias", n_out));
  return l;
}

Result<Norm> load_norm(engine::TensorLoader& loader, int index, int64_t n) {
  Norm norm;
  HEARTH_ASSIGN_OR_RETURN(norm.w, loader.vector(fmt::format("mm.{}.weight", index), n));
  HEARTH_ASSIGN_OR_RETURN(norm.b, loader.vector(fmt::format("mm.{}.bias", index), n));
  return norm;
}

Result<MlpWeights> load_mlp(engine::TensorLoader& loader, const VisionHparams& hp) {
  MlpWeights mm;
  const auto n_features = static_cast<int64_t>(std::max<size_t>(1, hp.feature_layers.size()));
  HEARTH_ASSIGN_OR_RETURN(mm.in, load_linear(loader, 0, hp.n_embd * n_features, false));
  const int64_t H = mm.in.w.n_rows;
  mm.with_norms = loader.has("mm.3.weight");  // the reference's "Yi-type" LLaVA
  if (!mm.with_norms) {
    HEARTH_ASSIGN_OR_RETURN(mm.out, load_linear(loader, 2, H, true));
    return mm;
  }
  HEARTH_ASSIGN_OR_RETURN(mm.norm_mid, load_norm(loader, 1, H));
  HEARTH_ASSIGN_OR_RETURN(mm.out, load_linear(loader, 3, H, false));
  HEARTH_ASSIGN_OR_RETURN(mm.norm_out, load_norm(loader, 4, mm.out.w.n_rows));
  return mm;
}

}  // namespace

Result<std::unique_ptr<Projector>> load_llava(std::unique_ptr<ClipFile> file,
                                              const engine::LoadOptions& options) {
  const VisionHparams& hp = file->vision;
  if (hp.n_layer < 2 && hp.feature_layers.empty())
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: a LLaVA projector reads the second-to-last layer of at least 2",
                             file->path));
  engine::TensorLoader loader(file->archive, options);
  HEARTH_ASSIGN_OR_RETURN(Vit vit, Vit::load(loader, hp));
  HEARTH_ASSIGN_OR_RETURN(MlpWeights mm, load_mlp(loader, hp));
  std::vector<engine::OwnedBytes> owned = loader.take_repacked();
  auto out = std::make_unique<LlavaProjector>(std::move(file), std::move(vit), std::move(owned),
                                              std::move(mm));
  return std::unique_ptr<Projector>(std::move(out));
}

}  // namespace hearth::media::detail

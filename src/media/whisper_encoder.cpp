#include "media/whisper_encoder.h"

#include <fmt/format.h>

#include <algorithm>

#include "engine/ops.h"
#include "kernels/matmul.h"
#include "kernels/quant.h"

namespace hearth::media {
namespace {

using engine::WeightMatrix;

constexpr int64_t kTaps = 3;  // both convolutions: kernel 3, padding 1

Status bad_shape(const std::string& name, const gguf::TensorInfo& t, const std::string& want) {
  return error(
      ErrorCode::kCorruptFile,
      fmt::format("projector tensor '{}' has shape {}, expected {}", name, t.shape_string(), want));
}

// A convolution kernel [3, C, E] as E rows of C*3 inputs ordered (channel, tap): the
// reference's im2col order. F32/F16/BF16 only: the reference's im2col takes the kernel's type,
// which a block type cannot be.
Result<WeightMatrix> load_conv_kernel(engine::TensorLoader& loader, const std::string& name,
                                      int64_t C, int64_t E) {
  const gguf::TensorInfo* t = loader.find_info(name);
  if (t == nullptr)
    return error(ErrorCode::kCorruptFile, fmt::format("projector tensor '{}' is missing", name));
  if (t->ne[0] != kTaps || t->ne[1] != C || t->ne[2] != E || t->ne[3] != 1)
    return bad_shape(name, *t, fmt::format("[3, {}, {}]", C, E));
  if (t->type != TensorType::kF32 && t->type != TensorType::kF16 && t->type != TensorType::kBF16)
    return error(ErrorCode::kUnsupported,
                 fmt::format("projector tensor '{}' has type {} (F32, F16 or BF16 expected)", name,
                             tensor_type_name(t->type)));
  return WeightMatrix{.type = t->type,
                      .n_cols = C * kTaps,
                      .n_rows = E,
                      .row_stride = row_bytes(traits_of(t->type), uint64_t(C * kTaps)),
                      .data = t->data,
                      .layout = kernels::WeightLayout::kRows};
}

// A convolution bias: [1, E] as converters write it (so that it broadcasts over time), or [E].
Result<std::vector<float>> load_conv_bias(engine::TensorLoader& loader, const std::string& name,
                                          int64_t E) {
  const gguf::TensorInfo* t = loader.find_info(name);
  if (t == nullptr)
    return error(ErrorCode::kCorruptFile, fmt::format("projector tensor '{}' is missing", name));
  if (t->n_elements() != E || (t->ne[0] != E && !(t->ne[0] == 1 && t->ne[1] == E)))
    return bad_shape(name, *t, fmt::format("[1, {}]", E));
  if (!kernels::can_dequantize(t->type))
    return error(ErrorCode::kUnsupported,
                 fmt::format("projector tensor '{}' has type {}", name, tensor_type_name(t->type)));
  std::vector<float> out(static_cast<size_t>(E));
  kernels::dequantize_row(t->type, t->data, out.data(), E);
  return out;
}

// One convolution (kernel 3, padding 1, `stride`) over the input value(c, t), c < C, t < L,
// read at x[c * c_step + t * t_step]: the kernel times each output's window, plus the bias,
// then the exact GELU. Returns [L_out][E], L_out = (L - 1) / stride + 1.
std::vector<float> conv_gelu(const WeightMatrix& kernel, const std::vector<float>& bias,
                             const float* x, int64_t C, int64_t L, int64_t c_step, int64_t t_step,
                             int64_t stride, ThreadPool& pool) {
  const int64_t L_out = (L - 1) / stride + 1, K = C * kTaps, E = kernel.n_rows;
  std::vector<float> cols(size_t(L_out * K));
  pool.parallel_for(L_out, [&](int64_t begin, int64_t end, int) {
    for (int64_t o = begin; o < end; ++o) {
      float* dst = cols.data() + o * K;
      for (int64_t c = 0; c < C; ++c)
        for (int64_t k = 0; k < kTaps; ++k) {
          const int64_t t = o * stride + k - 1;
          dst[c * kTaps + k] = t >= 0 && t < L ? x[c * c_step + t * t_step] : 0.0f;
        }
    }
  });
  std::vector<float> out(size_t(L_out * E));
  kernels::matmul(kernel, cols.data(), L_out, out.data(), pool);
  add_bias_rows(out.data(), bias, L_out);
  constexpr int64_t kChunk = 4096;
  const int64_t total = L_out * E;
  pool.parallel_for((total + kChunk - 1) / kChunk, [&](int64_t begin, int64_t end, int) {
    const int64_t lo = begin * kChunk, hi = std::min(total, end * kChunk);
    gelu_erf(out.data() + lo, hi - lo);
  });
  return out;
}

}  // namespace

Result<WhisperEncoder> WhisperEncoder::load(engine::TensorLoader& loader, const AudioHparams& hp) {
  WhisperEncoder w;
  w.hp_ = hp;
  const int64_t E = hp.n_embd;
  HEARTH_ASSIGN_OR_RETURN(w.conv1_, load_conv_kernel(loader, "a.conv1d.1.weight", hp.n_mel, E));
  HEARTH_ASSIGN_OR_RETURN(w.conv1_b_, load_conv_bias(loader, "a.conv1d.1.bias", E));
  HEARTH_ASSIGN_OR_RETURN(w.conv2_, load_conv_kernel(loader, "a.conv1d.2.weight", E, E));
  HEARTH_ASSIGN_OR_RETURN(w.conv2_b_, load_conv_bias(loader, "a.conv1d.2.bias", E));
  const std::string pos = "a.position_embd.weight";
  const gguf::TensorInfo* t = loader.find_info(pos);
  if (t == nullptr)
    return error(ErrorCode::kCorruptFile, fmt::format("projector tensor '{}' is missing", pos));
  if (t->ne[0] != E || t->ne[1] <= 0 || t->ne[1] > (1 << 20))
    return bad_shape(pos, *t, fmt::format("[{}, n_positions]", E));
  w.n_pos_ = static_cast<int32_t>(t->ne[1]);
  HEARTH_ASSIGN_OR_RETURN(auto rows, loader.vectors(pos, E, w.n_pos_));
  w.position_embd_.reserve(size_t(E) * size_t(w.n_pos_));
  for (const auto& row : rows)
    w.position_embd_.insert(w.position_embd_.end(), row.begin(), row.end());
  HEARTH_ASSIGN_OR_RETURN(w.pre_ln_w_, loader.vector("a.pre_ln.weight", E, true));
  HEARTH_ASSIGN_OR_RETURN(w.pre_ln_b_, loader.vector("a.pre_ln.bias", E, true));
  // The blocks are the ViT's, with the audio sizes and the exact GELU (the reference sets
  // FFN_GELU_ERF for every Whisper-based family, whatever clip.use_gelu says).
  VisionHparams blocks;
  blocks.n_embd = hp.n_embd;
  blocks.n_ff = hp.n_ff;
  blocks.n_layer = hp.n_layer;
  blocks.n_head = hp.n_head;
  blocks.eps = hp.eps;
  blocks.ffn_act = FfnActivation::kGeluErf;
  HEARTH_ASSIGN_OR_RETURN(w.blocks_, Vit::load_blocks(loader, blocks, "a"));
  return w;
}

std::vector<float> WhisperEncoder::encode(const float* mel, int32_t n_frames, bool avg_pool,
                                          ThreadPool& pool) const {
  const int64_t E = hp_.n_embd, C = hp_.n_mel, L = n_frames;
  // conv1 reads the mel [C][L]; conv2 reads conv1's output [L][E].
  const std::vector<float> h1 = conv_gelu(conv1_, conv1_b_, mel, C, L, L, 1, 1, pool);
  std::vector<float> h = conv_gelu(conv2_, conv2_b_, h1.data(), E, L, 1, E, 2, pool);
  const int64_t n = L / 2;  // = conv2's output length for even L
  engine::ops::add_inplace(h.data(), position_embd_.data(), n * E);
  if (!pre_ln_w_.empty())
    layer_norm_rows(h.data(), pre_ln_w_, pre_ln_b_, h.data(), n, E, hp_.eps, pool);
  for (int32_t il = 0; il < blocks_.n_layers(); ++il) blocks_.run_layer(il, h.data(), n, pool);
  int64_t n_out = n;
  if (avg_pool) {
    n_out = n / 2;
    for (int64_t t = 0; t < n_out; ++t) {
      const float* a = h.data() + 2 * t * E;
      float* dst = h.data() + t * E;  // row t is read before it is written (2t >= t)
      for (int64_t e = 0; e < E; ++e) dst[e] = (a[e] + a[E + e]) / 2.0f;
    }
    h.resize(size_t(n_out * E));
  }
  blocks_.post_norm(h.data(), n_out, pool);
  return h;
}

std::vector<float> stack_frames(const std::vector<float>& x, int64_t n_rows, int64_t E,
                                int32_t stack_factor, int64_t n_out) {
  const int64_t width = E * stack_factor;
  std::vector<float> out(size_t(n_out * width), 0.0f);
  const int64_t n_copy = std::min(n_rows * E, n_out * width);
  std::copy_n(x.begin(), n_copy, out.begin());
  return out;
}

void rms_norm_rows(float* x, const std::vector<float>& w, int64_t n, int64_t width, float eps,
                   ThreadPool& pool) {
  pool.parallel_for(n, [&](int64_t begin, int64_t end, int) {
    for (int64_t t = begin; t < end; ++t)
      engine::ops::rms_norm(x + t * width, w.data(), x + t * width, width, eps);
  });
}

}  // namespace hearth::media

// End-to-end check of the dequantizers on real llama.cpp-quantized files: every tensor of
// every tiny model decodes to finite values that match the same tensor of the model's F16
// file (all quantized from the same f32 weights) to within the format's precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "base/tensor_type.h"
#include "gguf/file.h"
#include "kernels/quant.h"
#include "support/test_paths.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

struct ModelCase {
  const char* file;
  const char* f16_file;
};

// Largest RMS difference from the F16 tensor, relative to the F16 tensor's RMS. The
// measured values are well below (see the printed lines).
double max_relative_rms(TensorType type) {
  switch (type) {
    case TensorType::kF32:
    case TensorType::kF16:
      return 0.0;
    case TensorType::kBF16:
      return 0.003;
    case TensorType::kQ8_0:
      return 0.01;
    case TensorType::kQ6_K:
      return 0.025;
    case TensorType::kQ5_0:
    case TensorType::kQ5_1:
    case TensorType::kQ5_K:
      return 0.05;
    case TensorType::kQ4_0:
    case TensorType::kQ4_1:
    case TensorType::kQ4_K:
    case TensorType::kIQ4_NL:
    case TensorType::kIQ4_XS:
      return 0.10;
    case TensorType::kQ3_K:
      return 0.20;
    case TensorType::kQ2_K:
      return 0.35;
    default:
      return -1.0;
  }
}

bool is_closed_form(TensorType t) {
  return t == TensorType::kQ8_0 || t == TensorType::kQ4_0 || t == TensorType::kQ4_1 ||
         t == TensorType::kQ5_0 || t == TensorType::kQ5_1;
}

struct OpenedPair {
  gguf::File file;
  gguf::File f16;
};

// Opens the case's file and its F16 counterpart; nullopt (with a failure) if either fails.
std::optional<OpenedPair> open_pair(const ModelCase& c) {
  auto file = gguf::File::open(hearth::test::shared_path(std::string("models/tiny/") + c.file));
  auto ref = gguf::File::open(hearth::test::shared_path(std::string("models/tiny/") + c.f16_file));
  if (!file.is_ok() || !ref.is_ok()) {
    ADD_FAILURE() << file.status().to_string() << " " << ref.status().to_string();
    return std::nullopt;
  }
  return OpenedPair{std::move(file).value(), std::move(ref).value()};
}

std::vector<float> dequantize_tensor(const gguf::TensorInfo& t) {
  std::vector<float> out(static_cast<size_t>(t.n_elements()));
  dequantize_row(t.type, t.data, out.data(), t.n_elements());
  return out;
}

class TinyModel : public ::testing::TestWithParam<ModelCase> {};

TEST_P(TinyModel, EveryTensorMatchesTheF16Model) {
  const ModelCase& c = GetParam();
  auto pair = open_pair(c);
  ASSERT_TRUE(pair.has_value());
  ASSERT_FALSE(pair->file.tensors().empty());
  std::map<TensorType, double> worst;
  for (const gguf::TensorInfo& t : pair->file.tensors()) {
    SCOPED_TRACE(std::string(t.name) + " " + std::string(tensor_type_name(t.type)));
    ASSERT_TRUE(can_dequantize(t.type));
    ASSERT_EQ(t.n_bytes, row_bytes(traits_of(t.type), static_cast<uint64_t>(t.n_elements())));
    const std::vector<float> values = dequantize_tensor(t);
    ASSERT_EQ(
        std::count_if(values.begin(), values.end(), [](float v) { return !std::isfinite(v); }), 0);
    const gguf::TensorInfo* rt = pair->f16.find_tensor(t.name);
    ASSERT_NE(rt, nullptr);
    ASSERT_EQ(rt->n_elements(), t.n_elements());
    const std::vector<float> want = dequantize_tensor(*rt);
    const double err = test::relative_rms(values.data(), want.data(), values.size());
    EXPECT_LE(err, max_relative_rms(t.type));
    worst[t.type] = std::max(worst[t.type], err);
  }
  for (const auto& [type, err] : worst) {
    std::printf("[ %s ] %-6s worst relative RMS difference from F16: %.5f\n", c.file,
                std::string(tensor_type_name(type)).c_str(), err);
  }
}

// The weights of these models are F16-representable, so re-quantizing the F16 model with
// the closed-form quantizers (llama.cpp's quantize_row_*_ref) must give the file's bytes.
TEST_P(TinyModel, ClosedFormQuantizersReproduceTheFile) {
  const ModelCase& c = GetParam();
  auto pair = open_pair(c);
  ASSERT_TRUE(pair.has_value());
  size_t n_checked = 0;
  for (const gguf::TensorInfo& t : pair->file.tensors()) {
    if (!is_closed_form(t.type)) continue;
    SCOPED_TRACE(std::string(t.name));
    const std::vector<float> source = dequantize_tensor(*pair->f16.find_tensor(t.name));
    std::vector<uint8_t> bytes(t.n_bytes);
    quantize_row(t.type, source.data(), bytes.data(), t.n_elements());
    const auto& traits = traits_of(t.type);
    size_t differing = 0;
    for (size_t b = 0; b < t.n_bytes / traits.type_size; ++b) {
      differing +=
          !std::equal(bytes.begin() + b * traits.type_size,
                      bytes.begin() + (b + 1) * traits.type_size, t.data + b * traits.type_size);
    }
    EXPECT_EQ(differing, 0u);
    n_checked += t.n_bytes / traits.type_size;
  }
  if (n_checked > 0) std::printf("[ %s ] %zu blocks re-quantized identically\n", c.file, n_checked);
}

// Hearth's own K-quant and IQ4 encoders against llama.cpp's on the same weights: the
// reconstruction error must be in the same league (two tensors per file keep it fast).
TEST_P(TinyModel, OwnEncodersMatchLlamaCppQuality) {
  const ModelCase& c = GetParam();
  auto pair = open_pair(c);
  ASSERT_TRUE(pair.has_value());
  for (const char* name : {"blk.0.attn_q.weight", "blk.0.ffn_down.weight"}) {
    const gguf::TensorInfo* t = pair->file.find_tensor(name);
    ASSERT_NE(t, nullptr);
    if (is_closed_form(t->type) || t->type == TensorType::kF16 || t->type == TensorType::kBF16) {
      continue;
    }
    const std::vector<float> source = dequantize_tensor(*pair->f16.find_tensor(name));
    std::vector<uint8_t> bytes(t->n_bytes);
    quantize_row(t->type, source.data(), bytes.data(), t->n_elements());
    std::vector<float> ours(source.size());
    dequantize_row(t->type, bytes.data(), ours.data(), t->n_elements());
    const std::vector<float> theirs = dequantize_tensor(*t);
    const double our_err = test::relative_rms(ours.data(), source.data(), source.size());
    const double their_err = test::relative_rms(theirs.data(), source.data(), source.size());
    std::printf("[ %s ] %s %s: Hearth encoder %.5f, llama.cpp %.5f\n", c.file, name,
                std::string(tensor_type_name(t->type)).c_str(), our_err, their_err);
    EXPECT_LE(our_err, 1.1 * their_err) << name;
  }
}

const ModelCase kModels[] = {
    {"tiny-llama-f16.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-bf16.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-q8_0.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-q4_0.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-q4_1.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-q5_0.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-q5_1.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-q2_k.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-q3_k.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-q4_k.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-q4_k_m.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-q5_k.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-q6_k.gguf", "tiny-llama-f16.gguf"},
    {"tiny-llama-iq4_nl.gguf", "tiny-llama-f16.gguf"},
    {"tiny-qwen2-q4_k.gguf", "tiny-qwen2-f16.gguf"},
    {"tiny-qwen2-q8_0.gguf", "tiny-qwen2-f16.gguf"},
    {"tiny-qwen3-q4_k.gguf", "tiny-qwen3-f16.gguf"},
    {"tiny-qwen3-q8_0.gguf", "tiny-qwen3-f16.gguf"},
};

std::string case_name(const ::testing::TestParamInfo<ModelCase>& info) {
  std::string name = info.param.file;
  name = name.substr(0, name.find(".gguf"));
  for (char& ch : name) {
    if (ch == '-' || ch == '.') ch = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Kernels, TinyModel, ::testing::ValuesIn(kModels), case_name);

}  // namespace
}  // namespace hearth::kernels

// The Qwen2-VL, Qwen2.5-VL and Qwen3-VL projectors against llama.cpp's libmtmd (b10573):
// hearth-synth writes the seeded random-weight projector the reference encoded (data/README.md),
// Hearth preprocesses the same synthetic image as the reference's smart resize does and encodes it;
// every reference row must agree to cosine >= 0.9999 (Q8_0: 0.999), every token's norm and
// sum closely. The images: 40x24 (scaled up to the 8-token minimum), 250x150 (not square,
// rounded to 252x140: 9x5 merged tokens, six 112-pixel windows of which four are partial)
// and 57x99 (odd sides); Qwen3-VL as its tests say. Then the token grid, the texts around an image
// and refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <optional>
#include <sstream>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "media/image/image_preprocess.h"
#include "media/projector.h"
#include "support/test_paths.h"
#include "tests/unit/media/reference_rows.h"
#include "tools/synth/synth.h"

namespace hearth::media {
namespace {

using test_rows::cosine;
using test_rows::ReferenceRows;

constexpr int32_t kTextEmbd = 64;

ImageRgb8 test_image(int32_t nx, int32_t ny) {
  ImageRgb8 img;
  img.nx = nx;
  img.ny = ny;
  img.rgb.resize(size_t(nx) * size_t(ny) * 3);
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x)
      for (int c = 0; c < 3; ++c)
        img.rgb[(size_t(y) * size_t(nx) + size_t(x)) * 3 + size_t(c)] =
            static_cast<uint8_t>((x * 3 + y * 5 + c * 85 + ((x ^ y) & 15) * 4) % 256);
  return img;
}

// The sizes the reference files were made with (data/README.md): 2.5 has 4 blocks, the
// second and fourth attending over the whole image.
// Qwen3-VL: 3 blocks, patch 16, an 8 x 8 position table, deepstack after blocks 0 and 1, rows
// of 3 x 32 values (a main width of 32).
synth::SynthParams qwen_params(const std::string& type_name, TensorType type) {
  const bool v3 = type_name == "qwen3vl_merger";
  synth::SynthParams p;
  p.projector = type_name;
  p.text_n_embd = v3 ? kTextEmbd / 2 : kTextEmbd;
  p.n_embd = 64;
  p.n_layer = type_name == "qwen2.5vl_merger" ? 4 : v3 ? 3 : 2;
  p.n_head = 4;
  p.n_ff = 96;
  p.image_size = v3 ? 128 : 112;
  p.patch_size = v3 ? 16 : 14;
  p.n_wa_pattern = 2;
  if (v3) p.deepstack_layers = {0, 1};
  p.type = type;
  p.seed = 7;
  return p;
}

int32_t text_width(const std::string& type_name) {
  // qwen3vl: a text model of n_embd kTextEmbd / 2 with two deepstack layers takes rows of
  // 3 * (kTextEmbd / 2), as the reference's text model of that input width.
  return type_name == "qwen3vl_merger" ? 3 * (kTextEmbd / 2) : kTextEmbd;
}

class QwenVlTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("qwen-vl"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string write(const std::string& type_name, TensorType type) {
    const std::string path =
        dir_ + "/mmproj-" + type_name + "-" + std::string(tensor_type_name(type)) + ".gguf";
    const Status s = synth::synthesize(qwen_params(type_name, type), path);
    EXPECT_TRUE(s.is_ok()) << s.to_string();
    return path;
  }

  std::unique_ptr<Projector> load(const std::string& type_name, TensorType type) {
    auto proj = Projector::load(write(type_name, type), text_width(type_name));
    EXPECT_TRUE(proj.is_ok()) << proj.status().to_string();
    return proj.is_ok() ? std::move(*proj) : nullptr;
  }

  // The scheduler's preprocessing of an nx x ny test image for `proj`: one entry.
  static PixelTensor preprocess(const Projector& proj, int32_t nx, int32_t ny) {
    ProjectorHparams file;
    file.family = *projector_family_from_name(proj.projector_type());
    file.image_size = proj.hparams().image_size;
    file.patch_size = proj.hparams().patch_size;
    file.image_mean = proj.hparams().image_mean;
    file.image_std = proj.hparams().image_std;
    file.n_merge = proj.hparams().n_merge;
    auto params = preprocess_params_for(file);
    EXPECT_TRUE(params.is_ok()) << params.status().to_string();
    auto pre = preprocess_image(test_image(nx, ny), *params);
    EXPECT_TRUE(pre.is_ok()) << pre.status().to_string();
    if (!pre.is_ok() || pre->entries.size() != 1 || pre->has_overview()) return {};
    return std::move(pre->entries[0]);
  }

  void check(const std::string& type_name, TensorType type, int32_t nx, int32_t ny,
             const std::string& ref_name, double min_cosine = 0.9999) {
    auto proj = load(type_name, type);
    ASSERT_NE(proj, nullptr);
    const ReferenceRows ref =
        test_rows::read_reference_rows(std::string(HEARTH_MEDIA_TEST_DATA) + "/" + ref_name);
    ASSERT_EQ(proj->n_embd_out(), ref.n_embd);
    const PixelTensor px = preprocess(*proj, nx, ny);
    ASSERT_GT(px.nx, 0);
    ASSERT_EQ(proj->n_output_tokens(px.nx, px.ny), ref.n_tokens);
    std::vector<float> out(size_t(ref.n_tokens) * size_t(ref.n_embd));
    ThreadPool pool(2);
    const Status s = proj->encode(px.data.data(), px.nx, px.ny, pool, out.data());
    ASSERT_TRUE(s.is_ok()) << s.to_string();
    ASSERT_EQ(ref.rows.size(), size_t(ref.n_tokens));
    for (const auto& [t, row] : ref.rows) {
      ASSERT_GE(t, 0);
      ASSERT_LT(t, ref.n_tokens);
      ASSERT_EQ(row.size(), size_t(ref.n_embd));
      const float* ours = out.data() + size_t(t) * size_t(ref.n_embd);
      EXPECT_GE(cosine(ours, row.data(), row.size()), min_cosine) << "token " << t;
      double sum = 0, sq = 0;
      for (int32_t i = 0; i < ref.n_embd; ++i) {
        sum += ours[i];
        sq += double(ours[i]) * ours[i];
      }
      const double norm_ref = ref.norms[size_t(t)];
      const double tol = min_cosine >= 0.9999 ? 1.0 : 4.0;
      EXPECT_NEAR(std::sqrt(sq), norm_ref, tol * 0.005 * norm_ref) << "token " << t;
      EXPECT_NEAR(sum, ref.sums[size_t(t)], tol * 0.02 * norm_ref) << "token " << t;
    }
  }

  std::string dir_;
};

TEST_F(QwenVlTest, Qwen2VlF32MatchesReference) {
  check("qwen2vl_merger", TensorType::kF32, 40, 24, "ref-qwen2vl-f32-40x24.txt");
  check("qwen2vl_merger", TensorType::kF32, 250, 150, "ref-qwen2vl-f32-250x150.txt");
  check("qwen2vl_merger", TensorType::kF32, 57, 99, "ref-qwen2vl-f32-57x99.txt");
}
TEST_F(QwenVlTest, Qwen2VlF16MatchesReference) {
  check("qwen2vl_merger", TensorType::kF16, 250, 150, "ref-qwen2vl-f16-250x150.txt");
}
TEST_F(QwenVlTest, Qwen2VlQ8_0MatchesReference) {
  check("qwen2vl_merger", TensorType::kQ8_0, 250, 150, "ref-qwen2vl-q8_0-250x150.txt", 0.999);
}
TEST_F(QwenVlTest, Qwen25VlF32MatchesReference) {
  check("qwen2.5vl_merger", TensorType::kF32, 40, 24, "ref-qwen25vl-f32-40x24.txt");
  check("qwen2.5vl_merger", TensorType::kF32, 250, 150, "ref-qwen25vl-f32-250x150.txt");
  check("qwen2.5vl_merger", TensorType::kF32, 57, 99, "ref-qwen25vl-f32-57x99.txt");
}
TEST_F(QwenVlTest, Qwen25VlF16MatchesReference) {
  check("qwen2.5vl_merger", TensorType::kF16, 250, 150, "ref-qwen25vl-f16-250x150.txt");
}
TEST_F(QwenVlTest, Qwen25VlQ8_0MatchesReference) {
  check("qwen2.5vl_merger", TensorType::kQ8_0, 250, 150, "ref-qwen25vl-q8_0-250x150.txt", 0.999);
}

// 40x24 (scaled up: 8 tokens), 250x150 (256x160: the 8 x 8 positions resized to 16 x 10)
// and 128x128 (the table's own 8 x 8 grid); rows are [main | deepstack 0 | deepstack 1].
TEST_F(QwenVlTest, Qwen3VlF32MatchesReference) {
  check("qwen3vl_merger", TensorType::kF32, 40, 24, "ref-qwen3vl-f32-40x24.txt");
  check("qwen3vl_merger", TensorType::kF32, 250, 150, "ref-qwen3vl-f32-250x150.txt");
  check("qwen3vl_merger", TensorType::kF32, 128, 128, "ref-qwen3vl-f32-128x128.txt");
}
TEST_F(QwenVlTest, Qwen3VlF16MatchesReference) {
  check("qwen3vl_merger", TensorType::kF16, 250, 150, "ref-qwen3vl-f16-250x150.txt");
}
TEST_F(QwenVlTest, Qwen3VlQ8_0MatchesReference) {
  check("qwen3vl_merger", TensorType::kQ8_0, 250, 150, "ref-qwen3vl-q8_0-250x150.txt", 0.999);
}

// Deepstack rows are wider than the text model's n_embd: the load check is on the whole row,
// the text model's input width (a text model without the deepstack layers is refused).
TEST_F(QwenVlTest, Qwen3VlRowWidths) {
  auto proj = load("qwen3vl_merger", TensorType::kF32);
  ASSERT_NE(proj, nullptr);
  EXPECT_EQ(proj->n_embd_main(), kTextEmbd / 2);
  EXPECT_EQ(proj->n_embd_out(), 3 * (kTextEmbd / 2));
  EXPECT_EQ(proj->family(), "qwen3vl");
  EXPECT_EQ(proj->output_grid(256, 160).nx, 8);
  EXPECT_EQ(proj->output_grid(256, 160).ny, 5);
  auto wrong = Projector::load(write("qwen3vl_merger", TensorType::kF32), kTextEmbd / 2);
  ASSERT_FALSE(wrong.is_ok());
  EXPECT_NE(wrong.status().message().find("mismatch"), std::string::npos)
      << wrong.status().to_string();
}

// The merged token grid the text model's M-RoPE reads: (width, height) / (2 * patch).
TEST_F(QwenVlTest, OutputGridAndTexts) {
  auto q2 = load("qwen2vl_merger", TensorType::kF32);
  auto q25 = load("qwen2.5vl_merger", TensorType::kF32);
  ASSERT_NE(q2, nullptr);
  ASSERT_NE(q25, nullptr);
  const Projector::TokenGrid g = q2->output_grid(252, 140);
  EXPECT_EQ(g.nx, 9);
  EXPECT_EQ(g.ny, 5);
  EXPECT_EQ(q2->n_output_tokens(252, 140), 45);
  EXPECT_EQ(q25->output_grid(56, 112).nx, 2);
  EXPECT_EQ(q25->output_grid(56, 112).ny, 4);
  for (const Projector* p : {q2.get(), q25.get()}) {
    EXPECT_EQ(p->image_begin(), "<|vision_start|>");
    EXPECT_EQ(p->image_end(), "<|vision_end|>");
    EXPECT_FALSE(p->joins_tiles());
    EXPECT_FALSE(p->non_causal_decode());
  }
  EXPECT_EQ(q2->family(), "qwen2vl");
  EXPECT_EQ(q25->family(), "qwen25vl");
}

TEST_F(QwenVlTest, RefusesSidesNotMultiplesOfTwoPatches) {
  auto proj = load("qwen2.5vl_merger", TensorType::kF32);
  ASSERT_NE(proj, nullptr);
  std::vector<float> px(size_t(42) * 28 * 3, 0.0f), out(size_t(64) * 64);
  ThreadPool pool(1);
  const Status s = proj->encode(px.data(), 42, 28, pool, out.data());
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(s.message().find("multiples of 28"), std::string::npos) << s.to_string();
}

// Copies `src` to `dst` with key `key` dropped (or, when `value` is given, set to it).
void rewrite(const std::string& src, const std::string& dst, const std::string& key,
             std::optional<uint32_t> value) {
  auto in = gguf::File::open(src);
  ASSERT_TRUE(in.is_ok());
  gguf::Writer w;
  for (const auto& kv : in->metadata())
    if (kv.key != key) w.set_value(kv.key, kv.value);
  if (value) w.set_u32(key, *value);
  for (const auto& t : in->tensors()) {
    std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
    ASSERT_TRUE(
        w.add_tensor(t.name, t.type, ne, std::vector<uint8_t>(t.data, t.data + t.n_bytes)).is_ok());
  }
  ASSERT_TRUE(w.write(dst).is_ok());
}

// The reference requires clip.vision.n_wa_pattern of a Qwen2.5-VL file; its graph merges
// 2 x 2 whatever spatial_merge_size says, so Hearth refuses another merge size.
TEST_F(QwenVlTest, RefusesMissingWindowPatternAndOtherMerges) {
  const std::string path = write("qwen2.5vl_merger", TensorType::kF32);
  const std::string no_pattern = dir_ + "/no-pattern.gguf", merge3 = dir_ + "/merge3.gguf";
  rewrite(path, no_pattern, "clip.vision.n_wa_pattern", std::nullopt);
  rewrite(path, merge3, "clip.vision.spatial_merge_size", 3);
  auto a = Projector::load(no_pattern, kTextEmbd);
  ASSERT_FALSE(a.is_ok());
  EXPECT_NE(a.status().message().find("n_wa_pattern"), std::string::npos) << a.status().to_string();
  auto b = Projector::load(merge3, kTextEmbd);
  ASSERT_FALSE(b.is_ok());
  EXPECT_NE(b.status().message().find("spatial_merge_size"), std::string::npos)
      << b.status().to_string();
  auto c = Projector::load(path, kTextEmbd + 1);
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("mismatch"), std::string::npos) << c.status().to_string();
}

}  // namespace
}  // namespace hearth::media

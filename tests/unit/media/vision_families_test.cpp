// The pixtral, internvl, idefics3 and lfm2 projectors against llama.cpp's libmtmd (b10573):
// hearth-synth writes the seeded random-weight projector the reference encoded
// (data/README.md), Hearth preprocesses the same synthetic image as the reference's
// preprocessor does (pixtral: one dynamic-size image; internvl: six 32x32 tiles, then the
// overview; idefics3 and LLaVA-1.6: 32x32 tiles, then the overview; lfm2: one smart-resized
// image, or 512-px tiles then the thumbnail) and encodes every entry;
// every reference row (all image chunks, concatenated in the prompt's order) must agree to
// cosine >= 0.9999, every token's sum and norm closely. Then the token counts and refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
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

uint8_t pixel(int x, int y, int c) {
  return static_cast<uint8_t>((x * 3 + y * 5 + c * 85 + ((x ^ y) & 15) * 4) % 256);
}

ImageRgb8 test_image(int32_t nx, int32_t ny) {
  ImageRgb8 img;
  img.nx = nx;
  img.ny = ny;
  img.rgb.resize(size_t(nx) * size_t(ny) * 3);
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x)
      for (int c = 0; c < 3; ++c)
        img.rgb[(size_t(y) * size_t(nx) + size_t(x)) * 3 + size_t(c)] = pixel(x, y, c);
  return img;
}

// The sizes the reference files were made with (data/README.md). image_size > 0 replaces the
// family's default size (for mlp: a plain LLaVA file of that size, without LLaVA-1.6's tiles).
synth::SynthParams family_params(const std::string& family, TensorType type, int32_t n_merge = 2,
                                 int32_t image_size = 0) {
  synth::SynthParams p;
  p.projector = family;
  p.text_n_embd = kTextEmbd;
  p.n_embd = 64;
  p.n_layer = 2;
  p.n_head = 4;
  p.n_ff = 128;
  p.image_size = image_size > 0 ? image_size : family == "pixtral" ? 64 : 32;
  p.patch_size = 8;
  if (family == "lfm2") {
    // LFM2-VL's shape: a 16 x 16 position table of 16-px patches, 512-px tiles.
    p.image_size = 256;
    p.patch_size = 16;
  }
  p.n_merge = n_merge;
  p.type = type;
  p.seed = 7;
  if (family == "idefics3") p.preproc_image_size = 64;
  if (family == "mlp" && image_size == 0) p.grid_pinpoints = {32, 64, 64, 32, 64, 64, 96, 32};
  return p;
}

class VisionFamiliesTest : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("vision-families"); }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::unique_ptr<Projector> load(const std::string& family, TensorType type, int32_t n_merge = 2,
                                  int32_t image_size = 0) {
    const std::string path = dir_ + "/mmproj-" + family + ".gguf";
    const Status s = synth::synthesize(family_params(family, type, n_merge, image_size), path);
    EXPECT_TRUE(s.is_ok()) << s.to_string();
    auto proj = Projector::load(path, kTextEmbd);
    EXPECT_TRUE(proj.is_ok()) << proj.status().to_string();
    return proj.is_ok() ? std::move(*proj) : nullptr;
  }

  // The scheduler's preprocessing of an nx x ny test image for `proj`.
  static PreprocessedImage preprocess(const Projector& proj, int32_t nx, int32_t ny) {
    ProjectorHparams file;
    file.family = *projector_family_from_name(proj.projector_type());
    file.image_size = proj.hparams().image_size;
    file.patch_size = proj.hparams().patch_size;
    file.image_mean = proj.hparams().image_mean;
    file.image_std = proj.hparams().image_std;
    file.n_merge = proj.hparams().n_merge;
    file.preproc_image_size = proj.hparams().preproc_image_size;
    file.grid_pinpoints = proj.hparams().grid_pinpoints;
    auto params = preprocess_params_for(file);
    EXPECT_TRUE(params.is_ok()) << params.status().to_string();
    auto pre = preprocess_image(test_image(nx, ny), *params);
    EXPECT_TRUE(pre.is_ok()) << pre.status().to_string();
    return pre.is_ok() ? std::move(*pre) : PreprocessedImage{};
  }

  // image_size > 0: the projector's (else family_params' default). every_row: the reference
  // file holds every token's row (else some, and every token's sum and norm).
  void check(const std::string& family, TensorType type, int32_t nx, int32_t ny,
             const std::string& ref_name, size_t expected_entries, int32_t n_merge = 2,
             int32_t image_size = 0, bool every_row = true) {
    auto proj = load(family, type, n_merge, image_size);
    ASSERT_NE(proj, nullptr);
    const ReferenceRows ref =
        test_rows::read_reference_rows(std::string(HEARTH_MEDIA_TEST_DATA) + "/" + ref_name);
    ASSERT_EQ(proj->n_embd_out(), ref.n_embd);
    PreprocessedImage pre = preprocess(*proj, nx, ny);
    std::vector<const PixelTensor*> entries;
    for (const PixelTensor& e : pre.entries) entries.push_back(&e);
    if (pre.has_overview()) entries.push_back(&pre.overview);
    ASSERT_EQ(entries.size(), expected_entries);
    int32_t n_tokens = 0;
    for (const PixelTensor* e : entries) n_tokens += proj->n_output_tokens(e->nx, e->ny);
    ASSERT_EQ(n_tokens, ref.n_tokens);
    std::vector<float> out(size_t(n_tokens) * size_t(ref.n_embd));
    ThreadPool pool(2);
    size_t at = 0;
    for (const PixelTensor* e : entries) {
      const Status s = proj->encode(e->data.data(), e->nx, e->ny, pool, out.data() + at);
      ASSERT_TRUE(s.is_ok()) << s.to_string();
      at += size_t(proj->n_output_tokens(e->nx, e->ny)) * size_t(ref.n_embd);
    }
    if (every_row) {
      ASSERT_EQ(ref.rows.size(), size_t(ref.n_tokens));
    }
    ASSERT_FALSE(ref.rows.empty());
    for (const auto& [t, row] : ref.rows) {
      ASSERT_EQ(row.size(), size_t(ref.n_embd));
      const float* ours = out.data() + size_t(t) * size_t(ref.n_embd);
      EXPECT_GE(cosine(ours, row.data(), row.size()), 0.9999) << "token " << t;
    }
    for (int32_t t = 0; t < ref.n_tokens; ++t) {
      double sum = 0, sq = 0;
      for (int32_t i = 0; i < ref.n_embd; ++i) {
        const double v = out[size_t(t) * size_t(ref.n_embd) + size_t(i)];
        sum += v;
        sq += v * v;
      }
      const double norm_ref = ref.norms[size_t(t)];
      EXPECT_NEAR(std::sqrt(sq), norm_ref, 0.005 * norm_ref) << "token " << t;
      EXPECT_NEAR(sum, ref.sums[size_t(t)], 0.02 * norm_ref) << "token " << t;
    }
  }

  // Copies `src` to `dst` without tensor `drop_tensor` and key `drop_key`.
  static void rewrite(const std::string& src, const std::string& dst,
                      const std::string& drop_tensor, const std::string& drop_key) {
    auto in = gguf::File::open(src);
    ASSERT_TRUE(in.is_ok());
    gguf::Writer w;
    for (const auto& kv : in->metadata())
      if (kv.key != drop_key) w.set_value(kv.key, kv.value);
    for (const auto& t : in->tensors()) {
      if (t.name == drop_tensor) continue;
      std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
      ASSERT_TRUE(w.add_tensor(t.name, t.type, ne, std::vector<uint8_t>(t.data, t.data + t.n_bytes))
                      .is_ok());
    }
    ASSERT_TRUE(w.write(dst).is_ok());
  }

  std::string dir_;
};

// A 280x280 LLaVA-style image: 1225 patches, so the ViT's projections and FFN run in three
// row blocks (the last partial) and the last key tile is partial; every 16th row dumped.
TEST_F(VisionFamiliesTest, MlpOverSeveralRowBlocksMatchesReference) {
  check("mlp", TensorType::kF32, 280, 280, "ref-mlp-blocks-f32.txt", 1, 2, 280, false);
}

// A 40x24 image: the reference scales it to 64x48 (at least 8 tokens), 4x3 merged tokens
// with an [IMG_BREAK] after the first two rows: 14 rows.
TEST_F(VisionFamiliesTest, PixtralF32MatchesReference) {
  check("pixtral", TensorType::kF32, 40, 24, "ref-pixtral-f32.txt", 1);
}
TEST_F(VisionFamiliesTest, PixtralF16MatchesReference) {
  check("pixtral", TensorType::kF16, 40, 24, "ref-pixtral-f16.txt", 1);
}
// The original Pixtral: no patch merger (spatial merge 1), the 40x24 image kept as it is:
// 5x3 patches and 2 [IMG_BREAK] rows.
TEST_F(VisionFamiliesTest, PixtralWithoutMergerMatchesReference) {
  check("pixtral", TensorType::kF32, 40, 24, "ref-pixtral-nomerge-f32.txt", 1, 1);
}
// A 70x40 image: six 32x32 tiles (3x2) and the overview, 4 tokens each.
TEST_F(VisionFamiliesTest, InternVlF32MatchesReference) {
  check("internvl", TensorType::kF32, 70, 40, "ref-internvl-f32.txt", 7);
}
TEST_F(VisionFamiliesTest, InternVlF16MatchesReference) {
  check("internvl", TensorType::kF16, 70, 40, "ref-internvl-f16.txt", 7);
}

// idefics3 (preproc_image_size 64, 32-px tiles): a 70x40 image is resized to 64x37, rounded
// up to 64x64: 2x2 tiles, then the overview, 4 tokens each.
TEST_F(VisionFamiliesTest, Idefics3F32MatchesReference) {
  check("idefics3", TensorType::kF32, 70, 40, "ref-idefics3-f32.txt", 5);
}
// A 100x20 image: 64x13, rounded up to 64x32: 2x1 tiles and the overview.
TEST_F(VisionFamiliesTest, Idefics3F16MatchesReference) {
  check("idefics3", TensorType::kF16, 100, 20, "ref-idefics3-f16.txt", 3);
}

// LLaVA-1.6 (mlp with grid pinpoints 32x64, 64x32, 64x64, 96x32 over 32-px tiles, 16 tokens
// each): a 70x40 image is cut into 2x2 tiles, a 100x20 one into 3x1; the overview follows the
// tiles, with no text between them (one joined chunk in Hearth).
TEST_F(VisionFamiliesTest, Llava16F32MatchesReference) {
  check("mlp", TensorType::kF32, 70, 40, "ref-llava16-f32.txt", 5);
  auto proj = load("mlp", TensorType::kF32);
  ASSERT_NE(proj, nullptr);
  EXPECT_TRUE(proj->joins_tiles());
  EXPECT_EQ(proj->image_begin(), "");
  EXPECT_EQ(proj->image_end(), "");
}
TEST_F(VisionFamiliesTest, Llava16F16MatchesReference) {
  check("mlp", TensorType::kF16, 100, 20, "ref-llava16-f16.txt", 4);
}

// mtmd's idefics3 slice template, as the reference tokenized the 2x2 image above (its text
// chunks: "<fake_token_around_image><row_1_col_1>" before the first tile, ..., the "\n" token
// between rows, "\n\n" "<fake_token_around_image>" "<global-img>" before the overview and
// "<fake_token_around_image>" after it).
TEST_F(VisionFamiliesTest, Idefics3LaysOutTilesWithTextBetween) {
  auto proj = load("idefics3", TensorType::kF32);
  ASSERT_NE(proj, nullptr);
  EXPECT_EQ(proj->image_begin(), "");
  EXPECT_EQ(proj->image_end(), "");
  EXPECT_FALSE(proj->joins_tiles());
  EXPECT_FALSE(proj->non_causal_decode());
  EXPECT_EQ(proj->n_output_tokens(32, 32), 4);
  using Kind = Projector::LayoutPart::Kind;
  std::string got;
  for (const Projector::LayoutPart& part : proj->tile_layout(2, 2)) {
    if (part.kind == Kind::kText) got += "text(" + part.text + ") ";
    if (part.kind == Kind::kToken) got += "token(" + part.text + ") ";
    if (part.kind == Kind::kTile) got += "tile" + std::to_string(part.tile) + " ";
    if (part.kind == Kind::kOverview) got += "overview ";
  }
  EXPECT_EQ(got,
            "text(<fake_token_around_image><row_1_col_1>) tile0 "
            "text(<fake_token_around_image><row_1_col_2>) tile1 token(\n) "
            "text(<fake_token_around_image><row_2_col_1>) tile2 "
            "text(<fake_token_around_image><row_2_col_2>) tile3 "
            "token(\n\n) token(<fake_token_around_image>) token(<global-img>) overview "
            "token(<fake_token_around_image>) ");
}

// The reference's pixel shuffle asserts on a scale factor of 1 (its default when the key is
// absent): Hearth refuses such files, naming the key.
TEST_F(VisionFamiliesTest, Idefics3RefusesFilesWithoutAScaleFactor) {
  const std::string path = dir_ + "/idefics3.gguf", no_scale = dir_ + "/no-scale.gguf";
  ASSERT_TRUE(synth::synthesize(family_params("idefics3", TensorType::kF32), path).is_ok());
  rewrite(path, no_scale, "", "clip.vision.projector.scale_factor");
  auto a = Projector::load(no_scale, kTextEmbd);
  ASSERT_FALSE(a.is_ok());
  EXPECT_NE(a.status().message().find("scale_factor"), std::string::npos) << a.status().to_string();
  const std::string no_fc = dir_ + "/no-fc.gguf";
  rewrite(path, no_fc, "mm.model.fc.weight", "");
  auto b = Projector::load(no_fc, kTextEmbd);
  ASSERT_FALSE(b.is_ok());
  EXPECT_NE(b.status().message().find("mm.model.fc.weight"), std::string::npos)
      << b.status().to_string();
}

// lfm2 (64..256 tokens of 32x32 pixels; the 16x16 position table resized to each grid): a
// 40x24 image becomes 352x224 (22x14 patches: positions stretched along x, shrunk with
// antialiasing along y), 77 tokens.
TEST_F(VisionFamiliesTest, Lfm2SmallImageMatchesReference) {
  check("lfm2", TensorType::kF32, 40, 24, "ref-lfm2-f32-40x24.txt", 1);
}
// 700x250 becomes 704x256 (44x16 patches, the y positions as they are): 176 tokens, every
// 16th row dumped.
TEST_F(VisionFamiliesTest, Lfm2WideImageMatchesReference) {
  check("lfm2", TensorType::kF32, 700, 250, "ref-lfm2-f32-700x250.txt", 1, 2, 0, false);
}
// 900x600 is over twice the 256-token limit: 3x2 tiles of 512x512 (256 tokens each), then
// the 608x416 thumbnail (247 tokens); every 16th row dumped.
TEST_F(VisionFamiliesTest, Lfm2TiledImageMatchesReference) {
  check("lfm2", TensorType::kF32, 900, 600, "ref-lfm2-f32-900x600.txt", 7, 2, 0, false);
}
// F16 weights, 300x200 resized to 320x224: 70 tokens.
TEST_F(VisionFamiliesTest, Lfm2F16MatchesReference) {
  check("lfm2", TensorType::kF16, 300, 200, "ref-lfm2-f16-300x200.txt", 1);
}

// The sizes the reference's lfm2 preprocessor gave (its log), and mtmd's lfm2 slice template
// as it tokenized the 900x600 image: "<|image_start|>", "<|img_row_R_col_C|>" before each
// tile, the "<|img_thumbnail|>" token before the thumbnail, "<|image_end|>".
TEST_F(VisionFamiliesTest, Lfm2ResizesTilesAndLaysOutTiles) {
  auto proj = load("lfm2", TensorType::kF32);
  ASSERT_NE(proj, nullptr);
  const PreprocessedImage small = preprocess(*proj, 40, 24);
  ASSERT_EQ(small.entries.size(), 1u);
  EXPECT_FALSE(small.has_overview());
  EXPECT_EQ(small.entries[0].nx, 352);
  EXPECT_EQ(small.entries[0].ny, 224);
  const PreprocessedImage big = preprocess(*proj, 900, 600);
  EXPECT_EQ(big.grid_x, 3);
  EXPECT_EQ(big.grid_y, 2);
  ASSERT_EQ(big.entries.size(), 6u);
  EXPECT_EQ(big.entries[5].nx, 512);
  EXPECT_EQ(big.overview.nx, 608);
  EXPECT_EQ(big.overview.ny, 416);
  EXPECT_EQ(proj->n_output_tokens(512, 512), 256);
  EXPECT_EQ(proj->n_output_tokens(608, 416), 247);
  // Sides that are not whole 32-px squares count the padded squares, as the reference does.
  EXPECT_EQ(proj->n_output_tokens(48, 16), 2);
  EXPECT_EQ(proj->image_begin(), "<|image_start|>");
  EXPECT_EQ(proj->image_end(), "<|image_end|>");
  EXPECT_FALSE(proj->joins_tiles());
  EXPECT_FALSE(proj->non_causal_decode());
  using Kind = Projector::LayoutPart::Kind;
  std::string got;
  for (const Projector::LayoutPart& part : proj->tile_layout(3, 2)) {
    if (part.kind == Kind::kText) got += "text(" + part.text + ") ";
    if (part.kind == Kind::kToken) got += "token(" + part.text + ") ";
    if (part.kind == Kind::kTile) got += "tile" + std::to_string(part.tile) + " ";
    if (part.kind == Kind::kOverview) got += "overview ";
  }
  EXPECT_EQ(got,
            "text(<|img_row_1_col_1|>) tile0 text(<|img_row_1_col_2|>) tile1 "
            "text(<|img_row_1_col_3|>) tile2 text(<|img_row_2_col_1|>) tile3 "
            "text(<|img_row_2_col_2|>) tile4 text(<|img_row_2_col_3|>) tile5 "
            "token(<|img_thumbnail|>) overview ");
}

// An image whose grid is not whole squares is padded with zero patches (the reference's
// ggml_pad): 48x16 gives 3x1 patches, 2 tokens, finite; sides that are not multiples of the
// patch are refused.
TEST_F(VisionFamiliesTest, Lfm2PadsPartialSquaresAndRefusesBadSizes) {
  auto proj = load("lfm2", TensorType::kF32);
  ASSERT_NE(proj, nullptr);
  ThreadPool pool(1);
  std::vector<float> px(size_t(48) * 16 * 3, 0.25f), out(size_t(2) * kTextEmbd, NAN);
  ASSERT_TRUE(proj->encode(px.data(), 48, 16, pool, out.data()).is_ok());
  for (float v : out) EXPECT_TRUE(std::isfinite(v));
  const Status bad = proj->encode(px.data(), 40, 24, pool, out.data());
  EXPECT_EQ(bad.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.message().find("multiples of 16"), std::string::npos) << bad.to_string();
}

// The reference requires the scale factor (its unshuffle asserts on 1) and mm.1/mm.2; the
// input norm is optional (the reference norms only when the file has one).
TEST_F(VisionFamiliesTest, Lfm2RefusesFilesMissingWhatTheReferenceRequires) {
  const std::string path = dir_ + "/lfm2.gguf";
  ASSERT_TRUE(synth::synthesize(family_params("lfm2", TensorType::kF32), path).is_ok());
  const std::string no_scale = dir_ + "/no-scale.gguf", no_mm1 = dir_ + "/no-mm1.gguf";
  rewrite(path, no_scale, "", "clip.vision.projector.scale_factor");
  rewrite(path, no_mm1, "mm.1.weight", "");
  auto a = Projector::load(no_scale, kTextEmbd);
  ASSERT_FALSE(a.is_ok());
  EXPECT_NE(a.status().message().find("scale_factor"), std::string::npos) << a.status().to_string();
  auto b = Projector::load(no_mm1, kTextEmbd);
  ASSERT_FALSE(b.is_ok());
  EXPECT_NE(b.status().message().find("mm.1.weight"), std::string::npos) << b.status().to_string();
  const std::string no_norm = dir_ + "/no-norm.gguf";
  rewrite(path, no_norm, "mm.input_norm.weight", "");
  EXPECT_TRUE(Projector::load(no_norm, kTextEmbd).is_ok());
}

TEST_F(VisionFamiliesTest, TextAroundImagesAndTileJoining) {
  auto pixtral = load("pixtral", TensorType::kF32);
  auto internvl = load("internvl", TensorType::kF32);
  ASSERT_NE(pixtral, nullptr);
  ASSERT_NE(internvl, nullptr);
  EXPECT_EQ(pixtral->image_begin(), "");
  EXPECT_EQ(pixtral->image_end(), "[IMG_END]");
  EXPECT_FALSE(pixtral->joins_tiles());
  EXPECT_EQ(internvl->image_begin(), "<img>");
  EXPECT_EQ(internvl->image_end(), "</img>");
  EXPECT_TRUE(internvl->joins_tiles());
  // One row of merged tokens has no [IMG_BREAK]; each further row adds one.
  EXPECT_EQ(pixtral->n_output_tokens(64, 16), 4);
  EXPECT_EQ(pixtral->n_output_tokens(16, 64), 4 + 3);
  EXPECT_EQ(internvl->n_output_tokens(32, 32), 4);
}

TEST_F(VisionFamiliesTest, RefusesBadImageSizes) {
  auto pixtral = load("pixtral", TensorType::kF32);
  auto internvl = load("internvl", TensorType::kF32);
  ASSERT_NE(pixtral, nullptr);
  ASSERT_NE(internvl, nullptr);
  std::vector<float> px(size_t(40) * 24 * 3, 0.0f), out(size_t(64) * 64);
  ThreadPool pool(1);
  const Status p = pixtral->encode(px.data(), 40, 24, pool, out.data());
  EXPECT_EQ(p.code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(p.message().find("multiples of 16"), std::string::npos) << p.to_string();
  const Status i = internvl->encode(px.data(), 40, 24, pool, out.data());
  EXPECT_EQ(i.code(), ErrorCode::kInvalidArgument) << i.to_string();
}

// The reference requires v.token_embd.img_break of a pixtral file and the scale factor of an
// internvl one; Hearth refuses files without them, naming what is missing.
TEST_F(VisionFamiliesTest, RefusesFilesMissingWhatTheReferenceRequires) {
  const std::string pixtral = dir_ + "/pixtral.gguf", internvl = dir_ + "/internvl.gguf";
  ASSERT_TRUE(synth::synthesize(family_params("pixtral", TensorType::kF32), pixtral).is_ok());
  ASSERT_TRUE(synth::synthesize(family_params("internvl", TensorType::kF32), internvl).is_ok());
  const std::string no_break = dir_ + "/no-break.gguf", no_scale = dir_ + "/no-scale.gguf";
  rewrite(pixtral, no_break, "v.token_embd.img_break", "");
  rewrite(internvl, no_scale, "", "clip.vision.projector.scale_factor");
  auto a = Projector::load(no_break, kTextEmbd);
  ASSERT_FALSE(a.is_ok());
  EXPECT_NE(a.status().message().find("v.token_embd.img_break"), std::string::npos)
      << a.status().to_string();
  auto b = Projector::load(no_scale, kTextEmbd);
  ASSERT_FALSE(b.is_ok());
  EXPECT_NE(b.status().message().find("scale_factor"), std::string::npos) << b.status().to_string();
}

}  // namespace
}  // namespace hearth::media

// preprocess_image against the reference's f32 tensors: for each projector configuration in
// reference_preprocess.json and each test image, the same entries, sizes, grid and overview,
// and the same SHA-256 over the float bytes (bit-identical).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "media/image/image_decode.h"
#include "media/image/image_preprocess.h"
#include "unit/media_image/reference_data.h"

namespace hearth::media {
namespace {

using testing::media_path;
using testing::read_bytes;
using testing::reference;
using testing::sha256_hex;

const nlohmann::json& config_named(const std::string& name) {
  for (const auto& c : reference().at("configs")) {
    if (c.at("name") == name) return c;
  }
  throw std::runtime_error("no configuration " + name);
}

// The projector file's values as the reference dumper gave them to clip's loader logic.
PreprocessParams params_from(const nlohmann::json& c) {
  Result<ProjectorFamily> family = projector_family_from_name(c.at("projector").get<std::string>());
  EXPECT_TRUE(family.is_ok()) << family.status().message();
  ProjectorHparams file;
  file.family = *family;
  file.image_size = c.at("image_size");
  file.patch_size = c.at("patch_size");
  for (int i = 0; i < 3; ++i) {
    file.image_mean[i] = c.at("image_mean")[i];
    file.image_std[i] = c.at("image_std")[i];
  }
  file.n_merge = c.at("n_merge");
  file.preproc_image_size = c.at("longest_edge");
  file.grid_pinpoints = c.at("pinpoints").get<std::vector<int32_t>>();
  file.image_min_tokens = c.at("image_min_tokens");
  file.image_max_tokens = c.at("image_max_tokens");
  Result<PreprocessParams> params = preprocess_params_for(file);
  EXPECT_TRUE(params.is_ok()) << params.status().message();
  // Configurations that exercise the other resize algorithms and padding styles set them
  // over what the loader chose, as the dumper did.
  if (c.contains("resize_algo")) {
    const std::string algo = c.at("resize_algo");
    params->resize_algo = algo == "bicubic_pillow" ? ResizeAlgo::kBicubicPillow
                          : algo == "lanczos"      ? ResizeAlgo::kLanczos
                          : algo == "bicubic"      ? ResizeAlgo::kBicubic
                                                   : ResizeAlgo::kBilinear;
  }
  if (c.contains("resize_pad")) {
    const std::string pad = c.at("resize_pad");
    params->resize_pad = pad == "nearest" ? PadStyle::kNearest
                         : pad == "ceil"  ? PadStyle::kCeil
                                          : PadStyle::kNone;
    params->pad_color = c.at("pad_color").get<std::array<uint8_t, 3>>();
  }
  return *params;
}

void expect_tensor(const PixelTensor& t, const nlohmann::json& ref, const std::string& what) {
  SCOPED_TRACE(what);
  EXPECT_EQ(t.nx, ref.at("nx").get<int>());
  EXPECT_EQ(t.ny, ref.at("ny").get<int>());
  ASSERT_EQ(t.data.size(), static_cast<size_t>(t.nx) * t.ny * 3);
  for (const auto& sample : ref.at("samples")) {
    const size_t index = sample[0];
    ASSERT_LT(index, t.data.size());
    EXPECT_EQ(t.data[index], sample[1].get<float>()) << "at " << index;
  }
  EXPECT_EQ(sha256_hex(t.data.data(), t.data.size() * sizeof(float)),
            ref.at("sha256").get<std::string>());
}

class MediaImagePreprocess : public ::testing::TestWithParam<const char*> {};

TEST_P(MediaImagePreprocess, MatchesReference) {
  const std::string config = GetParam();
  const PreprocessParams params = params_from(config_named(config));
  int cases = 0;
  for (const auto& image_ref : reference().at("images")) {
    const std::string file = image_ref.at("file");
    Result<ImageRgb8> image = decode_image(read_bytes(media_path(file)));
    ASSERT_TRUE(image.is_ok()) << file << ": " << image.status().message();
    for (const auto& c : image_ref.at("cases")) {
      if (c.at("config") != config) continue;
      SCOPED_TRACE(file);
      Result<PreprocessedImage> out = preprocess_image(*image, params);
      ASSERT_TRUE(out.is_ok()) << out.status().message();
      EXPECT_EQ(out->grid_x, c.at("grid_x").get<int>());
      EXPECT_EQ(out->grid_y, c.at("grid_y").get<int>());
      ASSERT_EQ(out->has_overview(), !c.at("overview").is_null());
      if (out->has_overview()) expect_tensor(out->overview, c.at("overview"), "overview");
      const auto& entries = c.at("entries");
      ASSERT_EQ(out->entries.size(), entries.size());
      for (size_t i = 0; i < entries.size(); ++i) {
        expect_tensor(out->entries[i], entries[i], "entry " + std::to_string(i));
      }
      ++cases;
    }
  }
  EXPECT_GE(cases, 15);
}

INSTANTIATE_TEST_SUITE_P(Families, MediaImagePreprocess,
                         ::testing::Values("gemma3", "llava15", "llava16", "qwen2vl",
                                           "qwen3vl_min1024", "qwen25vl_max64", "pixtral",
                                           "idefics3", "internvl", "lfm2", "gemma4v",
                                           "gemma4uv_max100", "fixed_pillow_bicubic_nearest",
                                           "fixed_lanczos_stretch", "dyn_pillow_bicubic"),
                         [](const ::testing::TestParamInfo<const char*>& param_info) {
                           return std::string(param_info.param);
                         });

// The projector types the reference's loader knows map to their families; others are refused.
TEST(MediaImageParams, ProjectorNames) {
  EXPECT_EQ(*projector_family_from_name("qwen2.5o"), ProjectorFamily::kQwenVl);
  EXPECT_EQ(*projector_family_from_name("ldpv2"), ProjectorFamily::kLlava);
  EXPECT_EQ(*projector_family_from_name("gemma4uv"), ProjectorFamily::kGemma4uv);
  Result<ProjectorFamily> unknown = projector_family_from_name("mlp_norm");  // inferred, not named
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().code(), ErrorCode::kUnsupported);
}

// --image-min-tokens / --image-max-tokens become pixel limits through the merged patch area,
// as clip_hparams::set_limit_image_tokens does; out-of-range values are refused, not wrapped.
TEST(MediaImageParams, TokenLimits) {
  ProjectorHparams file;
  file.family = ProjectorFamily::kQwenVl;
  file.image_size = 560;
  file.patch_size = 14;
  Result<PreprocessParams> p = preprocess_params_for(file);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->n_merge, 2);
  EXPECT_EQ(p->image_min_pixels, 8 * 28 * 28);
  EXPECT_EQ(p->image_max_pixels, 4096 * 28 * 28);
  file.image_min_tokens = 1024;
  p = preprocess_params_for(file);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->image_min_pixels, 1024 * 28 * 28);
  file.image_max_tokens = 1000000;
  file.patch_size = 1000;
  EXPECT_FALSE(preprocess_params_for(file).is_ok());
  file.patch_size = 0;
  EXPECT_FALSE(preprocess_params_for(file).is_ok());
}

// Parameters the reference would assert on are errors, not crashes.
TEST(MediaImageParams, BadParametersAreErrors) {
  ImageRgb8 image;
  image.nx = 2;
  image.ny = 2;
  image.rgb.assign(12, 7);
  PreprocessParams p;
  p.family = ProjectorFamily::kQwenVl;
  p.patch_size = 14;
  p.n_merge = 2;  // no pixel limits set
  EXPECT_FALSE(preprocess_image(image, p).is_ok());
  p.family = ProjectorFamily::kInternVl;  // no candidates
  p.image_size = 448;
  EXPECT_FALSE(preprocess_image(image, p).is_ok());
  image.rgb.pop_back();  // not nx * ny * 3 bytes
  p.family = ProjectorFamily::kGemma3;
  EXPECT_FALSE(preprocess_image(image, p).is_ok());
}

}  // namespace
}  // namespace hearth::media

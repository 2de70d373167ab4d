// libFuzzer target for image decoding and preprocessing: arbitrary bytes through decode_image
// and, when they decode, through one preprocessor family (picked by the last byte, which the
// image formats ignore after their end marker). A failure must be a clean "image: ..." error;
// a success must give consistent sizes and finite values.
//
//   build-fuzz/bin/image_fuzz -dict=tests/fuzz/image.dict NEW_CORPUS tests/fuzz/corpus/image
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <span>
#include <string>

#include "media/image/image_decode.h"
#include "media/image/image_preprocess.h"

namespace {

using hearth::media::PixelTensor;
using hearth::media::ProjectorFamily;
using hearth::media::ProjectorHparams;

[[noreturn]] void fail(const std::string& problem) {
  std::fprintf(stderr, "image_fuzz: %s\n", problem.c_str());
  std::abort();
}

// Small versions of each family (the real image sizes would make every run slow).
ProjectorHparams family_config(uint8_t selector) {
  ProjectorHparams h;
  h.image_size = 32;
  h.patch_size = 4;
  h.image_mean = {0.5f, 0.5f, 0.5f};
  h.image_std = {0.5f, 0.5f, 0.5f};
  switch (selector % 8) {
    case 0:
      h.family = ProjectorFamily::kGemma3;
      break;
    case 1:
      h.family = ProjectorFamily::kLlava;
      break;
    case 2:
      h.family = ProjectorFamily::kLlava;
      h.grid_pinpoints = {32, 64, 64, 32, 64, 64};
      break;
    case 3:
      h.family = ProjectorFamily::kQwenVl;
      h.image_max_tokens = 64;
      break;
    case 4:
      h.family = ProjectorFamily::kPixtral;
      h.image_max_tokens = 64;
      break;
    case 5:
      h.family = ProjectorFamily::kIdefics3;
      h.preproc_image_size = 96;
      break;
    case 6:
      h.family = ProjectorFamily::kInternVl;
      h.preproc_max_tiles = 4;
      break;
    default:
      // Real patch and merge sizes: LFM2's tiles are 512 px whatever the patch, so smaller
      // limits would tile nearly every input and slow the run down.
      h.family = ProjectorFamily::kLfm2;
      h.patch_size = 16;
      h.n_merge = 2;
      break;
  }
  return h;
}

void check_tensor(const PixelTensor& t) {
  if (t.nx <= 0 || t.ny <= 0 || t.data.size() != static_cast<size_t>(t.nx) * t.ny * 3) {
    fail("inconsistent tensor " + std::to_string(t.nx) + "x" + std::to_string(t.ny));
  }
  for (float v : t.data) {
    if (!std::isfinite(v)) fail("non-finite pixel value");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  hearth::media::ImageLimits limits;
  limits.max_side = 2048;
  limits.max_pixels = 1 << 20;
  auto image = hearth::media::decode_image(std::span<const uint8_t>(data, size), limits);
  if (!image.is_ok()) {
    if (image.status().message().rfind("image: ", 0) != 0) {
      fail("unexpected error: " + image.status().to_string());
    }
    return 0;
  }
  if (image->nx <= 0 || image->ny <= 0 || image->nx > limits.max_side ||
      image->ny > limits.max_side ||
      image->rgb.size() != static_cast<size_t>(image->nx) * image->ny * 3) {
    fail("decoded size out of bounds");
  }
  auto params = hearth::media::preprocess_params_for(family_config(data[size - 1]));
  if (!params.is_ok()) fail("fuzz configuration refused: " + params.status().to_string());
  auto out = hearth::media::preprocess_image(*image, *params);
  if (!out.is_ok()) fail("preprocessing failed: " + out.status().to_string());
  if (out->entries.empty() && !out->has_overview()) fail("no output tensor");
  for (const PixelTensor& t : out->entries) check_tensor(t);
  if (out->has_overview()) check_tensor(out->overview);
  return 0;
}

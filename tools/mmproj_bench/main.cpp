// hearth-mmproj-bench: loads a projector file (mmproj) and times the encoding of one
// synthetic image at the encoder's native size (or --nx x --ny, for the dynamic-size
// families: already a size their preprocessor gives), the best of --repeat runs.
//   hearth-mmproj-bench -m mmproj.gguf [-t 2] [-r 3] [--nx 1036 --ny 756]
#include <CLI/CLI.hpp>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <vector>

#include "media/projector.h"

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// A deterministic RGB pattern, normalized as the reference does: (v / 255 - mean) / std.
std::vector<float> test_image(const hearth::media::VisionHparams& hp, int nx, int ny) {
  std::vector<float> px(static_cast<size_t>(nx) * static_cast<size_t>(ny) * 3);
  for (int y = 0; y < ny; ++y)
    for (int x = 0; x < nx; ++x)
      for (int c = 0; c < 3; ++c) {
        const int v = (x * 3 + y * 5 + c * 85 + ((x ^ y) & 15) * 4) % 256;
        px[(static_cast<size_t>(y) * static_cast<size_t>(nx) + static_cast<size_t>(x)) * 3 +
           static_cast<size_t>(c)] =
            (static_cast<float>(v) / 255.0f - hp.image_mean[static_cast<size_t>(c)]) /
            hp.image_std[static_cast<size_t>(c)];
      }
  return px;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hearth-mmproj-bench: time one image encode of a projector file"};
  std::string path;
  int threads = 2, repeat = 3, nx = 0, ny = 0;
  app.add_option("-m,--mmproj", path, "projector file")->required();
  app.add_option("-t,--threads", threads)->capture_default_str();
  app.add_option("-r,--repeat", repeat, "encodes timed (the best is reported)")
      ->capture_default_str();
  app.add_option("--nx", nx, "image width after preprocessing (0: the native size)");
  app.add_option("--ny", ny, "image height after preprocessing (0: the native size)");
  CLI11_PARSE(app, argc, argv);
  const auto t_load = std::chrono::steady_clock::now();
  auto proj = hearth::media::Projector::load(path, 0);
  if (!proj.is_ok()) {
    std::fprintf(stderr, "error: %s\n", proj.status().to_string().c_str());
    return 1;
  }
  const double load_ms = ms_since(t_load);
  const auto& hp = (*proj)->hparams();
  if (nx <= 0) nx = hp.image_size;
  if (ny <= 0) ny = hp.image_size;
  if (int64_t{nx} * ny > int64_t{64} << 20) {
    std::fprintf(stderr, "error: %dx%d is too large\n", nx, ny);
    return 1;
  }
  const std::vector<float> pixels = test_image(hp, nx, ny);
  const int32_t n_tok = (*proj)->n_output_tokens(nx, ny);
  std::vector<float> out(static_cast<size_t>(n_tok) * static_cast<size_t>((*proj)->n_embd_out()));
  hearth::ThreadPool pool(threads);
  double best = 1e300;
  for (int r = 0; r < std::max(1, repeat); ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const hearth::Status s = (*proj)->encode(pixels.data(), nx, ny, pool, out.data());
    if (!s.is_ok()) {
      std::fprintf(stderr, "error: %s\n", s.to_string().c_str());
      return 1;
    }
    best = std::min(best, ms_since(t0));
  }
  std::printf("projector %s (%s), image %dx%d, %d layers x %d wide, %d threads\n",
              std::string((*proj)->projector_type()).c_str(),
              std::string((*proj)->family()).c_str(), nx, ny, hp.n_layer, hp.n_embd, threads);
  std::printf("load_ms %.1f\nencode_ms %.1f\ntokens %d\n", load_ms, best, n_tok);
  return 0;
}

#include "media/image/image_resize.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace hearth::media {
namespace {

using Rgb = std::array<uint8_t, 3>;

ImageRgb8 blank_image(int32_t nx, int32_t ny) {
  ImageRgb8 img;
  img.nx = nx;
  img.ny = ny;
  img.rgb.assign(static_cast<size_t>(nx) * static_cast<size_t>(ny) * 3, 0);
  return img;
}

inline Rgb get_pixel(const ImageRgb8& img, int x, int y) {
  const size_t i = (static_cast<size_t>(y) * static_cast<size_t>(img.nx) + x) * 3;
  return {img.rgb[i], img.rgb[i + 1], img.rgb[i + 2]};
}

inline void set_pixel(ImageRgb8& img, int x, int y, const Rgb& rgb) {
  const size_t i = (static_cast<size_t>(y) * static_cast<size_t>(img.nx) + x) * 3;
  img.rgb[i] = rgb[0];
  img.rgb[i + 1] = rgb[1];
  img.rgb[i + 2] = rgb[2];
}

inline float lerp(float s, float e, float t) {
  return s + (e - s) * t;
}
inline int clamp_index(int v, int lower, int upper) {
  return std::max(lower, std::min(v, upper));
}

// Corner-aligned bilinear (the first and last pixels map onto each other), truncating to u8.
ImageRgb8 resize_bilinear(const ImageRgb8& src, int tw, int th) {
  if (src.nx == 0 || src.ny == 0) return blank_image(0, 0);
  if (tw <= 0) tw = 1;
  if (th <= 0) th = 1;
  ImageRgb8 dst = blank_image(tw, th);
  const float x_ratio = tw > 1 ? static_cast<float>(src.nx - 1) / (tw - 1) : 0.0f;
  const float y_ratio = th > 1 ? static_cast<float>(src.ny - 1) / (th - 1) : 0.0f;
  for (int y = 0; y < th; ++y) {
    for (int x = 0; x < tw; ++x) {
      const float px = x * x_ratio;
      const float py = y * y_ratio;
      const int x0 = std::min(static_cast<int>(px), src.nx - 1);
      const int y0 = std::min(static_cast<int>(py), src.ny - 1);
      const int x1 = std::min(x0 + 1, src.nx - 1);
      const int y1 = std::min(y0 + 1, src.ny - 1);
      const float xf = px - x0;
      const float yf = py - y0;
      const Rgb p00 = get_pixel(src, x0, y0);
      const Rgb p10 = get_pixel(src, x1, y0);
      const Rgb p01 = get_pixel(src, x0, y1);
      const Rgb p11 = get_pixel(src, x1, y1);
      Rgb out;
      for (int c = 0; c < 3; ++c) {
        const float top = lerp(static_cast<float>(p00[c]), static_cast<float>(p10[c]), xf);
        const float bottom = lerp(static_cast<float>(p01[c]), static_cast<float>(p11[c]), xf);
        out[c] = static_cast<uint8_t>(lerp(top, bottom, yf));
      }
      set_pixel(dst, x, y, out);
    }
  }
  return dst;
}

// One cubic through four samples at offsets -1, 0, 1, 2, evaluated at t in [0, 1). The
// coefficients are computed in double and stored in float, as the reference does.
inline float cubic(float s_m1, float s_0, float s_1, float s_2, float t) {
  const float d0 = s_m1 - s_0;
  const float d2 = s_1 - s_0;
  const float d3 = s_2 - s_0;
  const float a0 = s_0;
  const float a1 = -1.0 / 3 * d0 + d2 - 1.0 / 6 * d3;
  const float a2 = 1.0 / 2 * d0 + 1.0 / 2 * d2;
  const float a3 = -1.0 / 6 * d0 - 1.0 / 2 * d2 + 1.0 / 6 * d3;
  return a0 + a1 * t + a2 * t * t + a3 * t * t * t;
}

// The reference's "bicubic" (from ViT.cpp): top-left-aligned sampling (x = tx * j), a cubic
// along x on four rows, then along y, rounded and clamped. The clamped sample positions are
// computed once per row and column; the arithmetic per sample is the reference's.
ImageRgb8 resize_bicubic(const ImageRgb8& src, int tw, int th) {
  ImageRgb8 dst = blank_image(tw, th);
  const int nx = src.nx;
  const int ny = src.ny;
  const float tx = static_cast<float>(nx) / static_cast<float>(tw);
  const float ty = static_cast<float>(ny) / static_cast<float>(th);
  // Per output column: the byte offsets of source columns x-1..x+2 (clamped) and dx.
  std::vector<std::array<size_t, 4>> col_offsets(tw);
  std::vector<float> col_dx(tw);
  for (int j = 0; j < tw; j++) {
    const int x = static_cast<int>(tx * j);
    col_dx[j] = tx * j - x;
    for (int t = 0; t < 4; t++) col_offsets[j][t] = size_t(clamp_index(x - 1 + t, 0, nx - 1)) * 3;
  }
  const size_t stride = size_t(nx) * 3;
  for (int i = 0; i < th; i++) {
    const int y = static_cast<int>(ty * i);
    const float dy = ty * i - y;
    const uint8_t* rows[4];
    for (int t = 0; t < 4; t++)
      rows[t] = src.rgb.data() + size_t(clamp_index(y - 1 + t, 0, ny - 1)) * stride;
    uint8_t* out = dst.rgb.data() + size_t(i) * tw * 3;
    for (int j = 0; j < tw; j++) {
      const std::array<size_t, 4>& xo = col_offsets[j];
      const float dx = col_dx[j];
      for (int k = 0; k < 3; k++) {
        float along_x[4];
        for (int jj = 0; jj <= 3; jj++) {
          const uint8_t* row = rows[jj];
          // Differences of u8 samples are taken in int, then held in float.
          const int s0 = row[xo[1] + k];
          const float d0 = row[xo[0] + k] - s0;
          const float d2 = row[xo[2] + k] - s0;
          const float d3 = row[xo[3] + k] - s0;
          const float a0 = s0;
          const float a1 = -1.0 / 3 * d0 + d2 - 1.0 / 6 * d3;
          const float a2 = 1.0 / 2 * d0 + 1.0 / 2 * d2;
          const float a3 = -1.0 / 6 * d0 - 1.0 / 2 * d2 + 1.0 / 6 * d3;
          along_x[jj] = a0 + a1 * dx + a2 * dx * dx + a3 * dx * dx * dx;
        }
        const float value = cubic(along_x[0], along_x[1], along_x[2], along_x[3], dy);
        out[size_t(j) * 3 + k] =
            static_cast<uint8_t>(std::min(std::max(std::round(value), 0.0f), 255.0f));
      }
    }
  }
  return dst;
}

}  // namespace

namespace {

// Pillow's separable resampling (Resample.c): per output pixel a window of input pixels and
// fixed-point weights with 22 fractional bits, a horizontal pass then a vertical one.
constexpr int kPrecisionBits = 32 - 8 - 2;

double pillow_filter(double x, bool lanczos) {
  if (lanczos) {
    if (-3.0 <= x && x < 3.0) {
      auto sinc = [](double v) {
        if (v == 0.0) return 1.0;
        const double pi_v = v * 3.141592653589793238462643383279502884;
        return std::sin(pi_v) / pi_v;
      };
      return sinc(x) * sinc(x / 3.0);
    }
    return 0.0;
  }
  constexpr double a = -0.5;  // Pillow's bicubic
  if (x < 0.0) x = -x;
  if (x < 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1;
  if (x < 2.0) return (((x - 5) * x + 8) * x - 4) * a;
  return 0.0;
}

// The input window of each output pixel: first index and count, plus `ksize` weights each.
struct PillowKernel {
  int ksize = 0;
  std::vector<int> first;
  std::vector<int> count;
  std::vector<int32_t> weights;  // out_size x ksize
};

PillowKernel pillow_kernel(int in_size, int out_size, bool lanczos) {
  const double filter_support = lanczos ? 3.0 : 2.0;
  const double scale = static_cast<double>(in_size) / out_size;
  const double filterscale = scale < 1.0 ? 1.0 : scale;  // widen only when shrinking
  const double support = filter_support * filterscale;
  PillowKernel k;
  k.ksize = static_cast<int>(std::ceil(support)) * 2 + 1;
  k.first.resize(out_size);
  k.count.resize(out_size);
  std::vector<double> pre(static_cast<size_t>(out_size) * k.ksize, 0.0);
  for (int xx = 0; xx < out_size; xx++) {
    const double center = (xx + 0.5) * scale;
    const double ss = 1.0 / filterscale;
    const int xmin = std::max(static_cast<int>(center - support + 0.5), 0);
    const int xmax = std::min(static_cast<int>(center + support + 0.5), in_size) - xmin;
    double* w = &pre[static_cast<size_t>(xx) * k.ksize];
    double ww = 0.0;
    for (int x = 0; x < xmax; x++) {
      w[x] = pillow_filter((x + xmin - center + 0.5) * ss, lanczos);
      ww += w[x];
    }
    for (int x = 0; x < xmax; x++) {
      if (ww != 0.0) w[x] /= ww;
    }
    k.first[xx] = xmin;
    k.count[xx] = xmax;
  }
  const double fxp_scale = std::ldexp(1.0, kPrecisionBits);
  k.weights.resize(pre.size());
  for (size_t i = 0; i < pre.size(); i++) {
    if (lanczos) {  // +-0.5 then truncation, as Pillow
      k.weights[i] = static_cast<int32_t>(pre[i] * fxp_scale + (pre[i] < 0 ? -0.5 : 0.5));
      continue;
    }
    double v = pre[i] * fxp_scale;
    v += pre[i] < 0 ? -0.5 : 0.5;
    v = std::round(v);  // the reference rounds again after adding the half
    v = std::clamp(v, static_cast<double>(std::numeric_limits<int32_t>::min()),
                   static_cast<double>(std::numeric_limits<int32_t>::max()));
    k.weights[i] = static_cast<int32_t>(v);
  }
  return k;
}

inline uint8_t clip8(int32_t v) {
  return static_cast<uint8_t>(std::clamp(v, 0, 255));
}

// One pass along x (horizontal) or y, producing `out` of the new size on that axis.
ImageRgb8 pillow_pass(const ImageRgb8& in, const PillowKernel& k, bool horizontal, int out_size) {
  const int out_nx = horizontal ? out_size : in.nx;
  const int out_ny = horizontal ? in.ny : out_size;
  ImageRgb8 out = blank_image(out_nx, out_ny);
  for (int oy = 0; oy < out_ny; oy++) {
    for (int ox = 0; ox < out_nx; ox++) {
      const int o = horizontal ? ox : oy;
      const int32_t* w = &k.weights[static_cast<size_t>(o) * k.ksize];
      int32_t acc[3] = {1 << (kPrecisionBits - 1), 1 << (kPrecisionBits - 1),
                        1 << (kPrecisionBits - 1)};
      for (int i = 0; i < k.count[o]; i++) {
        const Rgb p =
            horizontal ? get_pixel(in, k.first[o] + i, oy) : get_pixel(in, ox, k.first[o] + i);
        for (int c = 0; c < 3; c++) acc[c] += p[c] * w[i];
      }
      set_pixel(out, ox, oy,
                {clip8(acc[0] >> kPrecisionBits), clip8(acc[1] >> kPrecisionBits),
                 clip8(acc[2] >> kPrecisionBits)});
    }
  }
  return out;
}

ImageRgb8 resize_pillow(const ImageRgb8& src, int tw, int th, bool lanczos) {
  const bool need_h = tw != src.nx;
  const bool need_v = th != src.ny;
  if (!need_h && !need_v) return src;
  if (need_h && need_v) {
    const ImageRgb8 tmp = pillow_pass(src, pillow_kernel(src.nx, tw, lanczos), true, tw);
    return pillow_pass(tmp, pillow_kernel(src.ny, th, lanczos), false, th);
  }
  if (need_h) return pillow_pass(src, pillow_kernel(src.nx, tw, lanczos), true, tw);
  return pillow_pass(src, pillow_kernel(src.ny, th, lanczos), false, th);
}

Status check_output(int64_t w, int64_t h) {
  if (w < 0 || h < 0 || w * h > kMaxPreprocessedPixels) {
    return error(ErrorCode::kResourceExhausted, "image: a resize to " + std::to_string(w) + "x" +
                                                    std::to_string(h) +
                                                    " is over the preprocessing limit");
  }
  return Status::ok();
}

Result<ImageRgb8> resize_direct(const ImageRgb8& src, int tw, int th, ResizeAlgo algo) {
  HEARTH_RETURN_IF_ERROR(check_output(tw, th));
  if (algo == ResizeAlgo::kBilinear) return resize_bilinear(src, tw, th);
  if (tw <= 0 || th <= 0 || src.nx <= 0 || src.ny <= 0) {
    // The reference asserts (Pillow) or divides by zero (bicubic) here.
    return error(ErrorCode::kInvalidArgument, "image: cannot resize " + std::to_string(src.nx) +
                                                  "x" + std::to_string(src.ny) + " to " +
                                                  std::to_string(tw) + "x" + std::to_string(th));
  }
  if (algo == ResizeAlgo::kBicubic) return resize_bicubic(src, tw, th);
  return resize_pillow(src, tw, th, algo == ResizeAlgo::kLanczos);
}

// Copies `src` onto `dst` with its top-left corner at (ox, oy), clipped to `dst`.
void composite(ImageRgb8& dst, const ImageRgb8& src, int ox, int oy) {
  for (int y = 0; y < src.ny; ++y) {
    for (int x = 0; x < src.nx; ++x) {
      const int dx = x + ox;
      const int dy = y + oy;
      if (dx < 0 || dy < 0 || dx >= dst.nx || dy >= dst.ny) continue;
      set_pixel(dst, dx, dy, get_pixel(src, x, y));
    }
  }
}

}  // namespace

Result<ImageRgb8> resize_image(const ImageRgb8& src, ImageSize target, ResizeAlgo algo,
                               PadStyle pad, std::array<uint8_t, 3> pad_color) {
  HEARTH_RETURN_IF_ERROR(check_output(target.width, target.height));
  if (target.width == src.nx && target.height == src.ny) return src;
  if (pad == PadStyle::kNone) return resize_direct(src, target.width, target.height, algo);

  const float scale_w = static_cast<float>(target.width) / src.nx;
  const float scale_h = static_cast<float>(target.height) / src.ny;
  const float scale = std::min(scale_w, scale_h);
  int new_w = 0;
  int new_h = 0;
  if (pad == PadStyle::kNearest) {
    new_w = std::min(static_cast<int>(std::round(src.nx * scale)), target.width);
    new_h = std::min(static_cast<int>(std::round(src.ny * scale)), target.height);
  } else {
    new_w = std::min(static_cast<int>(std::ceil(src.nx * scale)), target.width);
    new_h = std::min(static_cast<int>(std::ceil(src.ny * scale)), target.height);
  }
  HEARTH_ASSIGN_OR_RETURN(ImageRgb8 resized, resize_direct(src, new_w, new_h, algo));
  ImageRgb8 dst = blank_image(target.width, target.height);
  for (size_t i = 0; i < dst.rgb.size(); i += 3) {
    dst.rgb[i] = pad_color[0];
    dst.rgb[i + 1] = pad_color[1];
    dst.rgb[i + 2] = pad_color[2];
  }
  int offset_x = 0;
  int offset_y = 0;
  if (pad == PadStyle::kNearest) {
    offset_x = static_cast<int>(std::round((target.width - new_w) / 2.0f));
    offset_y = static_cast<int>(std::round((target.height - new_h) / 2.0f));
  } else {
    offset_x = (target.width - new_w) / 2;
    offset_y = (target.height - new_h) / 2;
  }
  composite(dst, resized, offset_x, offset_y);
  return dst;
}

ImageRgb8 crop_image(const ImageRgb8& src, int32_t x, int32_t y, int32_t w, int32_t h) {
  ImageRgb8 dst = blank_image(w, h);
  for (int i = 0; i < h; ++i) {
    const size_t from = (static_cast<size_t>(y + i) * src.nx + x) * 3;
    std::copy_n(src.rgb.begin() + static_cast<std::ptrdiff_t>(from), static_cast<size_t>(w) * 3,
                dst.rgb.begin() + static_cast<std::ptrdiff_t>(static_cast<size_t>(i) * w * 3));
  }
  return dst;
}

}  // namespace hearth::media

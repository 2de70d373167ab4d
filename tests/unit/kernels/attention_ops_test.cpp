// The attention operations of every level this CPU runs give the scalar level's bits, on
// random rows of every length up to a few vectors (tails), zeros, large values and
// infinities; and the scalar level computes what attention_ops.h says.
#include "kernels/attention_ops.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "base/half.h"
#include "test_util.h"

namespace hearth::kernels {
namespace {

constexpr float kInf = std::numeric_limits<float>::infinity();

bool same_f16(f16_bits a, f16_bits b) {
  const bool a_nan = (a & 0x7FFFu) > 0x7C00u;
  const bool b_nan = (b & 0x7FFFu) > 0x7C00u;
  return (a_nan && b_nan) || a == b;
}

// Row `kind` of length n: 0 random, 1 zeros, 2 large (overflowing f16 when combined),
// 3 random with some infinities, 4 tiny (f16 subnormals).
std::vector<float> make_row(int kind, int n, uint32_t seed) {
  auto x = test::gaussian(static_cast<size_t>(n), seed);
  std::mt19937 rng(seed);
  for (int i = 0; i < n; ++i) {
    float& v = x[static_cast<size_t>(i)];
    switch (kind) {
      case 1:
        v = (i % 3 == 0) ? -0.0f : 0.0f;
        break;
      case 2:
        v *= 40000.0f;
        break;
      case 3:
        if (rng() % 5 == 0) v = (rng() % 2) ? kInf : -kInf;
        break;
      case 4:
        v *= 1e-6f;
        break;
      default:
        break;
    }
  }
  return x;
}

std::vector<f16_bits> to_f16(const std::vector<float>& x) {
  std::vector<f16_bits> h(x.size());
  for (size_t i = 0; i < x.size(); ++i) h[i] = f32_to_f16(x[i]);
  return h;
}

const float kWeights[] = {0.0f, 1.0f, 0.37f, -2.5f, 1e-3f, 3e4f, kInf};
constexpr int kKinds = 5;
constexpr int kMaxN = 41;

std::string what(CpuLevel level, int n, int kind_a, int kind_v, float w) {
  return std::string(cpu_level_name(level)) + " n " + std::to_string(n) + " acc kind " +
         std::to_string(kind_a) + " v kind " + std::to_string(kind_v) + " w " + std::to_string(w);
}

TEST(AttentionOps, F16LevelsMatchScalar) {
  const AttentionOps& ref = attention_ops(CpuLevel::kScalar);
  const std::vector<CpuLevel> levels = test::simd_levels();
  if (levels.empty()) GTEST_SKIP() << test::kNoSimdLevel;
  for (CpuLevel level : levels) {
    const AttentionOps& ops = attention_ops(level);
    for (int n = 0; n <= kMaxN; ++n) {
      for (int ka = 0; ka < kKinds; ++ka) {
        for (int kv = 0; kv < kKinds; ++kv) {
          const auto acc0 = to_f16(make_row(ka, n, 10 + static_cast<uint32_t>(n * 7 + ka)));
          const auto v = to_f16(make_row(kv, n, 500 + static_cast<uint32_t>(n * 7 + kv)));
          for (float w : kWeights) {
            SCOPED_TRACE(what(level, n, ka, kv, w));
            auto want = acc0, got = acc0;
            ref.f16_fma_row(want.data(), v.data(), w, n);
            ops.f16_fma_row(got.data(), v.data(), w, n);
            for (int i = 0; i < n; ++i)
              ASSERT_TRUE(same_f16(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)]))
                  << "fma_row element " << i;
            want = acc0, got = acc0;
            ref.f16_scale(want.data(), w, n);
            ops.f16_scale(got.data(), w, n);
            for (int i = 0; i < n; ++i)
              ASSERT_TRUE(same_f16(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)]))
                  << "scale element " << i;
          }
        }
      }
    }
  }
}

TEST(AttentionOps, F32LevelsMatchScalar) {
  const AttentionOps& ref = attention_ops(CpuLevel::kScalar);
  const std::vector<CpuLevel> levels = test::simd_levels();
  if (levels.empty()) GTEST_SKIP() << test::kNoSimdLevel;
  for (CpuLevel level : levels) {
    const AttentionOps& ops = attention_ops(level);
    for (int n = 0; n <= kMaxN; ++n) {
      for (int ka = 0; ka < kKinds; ++ka) {
        for (int kv = 0; kv < kKinds; ++kv) {
          const auto acc0 = make_row(ka, n, 20 + static_cast<uint32_t>(n * 7 + ka));
          const auto v = make_row(kv, n, 600 + static_cast<uint32_t>(n * 7 + kv));
          for (float w : kWeights) {
            SCOPED_TRACE(what(level, n, ka, kv, w));
            auto want = acc0, got = acc0;
            ref.f32_fma_row(want.data(), v.data(), w, n);
            ops.f32_fma_row(got.data(), v.data(), w, n);
            for (int i = 0; i < n; ++i)
              ASSERT_TRUE(
                  test::same_float(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)]))
                  << "fma_row element " << i;
            want = acc0, got = acc0;
            ref.f32_scale(want.data(), w, n);
            ops.f32_scale(got.data(), w, n);
            for (int i = 0; i < n; ++i)
              ASSERT_TRUE(
                  test::same_float(got[static_cast<size_t>(i)], want[static_cast<size_t>(i)]))
                  << "scale element " << i;
          }
        }
      }
    }
  }
}

// The scalar level against the formulas: one rounding for the fma (a case where a separate
// multiply and add differ), f16 rounding to nearest even, overflow to inf, NaN canonical.
// f16_accumulate of every level equals f16_scale and f16_fma_row called row by row and head
// by head, on rows of every kind, for head counts around the SIMD group (8) and widths with
// and without a tail.
TEST(AttentionOps, F16AccumulateEqualsTheRowOperations) {
  const AttentionOps& ref = attention_ops(CpuLevel::kScalar);
  std::mt19937 rng(99);
  for (CpuLevel level : runnable_cpu_levels()) {
    const AttentionOps& ops = attention_ops(level);
    for (int heads : {1, 3, 8, 11}) {
      for (int dim : {8, 64, 37}) {
        const int n_rows = 20;
        std::vector<std::vector<f16_bits>> v;
        std::vector<const uint8_t*> v_rows;
        for (int j = 0; j < n_rows; ++j) v.push_back(to_f16(make_row(j % kKinds, dim, 7u * j + 1)));
        for (const auto& row : v) v_rows.push_back(reinterpret_cast<const uint8_t*>(row.data()));
        std::vector<uint8_t> rescale(static_cast<size_t>(n_rows * heads));
        std::vector<float> factor(rescale.size()), weight(rescale.size());
        for (size_t i = 0; i < rescale.size(); ++i) {
          rescale[i] = rng() % 3 == 0 ? 1 : 0;
          factor[i] = std::ldexp(1.0f, -static_cast<int>(rng() % 6));
          weight[i] = kWeights[rng() % 6];  // finite weights: infinities are covered above
        }
        std::vector<f16_bits> want;
        for (int h = 0; h < heads; ++h) {
          const auto a = to_f16(make_row(h % 2 == 0 ? 0 : 4, dim, 100u + h));
          want.insert(want.end(), a.begin(), a.end());
        }
        std::vector<f16_bits> got = want;
        for (int j = 0; j < n_rows; ++j) {
          for (int h = 0; h < heads; ++h) {
            const size_t jh = static_cast<size_t>(j * heads + h);
            f16_bits* acc = want.data() + static_cast<size_t>(h * dim);
            if (rescale[jh] != 0) ref.f16_scale(acc, factor[jh], dim);
            ref.f16_fma_row(acc, v[static_cast<size_t>(j)].data(), weight[jh], dim);
          }
        }
        F16Accumulate a;
        a.acc = got.data();
        a.n_heads = heads;
        a.dim = dim;
        a.v = v_rows.data();
        a.n_rows = n_rows;
        a.rescale = rescale.data();
        a.factor = factor.data();
        a.weight = weight.data();
        ops.f16_accumulate(a);
        for (size_t i = 0; i < got.size(); ++i)
          ASSERT_TRUE(same_f16(got[i], want[i]))
              << cpu_level_name(level) << " heads " << heads << " dim " << dim << " element " << i;
      }
    }
  }
}

// attend_tile of every level gives the scalar tile's bits over a run of tiles, for query
// counts around the SIMD group (4), visible-key counts from 0 to a whole tile, windows
// hiding the first keys (or all of them), widths with and without a tail, and scores spread
// wide enough to move the running maximum.
TEST(AttentionOps, AttendTileLevelsMatchScalar) {
  constexpr int kT = kAttentionTileKeys;
  const AttentionOps& ref = attention_ops(CpuLevel::kScalar);
  const std::vector<CpuLevel> levels = test::simd_levels();
  if (levels.empty()) GTEST_SKIP() << test::kNoSimdLevel;
  for (CpuLevel level : levels) {
    const AttentionOps& ops = attention_ops(level);
    for (const bool windowed : {false, true})
      for (int n_q : {1, 4, 7}) {
        for (int dim : {64, 36}) {
          const auto q = test::gaussian(static_cast<size_t>(n_q * dim), 31);
          std::vector<float> m_ref(static_cast<size_t>(n_q), -kInf),
              s_ref(static_cast<size_t>(n_q));
          std::vector<float> acc_ref(static_cast<size_t>(n_q * dim));
          auto m_got = m_ref, s_got = s_ref, acc_got = acc_ref;
          for (int tile = 0; tile < 6; ++tile) {
            auto k_t = test::gaussian(static_cast<size_t>(dim * kT), 40u + tile, 1.0f + tile);
            const auto v = test::gaussian(static_cast<size_t>(kT * dim), 50u + tile);
            std::vector<int> n_valid(static_cast<size_t>(n_q)), n_skip(static_cast<size_t>(n_q));
            for (int i = 0; i < n_q; ++i) {
              n_valid[static_cast<size_t>(i)] = (i * 5 + tile * 3) % (kT + 1);
              n_skip[static_cast<size_t>(i)] =
                  (i * 3 + tile) % (n_valid[static_cast<size_t>(i)] + 2);
            }
            AttentionTile t;
            t.q = q.data();
            t.n_q = n_q;
            t.n_valid = n_valid.data();
            t.n_skip = windowed ? n_skip.data() : nullptr;
            t.k_t = k_t.data();
            t.v = v.data();
            t.d_k = dim;
            t.d_v = dim;
            t.scale = 0.125f;
            t.m = m_ref.data();
            t.sum = s_ref.data();
            t.acc = acc_ref.data();
            ref.attend_tile(t);
            t.m = m_got.data();
            t.sum = s_got.data();
            t.acc = acc_got.data();
            ops.attend_tile(t);
          }
          const std::string where = std::string(cpu_level_name(level)) + " n_q " +
                                    std::to_string(n_q) + " dim " + std::to_string(dim) +
                                    (windowed ? " windowed" : "");
          for (size_t i = 0; i < acc_ref.size(); ++i)
            ASSERT_TRUE(test::same_float(acc_got[i], acc_ref[i])) << where << " acc " << i;
          for (size_t i = 0; i < m_ref.size(); ++i) {
            ASSERT_TRUE(test::same_float(m_got[i], m_ref[i])) << where;
            ASSERT_TRUE(test::same_float(s_got[i], s_ref[i])) << where;
          }
        }
      }
  }
}

// Keys below a window's start are hidden: a tile with n_skip = 3 gives the bits of the same
// query over a tile that begins at its fourth key.
TEST(AttentionOps, AttendTileSkipsKeysBelowTheWindow) {
  constexpr int kT = kAttentionTileKeys;
  const int dim = 16, skip = 3, n = 12;
  const auto q = test::gaussian(dim, 6);
  const auto k_t = test::gaussian(static_cast<size_t>(dim * kT), 7);
  const auto v = test::gaussian(static_cast<size_t>(kT * dim), 8);
  std::vector<float> k_shift(static_cast<size_t>(dim * kT), 0.0f), v_shift(v.size(), 0.0f);
  for (int d = 0; d < dim; ++d)
    for (int k = 0; k + skip < kT; ++k)
      k_shift[static_cast<size_t>(d * kT + k)] = k_t[static_cast<size_t>(d * kT + k + skip)];
  std::copy(v.begin() + skip * dim, v.end(), v_shift.begin());
  const auto run = [&](const std::vector<float>& keys, const std::vector<float>& values, int valid,
                       const int* hidden) {
    float m = -kInf, sum = 0.0f;
    std::vector<float> acc(dim, 0.0f);
    AttentionTile t;
    t.q = q.data();
    t.n_q = 1;
    t.n_valid = &valid;
    t.n_skip = hidden;
    t.k_t = keys.data();
    t.v = values.data();
    t.d_k = dim;
    t.d_v = dim;
    t.scale = 0.25f;
    t.m = &m;
    t.sum = &sum;
    t.acc = acc.data();
    attend_tile(t);
    acc.push_back(m);
    acc.push_back(sum);
    return acc;
  };
  const auto windowed = run(k_t, v, n, &skip);
  const auto shifted = run(k_shift, v_shift, n - skip, nullptr);
  for (size_t i = 0; i < windowed.size(); ++i)
    EXPECT_TRUE(test::same_float(windowed[i], shifted[i])) << i;
  const int all = n;
  EXPECT_EQ(run(k_t, v, n, &all)[static_cast<size_t>(dim) + 1], 0.0f) << "every key hidden";
}

// The tile's soft-max against a double-precision evaluation of the same keys.
TEST(AttentionOps, AttendTileComputesTheSoftmaxWeightedSum) {
  constexpr int kT = kAttentionTileKeys;
  const int dim = 8;
  const auto q = test::gaussian(dim, 3);
  const auto k_t = test::gaussian(static_cast<size_t>(dim * kT), 4);
  const auto v = test::gaussian(static_cast<size_t>(kT * dim), 5);
  const int n = 11;
  float m = -kInf, sum = 0.0f;
  std::vector<float> acc(dim, 0.0f);
  AttentionTile t;
  t.q = q.data();
  t.n_q = 1;
  t.n_valid = &n;
  t.k_t = k_t.data();
  t.v = v.data();
  t.d_k = dim;
  t.d_v = dim;
  t.scale = 0.5f;
  t.m = &m;
  t.sum = &sum;
  t.acc = acc.data();
  attend_tile(t);
  double w[kT], total = 0.0, mx = -1e300;
  for (int k = 0; k < n; ++k) {
    double s = 0.0;
    for (int d = 0; d < dim; ++d)
      s += static_cast<double>(q[d]) * k_t[static_cast<size_t>(d * kT + k)];
    w[k] = 0.5 * s;
    mx = std::max(mx, w[k]);
  }
  for (int k = 0; k < n; ++k) total += (w[k] = std::exp(w[k] - mx));
  for (int d = 0; d < dim; ++d) {
    double want = 0.0;
    for (int k = 0; k < n; ++k) want += w[k] / total * v[static_cast<size_t>(k * dim + d)];
    EXPECT_NEAR(acc[static_cast<size_t>(d)] / sum, want, 1e-5) << d;
  }
}

TEST(AttentionOps, TileExpIsCloseToExp) {
  for (float x = -85.9f; x <= 88.0f; x += 0.0137f) {
    const double want = std::exp(static_cast<double>(x));
    EXPECT_NEAR(attention_tile_exp(x), want, 3e-7 * want) << x;
  }
  EXPECT_EQ(attention_tile_exp(0.0f), 1.0f);
  EXPECT_EQ(attention_tile_exp(-90.0f), 0.0f);
  EXPECT_EQ(attention_tile_exp(-kInf), 0.0f);
  EXPECT_TRUE(std::isnan(attention_tile_exp(std::numeric_limits<float>::quiet_NaN())));
}

TEST(AttentionOps, ScalarFollowsTheFormulas) {
  const AttentionOps& ops = attention_ops(CpuLevel::kScalar);
  // (1 + 2^-12)^2 = 1 + 2^-11 + 2^-24: the separate product rounds the 2^-24 away.
  const float a = 1.0f + std::ldexp(1.0f, -12);
  float acc = -(1.0f + std::ldexp(1.0f, -11));
  ops.f32_fma_row(&acc, &a, a, 1);
  EXPECT_EQ(acc, std::ldexp(1.0f, -24));
  float s = 3.0f;
  ops.f32_scale(&s, 0.5f, 1);
  EXPECT_EQ(s, 1.5f);

  f16_bits h = f32_to_f16(1.0f);
  const f16_bits one_ulp = f32_to_f16(std::ldexp(1.0f, -11));  // half an ulp of 1 in f16
  ops.f16_fma_row(&h, &one_ulp, 1.0f, 1);                      // a tie: stays even (1.0)
  EXPECT_EQ(h, f32_to_f16(1.0f));
  h = f32_to_f16(60000.0f);
  ops.f16_scale(&h, 2.0f, 1);
  EXPECT_EQ(h, 0x7C00u);
  h = 0x7C00u;  // inf * 0 = NaN
  ops.f16_scale(&h, 0.0f, 1);
  EXPECT_EQ(h & 0x7FFFu, 0x7E00u);
}

// The public entry points are the active level's operations.
TEST(AttentionOps, PublicFunctionsUseTheActiveLevel) {
  auto acc = to_f16(make_row(0, 37, 7));
  const auto v = to_f16(make_row(0, 37, 8));
  auto want = acc;
  f16_fma_row(acc.data(), v.data(), 0.75f, 37);
  attention_ops(active_cpu_level()).f16_fma_row(want.data(), v.data(), 0.75f, 37);
  EXPECT_EQ(acc, want);
  auto f = make_row(0, 37, 9);
  auto g = f;
  const auto fv = make_row(0, 37, 10);
  f32_fma_row(f.data(), fv.data(), -1.25f, 37);
  f32_scale(f.data(), 0.5f, 37);
  attention_ops(CpuLevel::kScalar).f32_fma_row(g.data(), fv.data(), -1.25f, 37);
  attention_ops(CpuLevel::kScalar).f32_scale(g.data(), 0.5f, 37);
  for (size_t i = 0; i < f.size(); ++i) EXPECT_TRUE(test::same_float(f[i], g[i])) << i;
}

}  // namespace
}  // namespace hearth::kernels

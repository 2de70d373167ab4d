#include "golden/reference_forward.h"

#include <cmath>
#include <map>

#include "base/half.h"
#include "gguf/file.h"
#include "kernels/quant.h"

namespace hearth::test {
namespace {

using Vec = std::vector<double>;

double round_f16(double v) {
  return f16_to_f32(f32_to_f16(static_cast<float>(v)));
}
struct Matrix {
  int64_t rows = 0, cols = 0;
  Vec w;  // rows * cols

  Vec apply(const Vec& x) const {
    Vec y(static_cast<size_t>(rows), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      double s = 0.0;
      for (int64_t c = 0; c < cols; ++c)
        s += w[static_cast<size_t>(r * cols + c)] * x[static_cast<size_t>(c)];
      y[static_cast<size_t>(r)] = s;
    }
    return y;
  }
};

struct Ref {
  const gguf::File* f = nullptr;
  std::string arch;
  int64_t E = 0, L = 0, H = 0, Hkv = 0, D = 0, F = 0, V = 0, R = 0;
  double eps = 0, base = 10000;

  bool has(const std::string& name) const { return f->find_tensor(name) != nullptr; }
  Vec load(const std::string& name) const {
    const gguf::TensorInfo* t = f->find_tensor(name);
    Vec out;
    if (t == nullptr) return out;
    std::vector<float> tmp(static_cast<size_t>(t->n_elements()));
    const uint64_t rb = row_bytes(traits_of(t->type), static_cast<uint64_t>(t->ne[0]));
    for (int64_t r = 0; r < t->n_rows(); ++r)
      kernels::dequantize_row(t->type, t->data + static_cast<uint64_t>(r) * rb,
                              tmp.data() + r * t->ne[0], t->ne[0]);
    out.assign(tmp.begin(), tmp.end());
    return out;
  }
  Matrix matrix(const std::string& name) const {
    const gguf::TensorInfo* t = f->find_tensor(name);
    Matrix m;
    m.cols = t->ne[0];
    m.rows = t->ne[1];
    m.w = load(name);
    return m;
  }
  int64_t u32(const std::string& key, int64_t fallback) const {
    const gguf::Value* v = f->find(arch + key);
    return v ? static_cast<int64_t>(*v->as_uint()) : fallback;
  }
  double f32(const std::string& key, double fallback) const {
    const gguf::Value* v = f->find(arch + key);
    return v ? *v->as_float() : fallback;
  }
};

Vec rms_norm(const Vec& x, const Vec& w, double eps) {
  double ss = 0.0;
  for (double v : x) ss += v * v;
  const double scale = 1.0 / std::sqrt(ss / static_cast<double>(x.size()) + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * scale * w[i];
  return y;
}

void rope(double* head, int64_t R, int64_t pos, double base, bool neox) {
  for (int64_t i = 0; i < R / 2; ++i) {
    const double theta = static_cast<double>(pos) *
                         std::pow(base, -2.0 * static_cast<double>(i) / static_cast<double>(R));
    const double c = std::cos(theta), s = std::sin(theta);
    double& a = neox ? head[i] : head[2 * i];
    double& b = neox ? head[i + R / 2] : head[2 * i + 1];
    const double x0 = a, x1 = b;
    a = x0 * c - x1 * s;
    b = x0 * s + x1 * c;
  }
}

void add_bias(Vec& y, const Vec& b) {
  for (size_t i = 0; i < b.size(); ++i) y[i] += b[i];
}

}  // namespace

std::vector<double> reference_logits(const std::string& model_path,
                                     const std::vector<int32_t>& tokens,
                                     const ReferenceOptions& opt, std::string* err) {
  auto file = gguf::File::open(model_path);
  if (!file.is_ok()) {
    if (err) *err = file.status().to_string();
    return {};
  }
  Ref m;
  m.f = &*file;
  m.arch = std::string(*file->get_string("general.architecture"));
  m.E = m.u32(".embedding_length", 0);
  m.L = m.u32(".block_count", 0);
  m.H = m.u32(".attention.head_count", 0);
  m.Hkv = m.u32(".attention.head_count_kv", m.H);
  m.D = m.u32(".attention.key_length", m.E / m.H);
  m.F = m.u32(".feed_forward_length", 0);
  m.R = m.u32(".rope.dimension_count", m.D);
  m.eps = m.f32(".attention.layer_norm_rms_epsilon", 1e-5);
  m.base = m.f32(".rope.freq_base", 10000.0);
  const bool neox = m.arch != "llama";
  const Matrix emb = m.matrix("token_embd.weight");
  m.V = emb.rows;
  const Matrix out = m.has("output.weight") ? m.matrix("output.weight") : emb;
  const int64_t T = static_cast<int64_t>(tokens.size());
  std::vector<Vec> x(static_cast<size_t>(T));
  for (int64_t t = 0; t < T; ++t)
    x[static_cast<size_t>(t)].assign(emb.w.begin() + tokens[static_cast<size_t>(t)] * m.E,
                                     emb.w.begin() + (tokens[static_cast<size_t>(t)] + 1) * m.E);
  for (int64_t il = 0; il < m.L; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    const Vec attn_norm = m.load(p + "attn_norm.weight"), ffn_norm = m.load(p + "ffn_norm.weight");
    const Matrix wq = m.matrix(p + "attn_q.weight"), wk = m.matrix(p + "attn_k.weight");
    const Matrix wv = m.matrix(p + "attn_v.weight"), wo = m.matrix(p + "attn_output.weight");
    const Matrix wg = m.matrix(p + "ffn_gate.weight"), wu = m.matrix(p + "ffn_up.weight");
    const Matrix wd = m.matrix(p + "ffn_down.weight");
    const Vec bq = m.load(p + "attn_q.bias"), bk = m.load(p + "attn_k.bias"),
              bv = m.load(p + "attn_v.bias");
    const Vec qn = m.load(p + "attn_q_norm.weight"), kn = m.load(p + "attn_k_norm.weight");
    std::vector<Vec> q(static_cast<size_t>(T)), k(static_cast<size_t>(T)),
        v(static_cast<size_t>(T));
    for (int64_t t = 0; t < T; ++t) {
      const Vec h = rms_norm(x[static_cast<size_t>(t)], attn_norm, m.eps);
      Vec& qt = q[static_cast<size_t>(t)] = wq.apply(h);
      Vec& kt = k[static_cast<size_t>(t)] = wk.apply(h);
      Vec& vt = v[static_cast<size_t>(t)] = wv.apply(h);
      add_bias(qt, bq);
      add_bias(kt, bk);
      add_bias(vt, bv);
      for (int64_t hh = 0; hh < m.H; ++hh) {
        if (!qn.empty()) {
          Vec head(qt.begin() + hh * m.D, qt.begin() + (hh + 1) * m.D);
          head = rms_norm(head, qn, m.eps);
          std::copy(head.begin(), head.end(), qt.begin() + hh * m.D);
        }
        rope(qt.data() + hh * m.D, m.R, t, m.base, neox);
      }
      for (int64_t g = 0; g < m.Hkv; ++g) {
        if (!kn.empty()) {
          Vec head(kt.begin() + g * m.D, kt.begin() + (g + 1) * m.D);
          head = rms_norm(head, kn, m.eps);
          std::copy(head.begin(), head.end(), kt.begin() + g * m.D);
        }
        rope(kt.data() + g * m.D, m.R, t, m.base, neox);
      }
      if (opt.round_kv_to_f16) {
        for (double& e : kt) e = round_f16(e);
        for (double& e : vt) e = round_f16(e);
      }
    }
    for (int64_t t = 0; t < T; ++t) {
      Vec att(static_cast<size_t>(m.H * m.D), 0.0);
      for (int64_t hh = 0; hh < m.H; ++hh) {
        const int64_t g = hh / (m.H / m.Hkv);
        Vec s(static_cast<size_t>(t + 1));
        double mx = -1e300;
        for (int64_t j = 0; j <= t; ++j) {
          double d = 0.0;
          for (int64_t i = 0; i < m.D; ++i)
            d += q[static_cast<size_t>(t)][static_cast<size_t>(hh * m.D + i)] *
                 k[static_cast<size_t>(j)][static_cast<size_t>(g * m.D + i)];
          s[static_cast<size_t>(j)] = d / std::sqrt(static_cast<double>(m.D));
          mx = std::max(mx, s[static_cast<size_t>(j)]);
        }
        double sum = 0.0;
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (int64_t j = 0; j <= t; ++j)
          for (int64_t i = 0; i < m.D; ++i)
            att[static_cast<size_t>(hh * m.D + i)] +=
                s[static_cast<size_t>(j)] / sum *
                v[static_cast<size_t>(j)][static_cast<size_t>(g * m.D + i)];
      }
      const Vec o = wo.apply(att);
      Vec& xt = x[static_cast<size_t>(t)];
      for (int64_t i = 0; i < m.E; ++i) xt[static_cast<size_t>(i)] += o[static_cast<size_t>(i)];
      const Vec h = rms_norm(xt, ffn_norm, m.eps);
      Vec g = wg.apply(h);
      const Vec u = wu.apply(h);
      for (size_t i = 0; i < g.size(); ++i) g[i] = g[i] / (1.0 + std::exp(-g[i])) * u[i];
      const Vec d = wd.apply(g);
      for (int64_t i = 0; i < m.E; ++i) xt[static_cast<size_t>(i)] += d[static_cast<size_t>(i)];
    }
  }
  const Vec h = rms_norm(x.back(), m.load("output_norm.weight"), m.eps);
  Vec logits = out.apply(h);
  add_bias(logits, m.load("output.bias"));
  return logits;
}

}  // namespace hearth::test

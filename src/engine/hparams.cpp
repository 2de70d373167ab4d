#include "engine/hparams.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>

namespace hearth::engine {
namespace {

Status corrupt(const gguf::File& f, const std::string& what) {
  return error(ErrorCode::kCorruptFile, fmt::format("{}: {}", f.name(), what));
}

// A u32 key, or `fallback` when absent. Per-layer arrays are accepted when all layers
// agree (the architectures Hearth runs use one value for every layer).
Result<int64_t> read_count(const gguf::File& f, const std::string& key, int64_t fallback,
                           bool required) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) {
    if (required)
      return error(ErrorCode::kCorruptFile,
                   fmt::format("{}: required key '{}' is missing", f.name(), key));
    return fallback;
  }
  if (v->is_array()) {
    const auto et = v->element_type();
    if ((et != gguf::ValueType::kU32 && et != gguf::ValueType::kI32) || v->size() == 0)
      return corrupt(f, fmt::format("key '{}' must be a u32 or an array of i32/u32", key));
    const int64_t first = v->int_at(0);
    for (uint64_t i = 1; i < v->size(); ++i) {
      if (v->int_at(i) != first)
        return error(
            ErrorCode::kUnsupported,
            fmt::format("{}: per-layer values of '{}' differ; not supported", f.name(), key));
    }
    return first;
  }
  if (v->type() != gguf::ValueType::kU32)
    return corrupt(f, fmt::format("key '{}' is stored as {} where u32 is expected", key,
                                  gguf::value_type_name(v->type())));
  return static_cast<int64_t>(*v->as_uint());
}

// <arch>.attention.head_count_kv: one value, or per layer where zeros mark the layers of a
// hybrid model that do not attend (lfm2's convolutions); the other layers must agree.
Status read_head_count_kv(const gguf::File& f, const std::string& a, ModelHparams& hp) {
  const std::string key = a + ".attention.head_count_kv";
  const gguf::Value* v = f.find(key);
  const bool per_layer =
      v != nullptr && v->is_array() &&
      (v->element_type() == gguf::ValueType::kU32 || v->element_type() == gguf::ValueType::kI32);
  if (!per_layer) {
    HEARTH_ASSIGN_OR_RETURN(int64_t n, read_count(f, key, hp.n_head, false));
    hp.n_head_kv = static_cast<int32_t>(std::clamp<int64_t>(n, INT32_MIN, INT32_MAX));
    return Status::ok();
  }
  int64_t value = 0;
  std::vector<uint8_t> attends(v->size(), 0);
  for (uint64_t i = 0; i < v->size(); ++i) {
    const int64_t n = v->int_at(i);
    if (n == 0) continue;
    if (n < 0 || n > INT32_MAX || (value != 0 && n != value))
      return error(
          ErrorCode::kUnsupported,
          fmt::format("{}: per-layer values of '{}' differ; not supported", f.name(), key));
    value = n;
    attends[i] = 1;
  }
  if (v->size() != static_cast<uint64_t>(hp.n_layer))
    return corrupt(f, fmt::format("'{}' has {} values for {} layers", key, v->size(), hp.n_layer));
  const bool all_attend = std::all_of(attends.begin(), attends.end(), [](uint8_t b) { return b; });
  hp.n_head_kv = value != 0 ? static_cast<int32_t>(value) : hp.n_head;
  if (!all_attend) hp.layer_attends = std::move(attends);
  return Status::ok();
}

Result<float> read_float(const gguf::File& f, const std::string& key, float fallback) {
  const gguf::Value* v = f.find(key);
  if (v == nullptr) return fallback;
  if (v->type() != gguf::ValueType::kF32)
    return corrupt(f, fmt::format("key '{}' is stored as {} where f32 is expected", key,
                                  gguf::value_type_name(v->type())));
  return static_cast<float>(*v->as_float());
}

Status read_rope(const gguf::File& f, const std::string& a, ModelHparams& hp) {
  RopeParams& r = hp.rope;
  HEARTH_ASSIGN_OR_RETURN(r.freq_base, read_float(f, a + ".rope.freq_base", 10000.0f));
  r.scaling = RopeScaling::kLinear;
  if (const gguf::Value* t = f.find(a + ".rope.scaling.type")) {
    auto s = t->as_string();
    if (!s) return corrupt(f, a + ".rope.scaling.type must be a string");
    if (*s == "none")
      r.scaling = RopeScaling::kNone;
    else if (*s == "linear")
      r.scaling = RopeScaling::kLinear;
    else if (*s == "yarn")
      r.scaling = RopeScaling::kYarn;
    else if (*s == "longrope")
      r.scaling = RopeScaling::kLongRope;
    else
      return error(ErrorCode::kUnsupported,
                   fmt::format("{}: unknown rope scaling type '{}'", f.name(), *s));
  }
  float factor = 0.0f;
  HEARTH_ASSIGN_OR_RETURN(factor, read_float(f, a + ".rope.scaling.factor", 0.0f));
  if (factor == 0.0f) {
    HEARTH_ASSIGN_OR_RETURN(factor, read_float(f, a + ".rope.scale_linear", 0.0f));
  }
  if (!(factor >= 0.0f) || !std::isfinite(factor))
    return corrupt(f, "rope scaling factor is not a finite positive number");
  r.freq_scale =
      (factor == 0.0f || r.scaling == RopeScaling::kNone || r.scaling == RopeScaling::kLongRope)
          ? 1.0f
          : 1.0f / factor;
  int64_t orig = 0;
  HEARTH_ASSIGN_OR_RETURN(
      orig, read_count(f, a + ".rope.scaling.original_context_length", hp.n_ctx_train, false));
  r.n_ctx_orig = static_cast<int32_t>(orig);
  float attn_factor = 1.0f;
  HEARTH_ASSIGN_OR_RETURN(attn_factor, read_float(f, a + ".rope.scaling.attn_factor", 1.0f));
  HEARTH_ASSIGN_OR_RETURN(r.yarn_beta_fast,
                          read_float(f, a + ".rope.scaling.yarn_beta_fast", 32.0f));
  HEARTH_ASSIGN_OR_RETURN(r.yarn_beta_slow,
                          read_float(f, a + ".rope.scaling.yarn_beta_slow", 1.0f));
  HEARTH_ASSIGN_OR_RETURN(r.yarn_log_multiplier,
                          read_float(f, a + ".rope.scaling.yarn_log_multiplier", 0.0f));
  r.attn_factor = attn_factor;
  if (r.scaling == RopeScaling::kYarn) {
    // The kernel multiplies by (1 + 0.1 ln s) again, so pre-divide (spec 4.4.3).
    r.yarn_ext_factor = 1.0f;
    const float s = 1.0f / r.freq_scale;
    auto mscale = [](float scale, float m) {
      return scale <= 1.0f ? 1.0f : 1.0f + 0.1f * m * std::log(scale);
    };
    float target = mscale(s, 1.0f);
    if (r.yarn_log_multiplier != 0.0f) target = mscale(s, 1.0f) / mscale(s, r.yarn_log_multiplier);
    r.attn_factor = target / (1.0f + 0.1f * std::log(s)) * attn_factor;
  }
  return Status::ok();
}

Status check_shapes(const gguf::File& f, const ModelHparams& hp) {
  auto bad = [&](const std::string& what) { return corrupt(f, what); };
  if (hp.n_embd <= 0 || hp.n_layer <= 0 || hp.n_head <= 0 || hp.n_ff <= 0)
    return bad(
        "embedding length, block count, head count and feed-forward length must be positive");
  if (hp.n_layer > 512) return bad(fmt::format("block count {} exceeds 512", hp.n_layer));
  if (hp.n_head_kv <= 0 || hp.n_head % hp.n_head_kv != 0)
    return bad(fmt::format("head count {} is not a multiple of the KV head count {}", hp.n_head,
                           hp.n_head_kv));
  if (hp.head_dim <= 0 || hp.head_dim_v <= 0) return bad("head dimensions must be positive");
  if (hp.n_rot <= 0 || hp.n_rot > hp.head_dim || hp.n_rot % 2 != 0)
    return bad(fmt::format("rope dimension count {} must be even and at most the head size {}",
                           hp.n_rot, hp.head_dim));
  if (!(hp.rms_eps > 0.0f) || !(hp.rope.freq_base > 0.0f))
    return bad("epsilon and rope base must be positive");
  constexpr int64_t kLimit = int64_t{1} << 24;
  if (hp.n_embd > kLimit || hp.n_ff > kLimit || hp.n_vocab > kLimit ||
      int64_t{hp.n_head} * hp.head_dim > kLimit)
    return bad("a model dimension is implausibly large");
  return Status::ok();
}

// The normalization epsilon (RMSNorm for decoders, LayerNorm for encoders: one of them is
// required), the attention's causality and the rank head's width.
Status read_norms(const gguf::File& f, const std::string& a, ModelHparams& hp) {
  const std::string rms_key = a + ".attention.layer_norm_rms_epsilon";
  const std::string ln_key = a + ".attention.layer_norm_epsilon";
  HEARTH_ASSIGN_OR_RETURN(hp.rms_eps, read_float(f, rms_key, 0.0f));
  HEARTH_ASSIGN_OR_RETURN(hp.norm_eps, read_float(f, ln_key, 0.0f));
  if (!f.find(rms_key) && !f.find(ln_key))
    return corrupt(f, fmt::format("required key '{}' is missing", rms_key));
  if (!f.find(rms_key)) hp.rms_eps = hp.norm_eps;  // checked positive like every epsilon
  if (const gguf::Value* c = f.find(a + ".attention.causal")) {
    if (c->type() != gguf::ValueType::kBool)
      return corrupt(f, a + ".attention.causal must be a bool");
    HEARTH_ASSIGN_OR_RETURN(hp.causal, f.get_bool(a + ".attention.causal"));
  }
  if (const gguf::Value* labels = f.find(a + ".classifier.output_labels")) {
    if (!labels->is_array() || labels->size() == 0 || labels->size() > 4096)
      return corrupt(f, a + ".classifier.output_labels must be a non-empty array");
    hp.n_cls_out = static_cast<int32_t>(labels->size());
  }
  return Status::ok();
}

// The expert counts and widths of mixture-of-experts models (all 0 for dense ones).
Status read_experts(const gguf::File& f, const std::string& a, ModelHparams& hp) {
  int64_t v = 0;
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".expert_count", 0, false));
  const int64_t n_expert = v;
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".expert_used_count", 0, false));
  const int64_t n_used = v;
  if (n_expert < 0 || n_expert > 4096 || n_used < 0 || n_used > n_expert ||
      (n_expert > 0 && n_used == 0))
    return corrupt(f, fmt::format("{} experts with {} used per token is not a valid mixture",
                                  n_expert, n_used));
  hp.n_expert = static_cast<int32_t>(n_expert);
  hp.n_expert_used = static_cast<int32_t>(n_used);
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".expert_feed_forward_length", 0, false));
  hp.n_ff_exp = static_cast<int32_t>(std::min<int64_t>(v, INT32_MAX));
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".expert_shared_feed_forward_length", 0, false));
  hp.n_ff_shexp = static_cast<int32_t>(std::min<int64_t>(v, INT32_MAX));
  return Status::ok();
}

// A count narrowed to int32, saturating; check_shapes rejects implausible sizes.
int32_t narrow(int64_t v) {
  return static_cast<int32_t>(std::min<int64_t>(v, INT32_MAX));
}

}  // namespace

Result<int64_t> read_u32_key(const gguf::File& file, const std::string& key, int64_t fallback) {
  return read_count(file, key, fallback, false);
}

Result<float> read_f32_key(const gguf::File& file, const std::string& key, float fallback) {
  return read_float(file, key, fallback);
}

Result<ModelHparams> read_hparams(const gguf::File& f) {
  ModelHparams hp;
  HEARTH_ASSIGN_OR_RETURN(auto arch, f.get_string("general.architecture"));
  hp.arch = std::string(arch);
  if (const gguf::Value* n = f.find("general.name"); n && n->as_string())
    hp.name = std::string(*n->as_string());
  const std::string a = hp.arch;
  int64_t v = 0;
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".context_length", 0, true));
  hp.n_ctx_train = narrow(v);
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".embedding_length", 0, true));
  hp.n_embd = narrow(v);
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".block_count", 0, true));
  hp.n_layer = narrow(v);
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".feed_forward_length", 0, true));
  hp.n_ff = narrow(v);
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".attention.head_count", 0, true));
  hp.n_head = narrow(v);
  HEARTH_RETURN_IF_ERROR(read_head_count_kv(f, a, hp));
  const int64_t default_dim = hp.n_head > 0 ? hp.n_embd / hp.n_head : 0;
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".attention.key_length", default_dim, false));
  hp.head_dim = narrow(v);
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".attention.value_length", default_dim, false));
  hp.head_dim_v = narrow(v);
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".rope.dimension_count", hp.head_dim, false));
  hp.n_rot = narrow(v);
  HEARTH_RETURN_IF_ERROR(read_norms(f, a, hp));
  HEARTH_RETURN_IF_ERROR(read_experts(f, a, hp));
  HEARTH_RETURN_IF_ERROR(read_rope(f, a, hp));
  HEARTH_ASSIGN_OR_RETURN(v, read_count(f, a + ".pooling_type", -1, false));
  if (v < -1 || v > static_cast<int64_t>(PoolingType::kRank))
    return corrupt(f, fmt::format("{}.pooling_type {} is not a pooling type", a, v));
  hp.pooling = static_cast<PoolingType>(v);
  if (const gguf::Value* vs = f.find(a + ".vocab_size")) {
    auto n = vs->as_uint();
    if (!n || vs->type() != gguf::ValueType::kU32)
      return corrupt(f, a + ".vocab_size must be a u32");
    hp.n_vocab = static_cast<int32_t>(std::min<uint64_t>(*n, INT32_MAX));
  } else if (const gguf::Value* toks = f.find("tokenizer.ggml.tokens"); toks && toks->is_array()) {
    hp.n_vocab = static_cast<int32_t>(std::min<uint64_t>(toks->size(), INT32_MAX));
  }
  HEARTH_RETURN_IF_ERROR(check_shapes(f, hp));
  return hp;
}

}  // namespace hearth::engine

#include "engine/context.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "kernels/quant.h"

namespace hearth::engine {

bool kv_type_supported(TensorType type, int32_t head_dim) {
  // Types whose rows Hearth can write and read back; each head must be whole blocks so
  // attention can read one head of a row.
  const bool known = type == TensorType::kF16 || type == TensorType::kF32 ||
                     type == TensorType::kBF16 || type == TensorType::kQ8_0;
  return known && kernels::can_quantize(type) &&
         head_dim % static_cast<int32_t>(traits_of(type).block_size) == 0;
}

namespace {

// The windows of the model's layers, and the size of their pools: what each sequence keeps
// (its window, the slack and a partial block at each end) plus one batch of new tokens and
// a copied tail per sequence, never more than a full pool.
void set_layer_windows(const Model& model, const ContextParams& p, KvCacheConfig& kv) {
  const auto& hp = model.hparams();
  int32_t widest = 0;
  kv.shape.layer_window.resize(static_cast<size_t>(hp.n_layer));
  for (int32_t il = 0; il < hp.n_layer; ++il) {
    kv.shape.layer_window[static_cast<size_t>(il)] = model.attention_window(il);
    widest = std::max(widest, model.attention_window(il));
  }
  if (widest == 0) {
    kv.shape.layer_window.clear();
    return;
  }
  kv.release_outside_windows = !p.swa_full;
  kv.window_slack = std::max(kv.window_slack, p.n_rollback + 1);
  if (p.swa_full || p.n_ubatch <= 0) return;
  const auto blocks = [&](int64_t n) { return (n + p.kv_block_size - 1) / p.kv_block_size; };
  const int64_t per_seq = blocks(int64_t{widest} - 1 + kv.window_slack) + 1;
  const int64_t n = int64_t{p.n_seq_max} * (per_seq + 2) + blocks(p.n_ubatch);
  kv.n_window_blocks = static_cast<int32_t>(std::min<int64_t>(n, kv.n_blocks));
}

// Hybrid models: the layers that keep a state row of their own take its size, with no V row.
void set_state_rows(const Model& model, KvCacheShape& shape) {
  const int32_t n_layer = model.hparams().n_layer;
  bool any = false;
  for (int32_t il = 0; il < n_layer; ++il) any = any || model.state_row_bytes(il) > 0;
  if (!any) return;
  shape.layer_k_row_bytes.assign(static_cast<size_t>(n_layer), shape.k_row_bytes);
  shape.layer_v_row_bytes.assign(static_cast<size_t>(n_layer), shape.v_row_bytes);
  for (int32_t il = 0; il < n_layer; ++il) {
    const int32_t bytes = model.state_row_bytes(il);
    if (bytes <= 0) continue;
    shape.layer_k_row_bytes[static_cast<size_t>(il)] = bytes;
    shape.layer_v_row_bytes[static_cast<size_t>(il)] = 0;
  }
}

}  // namespace

Context::Context(std::shared_ptr<const Model> model, const ContextParams& params)
    : model_(std::move(model)), params_(params) {}

Result<std::unique_ptr<Context>> Context::create(std::shared_ptr<const Model> model,
                                                 const ContextParams& params) {
  if (!model) return error(ErrorCode::kInvalidArgument, "no model");
  if (params.n_ctx <= 0 || params.n_seq_max <= 0 || params.kv_block_size <= 0)
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("context size {}, sequences {} and KV block size {} must be positive",
                             params.n_ctx, params.n_seq_max, params.kv_block_size));
  ContextParams p = params;
  if (p.n_threads <= 0) p.n_threads = ThreadPool::hardware_threads();
  if (p.n_threads_batch <= 0) p.n_threads_batch = p.n_threads;
  const auto& hp = model->hparams();
  if (!kv_type_supported(p.type_k, hp.head_dim) || !kv_type_supported(p.type_v, hp.head_dim_v))
    return error(
        ErrorCode::kInvalidArgument,
        fmt::format(
            "KV cache types {} / {} are not supported for heads of {} / {} values (use f16, bf16, "
            "f32 or q8_0)",
            tensor_type_name(p.type_k), tensor_type_name(p.type_v), hp.head_dim, hp.head_dim_v));
  std::unique_ptr<Context> ctx(new Context(std::move(model), p));
  KvCacheConfig kv;
  kv.shape = {
      hp.n_layer,
      static_cast<int32_t>(row_bytes(traits_of(p.type_k), static_cast<uint64_t>(hp.n_embd_k()))),
      static_cast<int32_t>(row_bytes(traits_of(p.type_v), static_cast<uint64_t>(hp.n_embd_v()))),
      {}};
  set_state_rows(ctx->model(), kv.shape);
  kv.block_size = p.kv_block_size;
  // Each sequence may leave its last block partly filled, hence the extra block per sequence.
  kv.n_blocks = (p.n_ctx + p.kv_block_size - 1) / p.kv_block_size + p.n_seq_max;
  kv.max_sequences = p.n_seq_max;
  set_layer_windows(ctx->model(), p, kv);
  ctx->kv_ = std::make_unique<KvCache>(kv);
  ctx->pool_ = std::make_unique<ThreadPool>(p.n_threads, p.placement);
  if (p.n_threads_batch != p.n_threads || !p.placement_batch.places_like(p.placement))
    ctx->pool_batch_ = std::make_unique<ThreadPool>(p.n_threads_batch, p.placement_batch);
  return ctx;
}

Status Context::validate(const Batch& batch) const {
  if (batch.empty()) return error(ErrorCode::kInvalidArgument, "empty batch");
  const int32_t n_vocab = model_->hparams().n_vocab;
  std::map<SeqId, int32_t> next_pos;
  for (int32_t i = 0; i < batch.size(); ++i) {
    const BatchToken& t = batch[i];
    if (t.embd == nullptr && (t.token < 0 || t.token >= n_vocab))
      return error(ErrorCode::kInvalidArgument,
                   fmt::format("token id {} is outside the vocabulary [0, {})", t.token, n_vocab));
    if (t.seq < 0 || t.seq >= params_.n_seq_max)
      return error(ErrorCode::kInvalidArgument,
                   fmt::format("sequence id {} is outside [0, {})", t.seq, params_.n_seq_max));
    auto [it, inserted] = next_pos.try_emplace(t.seq, kv_->length(t.seq));
    if (t.pos != it->second)
      return error(ErrorCode::kInvalidArgument,
                   fmt::format("token {} of sequence {} is at position {}, expected {}", i, t.seq,
                               t.pos, it->second));
    ++it->second;
    if (t.logits && !model_->has_lm_head())
      return error(ErrorCode::kInvalidArgument,
                   "the model has no output head: it computes embeddings only");
    if (present(model_->weights().position_embd) && t.pos >= model_->hparams().n_ctx_train)
      return error(ErrorCode::kInvalidArgument,
                   fmt::format("position {} is past the model's {} position embeddings", t.pos,
                               model_->hparams().n_ctx_train));
  }
  // A row that sees later positions needs them in this batch (their K/V rows are stored
  // before any row attends).
  for (int32_t i = 0; i < batch.size(); ++i) {
    const BatchToken& t = batch[i];
    if (t.visible_end < 0) continue;
    if (t.visible_end < t.pos || t.visible_end >= next_pos[t.seq])
      return error(ErrorCode::kInvalidArgument,
                   fmt::format("token {} of sequence {} at position {} sees up to position {}, "
                               "outside [{}, {}] (the sequence's positions in the batch)",
                               i, t.seq, t.pos, t.visible_end, t.pos, next_pos[t.seq] - 1));
  }
  return Status::ok();
}

Status Context::reserve_kv(const Batch& batch) {
  std::map<SeqId, int32_t> counts;
  for (const BatchToken& t : batch.tokens()) ++counts[t.seq];
  std::vector<std::pair<SeqId, int32_t>> grown;
  for (const auto& [seq, n] : counts) {
    const int32_t before = kv_->length(seq);
    Status s = kv_->grow(seq, n);
    if (!s.is_ok()) {
      for (const auto& [gseq, glen] : grown) kv_->truncate(gseq, glen);
      return error(ErrorCode::kResourceExhausted,
                   fmt::format("the KV cache is full ({} tokens): {}", params_.n_ctx, s.message()));
    }
    grown.emplace_back(seq, before);
  }
  return Status::ok();
}

void Context::prepare_scratch(int64_t T) {
  const auto& hp = model_->hparams();
  const auto size = [T](int64_t width) { return static_cast<size_t>(T * width); };
  scratch_.x.resize(size(hp.n_embd));
  scratch_.cur.resize(size(hp.n_embd));
  scratch_.out.resize(size(hp.n_embd));
  scratch_.q.resize(size(hp.n_embd_q()));
  scratch_.k.resize(size(hp.n_embd_k()));
  scratch_.v.resize(size(hp.n_embd_v()));
  scratch_.attn.resize(size(int64_t{hp.n_head} * hp.head_dim_v));
  scratch_.gate.resize(size(hp.n_ff));
  scratch_.up.resize(size(std::max(hp.n_ff, hp.n_ff_up)));
  scratch_.rope_cos.resize(size(hp.n_rot / 2));
  scratch_.rope_sin.resize(size(hp.n_rot / 2));
  if (hp.rope_swa) {
    scratch_.rope_cos_swa.resize(size(hp.n_rot / 2));
    scratch_.rope_sin_swa.resize(size(hp.n_rot / 2));
  }
}

// The per-pair rope divisors: rope_freqs, or phi3's long factors when a sequence may pass
// the model's original context, else its short ones (as the reference chooses them).
const std::vector<float>& Context::rope_factors() const {
  const auto& w = model_->weights();
  const auto& hp = model_->hparams();
  if (!w.rope_freqs.empty()) return w.rope_freqs;
  const int32_t n_ctx_seq = params_.n_ctx_seq > 0 ? params_.n_ctx_seq : params_.n_ctx;
  return n_ctx_seq > hp.rope.n_ctx_orig ? w.rope_long : w.rope_short;
}

void Context::compute_rope(const Batch& batch) {
  const auto& hp = model_->hparams();
  const int32_t half = hp.n_rot / 2;
  const auto& factors = rope_factors();
  if (hp.mrope != MultiRope::kNone) {
    compute_mrope(batch);
    return;
  }
  for (int32_t i = 0; i < batch.size(); ++i) {
    ops::rope_angles(hp.rope, hp.n_rot, factors.empty() ? nullptr : factors.data(), batch[i].pos,
                     scratch_.rope_cos.data() + i * half, scratch_.rope_sin.data() + i * half);
    if (hp.rope_swa)
      ops::rope_angles(*hp.rope_swa, hp.n_rot, nullptr, batch[i].pos,
                       scratch_.rope_cos_swa.data() + i * half,
                       scratch_.rope_sin_swa.data() + i * half);
  }
}

// M-RoPE models: each row rotated by its four position components (BatchToken::rope; a row
// without them by its pos in all four, which is the 1-D rope at pos).
void Context::compute_mrope(const Batch& batch) {
  const auto& hp = model_->hparams();
  const int32_t half = hp.n_rot / 2;
  const auto& factors = rope_factors();
  const float* ff = factors.empty() ? nullptr : factors.data();
  if (mrope_component_.size() != static_cast<size_t>(half)) {
    mrope_component_.resize(static_cast<size_t>(half));
    for (int32_t i = 0; i < half; ++i)
      mrope_component_[static_cast<size_t>(i)] = static_cast<uint8_t>(
          ops::mrope_component(hp.rope_sections, hp.mrope == MultiRope::kInterleaved, i));
  }
  for (int32_t i = 0; i < batch.size(); ++i) {
    const BatchToken& t = batch[i];
    float* c = scratch_.rope_cos.data() + i * half;
    float* s = scratch_.rope_sin.data() + i * half;
    if (t.rope.t < 0 || (t.rope.h == t.rope.t && t.rope.w == t.rope.t && t.rope.e == t.rope.t)) {
      ops::rope_angles(hp.rope, hp.n_rot, ff, t.rope.t < 0 ? t.pos : t.rope.t, c, s);
      continue;
    }
    const int32_t pos[4] = {t.rope.t, t.rope.h, t.rope.w, t.rope.e};
    ops::mrope_angles(hp.rope, hp.n_rot, ff, pos, mrope_component_.data(), c, s);
  }
}

void Context::compute_logits(const Batch& batch, ThreadPool& pool) {
  const auto& hp = model_->hparams();
  const auto& w = model_->weights();
  const int64_t E = hp.n_embd;
  logits_row_.assign(static_cast<size_t>(batch.size()), -1);
  if (params_.embeddings) {
    embd_.resize(keep_.size() * static_cast<size_t>(E));
    for (size_t r = 0; r < keep_.size(); ++r)
      model_->final_hidden(scratch_.x.data() + static_cast<int64_t>(r) * E,
                           embd_.data() + static_cast<int64_t>(r) * E);
  }
  std::vector<float> rows;  // normalized final hidden states of the rows that want logits
  int32_t n_out = 0;
  for (int32_t i = 0; i < batch.size(); ++i) {
    if (!batch[i].logits) continue;
    const int64_t r = out_row_[static_cast<size_t>(i)];
    logits_row_[static_cast<size_t>(i)] = n_out++;
    rows.resize(static_cast<size_t>(n_out * E));
    float* row = rows.data() + (n_out - 1) * E;
    if (params_.embeddings) {
      std::copy_n(embd_.data() + r * E, E, row);
    } else {
      model_->final_hidden(scratch_.x.data() + r * E, row);
    }
  }
  logits_.resize(static_cast<size_t>(n_out) * static_cast<size_t>(hp.n_vocab));
  if (n_out == 0) return;
  kernels::matmul(w.output, rows.data(), n_out, logits_.data(), pool, params_.precision);
  if (!w.output_bias.empty()) {
    for (int32_t r = 0; r < n_out; ++r)
      ops::add_inplace(logits_.data() + r * hp.n_vocab, w.output_bias.data(), hp.n_vocab);
  }
  if (hp.logit_scale > 0.0f) {
    const float inv = 1.0f / hp.logit_scale;
    for (float& v : logits_) v *= inv;
  }
  if (const float cap = hp.final_logit_softcap; cap > 0.0f) {
    // As the reference's graph: scale by 1/cap, tanh, scale by cap.
    const float inv = 1.0f / cap;
    for (float& v : logits_) v = std::tanh(v * inv) * cap;
  }
}

// The rows whose final state is wanted (logits, or an output row with embeddings on); the
// last layer runs past attention for those only. A batch that wants none keeps its first
// row, so every layer has a row to work on.
void Context::choose_outputs(const Batch& batch) {
  keep_.clear();
  out_row_.assign(static_cast<size_t>(batch.size()), -1);
  for (int32_t i = 0; i < batch.size(); ++i) {
    if (batch[i].logits || (params_.embeddings && batch[i].output)) keep_.push_back(i);
  }
  if (keep_.empty()) keep_.push_back(0);
  for (size_t r = 0; r < keep_.size(); ++r)
    out_row_[static_cast<size_t>(keep_[r])] = static_cast<int32_t>(r);
}

Status Context::decode(const Batch& batch) {
  HEARTH_RETURN_IF_ERROR(validate(batch));
  HEARTH_RETURN_IF_ERROR(reserve_kv(batch));
  ThreadPool& pool = (batch.size() > 1 && pool_batch_) ? *pool_batch_ : *pool_;
  prepare_scratch(batch.size());
  compute_rope(batch);
  ForwardState st{*model_,
                  *kv_,
                  params_.type_k,
                  params_.type_v,
                  params_.precision,
                  pool,
                  std::span<const BatchToken>(batch.tokens()),
                  scratch_};
  choose_outputs(batch);
  model_->embed_input(st);
  const int32_t n_layer = model_->hparams().n_layer;
  for (int32_t il = 0; il < n_layer; ++il) {
    if (il == n_layer - 1 && keep_.size() < static_cast<size_t>(batch.size()))
      st.keep_rows = &keep_;
    model_->forward_layer(il, st);
  }
  // The windowed rows this batch's tokens were the last to need go back to their pool.
  // Once per run of one sequence's tokens (batches list them together; any order is correct).
  for (int32_t i = 0; i < batch.size(); ++i)
    if (i == 0 || batch[i].seq != batch[i - 1].seq) kv_->release_windows(batch[i].seq);
  compute_logits(batch, pool);
  return Status::ok();
}

std::vector<float> Context::pool(PoolingType type, const float* rows, int64_t n_tokens) {
  return pool_sequence(*model_, type, rows, n_tokens, *pool_, params_.precision);
}

std::span<const float> Context::embedding(int32_t i) const {
  const auto E = static_cast<size_t>(model_->hparams().n_embd);
  if (!params_.embeddings || i < 0 || static_cast<size_t>(i) >= out_row_.size() ||
      out_row_[static_cast<size_t>(i)] < 0)
    return {};
  return {embd_.data() + static_cast<size_t>(out_row_[static_cast<size_t>(i)]) * E, E};
}

std::span<const float> Context::logits(int32_t i) const {
  if (i < 0 || static_cast<size_t>(i) >= logits_row_.size() ||
      logits_row_[static_cast<size_t>(i)] < 0)
    return {};
  const size_t n_vocab = static_cast<size_t>(model_->hparams().n_vocab);
  return {logits_.data() + static_cast<size_t>(logits_row_[static_cast<size_t>(i)]) * n_vocab,
          n_vocab};
}

}  // namespace hearth::engine

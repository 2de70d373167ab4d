#include "tools/bench/runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <map>
#include <random>

namespace hearth::bench {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

std::vector<int32_t> random_tokens(int32_t n, int32_t n_vocab, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int32_t> dist(0, n_vocab - 1);
  std::vector<int32_t> out(static_cast<size_t>(n));
  for (auto& t : out) t = dist(rng);
  return out;
}

// Decodes `all` in consecutive pieces of at most `chunk` tokens.
Status decode_in_chunks(engine::Context& ctx, const engine::Batch& all, int32_t chunk) {
  engine::Batch part;
  for (int32_t begin = 0; begin < all.size(); begin += chunk) {
    part.clear();
    const int32_t end = std::min(all.size(), begin + chunk);
    for (int32_t i = begin; i < end; ++i)
      part.add(all[i].token, all[i].pos, all[i].seq, all[i].logits);
    HEARTH_RETURN_IF_ERROR(ctx.decode(part));
  }
  return Status::ok();
}

std::string params_label(uint64_t n) {
  const auto d = static_cast<double>(n);
  if (d >= 1e9) return fmt::format("{:.1f}B", d / 1e9);
  if (d >= 1e6) return fmt::format("{:.0f}M", d / 1e6);
  return fmt::format("{:.0f}K", d / 1e3);
}

// The type holding most of the bytes of the matrices, upper case ("Q4_0").
std::string main_weight_type(const gguf::Archive& archive) {
  std::map<TensorType, uint64_t> bytes;
  for (const gguf::TensorInfo* t : archive.tensors())
    if (t->n_dims >= 2) bytes[t->type] += t->n_bytes;
  if (bytes.empty()) return "?";
  const auto it = std::max_element(
      bytes.begin(), bytes.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
  std::string name(tensor_type_name(it->first));
  for (char& c : name) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name;
}

}  // namespace

ModelInfo describe_model(const std::string& path, const engine::Model& model) {
  ModelInfo info;
  info.path = path;
  const gguf::Archive& archive = model.archive();
  const auto& w = model.weights();
  const bool tied = w.output.data == w.token_embd.data;
  for (const gguf::TensorInfo* t : archive.tensors()) {
    info.size_bytes += t->n_bytes;
    info.n_params += static_cast<uint64_t>(t->n_elements());
    // A decode step reads one row of an untied embedding matrix, not the whole of it.
    const bool embedding_only = !tied && t->data == w.token_embd.data;
    if (!embedding_only) info.streamed_bytes += t->n_bytes;
    if (t->name.find("_exps.") != std::string_view::npos) info.expert_bytes += t->n_bytes;
  }
  info.n_expert = model.hparams().n_expert;
  info.n_expert_used = model.hparams().n_expert_used;
  info.n_vocab = model.hparams().n_vocab;
  info.desc = fmt::format("{} {} {}", model.hparams().arch, params_label(info.n_params),
                          main_weight_type(archive));
  return info;
}

double ModelInfo::step_bytes(int32_t n_seq) const {
  if (n_expert <= 0 || expert_bytes == 0) return static_cast<double>(streamed_bytes);
  const double untouched =
      std::pow(1.0 - static_cast<double>(n_expert_used) / n_expert, std::max(1, n_seq));
  return static_cast<double>(streamed_bytes - expert_bytes) +
         static_cast<double>(expert_bytes) * (1.0 - untouched);
}

Status warm_up(engine::Context& ctx, int32_t n_tokens, uint32_t seed) {
  ctx.kv_cache().clear_all();
  const auto tokens = random_tokens(n_tokens, ctx.model().hparams().n_vocab, seed);
  engine::Batch batch;
  for (int32_t i = 0; i < n_tokens; ++i)
    batch.add(tokens[static_cast<size_t>(i)], i, 0, i + 1 == n_tokens);
  Status s = batch.empty() ? Status::ok() : ctx.decode(batch);
  ctx.kv_cache().clear_all();
  return s;
}

Result<TimedRuns> run_prompt(engine::Context& ctx, int32_t n_prompt, const RunParams& p) {
  const auto tokens = random_tokens(n_prompt, ctx.model().hparams().n_vocab, p.seed);
  engine::Batch all;
  for (int32_t i = 0; i < n_prompt; ++i)
    all.add(tokens[static_cast<size_t>(i)], i, 0, i + 1 == n_prompt);
  if (p.warmup) HEARTH_RETURN_IF_ERROR(warm_up(ctx, std::min(n_prompt, p.chunk), p.seed + 1));
  TimedRuns runs;
  for (int32_t r = 0; r < p.repetitions; ++r) {
    ctx.kv_cache().clear_all();
    const int64_t t0 = now_ns();
    HEARTH_RETURN_IF_ERROR(decode_in_chunks(ctx, all, p.chunk));
    runs.ns.push_back(now_ns() - t0);
  }
  ctx.kv_cache().clear_all();
  return runs;
}

Result<TimedRuns> run_generation(engine::Context& ctx, int32_t n_gen, const RunParams& p) {
  const auto tokens = random_tokens(n_gen, ctx.model().hparams().n_vocab, p.seed);
  if (p.warmup) HEARTH_RETURN_IF_ERROR(warm_up(ctx, 1, p.seed + 1));
  TimedRuns runs;
  engine::Batch step;
  for (int32_t r = 0; r < p.repetitions; ++r) {
    ctx.kv_cache().clear_all();
    const int64_t t0 = now_ns();
    for (int32_t i = 0; i < n_gen; ++i) {
      step.clear();
      step.add(tokens[static_cast<size_t>(i)], i, 0, true);
      HEARTH_RETURN_IF_ERROR(ctx.decode(step));
    }
    runs.ns.push_back(now_ns() - t0);
  }
  ctx.kv_cache().clear_all();
  // Step i attends to i + 1 rows.
  runs.kv_bytes_per_step = static_cast<double>(ctx.kv_cache().token_bytes()) * (n_gen + 1) / 2.0;
  return runs;
}

Result<BatchedRun> run_batched(engine::Context& ctx, int32_t pp, int32_t tg, int32_t pl,
                               const RunParams& p) {
  BatchedRun run{pp, tg, pl, pl * (pp + tg), 0, 0, 0};
  const int32_t n_vocab = ctx.model().hparams().n_vocab;
  const auto tokens = random_tokens(pl * (pp + tg), n_vocab, p.seed);
  size_t next = 0;
  engine::Batch batch;
  // As llama-batched-bench: every sequence's prompt in one batch, logits for the last token.
  for (int32_t s = 0; s < pl; ++s)
    for (int32_t j = 0; j < pp; ++j) batch.add(tokens[next++], j, s, s + 1 == pl && j + 1 == pp);
  ctx.kv_cache().clear_all();
  const int64_t t_pp = now_ns();
  if (!batch.empty()) HEARTH_RETURN_IF_ERROR(decode_in_chunks(ctx, batch, p.chunk));
  const int64_t t_tg = now_ns();
  for (int32_t i = 0; i < tg; ++i) {
    batch.clear();
    for (int32_t s = 0; s < pl; ++s) batch.add(tokens[next++], pp + i, s, true);
    HEARTH_RETURN_IF_ERROR(ctx.decode(batch));
  }
  const int64_t t_end = now_ns();
  ctx.kv_cache().clear_all();
  run.t_pp = static_cast<double>(t_tg - t_pp) / 1e9;
  run.t_tg = static_cast<double>(t_end - t_tg) / 1e9;
  run.kv_bytes_per_step =
      static_cast<double>(ctx.kv_cache().token_bytes()) * pl * (pp + (tg + 1) / 2.0);
  return run;
}

}  // namespace hearth::bench

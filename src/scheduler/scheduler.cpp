#include "scheduler/scheduler.h"

#include <fmt/format.h>

#include <algorithm>
#include <future>
#include <utility>

#include "base/log.h"
#include "base/thread_placement.h"
#include "base/timer.h"
#include "scheduler/cpu_placement.h"
#include "scheduler/scheduler_impl.h"

namespace hearth::scheduler {
namespace detail {

SchedulerImpl::SchedulerImpl(std::shared_ptr<const engine::Model> model,
                             std::shared_ptr<const tokenizer::Tokenizer> tok,
                             const SchedulerConfig& config, std::unique_ptr<engine::Context> ctx,
                             std::unique_ptr<engine::Context> draft_ctx)
    : model_(std::move(model)),
      tok_(std::move(tok)),
      config_(config),
      ctx_(std::move(ctx)),
      intake_(TaskLimits(*model_, config_), config_.max_queued, board_),
      loop_(*model_, *tok_, config_, *ctx_, std::move(draft_ctx), intake_, board_) {}

void SchedulerImpl::start() {
  std::lock_guard<std::mutex> lock(thread_mu_);
  if (thread_.joinable() || intake_.stopped()) return;
  thread_ = std::thread([this] {
    name_current_thread("hearth-sched");  // tells it apart in /proc (tests read it)
    loop_.run();
  });
}

void SchedulerImpl::stop() {
  if (!intake_.begin_stop()) return;
  {
    std::lock_guard<std::mutex> lock(thread_mu_);
    if (thread_.joinable()) thread_.join();
  }
  loop_.shutdown();
  intake_.end_stop();
}

Status SchedulerImpl::submit(TaskRequest request) {
  std::vector<TaskRequest> one;
  one.push_back(std::move(request));
  return submit_all(std::move(one));
}

Status SchedulerImpl::submit_all(std::vector<TaskRequest> requests) {
  std::vector<Pending> pending;
  pending.reserve(requests.size());
  for (TaskRequest& request : requests) {
    if (!request.sink) return error(ErrorCode::kInvalidArgument, "task without a sink");
    if (request.kind != TaskKind::kCompletion && request.n_cmpl != 1)
      return error(ErrorCode::kInvalidArgument, "embedding and rerank tasks run once (n_cmpl 1)");
    if (request.n_cmpl < 1 || request.n_cmpl > config_.n_slots)
      return error(ErrorCode::kInvalidArgument,
                   fmt::format("n_cmpl {} is outside [1, {}]", request.n_cmpl, config_.n_slots));
    Pending p;
    p.t_queued_us = now_us();
    p.prompt = std::make_shared<const std::vector<int32_t>>(std::move(request.prompt));
    p.req = std::move(request);
    pending.push_back(std::move(p));
  }
  return intake_.push(std::move(pending));
}

// Queued for the scheduler thread, which runs it between engine steps once the slot is idle.
void SchedulerImpl::slot_action(SlotActionKind kind, int32_t id, std::string path,
                                SlotActionDone done) {
  if (id < 0 || id >= config_.n_slots) {
    done(error(ErrorCode::kInvalidArgument,
               fmt::format("slot id {} is outside [0, {})", id, config_.n_slots)));
    return;
  }
  auto action = std::make_unique<SlotAction>();
  action->kind = kind;
  action->slot = id;
  action->path = std::move(path);
  action->done = std::move(done);
  if (!intake_.push_action(action))
    action->done(error(ErrorCode::kResourceExhausted, "the server is shutting down"));
}

}  // namespace detail

Histogram::Histogram(std::vector<double> upper_bounds)
    : bounds(std::move(upper_bounds)), counts(bounds.size() + 1, 0) {}

void Histogram::observe(double value) {
  const auto at = std::lower_bound(bounds.begin(), bounds.end(), value) - bounds.begin();
  ++counts[static_cast<size_t>(at)];
  sum += value;
  ++count;
}

void Histogram::absorb(Histogram& other) {
  for (size_t i = 0; i < counts.size(); ++i) counts[i] += std::exchange(other.counts[i], 0);
  sum += std::exchange(other.sum, 0.0);
  count += std::exchange(other.count, 0);
}

std::vector<double> time_to_first_token_buckets() {
  return {0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25, 0.5,
          0.75,  1.0,   2.5,  5.0,  7.5,  10.0, 20.0, 40.0, 80.0};
}

std::vector<double> time_per_output_token_buckets() {
  return {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2,  0.3,  0.4, 0.5,
          0.75, 1.0,   2.5,  5.0,   7.5, 10.0, 20.0, 40.0, 80.0};
}

namespace {

Result<SlotFileResult> wait_for_action(Scheduler& scheduler, SlotActionKind kind, int32_t id,
                                       std::string path) {
  std::promise<Result<SlotFileResult>> promise;
  std::future<Result<SlotFileResult>> future = promise.get_future();
  scheduler.slot_action(kind, id, std::move(path),
                        [&promise](Result<SlotFileResult> r) { promise.set_value(std::move(r)); });
  return future.get();
}

}  // namespace

Result<EncodedMedia> Scheduler::encode_media(std::span<const uint8_t>, const std::atomic<bool>*) {
  return error(ErrorCode::kUnsupported, "the model has no multimodal projector");
}

Result<SlotFileResult> Scheduler::save_slot(int32_t id, const std::string& path) {
  return wait_for_action(*this, SlotActionKind::kSave, id, path);
}

Result<SlotFileResult> Scheduler::restore_slot(int32_t id, const std::string& path) {
  return wait_for_action(*this, SlotActionKind::kRestore, id, path);
}

Result<int32_t> Scheduler::erase_slot(int32_t id) {
  Result<SlotFileResult> r = wait_for_action(*this, SlotActionKind::kErase, id, {});
  if (!r.is_ok()) return r.status();
  return r->n_tokens;
}

namespace {

// The draft model's context: a sequence per slot, the target's context size, the draft's
// own KV types and threads. Its vocabulary must be the target's (the ids are compared).
Result<std::unique_ptr<engine::Context>> create_draft_context(const engine::Model& target,
                                                              const SchedulerConfig& config,
                                                              const engine::ContextParams& cp,
                                                              const PoolPlacements& placements) {
  const DraftModelParams& d = config.spec.draft;
  if (!d.model) return error(ErrorCode::kInvalidArgument, "draft-simple needs a draft model (-md)");
  if (d.model->hparams().n_vocab != target.hparams().n_vocab)
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("the draft model's vocabulary ({} tokens) differs from the target "
                             "model's ({} tokens)",
                             d.model->hparams().n_vocab, target.hparams().n_vocab));
  engine::ContextParams dp = cp;
  dp.type_k = d.type_k;
  dp.type_v = d.type_v;
  dp.n_threads = d.n_threads > 0 ? d.n_threads : cp.n_threads;
  dp.n_threads_batch = d.n_threads_batch > 0 ? d.n_threads_batch : dp.n_threads;
  dp.placement = placements.draft;
  dp.placement_batch = placements.draft_batch;
  dp.embeddings = false;
  dp.n_rollback = d.n_max + 1;
  return engine::Context::create(d.model, dp);
}

// Each pool's thread count as the contexts will resolve it (0: hardware threads, the batch
// pools as their generation pools), which a strict CPU mask is laid out over.
PoolThreads pool_threads(const SchedulerConfig& config) {
  PoolThreads t;
  t.gen = config.n_threads > 0 ? config.n_threads : ThreadPool::hardware_threads();
  t.batch = config.n_threads_batch > 0 ? config.n_threads_batch : t.gen;
  const DraftModelParams& d = config.spec.draft;
  if (!config.spec.draft_simple) return t;
  t.draft = d.n_threads > 0 ? d.n_threads : t.gen;
  t.draft_batch = d.n_threads_batch > 0 ? d.n_threads_batch : t.draft;
  return t;
}

// --warmup: one forward pass over BOS and EOS (or token 0 when the vocabulary has neither),
// as the reference warms a model up, so the first request does not pay for first-touch page
// faults and thread start-up; then the KV cache is cleared whole, which leaves it as a fresh
// one (the same free blocks in the same order), so no later output can tell it ran. A run
// that fails is only logged: the reference ignores the warm-up decode's result too.
void warm_up(engine::Context& ctx, const tokenizer::Tokenizer& tok) {
  log_info("warming up the model with an empty run - please wait ... (--no-warmup to disable)");
  std::vector<int32_t> tokens;
  for (const tokenizer::TokenId id : {tok.bos(), tok.eos()})
    if (id != tokenizer::kNoToken && id < ctx.model().hparams().n_vocab) tokens.push_back(id);
  if (tokens.empty()) tokens.push_back(0);
  engine::Batch batch;
  const bool logits = ctx.model().has_lm_head();
  for (size_t i = 0; i < tokens.size(); ++i)
    batch.add(tokens[i], static_cast<int32_t>(i), 0, logits && i + 1 == tokens.size());
  if (const Status decoded = ctx.decode(batch); !decoded.is_ok())
    log_warn("the warm-up run failed: {}", decoded.message());
  ctx.kv_cache().clear_all();
}

}  // namespace

Result<std::unique_ptr<Scheduler>> Scheduler::create(
    std::shared_ptr<const engine::Model> model, std::shared_ptr<const tokenizer::Tokenizer> tok,
    const SchedulerConfig& config) {
  if (!model || !tok)
    return error(ErrorCode::kInvalidArgument, "scheduler needs a model and a tokenizer");
  if (config.n_slots < 1 || config.n_ctx_slot < 2 || config.n_batch < 1 || config.n_ubatch < 1)
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("invalid scheduler config: {} slots of {} tokens, batch {}, ubatch {}",
                             config.n_slots, config.n_ctx_slot, config.n_batch, config.n_ubatch));
  const engine::ModelHparams& hp = model->hparams();
  if (!engine::kv_type_supported(config.type_k, hp.head_dim))
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("KV cache type {} (-ctk) is not supported for heads of {} values",
                             tensor_type_name(config.type_k), hp.head_dim));
  if (!engine::kv_type_supported(config.type_v, hp.head_dim_v))
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("KV cache type {} (-ctv) is not supported for heads of {} values",
                             tensor_type_name(config.type_v), hp.head_dim_v));
  engine::ContextParams cp;
  // Separate slots get a context each; a unified cache is one pool of n_ctx_slot tokens that
  // every slot draws from (llama-server's -kvu, forced by -np auto).
  cp.n_ctx = config.kv_unified ? config.n_ctx_slot : config.n_slots * config.n_ctx_slot;
  cp.n_ctx_seq = config.n_ctx_slot;
  cp.n_seq_max = config.n_slots;
  cp.n_threads = config.n_threads;
  cp.n_threads_batch = config.n_threads_batch;
  HEARTH_ASSIGN_OR_RETURN(
      PoolPlacements placements,
      resolve_placements(config, pool_threads(config), CpuEnvironment::current()));
  cp.placement = placements.gen;
  cp.placement_batch = placements.batch;
  cp.type_k = config.type_k;
  cp.type_v = config.type_v;
  cp.embeddings = config.embeddings;
  cp.n_ubatch = config.n_ubatch;
  cp.swa_full = config.swa_full;
  cp.n_rollback = config.spec.max_draft();
  SchedulerConfig adjusted = config;
  // An encoder attends to its whole input, so an input is one forward call: a step holds no
  // more than one physical batch.
  if (!hp.causal) adjusted.n_batch = std::min(config.n_batch, config.n_ubatch);
  if (config.embeddings && config.pooling == engine::PoolingType::kUnspecified)
    return error(ErrorCode::kInvalidArgument, "embeddings need a resolved pooling type");
  HEARTH_ASSIGN_OR_RETURN(auto ctx, engine::Context::create(model, cp));
  if (config.warmup) warm_up(*ctx, *tok);
  std::unique_ptr<engine::Context> draft_ctx;
  if (config.spec.draft_simple) {
    HEARTH_ASSIGN_OR_RETURN(draft_ctx, create_draft_context(*model, config, cp, placements));
  }
  std::unique_ptr<detail::MediaEncoder> media;
  const MediaConfig& mc = config.media;
  // Media rows are the model's input width: n_embd, or with deepstack (qwen3vl) the main
  // embedding and one slice per deepstack layer.
  const int32_t width = hp.n_embd_inp();
  const int32_t image_width = mc.projector ? mc.projector->n_embd_out() : width;
  const int32_t audio_width = mc.audio_projector ? mc.audio_projector->n_embd_out() : width;
  if (image_width != width || audio_width != width) {
    return error(ErrorCode::kInvalidArgument,
                 fmt::format("the projector's output width ({}) differs from the model's "
                             "input embedding width ({})",
                             image_width != width ? image_width : audio_width, width));
  }
  if (mc.projector || mc.audio_projector) {
    // Media are encoded with the prompt-processing threads (-tb).
    HEARTH_ASSIGN_OR_RETURN(media,
                            detail::MediaEncoder::create(mc, pool_threads(config).batch,
                                                         hp.mrope != engine::MultiRope::kNone));
  }
  auto impl = std::make_unique<detail::SchedulerImpl>(std::move(model), std::move(tok), adjusted,
                                                      std::move(ctx), std::move(draft_ctx));
  impl->set_media_encoder(std::move(media));
  return std::unique_ptr<Scheduler>(std::move(impl));
}

}  // namespace hearth::scheduler

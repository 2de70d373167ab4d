#include "support/fake_scheduler.h"

#include <algorithm>
#include <chrono>

#include "gguf/file.h"

namespace hearth::test {

using namespace hearth::scheduler;

namespace {

constexpr int32_t kDefaultTokens = 8;
constexpr int32_t kMaxTokens = 64;

}  // namespace

std::shared_ptr<const tokenizer::Tokenizer> load_tokenizer(const std::string& gguf_path) {
  auto archive = gguf::Archive::open(gguf_path);
  if (!archive.is_ok()) return nullptr;
  auto tok = tokenizer::Tokenizer::from_gguf(archive->primary());
  if (!tok.is_ok()) return nullptr;
  return std::make_shared<const tokenizer::Tokenizer>(std::move(*tok));
}

FakeScheduler::FakeScheduler(std::shared_ptr<const tokenizer::Tokenizer> tok,
                             SchedulerConfig config)
    : tok_(std::move(tok)), config_(config) {}

FakeScheduler::~FakeScheduler() {
  stop();
}

void FakeScheduler::start() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (thread_.joinable() || stopping_) return;
  thread_ = std::thread([this] { run(); });
}

void FakeScheduler::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
  std::deque<TaskRequest> left;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    left.swap(queue_);
  }
  const TaskError err{TaskError::Kind::kUnavailable, "the server is shutting down"};
  for (TaskRequest& r : left) {
    for (int32_t j = 0; j < r.n_cmpl; ++j) r.sink->on_error(r.index + j, err);
  }
}

Status FakeScheduler::submit(TaskRequest request) {
  std::vector<TaskRequest> one;
  one.push_back(std::move(request));
  return submit_all(std::move(one));
}

Status FakeScheduler::submit_all(std::vector<TaskRequest> requests) {
  for (const TaskRequest& r : requests) {
    if (!r.sink || r.n_cmpl < 1 || r.n_cmpl > config_.n_slots) {
      return error(ErrorCode::kInvalidArgument, "invalid task");
    }
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopping_) return error(ErrorCode::kResourceExhausted, "scheduler stopped");
    if (queue_.size() + requests.size() > static_cast<size_t>(config_.max_queued)) {
      return error(ErrorCode::kResourceExhausted, "queue full");
    }
    for (TaskRequest& r : requests) queue_.push_back(std::move(r));
  }
  cv_.notify_all();
  return Status::ok();
}

std::vector<SlotInfo> FakeScheduler::slots() const {
  std::vector<SlotInfo> out;
  for (int32_t i = 0; i < config_.n_slots; ++i) {
    SlotInfo info;
    info.id = i;
    info.n_ctx = config_.n_ctx_slot;
    out.push_back(info);
  }
  return out;
}

bool FakeScheduler::has_idle_slot() const {
  return true;
}

MetricsSnapshot FakeScheduler::metrics(bool) {
  std::lock_guard<std::mutex> lock(mutex_);
  return metrics_;
}

void FakeScheduler::slot_action(SlotActionKind kind, int32_t id, std::string, SlotActionDone done) {
  if (id < 0 || id >= config_.n_slots) {
    done(error(ErrorCode::kInvalidArgument, "slot id out of range"));
  } else if (kind == SlotActionKind::kErase) {
    done(SlotFileResult{});
  } else {
    done(error(ErrorCode::kIo, "the fake scheduler keeps no files"));
  }
}

void FakeScheduler::set_output(std::vector<int32_t> tokens) {
  std::lock_guard<std::mutex> lock(mutex_);
  output_ = std::move(tokens);
}

size_t FakeScheduler::tasks_run() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return tasks_run_;
}

void FakeScheduler::run() {
  for (;;) {
    TaskRequest request;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      cv_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      request = std::move(queue_.front());
      queue_.pop_front();
    }
    for (int32_t copy = 0; copy < request.n_cmpl; ++copy) run_task(request, copy);
  }
}

void FakeScheduler::run_task(const TaskRequest& request, int32_t copy) {
  const int32_t index = request.index + copy;
  TaskSink& sink = *request.sink;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++tasks_run_;
    ++metrics_.n_decode_total;
  }
  if (sink.cancelled()) return;
  for (int32_t t : request.prompt) {
    if (t < 0 || t >= tok_->n_vocab()) {
      sink.on_error(index, {TaskError::Kind::kInvalidRequest, "Prompt contains invalid tokens"});
      return;
    }
  }
  const auto n_prompt = static_cast<int32_t>(request.prompt.size());
  if (n_prompt >= config_.n_ctx_slot) {
    sink.on_error(index, {TaskError::Kind::kExceedContext, "request exceeds the context", n_prompt,
                          config_.n_ctx_slot});
    return;
  }
  const TaskParams& params = request.params;
  if (copy == 0) sink.on_start(index);
  if (params.stream && params.return_progress) sink.on_progress(index, {n_prompt, 0, n_prompt, 0});
  std::vector<int32_t> output;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    output = output_;
  }
  int32_t n_predict =
      params.n_predict < 0 ? kDefaultTokens : std::clamp(params.n_predict, 1, kMaxTokens);
  const bool scripted = !output.empty();
  if (scripted) {
    // The script is the model's whole answer, up to the request's budget.
    const auto length = static_cast<int32_t>(std::min<size_t>(output.size(), 4096));
    n_predict = params.n_predict < 0 ? length : std::min(std::max(params.n_predict, 1), length);
  }
  FinalResult final;
  final.index = index;
  final.id_slot = copy;
  final.prompt = request.prompt;
  for (int32_t i = 0; i < n_predict; ++i) {
    while (sink.backlogged() && !sink.cancelled()) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (sink.cancelled()) return;
    const int32_t token = scripted ? output[static_cast<size_t>(i)]
                          : request.prompt.empty()
                              ? 0
                              : request.prompt[static_cast<size_t>(i) % request.prompt.size()];
    const std::string piece = tok_->token_to_piece(token, false);
    final.generated.push_back(token);
    final.content += piece;
    if (!params.stream) continue;
    PartialResult partial;
    partial.index = index;
    partial.content = piece;
    partial.token = token;
    partial.n_predicted = i + 1;
    partial.n_evaluated = n_prompt;
    if (params.n_probs > 0) {
      TokenProbs probs;
      probs.id = token;
      probs.p = 1.0f;
      probs.text = piece;
      probs.top.push_back({token, 1.0f});
      partial.probs = std::move(probs);
    }
    sink.on_partial(std::move(partial));
  }
  final.n_predicted = n_predict;
  final.n_evaluated = n_prompt;
  final.n_cached = n_prompt + n_predict;
  const bool ends = scripted && static_cast<size_t>(n_predict) == output.size();
  final.stop_type = ends ? StopType::kEos : StopType::kLimit;
  final.seed = params.sampling.seed;
  sink.on_final(std::move(final));
}

}  // namespace hearth::test

#include "support/fake_scheduler.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <fstream>

#include "engine/pooling.h"
#include "gguf/file.h"

namespace hearth::test {

using namespace hearth::scheduler;

namespace {

constexpr int32_t kDefaultTokens = 8;
constexpr int32_t kMaxTokens = 64;
constexpr char kSlotMagic[8] = {'H', 'F', 'A', 'K', 'E', 'S', 'L', 'T'};

// A slot file: the magic, the token count (u32), the ids (i32).
Result<SlotFileResult> write_slot_file(const std::string& path, const std::vector<int32_t>& ids) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  const auto n = static_cast<uint32_t>(ids.size());
  out.write(kSlotMagic, sizeof(kSlotMagic));
  out.write(reinterpret_cast<const char*>(&n), sizeof(n));
  out.write(reinterpret_cast<const char*>(ids.data()),
            static_cast<std::streamsize>(ids.size() * sizeof(int32_t)));
  if (!out) return error(ErrorCode::kIo, "cannot write " + path);
  SlotFileResult result;
  result.n_tokens = static_cast<int32_t>(n);
  result.n_bytes = sizeof(kSlotMagic) + sizeof(n) + ids.size() * sizeof(int32_t);
  return result;
}

Result<std::vector<int32_t>> read_slot_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(ErrorCode::kIo, "failed to open " + path);
  char magic[sizeof(kSlotMagic)] = {};
  uint32_t n = 0;
  in.read(magic, sizeof(magic));
  in.read(reinterpret_cast<char*>(&n), sizeof(n));
  if (!in || std::memcmp(magic, kSlotMagic, sizeof(magic)) != 0 || n > (1u << 24)) {
    return error(ErrorCode::kInvalidArgument,
                 "No available space in KV cache or invalid slot save file");
  }
  std::vector<int32_t> ids(n);
  in.read(reinterpret_cast<char*>(ids.data()), static_cast<std::streamsize>(n * sizeof(int32_t)));
  if (!in) {
    return error(ErrorCode::kInvalidArgument,
                 "No available space in KV cache or invalid slot save file");
  }
  return ids;
}

}  // namespace

std::vector<float> fake_hidden_state(int32_t token) {
  std::vector<float> row(FakeScheduler::kEmbeddingWidth);
  for (int32_t k = 0; k < FakeScheduler::kEmbeddingWidth; ++k) {
    const int64_t mix = static_cast<int64_t>(token) * 131 + k * 71 + (token * (k + 1)) % 17;
    row[static_cast<size_t>(k)] = static_cast<float>(mix % 101) / 101.0f - 0.5f;
  }
  return row;
}

float fake_rank_score(const std::vector<int32_t>& prompt) {
  double sum = 0;
  for (int32_t t : prompt) sum += fake_hidden_state(t)[0];
  return prompt.empty() ? 0.0f : static_cast<float>(4.0 * sum / static_cast<double>(prompt.size()));
}

std::shared_ptr<const tokenizer::Tokenizer> load_tokenizer(const std::string& gguf_path) {
  auto archive = gguf::Archive::open(gguf_path);
  if (!archive.is_ok()) return nullptr;
  auto tok = tokenizer::Tokenizer::from_gguf(archive->primary());
  if (!tok.is_ok()) return nullptr;
  return std::make_shared<const tokenizer::Tokenizer>(std::move(*tok));
}

FakeScheduler::FakeScheduler(std::shared_ptr<const tokenizer::Tokenizer> tok,
                             SchedulerConfig config)
    : tok_(std::move(tok)),
      config_(config),
      slot_tokens_(static_cast<size_t>(std::max(config.n_slots, 1))) {}

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

void FakeScheduler::slot_action(SlotActionKind kind, int32_t id, std::string path,
                                SlotActionDone done) {
  if (id < 0 || id >= config_.n_slots) {
    done(error(ErrorCode::kInvalidArgument, "slot id out of range"));
    return;
  }
  done(run_slot_action(kind, id, path));
}

Result<SlotFileResult> FakeScheduler::run_slot_action(SlotActionKind kind, int32_t id,
                                                      const std::string& path) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<int32_t>& tokens = slot_tokens_[static_cast<size_t>(id)];
  if (kind == SlotActionKind::kSave) return write_slot_file(path, tokens);
  if (kind == SlotActionKind::kErase) {
    SlotFileResult result;
    result.n_tokens = static_cast<int32_t>(tokens.size());
    tokens.clear();
    return result;
  }
  auto ids = read_slot_file(path);
  if (!ids.is_ok()) return ids.status();
  tokens.clear();
  if (static_cast<int32_t>(ids->size()) > config_.n_ctx_slot) {
    return error(ErrorCode::kInvalidArgument, "Restored prompt does not fit in the slot context");
  }
  for (int32_t t : *ids) {
    if (t < 0 || t >= tok_->n_vocab()) {
      return error(ErrorCode::kInvalidArgument, "Invalid tokens in slot save file");
    }
  }
  SlotFileResult result;
  result.n_tokens = static_cast<int32_t>(ids->size());
  result.n_bytes = sizeof(kSlotMagic) + sizeof(uint32_t) + ids->size() * sizeof(int32_t);
  tokens = std::move(*ids);
  return result;
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
    if (request.kind != TaskKind::kCompletion) {
      run_embedding(request);
      continue;
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
  if (sink.cancelled() || !check_prompt(request, index)) return;
  const auto n_prompt = static_cast<int32_t>(request.prompt.size());
  const TaskParams& params = request.params;
  if (copy == 0) sink.on_start(index);
  if (params.stream && params.return_progress) {
    scheduler::Timings timings;
    timings.prompt_n = n_prompt;
    sink.on_progress(index, {n_prompt, 0, n_prompt, 0, timings});
  }
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
  // The prompt's vocabulary ids, which the fake "writes" again (media placeholders are not).
  std::vector<int32_t> echo;
  for (int32_t t : request.prompt) {
    if (!scheduler::is_media_placeholder(t)) echo.push_back(t);
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
    const int32_t token = scripted       ? output[static_cast<size_t>(i)]
                          : echo.empty() ? 0
                                         : echo[static_cast<size_t>(i) % echo.size()];
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
  final.timings.prompt_n = n_prompt;  // the fake reuses no cache: every prompt token is decoded
  final.timings.predicted_n = n_predict;
  const bool ends = scripted && static_cast<size_t>(n_predict) == output.size();
  final.stop_type = ends ? StopType::kEos : StopType::kLimit;
  final.seed = params.sampling.seed;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const int32_t slot =
        (request.id_slot >= 0 ? request.id_slot + copy : copy) % std::max(config_.n_slots, 1);
    std::vector<int32_t>& cached = slot_tokens_[static_cast<size_t>(slot)];
    cached = request.prompt;
    cached.insert(cached.end(), final.generated.begin(), final.generated.end());
  }
  sink.on_final(std::move(final));
}

namespace {

bool starts_with(std::span<const uint8_t> bytes, std::string_view magic) {
  return bytes.size() >= magic.size() &&
         std::equal(magic.begin(), magic.end(), bytes.begin(),
                    [](char a, uint8_t b) { return static_cast<uint8_t>(a) == b; });
}

uint32_t fnv1a(std::span<const uint8_t> bytes) {
  uint32_t h = 2166136261u;
  for (uint8_t b : bytes) h = (h ^ b) * 16777619u;
  return h;
}

// The positions of `request`'s media chunks (their placeholders are not vocabulary ids).
std::vector<bool> media_positions(const TaskRequest& request) {
  std::vector<bool> is_media(request.prompt.size(), false);
  for (const scheduler::MediaChunk& c : request.media) {
    for (int32_t i = c.begin; i < c.begin + c.n_tokens && i < static_cast<int32_t>(is_media.size());
         ++i) {
      is_media[static_cast<size_t>(i)] = true;
    }
  }
  return is_media;
}

}  // namespace

Result<scheduler::EncodedMedia> FakeScheduler::encode_media(std::span<const uint8_t> bytes,
                                                            const std::atomic<bool>*) {
  if (!media_.vision && !media_.audio) {
    return error(ErrorCode::kUnsupported, "the model has no multimodal projector");
  }
  const bool known = starts_with(bytes, "\x89PNG") || starts_with(bytes, "\xff\xd8") ||
                     starts_with(bytes, "GIF8") || starts_with(bytes, "BM") ||
                     starts_with(bytes, "RIFF") || starts_with(bytes, "ID3");
  if (!known) {
    return error(ErrorCode::kInvalidArgument,
                 "not an image or audio file (" + std::to_string(bytes.size()) + " bytes)");
  }
  scheduler::MediaChunk chunk;
  chunk.n_tokens = 3 + static_cast<int32_t>(bytes.size() % 4);
  const uint32_t h = fnv1a(bytes);
  chunk.placeholder = -1 - static_cast<int32_t>(h & 0xffffff);
  auto rows =
      std::make_shared<std::vector<float>>(static_cast<size_t>(chunk.n_tokens) * kEmbeddingWidth);
  for (size_t i = 0; i < rows->size(); ++i) (*rows)[i] = static_cast<float>((h + i) % 97) / 97.0f;
  chunk.embd = std::move(rows);
  scheduler::EncodedMedia out;
  out.add_text("<img>");
  out.add_chunk(std::move(chunk));
  out.add_text("</img>");
  return out;
}

std::vector<scheduler::MediaChunk> FakeScheduler::last_media() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_media_;
}

bool FakeScheduler::check_prompt(const TaskRequest& request, int32_t index) {
  const std::vector<bool> is_media = media_positions(request);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    last_media_ = request.media;
  }
  for (size_t i = 0; i < request.prompt.size(); ++i) {
    const int32_t t = request.prompt[i];
    if (is_media[i]) continue;
    if (t < 0 || t >= tok_->n_vocab()) {
      request.sink->on_error(index,
                             {TaskError::Kind::kInvalidRequest, "Prompt contains invalid tokens"});
      return false;
    }
  }
  const auto n_prompt = static_cast<int32_t>(request.prompt.size());
  if (n_prompt >= config_.n_ctx_slot) {
    request.sink->on_error(index, {TaskError::Kind::kExceedContext, "request exceeds the context",
                                   n_prompt, config_.n_ctx_slot});
    return false;
  }
  return true;
}

void FakeScheduler::run_embedding(const TaskRequest& request) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++tasks_run_;
    ++metrics_.n_decode_total;
  }
  TaskSink& sink = *request.sink;
  if (sink.cancelled() || !check_prompt(request, request.index)) return;
  EmbeddingResult result;
  result.index = request.index;
  result.n_tokens = static_cast<int32_t>(request.prompt.size());
  std::vector<std::vector<float>> rows;
  for (int32_t t : request.prompt) rows.push_back(fake_hidden_state(t));
  const PoolingType pooling = config_.pooling;
  if (request.kind == TaskKind::kRerank || pooling == PoolingType::kRank) {
    result.score = fake_rank_score(request.prompt);
    result.vectors = {{result.score}};
  } else if (pooling == PoolingType::kMean || pooling == PoolingType::kCls ||
             pooling == PoolingType::kLast) {
    std::vector<float> flat;
    for (const auto& row : rows) flat.insert(flat.end(), row.begin(), row.end());
    std::vector<float> pooled(FakeScheduler::kEmbeddingWidth);
    engine::pool_rows(pooling, flat.data(), static_cast<int64_t>(rows.size()),
                      FakeScheduler::kEmbeddingWidth, pooled.data());
    engine::normalize_embedding(pooled.data(), pooled.data(), FakeScheduler::kEmbeddingWidth,
                                request.embd_normalize);
    result.vectors = {std::move(pooled)};
  } else {
    result.vectors = std::move(rows);
  }
  sink.on_embedding(std::move(result));
}

}  // namespace hearth::test

// Embedding and rerank tasks in the Scheduler (stories260K): inputs packed as separate
// sequences into shared steps give exactly what the engine gives each one alone; the
// reference's limits (one physical batch, the slot context) and their errors.
#include <gtest/gtest.h>

#include <cmath>

#include "engine/context.h"
#include "engine/pooling.h"
#include "scheduler_fixture.h"

namespace hearth::scheduler {
namespace {

using test_support::SchedulerTest;

class EmbedSink : public TaskSink {
 public:
  void on_final(FinalResult&& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    finals.push_back(std::move(r));
    cv_.notify_all();
  }
  void on_embedding(EmbeddingResult&& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    results.push_back(std::move(r));
    cv_.notify_all();
  }
  void on_error(int32_t, const TaskError& e) override {
    std::lock_guard<std::mutex> lock(mu_);
    errors.push_back(e);
    cv_.notify_all();
  }
  bool wait(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(60),
                        [&] { return results.size() + errors.size() + finals.size() >= n; });
  }
  const EmbeddingResult* result(int32_t index) const {
    for (const auto& r : results)
      if (r.index == index) return &r;
    return nullptr;
  }

  std::vector<EmbeddingResult> results;
  std::vector<FinalResult> finals;
  std::vector<TaskError> errors;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
};

class EmbeddingTasks : public SchedulerTest {
 protected:
  std::unique_ptr<Scheduler> start(PoolingType pooling, int32_t n_ubatch = 512) {
    SchedulerConfig cfg;
    cfg.n_slots = 4;
    cfg.n_ctx_slot = 256;
    cfg.n_batch = n_ubatch;
    cfg.n_ubatch = n_ubatch;
    cfg.embeddings = true;
    cfg.pooling = pooling;
    auto s = make(cfg);
    if (s) s->start();
    return s;
  }

  static TaskRequest embed(std::vector<int32_t> prompt, int32_t index,
                           std::shared_ptr<TaskSink> sink) {
    TaskRequest r;
    r.prompt = std::move(prompt);
    r.kind = TaskKind::kEmbedding;
    r.index = index;
    r.sink = std::move(sink);
    return r;
  }

  // The final hidden states of `prompt` decoded alone, [n][n_embd].
  std::vector<float> rows_alone(const std::vector<int32_t>& prompt) {
    engine::ContextParams cp;
    cp.n_ctx = 256;
    cp.n_threads = 1;
    cp.embeddings = true;
    auto ctx = engine::Context::create(model_, cp);
    EXPECT_TRUE(ctx.is_ok());
    engine::Batch batch;
    for (size_t i = 0; i < prompt.size(); ++i)
      batch.add(prompt[i], static_cast<int32_t>(i), 0, false);
    EXPECT_TRUE((*ctx)->decode(batch).is_ok());
    std::vector<float> rows;
    for (int32_t i = 0; i < batch.size(); ++i) {
      const auto row = (*ctx)->embedding(i);
      rows.insert(rows.end(), row.begin(), row.end());
    }
    return rows;
  }

  std::vector<std::vector<int32_t>> prompts() const {
    return {tok_->tokenize("Once upon a time", true, true), tok_->tokenize("Lily", true, true),
            tok_->tokenize("The little dog ran to the park and barked", true, true)};
  }
};

TEST_F(EmbeddingTasks, PackedInputsEqualEachInputAlone) {
  auto sched = start(PoolingType::kMean);
  ASSERT_NE(sched, nullptr);
  auto sink = std::make_shared<EmbedSink>();
  std::vector<TaskRequest> tasks;
  const auto inputs = prompts();
  for (size_t i = 0; i < inputs.size(); ++i)
    tasks.push_back(embed(inputs[i], static_cast<int32_t>(i), sink));
  ASSERT_TRUE(sched->submit_all(std::move(tasks)).is_ok());
  ASSERT_TRUE(sink->wait(inputs.size()));
  ASSERT_TRUE(sink->errors.empty()) << sink->errors[0].message;
  const int64_t E = model_->hparams().n_embd;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const EmbeddingResult* got = sink->result(static_cast<int32_t>(i));
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->n_tokens, static_cast<int32_t>(inputs[i].size()));
    ASSERT_EQ(got->vectors.size(), 1u);
    const std::vector<float> rows = rows_alone(inputs[i]);
    std::vector<float> want(static_cast<size_t>(E));
    engine::pool_rows(PoolingType::kMean, rows.data(), static_cast<int64_t>(inputs[i].size()), E,
                      want.data());
    engine::normalize_embedding(want.data(), want.data(), E, 2);
    EXPECT_EQ(got->vectors[0], want) << "input " << i << " differs from its lone decode";
  }
  // The slots keep nothing of embedding inputs.
  for (const SlotInfo& s : sched->slots()) EXPECT_EQ(s.n_prompt_tokens, 0) << s.id;
}

TEST_F(EmbeddingTasks, PoolingNoneGivesEveryTokensRow) {
  auto sched = start(PoolingType::kNone);
  ASSERT_NE(sched, nullptr);
  auto sink = std::make_shared<EmbedSink>();
  const std::vector<int32_t> prompt = prompts()[0];
  ASSERT_TRUE(sched->submit(embed(prompt, 0, sink)).is_ok());
  ASSERT_TRUE(sink->wait(1));
  ASSERT_EQ(sink->results.size(), 1u);
  const std::vector<float> rows = rows_alone(prompt);
  const auto E = static_cast<size_t>(model_->hparams().n_embd);
  ASSERT_EQ(sink->results[0].vectors.size(), prompt.size());
  for (size_t t = 0; t < prompt.size(); ++t) {
    const std::vector<float> want(rows.begin() + static_cast<std::ptrdiff_t>(t * E),
                                  rows.begin() + static_cast<std::ptrdiff_t>((t + 1) * E));
    EXPECT_EQ(sink->results[0].vectors[t], want) << "token " << t << " (unnormalized)";
  }
}

// Last pooling may span several steps (the reference's can_split): a long input under a
// small batch gives the same vector as in one step.
TEST_F(EmbeddingTasks, LastPoolingSplitsAcrossSteps) {
  const std::vector<int32_t> prompt = tok_->tokenize(
      "Once upon a time there was a little girl named Lily who liked to play", true, true);
  std::vector<float> vectors[2];
  for (int32_t ub : {8, 512}) {
    auto sched = start(PoolingType::kLast, ub);
    ASSERT_NE(sched, nullptr);
    auto sink = std::make_shared<EmbedSink>();
    ASSERT_TRUE(sched->submit(embed(prompt, 0, sink)).is_ok());
    ASSERT_TRUE(sink->wait(1));
    ASSERT_EQ(sink->results.size(), 1u) << (sink->errors.empty() ? "" : sink->errors[0].message);
    vectors[ub == 8 ? 0 : 1] = sink->results[0].vectors[0];
  }
  ASSERT_GT(prompt.size(), 8u);
  EXPECT_EQ(vectors[0], vectors[1]);
}

TEST_F(EmbeddingTasks, InputsPastTheBatchOrTheContextAreRefused) {
  auto sched = start(PoolingType::kMean, 16);
  ASSERT_NE(sched, nullptr);
  auto sink = std::make_shared<EmbedSink>();
  ASSERT_TRUE(sched->submit(embed(std::vector<int32_t>(17, 5), 0, sink)).is_ok());
  ASSERT_TRUE(sink->wait(1));
  ASSERT_EQ(sink->errors.size(), 1u);
  EXPECT_EQ(sink->errors[0].kind, TaskError::Kind::kInvalidRequest);
  EXPECT_EQ(sink->errors[0].message,
            "input (17 tokens) is too large to process. increase the physical batch size "
            "(current batch size: 16)");
  sched.reset();
  sched = start(PoolingType::kMean, 512);
  auto sink2 = std::make_shared<EmbedSink>();
  ASSERT_TRUE(sched->submit(embed(std::vector<int32_t>(300, 5), 0, sink2)).is_ok());
  ASSERT_TRUE(sink2->wait(1));
  ASSERT_EQ(sink2->errors.size(), 1u);
  EXPECT_EQ(sink2->errors[0].kind, TaskError::Kind::kExceedContext);
  EXPECT_EQ(sink2->errors[0].message,
            "input (300 tokens) is larger than the max context size (256 tokens). skipping");
  EXPECT_EQ(sink2->errors[0].n_prompt_tokens, 300);
}

TEST_F(EmbeddingTasks, EmbeddingTasksRunOnce) {
  auto sched = start(PoolingType::kMean);
  ASSERT_NE(sched, nullptr);
  TaskRequest r = embed(prompts()[0], 0, std::make_shared<EmbedSink>());
  r.n_cmpl = 2;
  EXPECT_EQ(sched->submit(std::move(r)).code(), ErrorCode::kInvalidArgument);
}

// A decoder's embedding input as long as a step does not wait for the generating slots to
// finish: it shares steps with them, and its vector is the one it gets alone.
TEST_F(EmbeddingTasks, FullBatchInputDoesNotWaitForGenerators) {
  auto sched = start(PoolingType::kMean, 16);
  ASSERT_NE(sched, nullptr);
  auto sink = std::make_shared<EmbedSink>();
  ASSERT_TRUE(sched->submit(greedy(prompts()[0], 120, sink)).is_ok());
  const std::vector<int32_t> input(16, 300);
  ASSERT_TRUE(sched->submit(embed(input, 1, sink)).is_ok());
  ASSERT_TRUE(sink->wait(1));
  EXPECT_TRUE(sink->finals.empty()) << "the embedding came after the 120-token completion";
  ASSERT_EQ(sink->results.size(), 1u);
  ASSERT_TRUE(sink->wait(2));
  const int64_t E = model_->hparams().n_embd;
  const std::vector<float> rows = rows_alone(input);
  std::vector<float> want(static_cast<size_t>(E));
  engine::pool_rows(PoolingType::kMean, rows.data(), 16, E, want.data());
  engine::normalize_embedding(want.data(), want.data(), E, 2);
  EXPECT_EQ(sink->results[0].vectors[0], want);
}

// Completions keep working on an embedding server, in the same steps as embedding inputs.
TEST_F(EmbeddingTasks, CompletionsShareStepsWithEmbeddings) {
  auto sched = start(PoolingType::kMean);
  ASSERT_NE(sched, nullptr);
  auto sink = std::make_shared<EmbedSink>();
  std::vector<TaskRequest> tasks;
  tasks.push_back(greedy(prompts()[0], 8, sink));
  tasks.push_back(embed(prompts()[1], 1, sink));
  ASSERT_TRUE(sched->submit_all(std::move(tasks)).is_ok());
  ASSERT_TRUE(sink->wait(2));
  EXPECT_TRUE(sink->errors.empty());
  ASSERT_EQ(sink->finals.size(), 1u);
  EXPECT_EQ(sink->finals[0].n_predicted, 8);
  ASSERT_EQ(sink->results.size(), 1u);
}

// Rank pooling without a classifier: the first value of the sequence's own first row.
TEST_F(EmbeddingTasks, RankScoreIsTheFirstRowsFirstValue) {
  auto sched = start(PoolingType::kRank);
  ASSERT_NE(sched, nullptr);
  auto sink = std::make_shared<EmbedSink>();
  std::vector<TaskRequest> tasks;
  const auto inputs = prompts();
  for (size_t i = 0; i < inputs.size(); ++i) {
    tasks.push_back(embed(inputs[i], static_cast<int32_t>(i), sink));
    tasks.back().kind = TaskKind::kRerank;
  }
  ASSERT_TRUE(sched->submit_all(std::move(tasks)).is_ok());
  ASSERT_TRUE(sink->wait(inputs.size()));
  ASSERT_EQ(sink->results.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const EmbeddingResult* got = sink->result(static_cast<int32_t>(i));
    ASSERT_NE(got, nullptr);
    EXPECT_EQ(got->score, rows_alone(inputs[i])[0]) << i;
  }
}

}  // namespace
}  // namespace hearth::scheduler

// Shared by the scheduler tests: a sink that records every event and a fixture that loads
// the stories260K model once per suite.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "models/registry.h"
#include "scheduler/scheduler.h"
#include "support/test_paths.h"

namespace hearth::scheduler::test_support {

// Collects every event of one request.
class CollectSink : public TaskSink {
 public:
  void on_start(int32_t index) override {
    std::lock_guard<std::mutex> lock(mu_);
    starts.push_back(index);
  }
  void on_progress(int32_t, const ProgressInfo& p) override {
    std::lock_guard<std::mutex> lock(mu_);
    progress.push_back(p);
  }
  void on_partial(PartialResult&& p) override {
    std::lock_guard<std::mutex> lock(mu_);
    partials.push_back(std::move(p));
  }
  void on_final(FinalResult&& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    finals.push_back(std::move(r));
    cv_.notify_all();
  }
  void on_error(int32_t, const TaskError& e) override {
    std::lock_guard<std::mutex> lock(mu_);
    errors.push_back(e);
    cv_.notify_all();
  }
  // Waits until `n` results (finals or errors) arrived.
  bool wait(size_t n, std::chrono::seconds timeout = std::chrono::seconds(60)) {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return finals.size() + errors.size() >= n; });
  }
  std::vector<FinalResult> sorted_finals() {
    std::lock_guard<std::mutex> lock(mu_);
    auto out = finals;
    std::sort(out.begin(), out.end(),
              [](const FinalResult& a, const FinalResult& b) { return a.index < b.index; });
    return out;
  }

  std::vector<int32_t> starts;
  std::vector<ProgressInfo> progress;
  std::vector<PartialResult> partials;
  std::vector<FinalResult> finals;
  std::vector<TaskError> errors;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
};

// Submits `r` to the started scheduler `s` and waits for its final result (empty, after a
// test failure, when it errs or does not finish).
inline FinalResult run_one(Scheduler& s, TaskRequest r) {
  auto sink = std::make_shared<CollectSink>();
  r.sink = sink;
  EXPECT_TRUE(s.submit(std::move(r)).is_ok());
  EXPECT_TRUE(sink->wait(1));
  EXPECT_TRUE(sink->errors.empty()) << sink->errors.front().message;
  return sink->finals.empty() ? FinalResult{} : sink->finals.front();
}

// Submits `requests` together (submit_all, one sink) to the started scheduler `s` and returns
// their final results by index (fewer, after a test failure, when some err or do not finish).
inline std::vector<FinalResult> run_together(Scheduler& s, std::vector<TaskRequest> requests) {
  auto sink = std::make_shared<CollectSink>();
  const size_t n = requests.size();
  for (TaskRequest& r : requests) r.sink = sink;
  EXPECT_TRUE(s.submit_all(std::move(requests)).is_ok());
  EXPECT_TRUE(sink->wait(n));
  EXPECT_TRUE(sink->errors.empty()) << sink->errors.front().message;
  return sink->sorted_finals();
}

// Two runs gave the same tokens and bit-identical top probabilities at every step.
inline void expect_same_bits(const FinalResult& a, const FinalResult& b) {
  EXPECT_EQ(a.generated, b.generated);
  ASSERT_EQ(a.probs.size(), b.probs.size());
  for (size_t i = 0; i < a.probs.size(); ++i) {
    ASSERT_EQ(a.probs[i].top.size(), b.probs[i].top.size());
    for (size_t k = 0; k < a.probs[i].top.size(); ++k) {
      EXPECT_EQ(a.probs[i].top[k].id, b.probs[i].top[k].id) << "token " << i;
      EXPECT_EQ(a.probs[i].top[k].p, b.probs[i].top[k].p) << "token " << i;
    }
  }
}

class SchedulerTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() { load(test::shared_path("models/stories260K.gguf")); }
  // The suite's model and its tokenizer.
  static void load(const std::string& path) {
    auto m = models::load_model(path);
    ASSERT_TRUE(m.is_ok()) << m.status().to_string();
    model_ = *m;
    auto t = tokenizer::Tokenizer::from_gguf(model_->metadata());
    ASSERT_TRUE(t.is_ok()) << t.status().to_string();
    tok_ = std::make_shared<const tokenizer::Tokenizer>(std::move(*t));
  }
  static void TearDownTestSuite() {
    model_.reset();
    tok_.reset();
  }

  std::unique_ptr<Scheduler> make(SchedulerConfig cfg = {}) {
    cfg.n_threads = 1;
    auto s = Scheduler::create(model_, tok_, cfg);
    EXPECT_TRUE(s.is_ok()) << s.status().to_string();
    return s.is_ok() ? std::move(*s) : nullptr;
  }

  static TaskRequest greedy(std::vector<int32_t> prompt, int32_t n_predict,
                            std::shared_ptr<TaskSink> sink) {
    TaskRequest r;
    r.prompt = std::move(prompt);
    r.params.n_predict = n_predict;
    r.params.sampling.temperature = 0.0f;
    r.sink = std::move(sink);
    return r;
  }

  static inline std::shared_ptr<const engine::Model> model_;
  static inline std::shared_ptr<const tokenizer::Tokenizer> tok_;
};

}  // namespace hearth::scheduler::test_support

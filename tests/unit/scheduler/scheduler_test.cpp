// End-to-end tests of the Scheduler with the real stories260K model: the /completion
// requests of the reference's 4-slot golden capture replayed in order, concurrency and
// cancellation.
#include "scheduler/scheduler.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <chrono>
#include <cmath>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "models/registry.h"
#include "scheduler_fixture.h"
#include "support/test_paths.h"

namespace hearth::scheduler {
namespace {

using json = nlohmann::json;
using test_support::CollectSink;
using test_support::SchedulerTest;

// The request fields the scheduler honours, from a captured /completion body.
TaskParams params_from(const json& body) {
  TaskParams p;
  p.n_predict = body.value("n_predict", -1);
  p.sampling.temperature = body.value("temperature", 0.8f);
  p.cache_prompt = body.value("cache_prompt", true);
  p.n_indent = body.value("n_indent", 0);
  p.t_max_predict_ms = body.value("t_max_predict_ms", int64_t{-1});
  p.n_probs = body.value("n_probs", 0);
  p.post_sampling_probs = body.value("post_sampling_probs", false);
  p.stream = body.value("stream", false);
  p.return_progress = body.value("return_progress", false);
  if (body.contains("stop")) p.stop = body["stop"].get<std::vector<std::string>>();
  if (body.contains("logit_bias")) {
    for (const auto& e : body["logit_bias"])
      p.sampling.logit_bias.emplace_back(e[0].get<int32_t>(), e[1].get<float>());
  }
  return p;
}

std::vector<std::vector<int32_t>> prompts_from(const json& prompt,
                                               const tokenizer::Tokenizer& tok) {
  const auto one = [&](const json& p) {
    if (p.is_string()) return tok.tokenize(p.get<std::string>(), true, true);
    return p.get<std::vector<int32_t>>();
  };
  std::vector<std::vector<int32_t>> out;
  if (prompt.is_array() && !prompt.empty() && prompt[0].is_string()) {
    for (const auto& p : prompt) out.push_back(one(p));
  } else {
    out.push_back(one(prompt));
  }
  return out;
}

// One completion_probabilities entry against the capture (log or plain probabilities).
void expect_probs(const TokenProbs& got, const json& want) {
  EXPECT_EQ(got.id, want["id"].get<int32_t>());
  EXPECT_EQ(got.text, want["token"].get<std::string>());
  const bool post = want.contains("prob");
  const json& top = post ? want["top_probs"] : want["top_logprobs"];
  const auto value = [&](float p) { return post ? p : std::log(p); };
  EXPECT_NEAR(value(got.p), want[post ? "prob" : "logprob"].get<double>(), 1e-3);
  ASSERT_EQ(got.top.size(), top.size());
  for (size_t i = 0; i < top.size(); ++i) {
    EXPECT_EQ(got.top[i].id, top[i]["id"].get<int32_t>());
    EXPECT_NEAR(value(got.top[i].p), top[i][post ? "prob" : "logprob"].get<double>(), 1e-3);
  }
}

// Compares the captured fields; a response_fields projection keeps only some of them.
void expect_matches(const FinalResult& got, const json& want, const std::string& streamed,
                    bool stream) {
  SCOPED_TRACE("index " + std::to_string(got.index));
  const auto has = [&](const char* key) { return want.contains(key); };
  if (has("index")) {
    EXPECT_EQ(got.index, want["index"].get<int32_t>());
  }
  if (has("id_slot")) {
    EXPECT_EQ(got.id_slot, want["id_slot"].get<int32_t>());
  }
  if (stream) {
    EXPECT_EQ(streamed, got.content);
  } else {
    EXPECT_EQ(got.content, want["content"].get<std::string>());
  }
  if (has("tokens_predicted")) {
    EXPECT_EQ(got.n_predicted, want["tokens_predicted"].get<int32_t>());
  }
  if (has("tokens_evaluated")) {
    EXPECT_EQ(got.n_evaluated, want["tokens_evaluated"].get<int32_t>());
  }
  if (has("tokens_cached")) {
    EXPECT_EQ(got.n_cached, want["tokens_cached"].get<int32_t>());
  }
  if (has("stop_type")) {
    EXPECT_EQ(stop_type_name(got.stop_type), want["stop_type"].get<std::string>());
  }
  if (has("stopping_word")) {
    EXPECT_EQ(got.stopping_word, want["stopping_word"].get<std::string>());
  }
  if (has("truncated")) {
    EXPECT_EQ(got.truncated, want["truncated"].get<bool>());
  }
  if (has("timings")) {
    EXPECT_EQ(got.timings.cache_n, want["timings"]["cache_n"].get<int32_t>());
    EXPECT_EQ(got.timings.prompt_n, want["timings"]["prompt_n"].get<int32_t>());
  }
  if (has("completion_probabilities") && !stream) {
    const json& probs = want["completion_probabilities"];
    ASSERT_EQ(got.probs.size(), probs.size());
    for (size_t i = 0; i < probs.size(); ++i) expect_probs(got.probs[i], probs[i]);
  }
  if (has("timings/prompt_n")) {
    EXPECT_EQ(got.timings.prompt_n, want["timings/prompt_n"].get<int32_t>());
  }
}

// Non-stream: the response object or array; stream: the final frame of each index, plus
// the concatenated content of its partial frames.
std::vector<json> captured_results(const json& capture, bool stream,
                                   std::map<int32_t, std::string>& streamed) {
  std::vector<json> want;
  if (stream) {
    for (const auto& f : capture["frames"]) {
      if (f.value("stop", false)) {
        want.push_back(f);
      } else if (!f.contains("prompt_progress")) {
        streamed[f["index"].get<int32_t>()] += f["content"].get<std::string>();
      }
    }
  } else if (capture["response"].is_array()) {
    for (const auto& r : capture["response"]) want.push_back(r);
  } else {
    want.push_back(capture["response"]);
  }
  return want;
}

TEST_F(SchedulerTest, ReplaysTheGoldenCompletionsInOrder) {
  const std::string dir = test::shared_path("golden/llama-server-b10573/stories260K-np4/");
  const json cases = json::parse(test::read_file(dir + "cases.json"));
  SchedulerConfig cfg;
  cfg.n_slots = 4;
  cfg.n_ctx_slot = 512;
  auto sched = make(cfg);
  ASSERT_TRUE(sched);
  sched->start();
  int replayed = 0;
  for (const auto& c : cases) {
    const std::string path = c["path"];
    if (path != "/completion" && path != "/completions") continue;
    const json capture = json::parse(test::read_file(dir + c["name"].get<std::string>() + ".json"));
    if (capture["status"] != 200 || !c["body"].is_object()) continue;
    const json& body = c["body"];
    SCOPED_TRACE(c["name"].get<std::string>());
    const bool stream = body.value("stream", false);
    std::map<int32_t, std::string> streamed_want;
    const std::vector<json> want = captured_results(capture, stream, streamed_want);
    auto sink = std::make_shared<CollectSink>();
    const auto prompts = prompts_from(body["prompt"], *tok_);
    const int32_t n_cmpl = body.value("n_cmpl", 1);
    // One request's prompts are queued together, as the server queues them.
    std::vector<TaskRequest> requests(prompts.size());
    for (size_t i = 0; i < prompts.size(); ++i) {
      TaskRequest& r = requests[i];
      r.prompt = prompts[i];
      r.params = params_from(body);
      r.n_cmpl = n_cmpl;
      r.index = static_cast<int32_t>(i) * n_cmpl;
      r.sink = sink;
    }
    ASSERT_TRUE(sched->submit_all(std::move(requests)).is_ok());
    ASSERT_TRUE(sink->wait(want.size())) << c["name"];
    ASSERT_TRUE(sink->errors.empty()) << c["name"] << ": " << sink->errors[0].message;
    const auto got = sink->sorted_finals();
    ASSERT_EQ(got.size(), want.size()) << c["name"];
    for (size_t i = 0; i < got.size(); ++i) {
      std::string streamed;
      for (const auto& p : sink->partials)
        if (p.index == got[i].index) streamed += p.content;
      if (stream) {
        EXPECT_EQ(streamed, streamed_want[got[i].index]);
        // Each streamed frame carries its own token's probabilities.
        size_t k = 0;
        for (const auto& f : capture["frames"]) {
          if (!f.contains("completion_probabilities") || f.value("stop", false)) continue;
          ASSERT_LT(k, sink->partials.size());
          ASSERT_TRUE(sink->partials[k].probs.has_value());
          expect_probs(*sink->partials[k++].probs, f["completion_probabilities"][0]);
        }
      }
      expect_matches(got[i], want[i], streamed, stream);
    }
    if (body.value("return_progress", false)) {
      ASSERT_EQ(sink->progress.size(), 2u);
      EXPECT_EQ(sink->progress[0].processed, sink->progress[0].cache);
      EXPECT_EQ(sink->progress[1].processed, sink->progress[1].total);
    }
    ++replayed;
  }
  EXPECT_EQ(replayed, 22);
  // Slots after the replay: the last task (stream_n_probs) left 7 tokens in slot 3; the
  // n_cmpl child in slot 0 kept nothing.
  const auto slots = sched->slots();
  ASSERT_EQ(slots.size(), 4u);
  EXPECT_EQ(slots[3].n_prompt_tokens, 7);
  EXPECT_EQ(slots[0].n_prompt_tokens, 0);
  EXPECT_TRUE(slots[0].has_task);
  EXPECT_FALSE(slots[1].has_task);
  const MetricsSnapshot m = sched->metrics(false);
  EXPECT_GT(m.n_decode_total, 0u);
  EXPECT_EQ(m.requests_processing, 0);
  sched->stop();
}

TEST_F(SchedulerTest, ConcurrentTasksMatchTheirSoloRuns) {
  const std::vector<std::string> texts{"Once upon a time", "The little dog", "Tom and Sue",
                                       "The cat sat"};
  std::vector<std::vector<int32_t>> solo;
  {
    auto sched = make();
    sched->start();
    for (const auto& t : texts) {
      auto sink = std::make_shared<CollectSink>();
      ASSERT_TRUE(sched->submit(greedy(tok_->tokenize(t, true, true), 24, sink)).is_ok());
      ASSERT_TRUE(sink->wait(1));
      ASSERT_EQ(sink->finals.size(), 1u);
      solo.push_back(sink->finals[0].generated);
    }
  }
  SchedulerConfig cfg;
  cfg.n_batch = 6;  // forces prompt chunks next to running generations
  cfg.n_ubatch = 4;
  auto sched = make(cfg);
  std::vector<std::shared_ptr<CollectSink>> sinks;
  for (const auto& t : texts) {
    sinks.push_back(std::make_shared<CollectSink>());
    ASSERT_TRUE(sched->submit(greedy(tok_->tokenize(t, true, true), 24, sinks.back())).is_ok());
  }
  sched->start();
  for (size_t i = 0; i < texts.size(); ++i) {
    ASSERT_TRUE(sinks[i]->wait(1));
    ASSERT_EQ(sinks[i]->finals.size(), 1u) << texts[i];
    EXPECT_EQ(sinks[i]->finals[0].generated, solo[i]) << texts[i];
  }
  const MetricsSnapshot m = sched->metrics(true);
  EXPECT_EQ(m.tokens_predicted_total, 4u * 24u);
  EXPECT_GT(m.n_busy_slots_total, m.n_decode_total);  // steps carried several slots
  EXPECT_EQ(sched->metrics(false).window_predicted_tokens, 0u);
}

TEST_F(SchedulerTest, CancelledTaskFreesItsSlot) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  auto sched = make(cfg);
  sched->start();
  auto long_sink = std::make_shared<CollectSink>();
  auto req = greedy(tok_->tokenize("Once upon a time", true, true), -1, long_sink);
  req.params.stream = true;
  ASSERT_TRUE(sched->submit(std::move(req)).is_ok());
  // Wait for generation to start, then cancel and queue another task behind it.
  for (int i = 0; i < 2000 && sched->has_idle_slot(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  long_sink->cancel();
  auto next = std::make_shared<CollectSink>();
  ASSERT_TRUE(sched->submit(greedy(tok_->tokenize("The cat", true, true), 4, next)).is_ok());
  ASSERT_TRUE(next->wait(1));
  ASSERT_EQ(next->finals.size(), 1u);
  EXPECT_EQ(next->finals[0].n_predicted, 4);
  EXPECT_TRUE(long_sink->finals.empty());
  sched->stop();
}

TEST_F(SchedulerTest, ReportsTaskErrors) {
  SchedulerConfig cfg;
  cfg.n_slots = 2;
  cfg.n_ctx_slot = 16;
  auto sched = make(cfg);
  sched->start();
  auto sink = std::make_shared<CollectSink>();
  ASSERT_TRUE(sched->submit(greedy(std::vector<int32_t>(16, 300), 4, sink)).is_ok());
  ASSERT_TRUE(sink->wait(1));
  ASSERT_EQ(sink->errors.size(), 1u);
  EXPECT_EQ(sink->errors[0].kind, TaskError::Kind::kExceedContext);
  EXPECT_EQ(sink->errors[0].message,
            "request (16 tokens) exceeds the available context size (16 tokens), try increasing "
            "it");
  auto bad = std::make_shared<CollectSink>();
  ASSERT_TRUE(sched->submit(greedy({1, 100000}, 4, bad)).is_ok());
  ASSERT_TRUE(bad->wait(1));
  ASSERT_EQ(bad->errors.size(), 1u);
  EXPECT_EQ(bad->errors[0].message, "Prompt contains invalid tokens");
  // A 15-token prompt in a 16-token slot yields one token and is truncated.
  auto edge = std::make_shared<CollectSink>();
  ASSERT_TRUE(sched->submit(greedy(std::vector<int32_t>(15, 300), -1, edge)).is_ok());
  ASSERT_TRUE(edge->wait(1));
  ASSERT_EQ(edge->finals.size(), 1u);
  EXPECT_EQ(edge->finals[0].n_predicted, 1);
  EXPECT_TRUE(edge->finals[0].truncated);
  auto empty = std::make_shared<CollectSink>();
  ASSERT_TRUE(sched->submit(greedy({}, 4, empty)).is_ok());
  ASSERT_TRUE(empty->wait(1));
  ASSERT_EQ(empty->finals.size(), 1u);
  EXPECT_EQ(empty->finals[0].stop_type, StopType::kNone);
  TaskRequest too_many = greedy({1}, 1, sink);
  too_many.n_cmpl = 3;
  EXPECT_EQ(sched->submit(std::move(too_many)).code(), ErrorCode::kInvalidArgument);
  sched->stop();
  EXPECT_FALSE(sched->submit(greedy({1}, 1, sink)).is_ok());
}

}  // namespace
}  // namespace hearth::scheduler

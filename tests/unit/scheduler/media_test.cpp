// Prompts whose positions media chunks fill (random embedding rows standing in for an
// encoded image), through the real Scheduler over stories260K: the generated tokens are
// those of the engine fed the same rows directly; a follow-up reuses the cache past a chunk
// only when its placeholder is the same, and never stops inside one; a chunk larger than -b
// is evaluated whole; placeholders never reach the sampler's history, the n-gram drafts or
// a slot file; two slots with media in one step give the bits each gives alone.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "engine/context.h"
#include "kernels/quant.h"
#include "scheduler/planner.h"
#include "scheduler/scheduler.h"
#include "scheduler_fixture.h"
#include "support/test_paths.h"
#include "support/windowed_model.h"
#include "tools/synth/synth.h"

namespace hearth::scheduler {
namespace {

using test_support::CollectSink;
using test_support::run_one;

// A prompt: text tokens, with media chunks over some of its positions.
struct MediaPrompt {
  std::vector<int32_t> tokens;
  std::vector<MediaChunk> media;
};

class MediaTest : public test_support::SchedulerTest {
 protected:
  static int64_t n_embd() { return model_->hparams().n_embd; }

  static std::vector<int32_t> text(int32_t n, int32_t salt) {
    std::vector<int32_t> t;
    const int32_t n_vocab = model_->hparams().n_vocab;
    for (int32_t i = 0; i < n; ++i) t.push_back((5 + salt * 7 + i * 13 + i * i) % n_vocab);
    return t;
  }

  static MediaChunk chunk(int32_t n, int32_t placeholder, uint32_t seed, bool non_causal) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    auto embd = std::make_shared<std::vector<float>>(static_cast<size_t>(n * n_embd()));
    for (float& x : *embd) x = d(rng);
    return {0, n, placeholder, non_causal, 0, 0, embd};
  }

  // A chunk whose rows are the embedding-table rows of `tokens` (media that reads as text).
  static MediaChunk chunk_of_text(const std::vector<int32_t>& tokens, int32_t placeholder) {
    const engine::WeightMatrix& emb = model_->weights().token_embd;
    const auto E = static_cast<size_t>(n_embd());
    auto embd = std::make_shared<std::vector<float>>(tokens.size() * E);
    for (size_t i = 0; i < tokens.size(); ++i)
      kernels::dequantize_row(
          emb.type,
          static_cast<const uint8_t*>(emb.data) + static_cast<size_t>(tokens[i]) * emb.row_stride,
          embd->data() + i * E, n_embd());
    return {0, static_cast<int32_t>(tokens.size()), placeholder, false, 0, 0, embd};
  }

  // before + chunk + after, the chunk's placeholder filling its positions.
  static MediaPrompt with_chunk(std::vector<int32_t> before, MediaChunk c,
                                const std::vector<int32_t>& after) {
    MediaPrompt p;
    c.begin = static_cast<int32_t>(before.size());
    p.tokens = std::move(before);
    p.tokens.insert(p.tokens.end(), static_cast<size_t>(c.n_tokens), c.placeholder);
    p.tokens.insert(p.tokens.end(), after.begin(), after.end());
    p.media.push_back(std::move(c));
    return p;
  }

  static TaskRequest request(const MediaPrompt& p, int32_t n_predict,
                             std::shared_ptr<TaskSink> sink) {
    TaskRequest r = greedy(p.tokens, n_predict, std::move(sink));
    r.media = p.media;
    return r;
  }

  // The greedy tokens of the engine fed the prompt directly: text rows as tokens, media rows
  // as embeddings (a non-causal chunk's rows seeing the whole chunk), in one call.
  static std::vector<int32_t> engine_greedy(const MediaPrompt& p, int32_t n_predict) {
    engine::ContextParams cp;
    cp.n_ctx = 1024;
    cp.n_threads = 1;
    auto ctx = engine::Context::create(model_, cp);
    EXPECT_TRUE(ctx.is_ok());
    if (!ctx.is_ok()) return {};
    engine::Batch b;
    for (int32_t k = 0; k < static_cast<int32_t>(p.tokens.size()); ++k) {
      const bool last = k + 1 == static_cast<int32_t>(p.tokens.size());
      const MediaChunk* in = nullptr;
      for (const MediaChunk& c : p.media)
        if (k >= c.begin && k < c.begin + c.n_tokens) in = &c;
      if (in == nullptr) {
        b.add(p.tokens[static_cast<size_t>(k)], k, 0, last);
      } else {
        b.add_embd(in->embd->data() + (k - in->begin) * n_embd(), k, 0, last,
                   in->non_causal ? in->begin + in->n_tokens - 1 : -1);
      }
    }
    std::vector<int32_t> out;
    for (int32_t i = 0; i < n_predict; ++i) {
      EXPECT_TRUE((*ctx)->decode(b).is_ok());
      const auto l = (*ctx)->logits(b.size() - 1);
      const auto best = static_cast<int32_t>(std::max_element(l.begin(), l.end()) - l.begin());
      out.push_back(best);
      const int32_t pos = (*ctx)->kv_cache().length(0);
      b.clear();
      b.add(best, pos, 0, true);
    }
    return out;
  }

  std::unique_ptr<Scheduler> started(SchedulerConfig cfg) {
    auto s = make(cfg);
    if (s) s->start();
    return s;
  }
};

TEST_F(MediaTest, GeneratesWhatTheEngineFedDirectlyGenerates) {
  for (const bool non_causal : {true, false}) {
    const MediaPrompt p = with_chunk(text(20, 1), chunk(24, -1, 3, non_causal), text(10, 2));
    SchedulerConfig cfg;
    cfg.n_slots = 1;
    auto s = started(cfg);
    ASSERT_TRUE(s);
    const FinalResult r = run_one(*s, request(p, 8, nullptr));
    EXPECT_EQ(r.generated, engine_greedy(p, 8)) << "non_causal " << non_causal;
    EXPECT_EQ(r.n_evaluated, 54);
  }
}

TEST_F(MediaTest, ReusesTheCachePastAChunkOnlyForTheSamePlaceholder) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  auto s = started(cfg);
  ASSERT_TRUE(s);
  const MediaChunk image = chunk(16, -1, 5, true);
  MediaChunk other = chunk(16, -2, 6, true);
  run_one(*s, request(with_chunk(text(12, 3), image, text(6, 4)), 4, nullptr));
  // Same image, a different tail: the cache holds the text and the image (28 positions).
  const MediaPrompt same = with_chunk(text(12, 3), image, text(6, 5));
  const FinalResult a = run_one(*s, request(same, 4, nullptr));
  EXPECT_GE(a.timings.cache_n, 28);
  EXPECT_EQ(a.generated, engine_greedy(same, 4));
  // Another image at the same place: only the text before it is reused.
  const MediaPrompt changed = with_chunk(text(12, 3), other, text(6, 5));
  const FinalResult b = run_one(*s, request(changed, 4, nullptr));
  EXPECT_EQ(b.timings.cache_n, 12);
  EXPECT_EQ(b.generated, engine_greedy(changed, 4));
  // The prompt ends with the image the cache holds: reuse stops at the image's start (its
  // rows are evaluated together), not one position before the end.
  const MediaPrompt ends_with_image = with_chunk(text(12, 3), other, {});
  const FinalResult c = run_one(*s, request(ends_with_image, 4, nullptr));
  EXPECT_EQ(c.timings.cache_n, 12);
  EXPECT_EQ(c.generated, engine_greedy(ends_with_image, 4));
}

TEST_F(MediaTest, AChunkLargerThanTheBatchIsEvaluatedWhole) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  cfg.n_batch = 16;
  cfg.n_ubatch = 48;
  auto s = started(cfg);
  ASSERT_TRUE(s);
  const MediaPrompt p = with_chunk(text(20, 6), chunk(40, -3, 9, true), text(5, 7));
  auto sink = std::make_shared<CollectSink>();
  TaskRequest r = request(p, 6, sink);
  r.params.stream = true;
  r.params.return_progress = true;
  ASSERT_TRUE(s->submit(std::move(r)).is_ok());
  ASSERT_TRUE(sink->wait(1));
  ASSERT_EQ(sink->finals.size(), 1u);
  EXPECT_EQ(sink->finals.front().generated, engine_greedy(p, 6));
  // Progress after each step: 16, then 20 (the step stops before the chunk), then 60.
  std::vector<int32_t> processed;
  for (const ProgressInfo& info : sink->progress) processed.push_back(info.processed);
  EXPECT_NE(std::find(processed.begin(), processed.end(), 60), processed.end());
  for (int32_t n : processed) EXPECT_FALSE(n > 20 && n < 60) << "a step ended at " << n;
}

TEST_F(MediaTest, PlaceholdersStayOutOfPenaltiesAndDrafts) {
  // The same "image" twice between story text, so the n-gram sources see placeholders in
  // repeated context. Its rows are those of story text, so stories260K goes on telling a
  // story, repetitive enough for the n-gram source to draft.
  const MediaChunk image =
      chunk_of_text(tok_->tokenize(" She liked to play with her ball.", false, false), -4);
  MediaPrompt p =
      with_chunk(tok_->tokenize("Once upon a time, there was a little girl.", true, false), image,
                 tok_->tokenize(" She liked to play.", false, false));
  MediaChunk again = image;
  again.begin = static_cast<int32_t>(p.tokens.size());
  p.tokens.insert(p.tokens.end(), static_cast<size_t>(image.n_tokens), image.placeholder);
  p.media.push_back(again);
  enum class Spec { kNone, kNgram, kDraftModel };
  const auto run = [&](Spec spec) {
    SchedulerConfig cfg;
    cfg.n_slots = 1;
    cfg.spec.ngram_simple = spec == Spec::kNgram;
    cfg.spec.ngram_simple_params = {3, 8};
    cfg.spec.draft_simple = spec == Spec::kDraftModel;
    cfg.spec.draft.model = model_;
    cfg.spec.draft.n_max = 4;
    cfg.spec.step_seconds = [](int32_t rows) { return 0.010 + 0.0002 * rows; };
    auto s = started(cfg);
    EXPECT_TRUE(s);
    TaskRequest r = request(p, 48, nullptr);
    r.params.sampling.repeat_penalty = 1.05f;
    r.params.sampling.dry_multiplier = 0.5f;
    return run_one(*s, std::move(r));
  };
  const FinalResult plain = run(Spec::kNone);
  const FinalResult ngram = run(Spec::kNgram);
  const FinalResult model = run(Spec::kDraftModel);
  ASSERT_EQ(plain.generated.size(), 48u);
  EXPECT_EQ(ngram.generated, plain.generated);
  EXPECT_GT(ngram.timings.draft_n, 0) << "the n-gram source drafted nothing: " << plain.content;
  // The draft model (stories260K itself) reads the media rows too: its greedy drafts are
  // the target's greedy tokens, so they are drafted and accepted.
  EXPECT_EQ(model.generated, plain.generated);
  EXPECT_GT(model.timings.draft_n, 0);
  EXPECT_GT(model.timings.draft_n_accepted, 0);
}

TEST_F(MediaTest, TwoSlotsWithMediaInOneStepMatchEachAlone) {
  const MediaPrompt first = with_chunk(text(9, 10), chunk(20, -5, 21, true), text(4, 11));
  const MediaPrompt second = with_chunk(text(3, 12), chunk(12, -6, 22, true), text(7, 13));
  SchedulerConfig cfg;
  cfg.n_slots = 2;
  const auto alone = [&](const MediaPrompt& p) {
    auto s = started(cfg);
    TaskRequest r = request(p, 10, nullptr);
    r.params.n_probs = 3;
    return run_one(*s, std::move(r));
  };
  const FinalResult a = alone(first);
  const FinalResult b = alone(second);
  auto s = started(cfg);
  ASSERT_TRUE(s);
  auto sink = std::make_shared<CollectSink>();
  std::vector<TaskRequest> both = {request(first, 10, sink), request(second, 10, sink)};
  both[1].index = 1;
  for (TaskRequest& r : both) r.params.n_probs = 3;
  ASSERT_TRUE(s->submit_all(std::move(both)).is_ok());
  ASSERT_TRUE(sink->wait(2));
  const auto finals = sink->sorted_finals();
  ASSERT_EQ(finals.size(), 2u);
  for (const auto& [together, apart] : {std::pair{finals[0], a}, std::pair{finals[1], b}}) {
    EXPECT_EQ(together.generated, apart.generated);
    ASSERT_EQ(together.probs.size(), apart.probs.size());
    for (size_t i = 0; i < together.probs.size(); ++i) {
      ASSERT_EQ(together.probs[i].top.size(), apart.probs[i].top.size());
      for (size_t k = 0; k < together.probs[i].top.size(); ++k) {
        EXPECT_EQ(together.probs[i].top[k].id, apart.probs[i].top[k].id);
        EXPECT_EQ(together.probs[i].top[k].p, apart.probs[i].top[k].p);
      }
    }
  }
}

TEST_F(MediaTest, RefusesMalformedMediaAndEmbeddingInputsWithMedia) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  cfg.embeddings = true;
  auto s = started(cfg);
  ASSERT_TRUE(s);
  const auto error_of = [&](TaskRequest r) {
    auto sink = std::make_shared<CollectSink>();
    r.sink = sink;
    EXPECT_TRUE(s->submit(std::move(r)).is_ok());
    EXPECT_TRUE(sink->wait(1));
    return sink->errors.empty() ? std::string() : sink->errors.front().message;
  };
  const MediaPrompt p = with_chunk(text(4, 14), chunk(4, -7, 30, true), text(2, 15));
  TaskRequest wrong_place = request(p, 2, nullptr);
  wrong_place.media[0].begin = 3;  // position 3 holds text
  EXPECT_NE(error_of(std::move(wrong_place)).find("placeholder"), std::string::npos);
  TaskRequest short_embd = request(p, 2, nullptr);
  short_embd.media[0].n_tokens = 3;
  EXPECT_NE(error_of(std::move(short_embd)), "");
  TaskRequest stray = greedy(p.tokens, 2, nullptr);  // placeholders without chunks
  EXPECT_EQ(error_of(std::move(stray)), "Prompt contains invalid tokens");
  // A non-causal chunk goes in one forward call, which -ub bounds.
  TaskRequest too_wide = request(with_chunk(text(4, 14), chunk(600, -9, 32, true), {}), 2, nullptr);
  EXPECT_NE(error_of(std::move(too_wide)).find("increase the physical batch size"),
            std::string::npos);
  // Rerank inputs are text only (a decoder's embedding input may hold media).
  TaskRequest rerank = request(p, 2, nullptr);
  rerank.kind = TaskKind::kRerank;
  EXPECT_NE(error_of(std::move(rerank)).find("not supported"), std::string::npos);
}

TEST_F(MediaTest, ASlotHoldingMediaIsNotSaved) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  auto s = started(cfg);
  ASSERT_TRUE(s);
  run_one(*s, request(with_chunk(text(4, 16), chunk(4, -8, 31, true), text(2, 17)), 2, nullptr));
  const std::string dir = test::make_temp_dir("media-slot-save");
  const auto saved = s->save_slot(0, dir + "/slot.bin");
  EXPECT_EQ(saved.status().code(), ErrorCode::kUnsupported);
  EXPECT_FALSE(std::filesystem::exists(dir + "/slot.bin"));
  std::filesystem::remove_all(dir);
}

// A small random Gemma 3 with sliding-window layers (window 16): a non-causal chunk longer
// than the window, alone and beside another slot's chunk in the same steps.
class MediaWindowed : public MediaTest {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("media-windowed");
    const std::string path = dir_ + "/gemma3.gguf";
    ASSERT_TRUE(synth::synthesize(test::windowed_model_params(), path).is_ok());
    load(path);
  }
  static void TearDownTestSuite() {
    SchedulerTest::TearDownTestSuite();
    std::filesystem::remove_all(dir_);
  }
  static inline std::string dir_;
};

TEST_F(MediaWindowed, GeneratesWhatTheEngineGeneratesAloneAndTogether) {
  const MediaPrompt first = with_chunk(text(30, 1), chunk(40, -1, 41, true), text(10, 2));
  const MediaPrompt second = with_chunk(text(7, 3), chunk(24, -2, 42, true), text(5, 4));
  SchedulerConfig cfg;
  cfg.n_slots = 2;
  cfg.n_batch = 64;
  cfg.n_ubatch = 64;
  auto s = started(cfg);
  ASSERT_TRUE(s);
  auto sink = std::make_shared<CollectSink>();
  std::vector<TaskRequest> both = {request(first, 12, sink), request(second, 12, sink)};
  both[1].index = 1;
  ASSERT_TRUE(s->submit_all(std::move(both)).is_ok());
  ASSERT_TRUE(sink->wait(2));
  ASSERT_TRUE(sink->errors.empty()) << sink->errors.front().message;
  const auto finals = sink->sorted_finals();
  ASSERT_EQ(finals.size(), 2u);
  EXPECT_EQ(finals[0].generated, engine_greedy(first, 12));
  EXPECT_EQ(finals[1].generated, engine_greedy(second, 12));
}

// The planner on its own: steps and reuse end at chunk boundaries.
TEST(MediaPlanner, ReuseStopsAtAChunksStart) {
  const std::vector<int32_t> prompt = {1, 2, -1, -1, -1, 3};
  const std::vector<MediaChunk> media = {{2, 3, -1, false, 0, 0, nullptr}};
  PlanTask task{prompt};
  task.media = media;
  EXPECT_EQ(reusable_prefix(std::vector<int32_t>{1, 2, -1, -1, -1, 3}, task), 5);
  EXPECT_EQ(reusable_prefix(std::vector<int32_t>{1, 2, -1, -1}, task), 2);
  EXPECT_EQ(media_boundary(media, 3), 2);
  EXPECT_EQ(media_boundary(media, 5), 5);
  const std::vector<int32_t> ends_with_chunk = {1, 2, -1, -1, -1};
  PlanTask ending{ends_with_chunk};
  ending.media = media;
  EXPECT_EQ(reusable_prefix(ends_with_chunk, ending), 2);
}

TEST(MediaPlanner, StepsKeepChunksWhole) {
  // Slot 0: 4 text tokens, a 10-row chunk, 2 text tokens; slot 1: 6 text tokens.
  std::vector<int32_t> prompt = {1, 2, 3, 4};
  prompt.insert(prompt.end(), 10, -1);
  prompt.insert(prompt.end(), {5, 6});
  const std::vector<MediaChunk> media = {{4, 10, -1, true, 0, 0, nullptr}};
  const std::vector<int32_t> other = {1, 7, 8, 9, 10, 11};
  PlanInput in;
  in.n_batch = 8;
  in.slots.resize(2);
  in.slots[0].busy = true;
  in.slots[0].prompt_left = 16;
  in.slots[0].media = media;
  in.slots[1].busy = true;
  in.slots[1].prompt_left = 6;
  in.slots[1].started = 1;
  // The step stops before the chunk; the other slot fills the rest.
  StepPlan plan = plan_step(in);
  EXPECT_EQ(plan.prompt_tokens[0], 4);
  EXPECT_EQ(plan.prompt_tokens[1], 4);
  // At the chunk with another prompt first in line: the chunk waits.
  in.slots[0].prompt_at = 4;
  in.slots[0].prompt_left = 12;
  in.slots[0].started = 2;
  in.slots[1].prompt_left = 2;
  plan = plan_step(in);
  EXPECT_EQ(plan.prompt_tokens[1], 2);
  EXPECT_EQ(plan.prompt_tokens[0], 0);
  // First in line: the 10 rows go whole, past the budget of 8.
  in.slots[1].busy = false;
  plan = plan_step(in);
  EXPECT_EQ(plan.prompt_tokens[0], 10);
  EXPECT_EQ(plan.n_tokens, 10);
}

}  // namespace
}  // namespace hearth::scheduler

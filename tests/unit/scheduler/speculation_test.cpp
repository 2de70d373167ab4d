// Speculative decoding must not change a request's tokens: drafts only decide how many
// tokens one step verifies. 40 greedy prompts on stories260K (whose greedy text falls into
// loops that ngram-simple drafts from) give the same tokens with and without drafting, one
// at a time and all at once over 8 slots; seeded sampled requests too. The draft counts in
// the timings and the metrics add up.
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "scheduler_fixture.h"

namespace hearth::scheduler {
namespace {

using test_support::CollectSink;

constexpr int32_t kTokens = 48;

class Speculation : public test_support::SchedulerTest {
 public:
  enum class Source {
    kNone,
    kNgramSimple,
    kNgramMapK,
    kNgramMapK4v,
    kNgramMod,
    kNgramCache,
    kDraftModel
  };

 protected:
  std::unique_ptr<Scheduler> started(Source source,
                                     std::shared_ptr<const NgramCache> corpus = nullptr) {
    SchedulerConfig cfg;
    cfg.n_slots = 8;
    cfg.n_ctx_slot = 256;
    cfg.spec.ngram_simple = source == Source::kNgramSimple;
    cfg.spec.ngram_simple_params = {3, 8};
    cfg.spec.ngram_map_k = source == Source::kNgramMapK;
    cfg.spec.ngram_map_k_params = {3, 8, 1};
    cfg.spec.ngram_map_k4v = source == Source::kNgramMapK4v;
    cfg.spec.ngram_map_k4v_params = {3, 8, 1};
    cfg.spec.ngram_mod = source == Source::kNgramMod;
    cfg.spec.ngram_mod_params = {4, 2, 16};
    cfg.spec.ngram_cache = source == Source::kNgramCache;
    cfg.spec.lookup_static = std::move(corpus);
    // stories260K drafting for itself: greedy drafts are the target's own greedy tokens.
    cfg.spec.draft_simple = source == Source::kDraftModel;
    cfg.spec.draft.model = model_;
    cfg.spec.draft.n_max = 4;
    // A bandwidth-bound step (a row costs 2% of the fixed part), whatever the machine's
    // load: the draft budget, which learns from step times, decides the same every run.
    cfg.spec.step_seconds = [](int32_t rows) { return 0.010 + 0.0002 * rows; };
    auto s = make(cfg);
    if (s) s->start();
    return s;
  }

  std::vector<std::vector<int32_t>> prompts() const {
    const char* subjects[] = {"a little girl", "a big dog",  "a small cat", "Tom",
                              "Lily",          "a red bird", "the sun",     "a boy named Tim"};
    const char* openings[] = {"Once upon a time, there was ", "One day, ", "Every morning ",
                              "In the park, ", "Long ago, "};
    std::vector<std::vector<int32_t>> out;
    for (const char* o : openings)
      for (const char* s : subjects) out.push_back(tok_->tokenize(std::string(o) + s, true, false));
    return out;
  }

  // Runs every prompt; all at once when `together`, else one after the other.
  static std::vector<FinalResult> run(Scheduler& s, const std::vector<std::vector<int32_t>>& ps,
                                      bool together, float temperature = 0.0f,
                                      int32_t n_probs = 0) {
    auto sink = std::make_shared<CollectSink>();
    for (size_t i = 0; i < ps.size(); ++i) {
      TaskRequest r = greedy(ps[i], kTokens, sink);
      r.index = static_cast<int32_t>(i);
      r.params.sampling.temperature = temperature;
      r.params.sampling.seed = 1234 + static_cast<uint32_t>(i);
      r.params.n_probs = n_probs;
      EXPECT_TRUE(s.submit(std::move(r)).is_ok());
      if (!together) {
        EXPECT_TRUE(sink->wait(i + 1));
      }
    }
    EXPECT_TRUE(sink->wait(ps.size()));
    EXPECT_TRUE(sink->errors.empty());
    return sink->sorted_finals();
  }
};

class SpeculationBySource : public Speculation,
                            public ::testing::WithParamInterface<Speculation::Source> {};

TEST_P(SpeculationBySource, GreedyTokensEqualPlainDecoding) {
  const auto ps = prompts();
  ASSERT_EQ(ps.size(), 40u);
  auto plain = started(Source::kNone);
  auto spec = started(GetParam());
  ASSERT_TRUE(plain && spec);
  const auto want = run(*plain, ps, false);
  const auto alone = run(*spec, ps, false);
  const auto together = run(*spec, ps, true);
  ASSERT_EQ(want.size(), ps.size());
  ASSERT_EQ(alone.size(), ps.size());
  ASSERT_EQ(together.size(), ps.size());
  int64_t drafted = 0, accepted = 0;
  for (size_t i = 0; i < ps.size(); ++i) {
    EXPECT_EQ(alone[i].generated, want[i].generated) << "prompt " << i << " alone";
    EXPECT_EQ(together[i].generated, want[i].generated) << "prompt " << i << " among 8 slots";
    EXPECT_EQ(alone[i].content, want[i].content);
    EXPECT_EQ(want[i].timings.draft_n, 0);
    EXPECT_LE(alone[i].timings.draft_n_accepted, alone[i].timings.draft_n);
    for (const FinalResult* r : {&alone[i], &together[i]}) {
      drafted += r->timings.draft_n;
      accepted += r->timings.draft_n_accepted;
    }
  }
  EXPECT_GT(accepted, 0) << "the loops of stories260K's greedy text are drafted and accepted";
  const MetricsSnapshot m = spec->metrics(false);
  EXPECT_EQ(static_cast<int64_t>(m.n_draft_tokens), drafted);
  EXPECT_EQ(static_cast<int64_t>(m.n_draft_accepted), accepted);
  EXPECT_GT(m.n_draft_steps, 0u);
  EXPECT_EQ(static_cast<int64_t>(std::accumulate(m.n_accepted_per_pos.begin(),
                                                 m.n_accepted_per_pos.end(), uint64_t{0})),
            accepted);
  // Fewer forward steps than plain decoding for the same tokens.
  EXPECT_LT(m.n_decode_total, plain->metrics(false).n_decode_total * 2);
  const MetricsSnapshot none = plain->metrics(false);
  EXPECT_EQ(none.n_draft_tokens, 0u);
  EXPECT_TRUE(none.n_accepted_per_pos.empty());
  EXPECT_TRUE(spec->slots()[0].speculative);
  EXPECT_FALSE(plain->slots()[0].speculative);
  plain->stop();
  spec->stop();
}

TEST_P(SpeculationBySource, SeededSamplingEqualsPlainDecoding) {
  auto ps = prompts();
  ps.resize(12);
  auto plain = started(Source::kNone);
  auto spec = started(GetParam());
  ASSERT_TRUE(plain && spec);
  const auto want = run(*plain, ps, false, 0.7f);
  const auto got = run(*spec, ps, true, 0.7f);
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < ps.size(); ++i)
    EXPECT_EQ(got[i].generated, want[i].generated) << "prompt " << i;
  plain->stop();
  spec->stop();
}

// The reference gives tokens of a verification step an empty candidate list and
// probability 1 (differences.json: speculative-token-probabilities); here every token
// carries the probabilities plain decoding gives it.
TEST_P(SpeculationBySource, ProbabilitiesEqualPlainDecoding) {
  auto ps = prompts();
  ps.resize(8);
  auto plain = started(Source::kNone);
  auto spec = started(GetParam());
  ASSERT_TRUE(plain && spec);
  const auto want = run(*plain, ps, false, 0.0f, 3);
  const auto got = run(*spec, ps, true, 0.0f, 3);
  ASSERT_EQ(got.size(), want.size());
  int32_t accepted = 0;
  for (size_t i = 0; i < ps.size(); ++i) {
    ASSERT_EQ(got[i].probs.size(), want[i].probs.size()) << "prompt " << i;
    for (size_t k = 0; k < got[i].probs.size(); ++k) {
      const TokenProbs& a = got[i].probs[k];
      const TokenProbs& b = want[i].probs[k];
      EXPECT_EQ(a.id, b.id);
      EXPECT_EQ(a.p, b.p) << "prompt " << i << " token " << k;
      EXPECT_EQ(a.text, b.text);
      ASSERT_EQ(a.top.size(), b.top.size()) << "prompt " << i << " token " << k;
      for (size_t j = 0; j < a.top.size(); ++j) {
        EXPECT_EQ(a.top[j].id, b.top[j].id);
        EXPECT_EQ(a.top[j].p, b.top[j].p);
      }
    }
    accepted += got[i].timings.draft_n_accepted;
  }
  EXPECT_GT(accepted, 0);
  plain->stop();
  spec->stop();
}

// A model drafting for itself under greedy decoding proposes the target's own tokens: the
// drafts are accepted (but for tokens drafted past the request's end), in fewer steps.
TEST_F(Speculation, SelfDraftingIsAcceptedAndTakesFewerSteps) {
  auto ps = prompts();
  ps.resize(8);
  auto plain = started(Source::kNone);
  auto spec = started(Source::kDraftModel);
  ASSERT_TRUE(plain && spec);
  const auto want = run(*plain, ps, true);
  const auto got = run(*spec, ps, true);
  int64_t drafted = 0, accepted = 0;
  for (size_t i = 0; i < ps.size(); ++i) {
    EXPECT_EQ(got[i].generated, want[i].generated);
    drafted += got[i].timings.draft_n;
    accepted += got[i].timings.draft_n_accepted;
  }
  EXPECT_GT(drafted, 0);
  EXPECT_GE(static_cast<double>(accepted), 0.9 * static_cast<double>(drafted));
  EXPECT_LT(spec->metrics(false).n_decode_total, plain->metrics(false).n_decode_total);
  plain->stop();
  spec->stop();
}

// ngram-cache with a corpus table (-lcs) built from plain decoding's texts for other
// prompts: its 2-grams draft from the first generated token on, before the slot's own
// tokens repeat anything, and the output stays that of plain decoding.
TEST_F(Speculation, LookupCacheFromACorpusDraftsAndKeepsTheTokens) {
  auto ps = prompts();
  auto plain = started(Source::kNone);
  ASSERT_TRUE(plain);
  const auto want = run(*plain, ps, true);
  auto corpus = std::make_shared<NgramCache>();
  for (size_t i = 8; i < ps.size(); ++i) {
    std::vector<int32_t> text = ps[i];
    text.insert(text.end(), want[i].generated.begin(), want[i].generated.end());
    ngram_cache_update(*corpus, text, text.size());
  }
  ps.resize(8);
  auto with_corpus = started(Source::kNgramCache, corpus);
  auto without = started(Source::kNgramCache);
  ASSERT_TRUE(with_corpus && without);
  const auto got = run(*with_corpus, ps, true);
  const auto base = run(*without, ps, true);
  int64_t drafted = 0, accepted = 0, drafted_base = 0;
  for (size_t i = 0; i < ps.size(); ++i) {
    EXPECT_EQ(got[i].generated, want[i].generated) << "prompt " << i;
    drafted += got[i].timings.draft_n;
    accepted += got[i].timings.draft_n_accepted;
    drafted_base += base[i].timings.draft_n;
  }
  EXPECT_GT(accepted, 0);
  EXPECT_GT(drafted, drafted_base) << "the corpus proposes where the context alone cannot";
  plain->stop();
  with_corpus->stop();
  without->stop();
}

INSTANTIATE_TEST_SUITE_P(
    Sources, SpeculationBySource,
    ::testing::Values(Speculation::Source::kNgramSimple, Speculation::Source::kNgramMapK,
                      Speculation::Source::kNgramMapK4v, Speculation::Source::kNgramMod,
                      Speculation::Source::kNgramCache, Speculation::Source::kDraftModel),
    [](const auto& source) {
      switch (source.param) {
        case Speculation::Source::kNgramSimple:
          return std::string("ngram_simple");
        case Speculation::Source::kNgramMapK:
          return std::string("ngram_map_k");
        case Speculation::Source::kNgramMapK4v:
          return std::string("ngram_map_k4v");
        case Speculation::Source::kNgramMod:
          return std::string("ngram_mod");
        case Speculation::Source::kNgramCache:
          return std::string("ngram_cache");
        default:
          return std::string("draft_model");
      }
    });

}  // namespace
}  // namespace hearth::scheduler

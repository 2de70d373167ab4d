// M-RoPE positions in the scheduler (media_positions.h): the layout of a sequence's rope
// positions around image and audio chunks, derived by hand from the reference's rules
// (mtmd_image_tokens_get_decoder_pos, set_position_mrope_1d, server_tokens::pos_next); and,
// through the real Scheduler over a random-weight qwen3vl model with deepstack rows, that a
// follow-up turn reusing an image's KV (from the slot, or restored from the host prompt
// cache) gives the bits of a cold run, that two sequences with images in one step and n_cmpl
// copies of one give the bits of a single run, and that drafting (a draft model that
// reads the same rows at the same positions) keeps the output and has its drafts accepted;
// the media encoder gives images a grid exactly when the text model is M-RoPE.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "media/projector.h"
#include "scheduler/media_positions.h"
#include "scheduler/scheduler.h"
#include "scheduler_fixture.h"
#include "support/test_paths.h"
#include "tools/synth/synth.h"

namespace hearth::scheduler {
namespace {

using test_support::CollectSink;
using test_support::expect_same_bits;
using test_support::run_one;
using test_support::run_together;

MediaChunk grid_chunk(int32_t begin, int32_t nx, int32_t ny) {
  MediaChunk c;
  c.begin = begin;
  c.n_tokens = nx * ny;
  c.grid_nx = nx;
  c.grid_ny = ny;
  return c;
}

void expect_pos(const engine::RopePos& got, engine::RopePos want, int32_t k) {
  EXPECT_EQ(got.t, want.t) << "index " << k;
  EXPECT_EQ(got.h, want.h) << "index " << k;
  EXPECT_EQ(got.w, want.w) << "index " << k;
  EXPECT_EQ(got.e, want.e) << "index " << k;
}

// Text 0..4; a 4 x 3 image at 5..16 (advances 4 positions); text 17..21; a 3-row audio clip
// at 22..24 (no grid: 1-D, advances 3); a 2 x 5 image at 25..34 (advances 5); text from 35.
TEST(MediaRopePositions, FollowTheReferenceLayout) {
  MediaChunk audio;
  audio.begin = 22;
  audio.n_tokens = 3;
  const std::vector<MediaChunk> media = {grid_chunk(5, 4, 3), audio, grid_chunk(25, 2, 5)};
  for (int32_t k = 0; k < 5; ++k) expect_pos(media_rope_position(media, k), {k, k, k, k}, k);
  // Image rows: t = 5, h = 5 + row, w = 5 + column, e = 0.
  expect_pos(media_rope_position(media, 5), {5, 5, 5, 0}, 5);
  expect_pos(media_rope_position(media, 8), {5, 5, 8, 0}, 8);
  expect_pos(media_rope_position(media, 9), {5, 6, 5, 0}, 9);
  expect_pos(media_rope_position(media, 16), {5, 7, 8, 0}, 16);
  // After it: 5 + max(4, 3) = 9 onwards (12 rows advanced 4: shift 8).
  expect_pos(media_rope_position(media, 17), {9, 9, 9, 9}, 17);
  expect_pos(media_rope_position(media, 21), {13, 13, 13, 13}, 21);
  // Audio rows: one position each in all four components.
  expect_pos(media_rope_position(media, 22), {14, 14, 14, 14}, 22);
  expect_pos(media_rope_position(media, 24), {16, 16, 16, 16}, 24);
  // The second image at t = 17: row 3 is (row 1, column 1).
  expect_pos(media_rope_position(media, 25), {17, 17, 17, 0}, 25);
  expect_pos(media_rope_position(media, 28), {17, 18, 18, 0}, 28);
  expect_pos(media_rope_position(media, 34), {17, 21, 18, 0}, 34);
  // Then 17 + max(2, 5) = 22 (shift 8 + 5), generated tokens included.
  expect_pos(media_rope_position(media, 35), {22, 22, 22, 22}, 35);
  expect_pos(media_rope_position(media, 100), {87, 87, 87, 87}, 100);
  // Without chunks, and for chunks without a grid, the index itself.
  expect_pos(media_rope_position({}, 42), {42, 42, 42, 42}, 42);
}

class MropeScheduler : public test_support::SchedulerTest {
 protected:
  // A qwen3vl with interleaved M-RoPE whose last pair is the extra component, and one
  // deepstack layer: media rows are 2 * n_embd wide.
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("mrope-scheduler");
    const std::string vocab = test::shared_path("models/stories260K.gguf");
    if (!std::filesystem::exists(vocab)) return;
    synth::SynthParams p;
    p.arch = "qwen3vl";
    p.n_embd = 64;
    p.n_layer = 2;
    p.n_head = 4;
    p.n_head_kv = 2;
    p.n_ff = 128;
    p.n_ctx = 512;
    p.rope_sections = {4, 2, 2, 0};
    p.n_deepstack = 1;
    p.type = TensorType::kF16;
    p.vocab_path = vocab;
    const std::string path = dir_ + "/qwen3vl.gguf";
    ASSERT_TRUE(synth::synthesize(p, path).is_ok());
    load(path);
  }
  static void TearDownTestSuite() {
    SchedulerTest::TearDownTestSuite();
    std::filesystem::remove_all(dir_);
  }
  void SetUp() override {
    if (!model_) GTEST_SKIP() << "SKIPPED: models/stories260K.gguf (the vocabulary) is missing";
  }

  static std::vector<int32_t> text(int32_t n, int32_t salt) {
    std::vector<int32_t> t;
    for (int32_t i = 0; i < n; ++i) t.push_back((5 + salt * 7 + i * 13 + i * i) % 512);
    return t;
  }

  // Appends an nx x ny image of seeded rows (n_embd_inp wide) to `r`.
  static void add_image(TaskRequest& r, int32_t nx, int32_t ny, int32_t placeholder, int32_t seed) {
    MediaChunk c = grid_chunk(static_cast<int32_t>(r.prompt.size()), nx, ny);
    c.placeholder = placeholder;
    const int32_t width = model_->hparams().n_embd_inp();
    auto rows = std::make_shared<std::vector<float>>(static_cast<size_t>(c.n_tokens) * width);
    for (size_t i = 0; i < rows->size(); ++i)
      (*rows)[i] = static_cast<float>(std::sin(0.37 * static_cast<double>(i) + seed));
    c.embd = rows;
    r.prompt.insert(r.prompt.end(), static_cast<size_t>(c.n_tokens), placeholder);
    r.media.push_back(c);
  }

  static TaskRequest prompt_with_images(int32_t salt, int32_t seed) {
    TaskRequest r = greedy(text(6, salt), 12, nullptr);
    add_image(r, 4, 3, -1 - salt, seed);
    const auto b = text(5, salt + 1);
    r.prompt.insert(r.prompt.end(), b.begin(), b.end());
    add_image(r, 2, 5, -20 - salt, seed + 1);
    const auto c = text(4, salt + 2);
    r.prompt.insert(r.prompt.end(), c.begin(), c.end());
    r.params.n_probs = 5;
    return r;
  }

  std::unique_ptr<Scheduler> started(SchedulerConfig cfg) {
    auto s = make(cfg);
    if (s) s->start();
    return s;
  }

  static inline std::string dir_;
};

// A second turn: the first prompt, its answer and more text. The warm slot reuses everything
// up to the answer (both images included), and the answer is what a cold scheduler gives.
TEST_F(MropeScheduler, AFollowUpReusingTheImagesMatchesAColdRun) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  auto warm = started(cfg);
  ASSERT_TRUE(warm);
  const TaskRequest first = prompt_with_images(1, 3);
  const FinalResult answer = run_one(*warm, first);
  ASSERT_EQ(answer.generated.size(), 12u);
  TaskRequest second = first;
  second.prompt.insert(second.prompt.end(), answer.generated.begin(), answer.generated.end());
  const auto more = text(7, 9);
  second.prompt.insert(second.prompt.end(), more.begin(), more.end());
  const FinalResult reused = run_one(*warm, second);
  EXPECT_GE(reused.timings.cache_n, static_cast<int32_t>(first.prompt.size()));
  auto cold = started(cfg);
  ASSERT_TRUE(cold);
  const FinalResult fresh = run_one(*cold, second);
  EXPECT_EQ(fresh.timings.cache_n, 0);
  expect_same_bits(reused, fresh);
}

// The same turn after another prompt took the slot: the images' rows come back from the host
// prompt cache, at the positions they were written at.
TEST_F(MropeScheduler, AFollowUpRestoredFromTheHostCacheMatchesAColdRun) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  auto warm = started(cfg);
  ASSERT_TRUE(warm);
  const TaskRequest first = prompt_with_images(1, 3);
  const FinalResult answer = run_one(*warm, first);
  const FinalResult other = run_one(*warm, greedy(text(9, 30), 4, nullptr));
  EXPECT_EQ(other.timings.cache_n, 0);
  TaskRequest second = first;
  second.prompt.insert(second.prompt.end(), answer.generated.begin(), answer.generated.end());
  const auto more = text(3, 11);
  second.prompt.insert(second.prompt.end(), more.begin(), more.end());
  const FinalResult restored = run_one(*warm, second);
  EXPECT_GE(restored.timings.cache_n, static_cast<int32_t>(first.prompt.size()));
  auto cold = started(cfg);
  ASSERT_TRUE(cold);
  expect_same_bits(restored, run_one(*cold, second));
}

TEST_F(MropeScheduler, TwoSequencesWithImagesInOneStepMatchEachAlone) {
  SchedulerConfig cfg;
  cfg.n_slots = 2;
  const TaskRequest first = prompt_with_images(2, 5);
  TaskRequest second = prompt_with_images(4, 7);
  second.index = 1;
  const auto alone = [&](const TaskRequest& r) {
    auto s = started(cfg);
    return run_one(*s, r);
  };
  const FinalResult a = alone(first);
  const FinalResult b = alone(second);
  auto s = started(cfg);
  ASSERT_TRUE(s);
  const std::vector<FinalResult> finals = run_together(*s, {first, second});
  ASSERT_EQ(finals.size(), 2u);
  expect_same_bits(finals[0], a);
  expect_same_bits(finals[1], b);
}

// Chunks whose grid does not cover their rows, or whose rows are not the model's input width
// (n_embd * 2 with one deepstack layer), are refused naming the chunk.
TEST_F(MropeScheduler, RefusesChunksOfTheWrongGridOrWidth) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  auto s = started(cfg);
  ASSERT_TRUE(s);
  const auto error_of = [&](TaskRequest r) {
    auto sink = std::make_shared<CollectSink>();
    r.sink = sink;
    EXPECT_TRUE(s->submit(std::move(r)).is_ok());
    EXPECT_TRUE(sink->wait(1));
    return sink->errors.empty() ? std::string() : sink->errors.front().message;
  };
  TaskRequest bad_grid = prompt_with_images(5, 1);
  bad_grid.media[0].grid_nx = 5;  // 5 x 3 for 12 rows
  EXPECT_NE(error_of(bad_grid).find("media chunk 0 has a 5 x 3 grid for 12 rows"),
            std::string::npos);
  TaskRequest half_grid = prompt_with_images(5, 1);
  half_grid.media[1].grid_ny = 0;
  EXPECT_NE(error_of(half_grid).find("media chunk 1"), std::string::npos);
  TaskRequest narrow = prompt_with_images(5, 1);
  narrow.media[0].embd = std::make_shared<std::vector<float>>(12 * 64, 0.5f);  // n_embd only
  EXPECT_NE(error_of(narrow).find("expected 12 x 128"), std::string::npos);
}

// n_cmpl copies share the prompt's KV (images included) and continue at its positions.
TEST_F(MropeScheduler, CopiesOfAPromptWithImagesMatchASingleRun) {
  SchedulerConfig cfg;
  cfg.n_slots = 2;
  const TaskRequest single = prompt_with_images(3, 9);
  auto s = started(cfg);
  ASSERT_TRUE(s);
  const FinalResult alone = run_one(*s, single);
  auto fresh = started(cfg);
  ASSERT_TRUE(fresh);
  auto sink = std::make_shared<CollectSink>();
  TaskRequest copies = single;
  copies.n_cmpl = 2;
  copies.sink = sink;
  ASSERT_TRUE(fresh->submit(std::move(copies)).is_ok());
  ASSERT_TRUE(sink->wait(2));
  const auto finals = sink->sorted_finals();
  ASSERT_EQ(finals.size(), 2u);
  for (const FinalResult& f : finals) expect_same_bits(f, alone);
}

// The target model as its own draft model: its drafts read the media rows (deepstack width)
// at the target's rope positions, so each is the target's greedy token and is accepted.
TEST_F(MropeScheduler, DraftsReadTheRowsAtTheTargetsPositions) {
  const auto run = [&](bool draft) {
    SchedulerConfig cfg;
    cfg.n_slots = 1;
    cfg.spec.draft_simple = draft;
    cfg.spec.draft.model = model_;
    cfg.spec.draft.n_max = 4;
    cfg.spec.step_seconds = [](int32_t rows) { return 0.010 + 0.0002 * rows; };
    auto s = started(cfg);
    EXPECT_TRUE(s);
    TaskRequest r = prompt_with_images(6, 11);
    r.params.n_predict = 24;
    r.params.n_probs = 0;
    return run_one(*s, std::move(r));
  };
  const FinalResult plain = run(false);
  const FinalResult drafted = run(true);
  ASSERT_EQ(plain.generated.size(), 24u);
  EXPECT_EQ(drafted.generated, plain.generated);
  EXPECT_GT(drafted.timings.draft_n, 0);
  EXPECT_EQ(drafted.timings.draft_n_accepted, drafted.timings.draft_n);
}

// The reference decides M-RoPE positions by the text model's rope type: under qwen2vl an
// image of a projector without its own grid (here LLaVA's mlp) forms one row of all its
// rows (clip_n_output_tokens_x/_y: n_tokens x 1); under a 1-D model no grid at all. A
// remembered image keeps its grid.
TEST(MropeMediaEncoder, ImagesTakeAGridOnlyUnderMrope) {
  const std::string vocab = test::shared_path("models/stories260K.gguf");
  if (!std::filesystem::exists(vocab)) GTEST_SKIP() << "SKIPPED: " << vocab << " is missing";
  const std::string dir = test::make_temp_dir("mrope-encoder");
  synth::SynthParams proj;
  proj.projector = "mlp";
  proj.text_n_embd = 64;
  proj.n_embd = 32;
  proj.n_layer = 2;
  proj.n_head = 2;
  proj.n_ff = 64;
  proj.image_size = 28;
  proj.patch_size = 14;
  proj.type = TensorType::kF32;
  ASSERT_TRUE(synth::synthesize(proj, dir + "/mmproj.gguf").is_ok());
  synth::SynthParams text;
  text.arch = "qwen2vl";
  text.n_embd = 64;
  text.n_layer = 1;
  text.n_head = 4;
  text.n_head_kv = 2;
  text.n_ff = 128;
  text.n_ctx = 512;
  text.type = TensorType::kF16;
  text.vocab_path = vocab;
  ASSERT_TRUE(synth::synthesize(text, dir + "/qwen2vl.gguf").is_ok());
  const std::string image =
      test::read_file(std::string(HEARTH_SOURCE_DIR) + "/tests/data/media/grad_37x23.png");
  for (const bool mrope : {true, false}) {
    SCOPED_TRACE(mrope ? "qwen2vl" : "stories260K");
    auto model = models::load_model(mrope ? dir + "/qwen2vl.gguf" : vocab);
    ASSERT_TRUE(model.is_ok()) << model.status().to_string();
    auto tok = tokenizer::Tokenizer::from_gguf((*model)->metadata());
    ASSERT_TRUE(tok.is_ok());
    auto projector = media::Projector::load(dir + "/mmproj.gguf", (*model)->hparams().n_embd_inp());
    ASSERT_TRUE(projector.is_ok()) << projector.status().to_string();
    SchedulerConfig cfg;
    cfg.n_threads = 1;
    cfg.media.projector = std::move(*projector);
    auto s = Scheduler::create(*model,
                               std::make_shared<const tokenizer::Tokenizer>(std::move(*tok)), cfg);
    ASSERT_TRUE(s.is_ok()) << s.status().to_string();
    const std::span<const uint8_t> bytes(reinterpret_cast<const uint8_t*>(image.data()),
                                         image.size());
    for (int pass = 0; pass < 2; ++pass) {  // encoded, then remembered
      auto encoded = (*s)->encode_media(bytes, nullptr);
      ASSERT_TRUE(encoded.is_ok()) << encoded.status().to_string();
      const MediaChunk* chunk = nullptr;
      for (const MediaPiece& piece : encoded->pieces)
        if (piece.kind == MediaPiece::Kind::kChunk) chunk = &piece.chunk;
      ASSERT_NE(chunk, nullptr);
      const MediaChunk& c = *chunk;
      ASSERT_GT(c.n_tokens, 0);
      EXPECT_EQ(c.grid_nx, mrope ? c.n_tokens : 0) << "pass " << pass;
      EXPECT_EQ(c.grid_ny, mrope ? 1 : 0) << "pass " << pass;
      EXPECT_EQ(c.n_pos(), c.n_tokens);
    }
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hearth::scheduler

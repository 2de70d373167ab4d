// Slot save/restore/erase through the Scheduler with the stories260K model, the slot file
// format's validation, and the KV cache types of SchedulerConfig.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <future>
#include <iterator>
#include <string>
#include <thread>

#include "scheduler/slot_file.h"
#include "scheduler_fixture.h"

namespace hearth::scheduler {
namespace {

using test_support::CollectSink;

class SlotActionTest : public test_support::SchedulerTest {
 protected:
  void SetUp() override { dir_ = test::make_temp_dir("slot_actions"); }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

  // Runs one greedy request and returns its final result.
  FinalResult run(Scheduler& s, const std::vector<int32_t>& prompt, int32_t n_predict,
                  int32_t id_slot = -1) {
    auto sink = std::make_shared<CollectSink>();
    TaskRequest r = greedy(prompt, n_predict, sink);
    r.id_slot = id_slot;
    EXPECT_TRUE(s.submit(std::move(r)).is_ok());
    EXPECT_TRUE(sink->wait(1));
    EXPECT_EQ(sink->finals.size(), 1u);
    return sink->finals.empty() ? FinalResult{} : sink->finals[0];
  }

  std::vector<int32_t> story() const {
    return tok_->tokenize("Once upon a time there was a little girl named Lily", true, true);
  }

  std::string dir_;
};

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<uint8_t>& bytes) {
  std::ofstream out(path, std::ios::binary);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
}

TEST_F(SlotActionTest, SaveEraseRestoreRoundTrip) {
  SchedulerConfig cfg;
  cfg.n_slots = 2;
  auto sched = make(cfg);
  ASSERT_TRUE(sched);
  sched->start();
  const std::vector<int32_t> prompt = story();
  const FinalResult first = run(*sched, prompt, 12);
  const int32_t slot = first.id_slot;
  ASSERT_GE(slot, 0);
  const int32_t n_held = sched->slots()[static_cast<size_t>(slot)].n_prompt_tokens;
  ASSERT_EQ(n_held, first.n_cached);

  auto saved = sched->save_slot(slot, path("a.bin"));
  ASSERT_TRUE(saved.is_ok()) << saved.status().to_string();
  EXPECT_EQ(saved->n_tokens, n_held);
  EXPECT_EQ(saved->n_bytes, read_bytes(path("a.bin")).size());

  auto erased = sched->erase_slot(slot);
  ASSERT_TRUE(erased.is_ok());
  EXPECT_EQ(*erased, n_held);
  EXPECT_EQ(sched->slots()[static_cast<size_t>(slot)].n_prompt_tokens, 0);
  EXPECT_EQ(*sched->erase_slot(slot), 0);
  sched->stop();

  // A fresh scheduler: everything the slot knows comes from the file.
  auto fresh = make(cfg);
  ASSERT_TRUE(fresh);
  fresh->start();
  auto restored = fresh->restore_slot(1, path("a.bin"));
  ASSERT_TRUE(restored.is_ok()) << restored.status().to_string();
  EXPECT_EQ(restored->n_tokens, n_held);
  EXPECT_EQ(restored->n_bytes, saved->n_bytes);
  EXPECT_EQ(fresh->slots()[1].n_prompt_tokens, n_held);
  // The same prompt reuses all but its last token, and the restored rows give the same text.
  const FinalResult again = run(*fresh, prompt, 12, 1);
  EXPECT_EQ(again.timings.cache_n, static_cast<int32_t>(prompt.size()) - 1);
  EXPECT_EQ(again.timings.prompt_n, 1);
  EXPECT_EQ(again.generated, first.generated);
  fresh->stop();
}

TEST_F(SlotActionTest, CorruptFilesFailWithTheReferenceReasons) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  auto sched = make(cfg);
  ASSERT_TRUE(sched);
  sched->start();
  run(*sched, story(), 4);
  ASSERT_TRUE(sched->save_slot(0, path("good.bin")).is_ok());
  const std::vector<uint8_t> good = read_bytes(path("good.bin"));

  const auto expect_failure = [&](const std::vector<uint8_t>& bytes, const char* reason) {
    write_bytes(path("bad.bin"), bytes);
    ASSERT_TRUE(sched->restore_slot(0, path("good.bin")).is_ok());
    ASSERT_GT(sched->slots()[0].n_prompt_tokens, 0);
    auto r = sched->restore_slot(0, path("bad.bin"));
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().message(), reason);
    EXPECT_EQ(sched->slots()[0].n_prompt_tokens, 0);  // the slot is cleared
  };
  std::vector<uint8_t> bytes = good;
  bytes[0] ^= 0xff;  // magic
  expect_failure(bytes, kRestoreInvalidFile);
  expect_failure(std::vector<uint8_t>(good.begin(), good.begin() + 20), kRestoreInvalidFile);
  expect_failure(std::vector<uint8_t>(good.begin(), good.end() - 1), kRestoreInvalidFile);
  expect_failure({}, kRestoreInvalidFile);
  bytes = good;
  bytes[40 + 4 * 2 + 3] = 0x7f;  // third token id: far outside the vocabulary
  expect_failure(bytes, kRestoreBadTokens);
  // A missing file fails as the reference does (it cannot tell the cases apart).
  auto missing = sched->restore_slot(0, path("missing.bin"));
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().message(), kRestoreInvalidFile);
  sched->stop();
}

TEST_F(SlotActionTest, RestoreIntoASmallerSlotContextFails) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  auto big = make(cfg);
  ASSERT_TRUE(big);
  big->start();
  const FinalResult r = run(*big, story(), 16);
  ASSERT_GT(r.n_cached, 16);
  ASSERT_TRUE(big->save_slot(0, path("big.bin")).is_ok());
  big->stop();
  cfg.n_ctx_slot = 16;
  auto small = make(cfg);
  ASSERT_TRUE(small);
  small->start();
  auto restored = small->restore_slot(0, path("big.bin"));
  ASSERT_FALSE(restored.is_ok());
  EXPECT_EQ(restored.status().message(), kRestoreTooLong);
  EXPECT_EQ(small->slots()[0].n_prompt_tokens, 0);
  small->stop();
}

TEST_F(SlotActionTest, ActionOnABusySlotWaitsForTheTask) {
  SchedulerConfig cfg;
  cfg.n_slots = 1;
  auto sched = make(cfg);
  ASSERT_TRUE(sched);
  sched->start();
  auto sink = std::make_shared<CollectSink>();
  ASSERT_TRUE(sched->submit(greedy(story(), 200, sink)).is_ok());
  for (int i = 0; i < 2000 && sched->has_idle_slot(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  // Queued while the slot generates: runs once the task is released, before the next task.
  auto save = std::async(std::launch::async, [&] { return sched->save_slot(0, path("w.bin")); });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  auto next = std::make_shared<CollectSink>();
  ASSERT_TRUE(sched->submit(greedy({1, 403}, 4, next)).is_ok());
  auto saved = save.get();
  ASSERT_TRUE(saved.is_ok()) << saved.status().to_string();
  ASSERT_TRUE(sink->wait(1));
  ASSERT_EQ(sink->finals.size(), 1u);
  EXPECT_EQ(saved->n_tokens, sink->finals[0].n_cached);
  ASSERT_TRUE(next->wait(1));
  EXPECT_EQ(next->finals.size(), 1u);
  sched->stop();
  // After stop() nothing can run the action: it fails instead of hanging.
  EXPECT_FALSE(sched->erase_slot(0).is_ok());
}

TEST(SlotFileTest, EncodesAndDecodes) {
  SlotFileShape shape;
  shape.kv = {2, 4, 6, {}};
  shape.type_k = 1;
  shape.type_v = 1;
  shape.n_vocab = 100;
  engine::KvSnapshot kv;
  kv.shape = shape.kv;
  kv.n_tokens = 3;
  for (int i = 0; i < 3 * 2 * (4 + 6); ++i) kv.data.push_back(static_cast<uint8_t>(i));
  const std::vector<int32_t> tokens{1, 50, 99};
  const std::vector<uint8_t> bytes = encode_slot_file(shape, tokens, kv);
  EXPECT_LE(bytes.size(), max_slot_file_bytes(shape, 3));
  auto state = decode_slot_file(bytes, shape, 3);
  ASSERT_TRUE(state.is_ok()) << state.status().to_string();
  EXPECT_EQ(state->tokens, tokens);
  EXPECT_EQ(state->kv.data, kv.data);
  EXPECT_EQ(state->kv.n_tokens, 3);
  EXPECT_EQ(decode_slot_file(bytes, shape, 2).status().message(), kRestoreTooLong);
  SlotFileShape other = shape;
  other.type_k = 30;  // bf16 rows have the size of f16 rows but not their meaning
  EXPECT_EQ(decode_slot_file(bytes, other, 3).status().message(), kRestoreInvalidFile);
  other = shape;
  other.n_vocab = 99;
  EXPECT_EQ(decode_slot_file(bytes, other, 3).status().message(), kRestoreInvalidFile);
}

// A slot of a model with a windowed layer stores that layer's rows from window_first on.
TEST(SlotFileTest, CarriesTheWindowedRowsStillHeld) {
  SlotFileShape shape;
  shape.kv = {2, 4, 6, {8, 0}};  // layer 0 windowed
  shape.n_vocab = 100;
  engine::KvSnapshot kv;
  kv.shape = shape.kv;
  kv.n_tokens = 5;
  kv.window_first = 2;
  kv.data.assign(2 * (4 + 6) + 3 * 2 * (4 + 6), 7);
  const std::vector<int32_t> tokens{1, 2, 3, 4, 5};
  const std::vector<uint8_t> bytes = encode_slot_file(shape, tokens, kv);
  auto state = decode_slot_file(bytes, shape, 8);
  ASSERT_TRUE(state.is_ok()) << state.status().to_string();
  EXPECT_EQ(state->kv.window_first, 2);
  EXPECT_EQ(state->kv.data, kv.data);
  // The same bytes read as complete rows, or by a model without the window, do not fit.
  kv.window_first = 0;
  EXPECT_EQ(decode_slot_file(encode_slot_file(shape, tokens, kv), shape, 8).status().message(),
            kRestoreInvalidFile);
  SlotFileShape unwindowed = shape;
  unwindowed.kv.layer_window.clear();
  EXPECT_EQ(decode_slot_file(bytes, unwindowed, 8).status().message(), kRestoreInvalidFile);
}

TEST_F(SlotActionTest, KvCacheTypes) {
  SchedulerConfig cfg;
  cfg.n_threads = 1;
  cfg.type_k = TensorType::kQ4_0;
  auto bad = Scheduler::create(model_, tok_, cfg);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().code(), ErrorCode::kInvalidArgument);
  EXPECT_NE(bad.status().message().find("q4_0"), std::string::npos);
  cfg.type_k = TensorType::kF32;
  cfg.type_v = TensorType::kF32;
  auto f32 = Scheduler::create(model_, tok_, cfg);
  ASSERT_TRUE(f32.is_ok()) << f32.status().to_string();
  (*f32)->start();
  const FinalResult r = run(**f32, story(), 8);
  EXPECT_EQ(r.n_predicted, 8);
  // Files record the row types: an f32 slot cannot be restored into an f16 cache.
  ASSERT_TRUE((*f32)->save_slot(0, path("f32.bin")).is_ok());
  (*f32)->stop();
  auto f16 = make();
  ASSERT_TRUE(f16);
  f16->start();
  EXPECT_EQ(f16->restore_slot(0, path("f32.bin")).status().message(), kRestoreInvalidFile);
  f16->stop();
}

}  // namespace
}  // namespace hearth::scheduler

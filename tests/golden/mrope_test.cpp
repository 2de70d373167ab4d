// M-RoPE text models with media rows against the reference (tests/data/mrope): random-weight
// qwen2vl, qwen3vl and qwen3vlmoe (deepstack) models that hearth-synth writes from each file's
// "synth" arguments, fed text A, a 4 x 3 image, text B, a 2 x 5 image, text C, then 8 greedy steps.
// The reference's side fed llama_decode the same rows as embedding batches with mtmd's 2-D
// decoder positions (t = p0, h = p0 + row, w = p0 + column, e = 0) and advanced its position
// by max(nx, ny) after each image, as mtmd-helper does; its top-10 log-probabilities at every
// row were recorded. Image rows are
//   value(i, j) = float(0.9 * sin(0.731 i + 1.37 j + 0.05 i j))
// (double arithmetic) for row i of the media sequence (image 1: 0..11, image 2: 12..21) and
// column j of the model's input width (qwen3vl: n_embd * (1 + deepstack layers)).
// Two paths: the engine given explicit rope positions (BatchToken::rope), and the scheduler
// given the prompt with grid chunks, which lays out the positions itself.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>

#include "golden/model_fixture.h"
#include "scheduler/scheduler.h"
#include "support/process.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace hearth::test {
namespace {

// The golden tolerance of F16 models (logits_test.cpp's tolerance_for).
constexpr double kTolerance = 0.02;

std::shared_ptr<std::vector<float>> image_rows(int32_t first, int32_t n, int32_t width) {
  auto rows = std::make_shared<std::vector<float>>(static_cast<size_t>(n) * width);
  for (int32_t r = 0; r < n; ++r)
    for (int32_t j = 0; j < width; ++j) {
      const double i = first + r;
      (*rows)[static_cast<size_t>(r) * width + j] =
          static_cast<float>(0.9 * std::sin(0.731 * i + 1.37 * j + 0.05 * i * j));
    }
  return rows;
}

// Hearth's log-probabilities `lp` against one reference row {token, top: [[id, lp] x 10]}:
// every reference entry within the tolerance, and the same greedy token unless the
// reference's top two are within it.
void check_row(const nlohmann::json& ref, const std::vector<double>& lp, const std::string& where) {
  const auto& top = ref["top"];
  for (const auto& e : top)
    EXPECT_NEAR(lp[e[0].get<size_t>()], e[1].get<double>(), kTolerance)
        << where << " token " << e[0];
  if (top[0][1].get<double>() - top[1][1].get<double>() > kTolerance) {
    const auto best = std::max_element(lp.begin(), lp.end()) - lp.begin();
    EXPECT_EQ(best, top[0][0].get<int>()) << where << ": greedy token differs";
  }
}

struct Image {
  int32_t nx = 0, ny = 0, first_row = 0;
  int32_t n() const { return nx * ny; }
};

class MropeGolden : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    doc_ = nlohmann::json::parse(
        read_file(std::string(HEARTH_SOURCE_DIR) + "/tests/data/mrope/" + GetParam() + ".json"));
    for (const auto& im : doc_["images"])
      images_.push_back(
          {im["nx"].get<int32_t>(), im["ny"].get<int32_t>(), im["first_row"].get<int32_t>()});
    std::vector<std::string> args{bin_dir() + "/hearth-synth"};
    for (const auto& a : doc_["synth"]) {
      const std::string arg = a;
      args.push_back(arg.rfind("models/", 0) == 0 ? shared_path(arg) : arg);
      if (arg.rfind("models/", 0) == 0 && !std::filesystem::exists(args.back()))
        GTEST_SKIP() << "SKIPPED: " << args.back() << " is missing";
    }
    dir_ = make_temp_dir("mrope-golden");
    path_ = dir_ + "/model.gguf";
    args.insert(args.end(), {"-o", path_});
    const ProcessResult r = run_process(args, 120);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  void TearDown() override {
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }

  std::vector<int32_t> ids(const char* key) const { return doc_[key].get<std::vector<int32_t>>(); }

  nlohmann::json doc_;
  std::vector<Image> images_;
  std::string dir_, path_;
};

// Appends rows to sequence 0, each with its rope position, all asking for logits; returns
// each row's log-probabilities.
std::vector<std::vector<double>> decode_rows(engine::Context& ctx, engine::Batch& batch) {
  const Status s = ctx.decode(batch);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  std::vector<std::vector<double>> out;
  for (int32_t i = 0; s.is_ok() && i < batch.size(); ++i) {
    const auto l = ctx.logits(i);
    out.push_back(log_softmax({l.begin(), l.end()}));
  }
  batch.clear();
  return out;
}

TEST_P(MropeGolden, EngineWithExplicitRopePositionsMatchesTheReference) {
  LoadedModel lm = load_with_context(path_, 256, 1, 2);
  ASSERT_TRUE(lm.ctx);
  engine::Context& ctx = *lm.ctx;
  const int32_t width = doc_["width"];
  ASSERT_EQ(lm.model->hparams().n_embd_inp(), width);
  int32_t rope = 0;          // the reference's n_past: the next rope position
  std::vector<double> last;  // the log-probabilities of the latest row
  const auto text = [&](const std::vector<int32_t>& tokens, const char* key) {
    engine::Batch b;
    for (int32_t t : tokens) {
      b.add(t, ctx.kv_cache().length(0) + b.size(), 0, true);
      b.set_rope(b.size() - 1, engine::RopePos::all(rope++));
    }
    const auto lp = decode_rows(ctx, b);
    ASSERT_EQ(lp.size(), tokens.size());
    for (size_t i = 0; key != nullptr && i < lp.size(); ++i)
      check_row(doc_[key][i], lp[i], std::string(key) + " row " + std::to_string(i));
    last = lp.back();
  };
  const auto image = [&](const Image& im, const char* key) {
    const auto rows = image_rows(im.first_row, im.n(), width);
    engine::Batch b;
    for (int32_t i = 0; i < im.n(); ++i) {
      b.add_embd(rows->data() + static_cast<size_t>(i) * width, ctx.kv_cache().length(0) + i, 0,
                 true);
      b.set_rope(i, {rope, rope + i / im.nx, rope + i % im.nx, 0});
    }
    rope += std::max(im.nx, im.ny);
    const auto lp = decode_rows(ctx, b);
    for (size_t i = 0; i < lp.size(); ++i)
      check_row(doc_[key][i], lp[i], std::string(key) + " row " + std::to_string(i));
  };
  text(ids("text_a"), "a");
  image(images_[0], "image1");
  text(ids("text_b"), "b");
  image(images_[1], "image2");
  text(ids("text_c"), "c");
  // Teacher-forced greedy steps: step k's row is the one before its token.
  const auto& steps = doc_["steps"];
  for (size_t k = 0; k < steps.size(); ++k) {
    check_row(steps[k], last, "step " + std::to_string(k));
    text({steps[k]["token"].get<int32_t>()}, nullptr);
  }
}

// Records the final result.
class Sink : public scheduler::TaskSink {
 public:
  void on_final(scheduler::FinalResult&& r) override {
    std::lock_guard<std::mutex> lock(mu_);
    final_ = std::move(r);
    done_ = true;
    cv_.notify_all();
  }
  void on_error(int32_t, const scheduler::TaskError& e) override {
    std::lock_guard<std::mutex> lock(mu_);
    error_ = e.message;
    done_ = true;
    cv_.notify_all();
  }
  bool wait() {
    std::unique_lock<std::mutex> lock(mu_);
    return cv_.wait_for(lock, std::chrono::seconds(60), [&] { return done_; });
  }
  scheduler::FinalResult final_;
  std::string error_;

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
};

TEST_P(MropeGolden, SchedulerLaysOutThePositionsAsTheReference) {
  auto model = models::load_model(path_);
  ASSERT_TRUE(model.is_ok()) << model.status().to_string();
  auto tok = tokenizer::Tokenizer::from_gguf((*model)->metadata());
  ASSERT_TRUE(tok.is_ok());
  scheduler::SchedulerConfig cfg;
  cfg.n_slots = 1;
  cfg.n_threads = 2;
  auto s = scheduler::Scheduler::create(
      *model, std::make_shared<const tokenizer::Tokenizer>(std::move(*tok)), cfg);
  ASSERT_TRUE(s.is_ok()) << s.status().to_string();
  (*s)->start();
  const int32_t width = doc_["width"];
  scheduler::TaskRequest r;
  const auto append_text = [&](const char* key) {
    for (int32_t t : ids(key)) r.prompt.push_back(t);
  };
  const auto append_image = [&](const Image& im, int32_t placeholder) {
    scheduler::MediaChunk c;
    c.begin = static_cast<int32_t>(r.prompt.size());
    c.n_tokens = im.n();
    c.placeholder = placeholder;
    c.grid_nx = im.nx;
    c.grid_ny = im.ny;
    c.embd = image_rows(im.first_row, im.n(), width);
    r.prompt.insert(r.prompt.end(), static_cast<size_t>(im.n()), placeholder);
    r.media.push_back(c);
  };
  append_text("text_a");
  append_image(images_[0], -1);
  append_text("text_b");
  append_image(images_[1], -2);
  append_text("text_c");
  // Step k: the prompt and the reference's first k greedy tokens, one token generated with
  // its top 10. Each request reuses the previous one's cache up to its last token (the
  // prefix with both images), so the rows written by earlier requests are read back too.
  // A token whose text is an incomplete UTF-8 sequence reports no probabilities (as the
  // reference); its step is skipped.
  const auto& steps = doc_["steps"];
  int32_t compared = 0;
  for (size_t k = 0; k < steps.size(); ++k) {
    scheduler::TaskRequest step = r;
    step.params.n_predict = 1;
    step.params.n_probs = 10;
    step.params.sampling.temperature = 0.0f;
    auto sink = std::make_shared<Sink>();
    step.sink = sink;
    ASSERT_TRUE((*s)->submit(std::move(step)).is_ok());
    ASSERT_TRUE(sink->wait());
    ASSERT_TRUE(sink->error_.empty()) << sink->error_;
    const scheduler::FinalResult& f = sink->final_;
    if (k > 0) {
      EXPECT_EQ(f.timings.cache_n, static_cast<int32_t>(r.prompt.size()) - 1);
    }
    r.prompt.push_back(steps[k]["token"].get<int32_t>());
    if (f.probs.empty()) continue;
    ++compared;
    std::vector<double> lp(static_cast<size_t>(doc_["n_vocab"].get<int>()), -1e9);
    for (const auto& c : f.probs[0].top) lp[static_cast<size_t>(c.id)] = std::log(c.p);
    // Reference entries Hearth ranks below its top 10 must lie within the tolerance of its
    // 10th.
    const double tenth = std::log(f.probs[0].top.back().p);
    for (const auto& e : steps[k]["top"])
      if (lp[e[0].get<size_t>()] < -1e8)
        lp[e[0].get<size_t>()] = std::min(tenth, e[1].get<double>());
    check_row(steps[k], lp, "scheduler step " + std::to_string(k));
  }
  EXPECT_GE(compared, 4);
  (*s)->stop();
}

INSTANTIATE_TEST_SUITE_P(Models, MropeGolden,
                         ::testing::Values("qwen2vl-f16", "qwen3vl-f16", "qwen3vlmoe-f16"),
                         [](const ::testing::TestParamInfo<std::string>& p) {
                           std::string name = p.param;
                           std::replace(name.begin(), name.end(), '-', '_');
                           return name;
                         });

}  // namespace
}  // namespace hearth::test

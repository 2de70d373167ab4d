// Batch rows that carry an input embedding (an image or audio row) instead of a token, and
// rows that see later positions of their sequence (a non-causal media chunk, as the
// reference decodes gemma3's images with causal attention off):
// - an embedding row equal to the token's input row gives the token's logits bit for bit
//   (llama: the raw table row; gemma3: the raw row times sqrt(n_embd), since media rows skip
//   the token-embedding scale, as the reference's graph scales only token batches);
// - a non-causal chunk's first row sees the chunk's later rows, text after it stays causal,
//   and a sliding window still starts at the row's own position (the reference's mask);
// - a media prompt's logits are the same bits alone or among other sequences.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "engine/context.h"
#include "kernels/quant.h"
#include "models/registry.h"
#include "support/test_paths.h"
#include "support/windowed_model.h"
#include "tools/synth/synth.h"

namespace hearth::engine {
namespace {

// One prompt position: a token, or an embedding row seeing up to `visible_end`.
struct Row {
  int32_t token = 0;
  const float* embd = nullptr;
  int32_t visible_end = -1;
};

class MediaRows : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = test::make_temp_dir("media-rows");
    llama_ = load("llama", small_params("llama"));
    gemma3_ = load("gemma3", test::windowed_model_params());
    synth::SynthParams one = test::windowed_model_params();
    one.n_layer = 1;  // layer 0 is windowed (pattern 3)
    gemma3_one_layer_ = load("gemma3-1", one);
  }
  static void TearDownTestSuite() {
    llama_.reset();
    gemma3_.reset();
    gemma3_one_layer_.reset();
    std::filesystem::remove_all(dir_);
  }

  static synth::SynthParams small_params(const std::string& arch) {
    synth::SynthParams p;
    p.arch = arch;
    p.n_embd = 64;
    p.n_layer = 2;
    p.n_head = 4;
    p.n_head_kv = 2;
    p.n_ff = 128;
    p.type = TensorType::kF16;
    p.vocab_path = test::shared_path("models/stories260K.gguf");
    return p;
  }

  static models::ModelPtr load(const std::string& name, const synth::SynthParams& p) {
    const std::string path = dir_ + "/" + name + ".gguf";
    EXPECT_TRUE(synth::synthesize(p, path).is_ok());
    auto m = models::load_model(path);
    EXPECT_TRUE(m.is_ok()) << m.status().to_string();
    return m.is_ok() ? *m : nullptr;
  }

  static std::unique_ptr<Context> make_context(
      const models::ModelPtr& model, int threads,
      kernels::MatmulPrecision precision = kernels::MatmulPrecision::kReference) {
    ContextParams p;
    p.precision = precision;
    p.n_ctx = 1024;
    p.n_seq_max = 4;
    p.n_threads = threads;
    p.n_threads_batch = threads;
    auto c = Context::create(model, p);
    EXPECT_TRUE(c.is_ok()) << c.status().to_string();
    return c.is_ok() ? std::move(*c) : nullptr;
  }

  // The token's row of the embedding table, dequantized: [n_embd].
  static std::vector<float> table_row(const Model& model, int32_t token) {
    const WeightMatrix& emb = model.weights().token_embd;
    const int64_t E = model.hparams().n_embd;
    std::vector<float> row(static_cast<size_t>(E));
    kernels::dequantize_row(
        emb.type,
        static_cast<const uint8_t*>(emb.data) + static_cast<size_t>(token) * emb.row_stride,
        row.data(), E);
    return row;
  }

  static void add_row(Batch& b, const Row& r, int32_t pos, SeqId seq, bool logits) {
    if (r.embd != nullptr) {
      b.add_embd(r.embd, pos, seq, logits, r.visible_end);
    } else {
      b.add(r.token, pos, seq, logits);
    }
  }

  // Decodes `rows` of sequence 0 in one call, every row asking for logits: [rows][n_vocab].
  static std::vector<std::vector<float>> all_logits(Context& ctx, const std::vector<Row>& rows) {
    Batch b;
    for (size_t i = 0; i < rows.size(); ++i) add_row(b, rows[i], static_cast<int32_t>(i), 0, true);
    const Status s = ctx.decode(b);
    EXPECT_TRUE(s.is_ok()) << s.to_string();
    std::vector<std::vector<float>> out;
    if (!s.is_ok()) return out;
    for (int32_t i = 0; i < b.size(); ++i) {
      const auto l = ctx.logits(i);
      out.emplace_back(l.begin(), l.end());
    }
    return out;
  }

  static std::vector<float> random_rows(int32_t n, int64_t E, uint32_t seed) {
    std::mt19937 rng(seed);
    std::normal_distribution<float> d(0.0f, 1.0f);
    std::vector<float> v(static_cast<size_t>(n * E));
    for (float& x : v) x = d(rng);
    return v;
  }

  static std::vector<int32_t> tokens(int32_t n, int32_t salt, const models::ModelPtr& m) {
    return test::patterned_tokens(n, salt, m->hparams().n_vocab);
  }

  static inline std::string dir_;
  static inline models::ModelPtr llama_;
  static inline models::ModelPtr gemma3_;
  static inline models::ModelPtr gemma3_one_layer_;
};

// Every row's logits with the token at `at` replaced by the embedding `embd`.
std::vector<Row> with_embd(const std::vector<int32_t>& toks, size_t at, const float* embd) {
  std::vector<Row> rows;
  for (int32_t t : toks) rows.push_back({t, nullptr, -1});
  rows[at] = {0, embd, -1};
  return rows;
}

TEST_F(MediaRows, LlamaEmbeddingRowEqualsItsToken) {
  ASSERT_TRUE(llama_);
  const auto toks = tokens(12, 0, llama_);
  const std::vector<float> row = table_row(*llama_, toks[5]);
  std::vector<Row> plain;
  for (int32_t t : toks) plain.push_back({t, nullptr, -1});
  const auto expected = all_logits(*make_context(llama_, 1), plain);
  const auto got = all_logits(*make_context(llama_, 1), with_embd(toks, 5, row.data()));
  ASSERT_EQ(got.size(), expected.size());
  for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], expected[i]) << "row " << i;
}

TEST_F(MediaRows, Gemma3EmbeddingRowsAreNotScaled) {
  ASSERT_TRUE(gemma3_);
  const auto toks = tokens(12, 1, gemma3_);
  std::vector<float> raw = table_row(*gemma3_, toks[5]);
  std::vector<Row> plain;
  for (int32_t t : toks) plain.push_back({t, nullptr, -1});
  const auto expected = all_logits(*make_context(gemma3_, 1), plain);
  // The unscaled row is a different input: later rows' logits change.
  const auto unscaled = all_logits(*make_context(gemma3_, 1), with_embd(toks, 5, raw.data()));
  EXPECT_NE(unscaled[5], expected[5]);
  const float scale = std::sqrt(static_cast<float>(gemma3_->hparams().n_embd));
  for (float& x : raw) x *= scale;
  const auto scaled = all_logits(*make_context(gemma3_, 1), with_embd(toks, 5, raw.data()));
  for (size_t i = 0; i < scaled.size(); ++i) EXPECT_EQ(scaled[i], expected[i]) << "row " << i;
}

// Text [0, 4), a chunk of 8 rows [4, 12) seeing the whole chunk, text [12, 16).
std::vector<Row> chunk_prompt(const std::vector<int32_t>& toks, const std::vector<float>& embd,
                              int64_t E, bool non_causal) {
  std::vector<Row> rows;
  for (int32_t i = 0; i < 16; ++i) {
    if (i >= 4 && i < 12) {
      rows.push_back({0, embd.data() + (i - 4) * E, non_causal ? 11 : -1});
    } else {
      rows.push_back({toks[static_cast<size_t>(i)], nullptr, -1});
    }
  }
  return rows;
}

// With the reference arithmetic (tiled attention) and with f32 accumulation (one query at a
// time), whose key ranges are computed apart.
TEST_F(MediaRows, NonCausalChunkRowsSeeTheWholeChunk) {
  using kernels::MatmulPrecision;
  for (const auto& [model, precision] :
       {std::pair{llama_, MatmulPrecision::kReference},
        std::pair{gemma3_, MatmulPrecision::kReference}, std::pair{llama_, MatmulPrecision::kF32},
        std::pair{gemma3_, MatmulPrecision::kF32}}) {
    ASSERT_TRUE(model);
    const auto make_context = [&](const models::ModelPtr& m, int threads) {
      return MediaRows::make_context(m, threads, precision);
    };
    const int64_t E = model->hparams().n_embd;
    const auto toks = tokens(16, 2, model);
    std::vector<float> embd = random_rows(8, E, 7);
    const auto a = all_logits(*make_context(model, 1), chunk_prompt(toks, embd, E, true));
    // The chunk's last row changes: every chunk row sees it, the text after it too.
    std::vector<float> other = embd;
    for (int64_t i = 7 * E; i < 8 * E; ++i) other[static_cast<size_t>(i)] += 0.5f;
    const auto b = all_logits(*make_context(model, 1), chunk_prompt(toks, other, E, true));
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(a[i], b[i]) << "text before, row " << i;
    for (size_t i = 4; i < 16; ++i) EXPECT_NE(a[i], b[i]) << "row " << i;
    // A causal chunk's first row does not see it.
    const auto c = all_logits(*make_context(model, 1), chunk_prompt(toks, embd, E, false));
    const auto d = all_logits(*make_context(model, 1), chunk_prompt(toks, other, E, false));
    for (size_t i = 0; i < 11; ++i) EXPECT_EQ(c[i], d[i]) << "causal, row " << i;
    // Text after the chunk is causal: changing the last token leaves the rows before it.
    std::vector<int32_t> later = toks;
    later[15] = (later[15] + 1) % model->hparams().n_vocab;
    const auto e = all_logits(*make_context(model, 1), chunk_prompt(later, embd, E, true));
    for (size_t i = 0; i < 15; ++i) EXPECT_EQ(a[i], e[i]) << "row " << i;
    EXPECT_NE(a[15], e[15]);
  }
}

// One windowed layer (window W = 16): a chunk row at position p sees [p - W + 1, chunk end],
// the reference's mask with causal attention off (only keys W or more before the query's own
// position are hidden).
TEST_F(MediaRows, NonCausalChunkKeepsTheWindowStart) {
  ASSERT_TRUE(gemma3_one_layer_);
  const auto& model = gemma3_one_layer_;
  const int64_t E = model->hparams().n_embd;
  constexpr int32_t W = test::kWindowedModelWindow;
  constexpr int32_t kChunk = 40;
  const std::vector<float> embd = random_rows(kChunk, E, 11);
  const auto rows_of = [&](const std::vector<float>& e) {
    std::vector<Row> rows;
    for (int32_t i = 0; i < kChunk; ++i) rows.push_back({0, e.data() + i * E, kChunk - 1});
    return rows;
  };
  const auto base = all_logits(*make_context(model, 1), rows_of(embd));
  constexpr int32_t kQuery = 25;
  const auto changed = [&](int32_t row) {
    std::vector<float> e = embd;
    for (int64_t i = row * E; i < (row + 1) * E; ++i) e[static_cast<size_t>(i)] -= 0.75f;
    return all_logits(*make_context(model, 1), rows_of(e))[kQuery];
  };
  EXPECT_EQ(changed(kQuery - W), base[kQuery]) << "a key W positions before is hidden";
  EXPECT_NE(changed(kQuery - W + 1), base[kQuery]);
  EXPECT_NE(changed(kChunk - 1), base[kQuery]) << "the chunk's end is visible";
}

TEST_F(MediaRows, RejectsARowSeeingPositionsOutsideTheBatch) {
  ASSERT_TRUE(llama_);
  auto ctx = make_context(llama_, 1);
  const std::vector<float> embd = random_rows(2, llama_->hparams().n_embd, 3);
  Batch b;
  b.add_embd(embd.data(), 0, 0, false, 2);  // position 2 is not in the batch
  b.add_embd(embd.data() + llama_->hparams().n_embd, 1, 0, true, 2);
  const Status s = ctx->decode(b);
  EXPECT_EQ(s.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(ctx->kv_cache().length(0), 0);
}

// Sequence 0: 50 text tokens, a non-causal chunk of 40 rows (positions 50..89, past the
// f16-prefix span so the tiled path runs), then 6 text tokens; every row's logits kept.
std::vector<Row> long_media_prompt(const std::vector<int32_t>& toks, const std::vector<float>& embd,
                                   int64_t E) {
  std::vector<Row> rows;
  for (int32_t i = 0; i < 96; ++i) {
    if (i >= 50 && i < 90) {
      rows.push_back({0, embd.data() + (i - 50) * E, 89});
    } else {
      rows.push_back({toks[static_cast<size_t>(i)], nullptr, -1});
    }
  }
  return rows;
}

// The media prompt in calls [0, 30), [30, 90), [90, 96), alone on one thread and sharing each
// call with three other sequences (prefilling, then decoding) on two threads.
TEST_F(MediaRows, BatchInvariant) {
  using kernels::MatmulPrecision;
  for (const auto& [model, precision] : {std::pair{llama_, MatmulPrecision::kReference},
                                         std::pair{gemma3_, MatmulPrecision::kReference},
                                         std::pair{gemma3_, MatmulPrecision::kF32}}) {
    ASSERT_TRUE(model);
    const int64_t E = model->hparams().n_embd;
    const auto toks = tokens(96, 3, model);
    const std::vector<float> embd = random_rows(40, E, 5);
    const std::vector<Row> rows = long_media_prompt(toks, embd, E);
    const int32_t cuts[] = {0, 30, 90, 96};
    const auto run = [&](bool others) {
      auto ctx = make_context(model, others ? 2 : 1, precision);
      std::vector<std::vector<float>> out;
      std::vector<int32_t> other_next(4, 0);
      for (int c = 0; c + 1 < 4; ++c) {
        Batch b;
        if (others) {
          // Sequences 1..3: a 7-token prefill of their own, then one token per call.
          for (SeqId s = 1; s <= 3; ++s) {
            const int32_t n = other_next[static_cast<size_t>(s)] == 0 ? 7 : 1;
            for (int32_t k = 0; k < n; ++k) {
              const int32_t pos = other_next[static_cast<size_t>(s)]++;
              b.add((pos * 7 + s * 31) % model->hparams().n_vocab, pos, s, true);
            }
          }
        }
        const int32_t first = b.size();
        for (int32_t i = cuts[c]; i < cuts[c + 1]; ++i)
          add_row(b, rows[static_cast<size_t>(i)], i, 0, true);
        const Status s = ctx->decode(b);
        EXPECT_TRUE(s.is_ok()) << s.to_string();
        if (!s.is_ok()) return out;
        for (int32_t i = first; i < b.size(); ++i) {
          const auto l = ctx->logits(i);
          out.emplace_back(l.begin(), l.end());
        }
      }
      return out;
    };
    const auto alone = run(false);
    const auto among = run(true);
    ASSERT_EQ(alone.size(), 96u);
    ASSERT_EQ(among.size(), 96u);
    for (size_t i = 0; i < alone.size(); ++i) EXPECT_EQ(alone[i], among[i]) << "row " << i;
  }
}

}  // namespace
}  // namespace hearth::engine

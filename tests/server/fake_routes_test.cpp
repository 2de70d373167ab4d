// The fake server itself: the synthetic vocabulary, the scripted generation, the embedding
// and rerank answers derived from token ids, and /infill with FIM tokens. These are what
// the route tests stand on, so each is checked against what the fake promises.
#include <cmath>
#include <set>

#include "server/fake_fixture.h"

namespace hearth::test {
namespace {

using tokenizer::Tokenizer;

TEST(SyntheticVocab, TokenizesAndDetokenizesWithoutAFile) {
  const auto tok = synthetic_tokenizer();
  ASSERT_NE(tok, nullptr);
  EXPECT_EQ(tok->n_vocab(), kSyntheticVocabSize);
  EXPECT_EQ(tok->type(), tokenizer::VocabType::kSpm);
  EXPECT_EQ(tok->bos(), 1);
  EXPECT_EQ(tok->eos(), 2);
  const std::vector<int32_t> ids = tok->tokenize("Once upon a time", true, false);
  ASSERT_EQ(ids.size(), 5u);  // BOS and one token per word
  EXPECT_EQ(ids[0], tok->bos());
  EXPECT_EQ(tok->token_text(ids[1]), "\u2581Once");
  EXPECT_EQ(tok->detokenize(ids), " Once upon a time");  // BOS renders as nothing
  EXPECT_EQ(tok->detokenize(tok->tokenize("Once upon a time", false, false)), "Once upon a time");
  // Anything else falls back to characters, then bytes: every text round-trips.
  const std::string odd = "Zebra\u00e9 {x}\n\t42";
  EXPECT_EQ(tok->detokenize(tok->tokenize(odd, false, false)), odd);
  // ChatML's markers are control tokens; <|im_end|> ends generation by its name.
  const int32_t im_end = tok->find_token("<|im_end|>");
  ASSERT_NE(im_end, tokenizer::kNoToken);
  EXPECT_TRUE(tok->is_control(im_end));
  EXPECT_TRUE(tok->is_eog(im_end));
  EXPECT_EQ(tok->tokenize("<|im_start|>", false, true).size(), 1u);
}

TEST(SyntheticVocab, FimTokensOnlyWhenAsked) {
  const auto with = synthetic_tokenizer({.fim = true});
  const auto without = synthetic_tokenizer({.fim = false});
  EXPECT_NE(with->fim_pre(), tokenizer::kNoToken);
  EXPECT_NE(with->fim_suf(), tokenizer::kNoToken);
  EXPECT_NE(with->fim_mid(), tokenizer::kNoToken);
  EXPECT_EQ(without->fim_pre(), tokenizer::kNoToken);
  EXPECT_EQ(without->fim_mid(), tokenizer::kNoToken);
  EXPECT_EQ(without->n_vocab(), kSyntheticVocabSize);
}

TEST(FakeHiddenState, IsAFixedFunctionOfTheId) {
  EXPECT_EQ(fake_hidden_state(7), fake_hidden_state(7));
  EXPECT_NE(fake_hidden_state(7), fake_hidden_state(8));
  EXPECT_EQ(fake_hidden_state(7).size(), static_cast<size_t>(FakeScheduler::kEmbeddingWidth));
  for (float x : fake_hidden_state(300)) {
    EXPECT_GE(x, -0.5f);
    EXPECT_LT(x, 0.5f);
  }
}

class FakeRoutes : public FakeServerTest {
 protected:
  Json post(const std::string& path, const Json& body, int want_status = 200) {
    const HttpReply reply = http_request(port(), "POST", path, body.dump());
    EXPECT_EQ(reply.status, want_status) << path << " " << reply.body.substr(0, 400);
    return parse_or_null(reply.body);
  }
};

TEST_F(FakeRoutes, TokenizeAndDetokenizeRoundTrip) {
  start();
  const Json t = post("/tokenize", {{"content", "Once upon a time"}, {"with_pieces", true}});
  ASSERT_EQ(t["tokens"].size(), 4u) << t.dump();
  EXPECT_EQ(t["tokens"][0]["piece"], " Once");
  Json ids = Json::array();
  for (const Json& e : t["tokens"]) ids.push_back(e["id"]);
  EXPECT_EQ(post("/detokenize", {{"tokens", ids}})["content"], " Once upon a time");
}

// Unscripted, the fake "generates" the prompt's tokens again, cycling (BOS renders as
// nothing); the answer is the same every time.
TEST_F(FakeRoutes, CompletionEchoesThePromptDeterministically) {
  start();
  const Json body = {{"prompt", "Once upon a time"}, {"n_predict", 7}};
  const Json first = post("/completion", body);
  EXPECT_EQ(first["content"], " Once upon a time Once");
  EXPECT_EQ(first["tokens_predicted"], 7);
  EXPECT_EQ(first["stop_type"], "limit");
  EXPECT_EQ(post("/completion", body)["content"], first["content"]);
}

// A scripted answer is the model's whole output, ending with an end of generation.
TEST_F(FakeRoutes, ScriptedAnswerIsTheChatReply) {
  start();
  server_.scheduler().set_output(
      server_.scheduler().tokenizer().tokenize("Hello there", false, false));
  const Json r = post(
      "/v1/chat/completions",
      {{"messages", Json::array({{{"role", "user"}, {"content", "Hi"}}})}, {"max_tokens", 64}});
  EXPECT_EQ(r["choices"][0]["message"]["content"], " Hello there") << r.dump();
  EXPECT_EQ(r["choices"][0]["finish_reason"], "stop");
  EXPECT_GT(r["usage"]["prompt_tokens"].get<int>(), 4);
}

TEST_F(FakeRoutes, InfillAnswersWithFimTokens) {
  start({}, /*fim=*/true);
  const Json r = post(
      "/infill", {{"input_prefix", "def f():"}, {"input_suffix", "return 1"}, {"n_predict", 3}});
  EXPECT_EQ(r["tokens_predicted"], 3) << r.dump();
  EXPECT_TRUE(r["content"].is_string());
}

// Pooling none: one unnormalized row per token, each the token's hidden state.
TEST_F(FakeRoutes, EmbeddingsWithoutPoolingAreTheTokensRows) {
  start({"--embedding", "--pooling", "none"});
  const std::vector<int32_t> ids =
      server_.scheduler().tokenizer().tokenize("Once upon", true, false);
  const Json r = post("/embedding", {{"content", "Once upon"}});
  ASSERT_EQ(r[0]["embedding"].size(), ids.size()) << r.dump().substr(0, 300);
  for (size_t i = 0; i < ids.size(); ++i) {
    const std::vector<float> want = fake_hidden_state(ids[i]);
    ASSERT_EQ(r[0]["embedding"][i].size(), want.size());
    for (size_t k = 0; k < want.size(); ++k) {
      EXPECT_FLOAT_EQ(r[0]["embedding"][i][k].get<float>(), want[k]);
    }
  }
  const Json oai = post("/v1/embeddings", {{"input", "x"}}, 400);
  EXPECT_EQ(oai["error"]["message"],
            "Pooling type 'none' is not OAI compatible. Please use a different pooling type");
}

TEST_F(FakeRoutes, PooledEmbeddingsAreUnitVectorsPerInput) {
  start({"--embedding", "--pooling", "mean"});
  const Json r =
      post("/v1/embeddings", {{"input", {"Once upon a time", "the dog", "Once upon a time"}}});
  ASSERT_EQ(r["data"].size(), 3u) << r.dump().substr(0, 300);
  for (const Json& d : r["data"]) {
    ASSERT_EQ(d["embedding"].size(), static_cast<size_t>(FakeScheduler::kEmbeddingWidth));
    double length = 0;
    for (const Json& x : d["embedding"]) length += x.get<double>() * x.get<double>();
    EXPECT_NEAR(std::sqrt(length), 1.0, 1e-5);
  }
  EXPECT_EQ(r["data"][0]["embedding"], r["data"][2]["embedding"]);
  EXPECT_NE(r["data"][0]["embedding"], r["data"][1]["embedding"]);
  EXPECT_GT(r["usage"]["prompt_tokens"].get<int>(), 6);
}

TEST_F(FakeRoutes, RerankSortsTheDocumentsByScore) {
  start({"--reranking"});
  const std::vector<std::string> docs = {"Lily went to the park.", "The dog barked.",
                                         "A little girl", "Once upon a time"};
  const Json all = post("/rerank", {{"query", "Who is Lily?"}, {"documents", docs}});
  ASSERT_EQ(all["results"].size(), docs.size()) << all.dump();
  std::set<size_t> seen;
  double previous = INFINITY;
  for (const Json& r : all["results"]) {
    const double score = r["relevance_score"];
    EXPECT_LE(score, previous);
    previous = score;
    seen.insert(r["index"].get<size_t>());
    const std::string doc = docs[r["index"].get<size_t>()];
    const Json one = post("/rerank", {{"query", "Who is Lily?"}, {"documents", {doc}}});
    EXPECT_EQ(one["results"][0]["relevance_score"].get<double>(), score) << doc;
  }
  EXPECT_EQ(seen.size(), docs.size());
  EXPECT_EQ(post("/rerank", {{"query", "q"}, {"documents", docs}, {"top_n", 2}})["results"].size(),
            2u);
}

TEST_F(FakeRoutes, SlotSaveAndRestoreRoundTrip) {
  const std::string dir = make_temp_dir("fake-slots");
  start({"-np", "1", "--slot-save-path", dir});
  post("/completion", {{"prompt", "Once upon a time"}, {"n_predict", 2}});
  const Json saved = post("/slots/0?action=save", {{"filename", "s.bin"}});
  EXPECT_EQ(saved["n_saved"], 7) << saved.dump();  // BOS, four words, two generated
  EXPECT_EQ(post("/slots/0?action=erase", Json::object())["n_erased"], 7);
  const Json restored = post("/slots/0?action=restore", {{"filename", "s.bin"}});
  EXPECT_EQ(restored["n_restored"], 7);
  EXPECT_EQ(restored["n_read"], saved["n_written"]);
}

}  // namespace
}  // namespace hearth::test

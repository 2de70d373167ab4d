// The sampler chain end to end: with a fixed seed and temperature > 0 a request gives the
// same tokens every time, alone or among concurrent requests, whatever samplers it uses.
#include <atomic>
#include <thread>

#include "server/server_fixture.h"

namespace hearth::test {
namespace {

std::vector<Json> seeded_requests() {
  const Json base = Json{{"prompt", "Once upon a time"},
                         {"n_predict", 24},
                         {"temperature", 0.9},
                         {"seed", 1234},
                         {"return_tokens", true}};
  std::vector<Json> out;
  for (Json extra :
       {Json::object(), Json{{"repeat_penalty", 1.3}, {"presence_penalty", 0.4}},
        Json{{"dry_multiplier", 0.8}, {"dry_allowed_length", 1}},
        Json{{"xtc_probability", 0.5}, {"xtc_threshold", 0.05}, {"top_k", 0}},
        Json{{"typical_p", 0.7}, {"top_n_sigma", 2.0}},
        Json{{"dynatemp_range", 0.5}, {"dynatemp_exponent", 1.5}},
        Json{{"mirostat", 1}, {"mirostat_tau", 3.0}}, Json{{"mirostat", 2}, {"mirostat_eta", 0.2}},
        Json{{"samplers", {"min_p", "adaptive_p"}}, {"adaptive_target", 0.3}},
        Json{{"samplers", "kpt"}, {"top_k", 5}}}) {
    Json r = base;
    r.update(extra);
    out.push_back(r);
  }
  return out;
}

class ServerSampling : public StoriesServer {};

TEST_F(ServerSampling, SeededSamplingIsReproducibleAloneAndUnderLoad) {
  start();
  const std::vector<Json> requests = seeded_requests();
  std::vector<Json> alone;
  for (const Json& r : requests) {
    Json reply = post_json(port(), "/completion", r);
    ASSERT_TRUE(reply.contains("tokens")) << r.dump() << " -> " << reply.dump();
    EXPECT_EQ(reply["tokens"].size(), 24u) << r.dump();
    alone.push_back(reply["tokens"]);
  }
  // The same requests three times over, among random-seed requests, from 6 clients.
  constexpr int kRounds = 3;
  const size_t n = requests.size() * kRounds;
  std::vector<Json> together(n);
  std::atomic<size_t> next{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 6; ++c) {
    clients.emplace_back([&, c] {
      for (size_t i = next++; i < n; i = next++) {
        together[i] = post_json(port(), "/completion", requests[i % requests.size()])["tokens"];
        Json noise = requests[i % requests.size()];
        noise["seed"] = -1;
        noise["stream"] = c % 2 == 0;
        http_request(port(), "POST", "/completion", noise.dump());
      }
    });
  }
  for (std::thread& t : clients) t.join();
  for (size_t i = 0; i < n; ++i) {
    EXPECT_EQ(together[i], alone[i % requests.size()]) << requests[i % requests.size()].dump();
  }
  // Different configurations really sample differently.
  int distinct = 0;
  for (size_t i = 1; i < alone.size(); ++i) distinct += alone[i] != alone[0] ? 1 : 0;
  EXPECT_GE(distinct, 5);
}

TEST_F(ServerSampling, PostSamplingProbabilitiesComeFromTheChain) {
  start();
  Json r = post_json(port(), "/completion",
                     Json{{"prompt", "Once upon a time"},
                          {"n_predict", 4},
                          {"temperature", 1.0},
                          {"top_k", 3},
                          {"top_p", 1.0},
                          {"min_p", 0.0},
                          {"seed", 5},
                          {"n_probs", 5},
                          {"post_sampling_probs", true}});
  ASSERT_EQ(r["completion_probabilities"].size(), 4u) << r.dump();
  for (const Json& step : r["completion_probabilities"]) {
    ASSERT_LE(step["top_probs"].size(), 3u);
    double sum = 0.0;
    for (const Json& p : step["top_probs"]) sum += p["prob"].get<double>();
    EXPECT_NEAR(sum, 1.0, 1e-5);
  }
}

TEST_F(ServerSampling, ChildCompletionsUseSeedPlusIndex) {
  start();
  Json two = post_json(port(), "/completion",
                       Json{{"prompt", "Once upon a time"},
                            {"n_predict", 12},
                            {"temperature", 1.0},
                            {"seed", 77},
                            {"n_cmpl", 2},
                            {"return_tokens", true}});
  ASSERT_TRUE(two.is_array()) << two.dump();
  Json second = post_json(port(), "/completion",
                          Json{{"prompt", "Once upon a time"},
                               {"n_predict", 12},
                               {"temperature", 1.0},
                               {"seed", 78},
                               {"return_tokens", true}});
  EXPECT_EQ(two[1]["tokens"], second["tokens"]);
}

// Constraints that leave nothing to sample are the request's mistake: a 400 that says so,
// whether it comes before the stream started or as its error frame.
TEST_F(ServerSampling, RequestThatExcludesEveryTokenIs400) {
  start();
  Json ban_all = Json::array();
  for (int id = 0; id < 512; ++id) ban_all.push_back(Json::array({id, false}));
  const std::string expected =
      "No token can be sampled: the request's logit_bias, ignore_eos and grammar exclude every "
      "token";
  int status = 0;
  Json r = post_json(port(), "/completion",
                     Json{{"prompt", "Once"}, {"n_predict", 4}, {"logit_bias", ban_all}}, &status);
  EXPECT_EQ(status, 400) << r.dump();
  EXPECT_EQ(r["error"]["message"], expected);
  // A grammar that needs more text once every token but " the" is banned: its error frame.
  Json tokens = post_json(port(), "/tokenize", {{"content", "the"}})["tokens"];
  ASSERT_EQ(tokens.size(), 1u);
  const int the = tokens[0];
  Json all_but_the = Json::array();
  for (int id = 0; id < 512; ++id) {
    if (id != the) all_but_the.push_back(Json::array({id, false}));
  }
  HttpReply reply = http_request(port(), "POST", "/completion",
                                 Json{{"prompt", "Once"},
                                      {"n_predict", 8},
                                      {"grammar", "root ::= \" the\" \" end\""},
                                      {"logit_bias", all_but_the},
                                      {"stream", true},
                                      {"temperature", 0}}
                                     .dump());
  ASSERT_EQ(reply.status, 200);
  const std::vector<std::string> frames = sse_payloads(reply.body);
  ASSERT_FALSE(frames.empty());
  const Json last = parse_or_null(frames.back());
  EXPECT_EQ(last["error"]["code"], 400) << frames.back();
  EXPECT_EQ(last["error"]["message"], expected);
  // A grammar complete after one token with the end of text banned is not such a case: its
  // answer is whole (HostileChat.ACompleteGrammarEndsTheAnswerUnderIgnoreEos).
  Json done = post_json(port(), "/completion",
                        Json{{"prompt", "Once"},
                             {"n_predict", 8},
                             {"grammar", "root ::= \" the\""},
                             {"ignore_eos", true},
                             {"temperature", 0}},
                        &status);
  EXPECT_EQ(status, 200) << done.dump();
  EXPECT_EQ(done["content"], " the");
  EXPECT_EQ(http_request(port(), "GET", "/health").status, 200);
}

}  // namespace
}  // namespace hearth::test

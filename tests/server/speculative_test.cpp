// Speculative decoding served end to end: hearth-server with --spec-type ngram-simple answers
// 8 concurrent greedy /completion requests with the content a plain server gives each of
// them, reports the drafts in the timings (draft_n, draft_n_accepted, only when it drafted),
// counts them in /metrics, and marks its slots speculative in /slots.
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "scheduler/ngram_cache.h"
#include "server/server_fixture.h"
#include "support/process.h"
#include "support/test_paths.h"

namespace hearth::test {
namespace {

TEST(ServedSpeculation, ConcurrentGreedyRequestsMatchAPlainServer) {
  ServerProcess plain, spec;
  ASSERT_TRUE(plain.start(stories_args({"-np", "8"}))) << plain.log();
  ASSERT_TRUE(spec.start(
      stories_args({"-np", "8", "--metrics", "--spec-type", "ngram-simple",
                    "--spec-ngram-simple-size-n", "3", "--spec-ngram-simple-size-m", "8"})))
      << spec.log();
  const std::vector<std::string> prompts = {"Once upon a time", "One day, Tom", "Lily had a",
                                            "The big dog",      "In the park,", "Sue and Ben",
                                            "The sun was",      "A little bird"};
  const auto request = [](const std::string& p) {
    return Json{{"prompt", p}, {"n_predict", 64}, {"temperature", 0}};
  };
  std::vector<Json> want, got(prompts.size());
  for (const auto& p : prompts) want.push_back(post_json(plain.port(), "/completion", request(p)));
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i)
    clients.emplace_back(
        [&, i] { got[i] = post_json(spec.port(), "/completion", request(prompts[i])); });
  for (auto& c : clients) c.join();
  double drafted = 0, accepted = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    ASSERT_TRUE(got[i].is_object() && got[i].contains("content")) << got[i].dump();
    EXPECT_EQ(got[i]["content"], want[i]["content"]) << prompts[i];
    EXPECT_FALSE(want[i]["timings"].contains("draft_n"));
    const Json& t = got[i]["timings"];
    if (!t.contains("draft_n")) continue;
    EXPECT_GT(t["draft_n"].get<int>(), 0);
    EXPECT_LE(t["draft_n_accepted"].get<int>(), t["draft_n"].get<int>());
    drafted += t["draft_n"].get<double>();
    accepted += t["draft_n_accepted"].get<double>();
  }
  EXPECT_GT(accepted, 0);
  EXPECT_EQ(got[0]["generation_settings"]["speculative.types"], "none,ngram-simple");
  EXPECT_EQ(want[0]["generation_settings"]["speculative.types"], "none");
  const std::string m = http_request(spec.port(), "GET", "/metrics").body;
  EXPECT_EQ(metric_sample(m, "llamacpp:spec_decode_num_draft_tokens_total"), drafted);
  EXPECT_EQ(metric_sample(m, "llamacpp:spec_decode_num_accepted_tokens_total"), accepted);
  EXPECT_GT(metric_sample(m, "llamacpp:spec_decode_num_drafts_total"), 0);
  EXPECT_NE(m.find("llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position=\"0\"}"),
            std::string::npos);
  const Json slots = parse_or_null(http_request(spec.port(), "GET", "/slots").body);
  ASSERT_TRUE(slots.is_array() && !slots.empty());
  EXPECT_EQ(slots[0]["speculative"], true);
  const Json plain_slots = parse_or_null(http_request(plain.port(), "GET", "/slots").body);
  EXPECT_EQ(plain_slots[0]["speculative"], false);
}

// draft-simple with stories260K drafting for itself: the same content as a plain server,
// every drafted token accepted under greedy decoding; a missing or unloadable draft model
// stops the server at startup with a message.
TEST(ServedSpeculation, DraftModelMatchesAPlainServer) {
  ServerProcess plain, spec;
  ASSERT_TRUE(plain.start(stories_args())) << plain.log();
  ASSERT_TRUE(spec.start(stories_args(
      {"--spec-type", "draft-simple", "-md", stories_model(), "--spec-draft-n-max", "4"})))
      << spec.log();
  for (const char* prompt : {"Once upon a time", "The big dog"}) {
    const Json request = {{"prompt", prompt}, {"n_predict", 48}, {"temperature", 0}};
    const Json want = post_json(plain.port(), "/completion", request);
    const Json got = post_json(spec.port(), "/completion", request);
    ASSERT_TRUE(got.contains("content")) << got.dump();
    EXPECT_EQ(got["content"], want["content"]);
    ASSERT_TRUE(got["timings"].contains("draft_n")) << got["timings"].dump();
    EXPECT_GT(got["timings"]["draft_n_accepted"].get<int>(), 0);
    EXPECT_EQ(got["generation_settings"]["speculative.types"], "none,draft-simple");
  }
  ServerProcess missing;
  EXPECT_FALSE(missing.start(stories_args({"--spec-type", "draft-simple"})));
  EXPECT_NE(missing.log().find("needs a draft model"), std::string::npos) << missing.log();
  ServerProcess unloadable;
  EXPECT_FALSE(
      unloadable.start(stories_args({"--spec-type", "draft-simple", "-md", "/nonexistent.gguf"})));
  EXPECT_NE(unloadable.log().find("failed to load the draft model"), std::string::npos)
      << unloadable.log();
}

// hearth-loadbench reads the drafts from the final timings and reports the generated
// tokens per target step (tokens / (tokens - accepted drafts)), the figure the speed
// criterion of speculation is judged by.
TEST(ServedSpeculation, LoadbenchReportsDraftsAndTokensPerStep) {
  ServerProcess spec;
  ASSERT_TRUE(spec.start(
      stories_args({"-np", "2", "--spec-type", "ngram-map-k", "--spec-ngram-map-k-size-n", "3",
                    "--spec-ngram-map-k-size-m", "8"})))
      << spec.log();
  const ProcessResult r = run_process(
      {bin_dir() + "/hearth-loadbench", "--url", "http://127.0.0.1:" + std::to_string(spec.port()),
       "-c", "2", "-n", "4", "--n-predict", "64", "--temperature", "0", "--json"},
      120);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const Json summary = Json::parse(r.out);
  EXPECT_EQ(summary["requests_failed"], 0);
  const auto tokens = summary["tokens_predicted"].get<double>();
  const auto accepted = summary["draft_n_accepted"].get<double>();
  EXPECT_GT(summary["draft_n"].get<double>(), 0);
  EXPECT_GT(accepted, 0);
  EXPECT_NEAR(summary["tokens_per_step"].get<double>(), tokens / (tokens - accepted), 1e-9);
  EXPECT_GT(summary["decode_tokens_per_s"].get<double>(), 0.0);
}

// ngram-cache with a static lookup table (-lcs) made from a plain server's texts: the same
// content, drafts accepted from the first generated token on. A corrupt table stops the
// start with its reason; a table without ngram-cache is not read, with a warning.
TEST(ServedSpeculation, LookupCacheFilesAreLoadedOrRefused) {
  ServerProcess plain;
  ASSERT_TRUE(plain.start(stories_args())) << plain.log();
  const std::vector<std::string> prompts = {"Once upon a time", "The big dog"};
  const auto request = [](const std::string& p) {
    return Json{{"prompt", p}, {"n_predict", 48}, {"temperature", 0}};
  };
  std::vector<Json> want;
  scheduler::NgramCache corpus;
  for (const auto& p : prompts) {
    want.push_back(post_json(plain.port(), "/completion", request(p)));
    const Json tokens = post_json(plain.port(), "/tokenize",
                                  {{"content", p + want.back()["content"].get<std::string>()}});
    const auto ids = tokens["tokens"].get<std::vector<int32_t>>();
    // Counted three times: the corpus table drafts only 2-grams seen at least twice.
    for (int k = 0; k < 3; ++k) scheduler::ngram_cache_update(corpus, ids, ids.size());
  }
  const std::string dir = make_temp_dir("lookup_cache");
  const std::string table = dir + "/static.bin";
  ASSERT_TRUE(scheduler::save_ngram_cache(corpus, table).is_ok());
  ServerProcess spec;
  ASSERT_TRUE(spec.start(stories_args({"--spec-type", "ngram-cache", "-lcs", table})))
      << spec.log();
  int accepted = 0;
  for (size_t i = 0; i < prompts.size(); ++i) {
    const Json got = post_json(spec.port(), "/completion", request(prompts[i]));
    ASSERT_TRUE(got.contains("content")) << got.dump();
    EXPECT_EQ(got["content"], want[i]["content"]);
    ASSERT_TRUE(got["timings"].contains("draft_n")) << got["timings"].dump();
    accepted += got["timings"]["draft_n_accepted"].get<int>();
    EXPECT_EQ(got["generation_settings"]["speculative.types"], "none,ngram-cache");
  }
  EXPECT_GT(accepted, 0);
  const std::string corrupt = dir + "/corrupt.bin";
  std::ofstream(corrupt, std::ios::binary) << "not a table";
  ServerProcess refused;
  EXPECT_FALSE(refused.start(stories_args({"--spec-type", "ngram-cache", "-lcd", corrupt})));
  EXPECT_NE(refused.log().find("failed to load the lookup cache"), std::string::npos)
      << refused.log();
  EXPECT_NE(refused.log().find("is corrupt"), std::string::npos) << refused.log();
  ServerProcess unused;
  ASSERT_TRUE(unused.start(stories_args({"-lcs", corrupt}))) << unused.log();
  EXPECT_NE(unused.log().find("lookup caches are used by --spec-type ngram-cache"),
            std::string::npos)
      << unused.log();
}

// A synthesized target with a synthesized small draft model (stories260K's vocabulary, other
// weights): the drafts are mostly rejected, so rollback runs at nearly every step, and 40
// greedy prompts still give the plain server's tokens, alone and from 8 clients at once.
// HEARTH_SPEC_IDENTITY_FULL=1 makes the target the 1.1B shape (hearth-synth's default),
// which takes minutes; by default it is a 4-layer model.
TEST(ServedSpeculation, SynthesizedTargetWithASmallDraftMatchesAPlainServer) {
  if (!file_exists(stories_model()))
    GTEST_SKIP() << "SKIPPED: " << stories_model() << " is missing";
  const std::string dir = make_temp_dir("spec_identity");
  const bool full = std::getenv("HEARTH_SPEC_IDENTITY_FULL") != nullptr;
  const auto synth = [&](const std::string& out, std::vector<std::string> shape) {
    std::vector<std::string> args{
        bin_dir() + "/hearth-synth", "--vocab", stories_model(), "--type", "q4_0", "-o", out};
    args.insert(args.end(), shape.begin(), shape.end());
    const ProcessResult r = run_process(args, 600);
    return r.exit_code == 0 ? std::string() : r.err;
  };
  const std::string target = dir + "/target.gguf", draft = dir + "/draft.gguf";
  ASSERT_EQ(synth(target, full ? std::vector<std::string>{}
                               : std::vector<std::string>{"--n-embd", "512", "--n-layer", "4",
                                                          "--n-head", "8", "--n-ff", "1536"}),
            "");
  ASSERT_EQ(synth(draft, {"--n-embd", "128", "--n-layer", "2", "--n-head", "4", "--n-head-kv", "4",
                          "--n-ff", "384", "--seed", "7"}),
            "");
  const std::vector<std::string> base = {"-m", target, "-np", "8", "-c", "4096"};
  std::vector<std::string> with_draft = base;
  with_draft.insert(with_draft.end(),
                    {"--spec-type", "draft-simple", "-md", draft, "--spec-draft-n-max", "4"});
  ServerProcess plain, spec;
  ASSERT_TRUE(plain.start(base)) << plain.log();
  ASSERT_TRUE(spec.start(with_draft)) << spec.log();
  const char* subjects[] = {"a little girl", "a big dog",  "a small cat", "Tom",
                            "Lily",          "a red bird", "the sun",     "a boy named Tim"};
  const char* openings[] = {"Once upon a time, there was ", "One day, ", "Every morning ",
                            "In the park, ", "Long ago, "};
  std::vector<Json> requests;
  for (const char* o : openings)
    for (const char* s : subjects)
      requests.push_back({{"prompt", std::string(o) + s},
                          {"n_predict", 32},
                          {"temperature", 0},
                          {"return_tokens", true}});
  ASSERT_EQ(requests.size(), 40u);
  std::vector<Json> want, alone, together(requests.size());
  for (const Json& r : requests) {
    want.push_back(post_json(plain.port(), "/completion", r));
    alone.push_back(post_json(spec.port(), "/completion", r));
  }
  for (size_t at = 0; at < requests.size(); at += 8) {
    std::vector<std::thread> clients;
    for (size_t i = at; i < at + 8; ++i)
      clients.emplace_back(
          [&, i] { together[i] = post_json(spec.port(), "/completion", requests[i]); });
    for (auto& c : clients) c.join();
  }
  int drafted = 0;
  for (size_t i = 0; i < requests.size(); ++i) {
    ASSERT_TRUE(want[i].contains("tokens")) << want[i].dump();
    EXPECT_EQ(alone[i]["tokens"], want[i]["tokens"]) << "prompt " << i << " alone";
    EXPECT_EQ(together[i]["tokens"], want[i]["tokens"]) << "prompt " << i << " among 8 clients";
    drafted += alone[i]["timings"].value("draft_n", 0) + together[i]["timings"].value("draft_n", 0);
  }
  EXPECT_GT(drafted, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace hearth::test

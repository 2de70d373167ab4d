// /metrics' additions against real requests: the latency histograms count them, the KV
// usage follows the cached prompts, the prefix-cache counters split prompt tokens into hits
// and misses, and the vllm:* gauges equal their llamacpp:* counterparts.
#include <set>
#include <sstream>

#include "server/server_fixture.h"

namespace hearth::test {
namespace {

class ServerMetrics : public StoriesServer {};

// The value of the histogram's +Inf bucket, whatever its other labels.
double inf_bucket(const std::string& text, const std::string& histogram) {
  std::istringstream lines(text);
  std::string line;
  const std::string prefix = histogram + "_bucket{";
  while (std::getline(lines, line)) {
    if (line.rfind(prefix, 0) == 0 && line.find("le=\"+Inf\"}") != std::string::npos) {
      return std::stod(line.substr(line.rfind(' ') + 1));
    }
  }
  ADD_FAILURE() << histogram << " has no +Inf bucket";
  return -1;
}

TEST_F(ServerMetrics, ExtensionsFollowRealRequests) {
  start({"--metrics"});
  const std::string before = http_request(port(), "GET", "/metrics").body;
  EXPECT_EQ(metric_sample(before, "llamacpp:time_to_first_token_seconds_count"), 0);
  EXPECT_EQ(metric_sample(before, "llamacpp:kv_cache_usage_ratio"), 0);
  const Json request = {{"prompt", "Once upon a time"}, {"n_predict", 6}, {"temperature", 0}};
  int status = 0;
  post_json(port(), "/completion", request, &status);
  ASSERT_EQ(status, 200);
  post_json(port(), "/completion", request, &status);  // the same prompt: 4 cached tokens
  ASSERT_EQ(status, 200);
  const std::string after = http_request(port(), "GET", "/metrics").body;
  EXPECT_EQ(metric_sample(after, "llamacpp:time_to_first_token_seconds_count"), 2);
  EXPECT_EQ(inf_bucket(after, "llamacpp:time_to_first_token_seconds"), 2);
  EXPECT_GT(metric_sample(after, "llamacpp:time_to_first_token_seconds_sum"), 0);
  EXPECT_EQ(metric_sample(after, "llamacpp:time_per_output_token_seconds_count"), 10);  // 5 + 5
  EXPECT_GT(metric_sample(after, "llamacpp:kv_cache_usage_ratio"), 0);  // the slot keeps its cache
  EXPECT_LE(metric_sample(after, "llamacpp:kv_cache_usage_ratio"), 1);
  EXPECT_EQ(metric_sample(after, "vllm:kv_cache_usage_perc"),
            metric_sample(after, "llamacpp:kv_cache_usage_ratio"));
  EXPECT_EQ(metric_sample(after, "llamacpp:prefix_cache_hits_total"),
            metric_sample(after, "llamacpp:prompt_tokens_cached_total"));
  EXPECT_EQ(metric_sample(after, "llamacpp:prefix_cache_hits_total"), 4);
  EXPECT_EQ(metric_sample(after, "llamacpp:prefix_cache_misses_total"), 5 + 1);
  EXPECT_EQ(metric_sample(after, "vllm:num_requests_running"), 0);
  EXPECT_EQ(metric_sample(after, "vllm:num_requests_waiting"), 0);
}

// The reference's suite (test_metrics.py) reads every unlabelled llamacpp:* sample as a counter
// or gauge and wants a TYPE line of that very name: the histograms' samples are all labelled
// with the served model, so none of their _sum/_count lines stands unlabelled.
TEST_F(ServerMetrics, EveryUnlabelledSampleHasItsOwnTypeLine) {
  start({"--metrics"});
  int status = 0;
  post_json(port(), "/completion", Json{{"prompt", "Once upon"}, {"n_predict", 3}}, &status);
  ASSERT_EQ(status, 200);
  const std::string text = http_request(port(), "GET", "/metrics").body;
  std::set<std::string> typed;
  std::istringstream lines(text);
  std::string line;
  int unlabelled = 0;
  while (std::getline(lines, line)) {
    if (line.rfind("# TYPE ", 0) == 0) {
      typed.insert(line.substr(7, line.find(' ', 7) - 7));
    } else if (line.rfind("llamacpp:", 0) == 0 && line.find('{') == std::string::npos) {
      ++unlabelled;
      const std::string name = line.substr(0, line.find(' '));
      EXPECT_TRUE(typed.count(name)) << name << " has no TYPE line of its own";
    }
  }
  EXPECT_GT(unlabelled, 10);
  EXPECT_NE(text.find("llamacpp:time_to_first_token_seconds_sum{model_name=\""), std::string::npos);
  EXPECT_NE(text.find("llamacpp:time_per_output_token_seconds_count{model_name=\""),
            std::string::npos);
}

}  // namespace
}  // namespace hearth::test

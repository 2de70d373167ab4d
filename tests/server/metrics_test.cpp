// /metrics' additions against real requests: the latency histograms count them, the KV
// usage follows the cached prompts, the prefix-cache counters split prompt tokens into hits
// and misses, and the vllm:* gauges equal their llamacpp:* counterparts.
#include "server/server_fixture.h"

namespace hearth::test {
namespace {

class ServerMetrics : public StoriesServer {};

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
  EXPECT_EQ(metric_sample(after, "llamacpp:time_to_first_token_seconds_bucket{le=\"+Inf\"}"), 2);
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

}  // namespace
}  // namespace hearth::test

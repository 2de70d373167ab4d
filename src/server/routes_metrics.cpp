// GET /metrics: Prometheus text with llama-server's llamacpp:* names, HELP texts and types
// (other-native-routes.md §6), then Hearth's additions (recorded in differences.json,
// metrics-extensions): KV-cache usage, latency histograms, prefix-cache hits and misses,
// and the vllm:* names Kubernetes inference gateways and vLLM routers read by default.
#include <sstream>

#include "server/api_error.h"
#include "server/server_state.h"

namespace hearth::server {

namespace {

void add_metric(std::ostringstream& out, const char* name, const char* type, const char* help,
                double value) {
  out << "# HELP llamacpp:" << name << ' ' << help << '\n';
  out << "# TYPE llamacpp:" << name << ' ' << type << '\n';
  out << "llamacpp:" << name << ' ' << value
      << '\n';  // default stream formatting, as the reference
}

// The model's label, escaped as the text format wants it.
std::string model_label(const std::string& model) {
  std::string out = "model_name=\"";
  for (char c : model) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out + '"';
}

// Every sample carries the served model's label, as vLLM labels its histograms: then each
// unlabelled llamacpp:* sample is a counter or gauge with a TYPE line of its own name, which
// simple scrapers (the reference's own test suite among them) rely on.
void add_histogram(std::ostringstream& out, const char* name, const char* help,
                   const scheduler::Histogram& h, const std::string& label) {
  out << "# HELP llamacpp:" << name << ' ' << help << '\n';
  out << "# TYPE llamacpp:" << name << " histogram\n";
  uint64_t cumulative = 0;
  for (size_t i = 0; i < h.bounds.size(); ++i) {
    cumulative += h.counts[i];
    out << "llamacpp:" << name << "_bucket{" << label << ",le=\"" << h.bounds[i] << "\"} "
        << cumulative << '\n';
  }
  out << "llamacpp:" << name << "_bucket{" << label << ",le=\"+Inf\"} " << h.count << '\n';
  out << "llamacpp:" << name << "_sum{" << label << "} " << h.sum << '\n';
  out << "llamacpp:" << name << "_count{" << label << "} " << h.count << '\n';
}

// A vLLM-named gauge, labelled with the served model as vLLM labels its own.
void add_vllm_gauge(std::ostringstream& out, const char* name, const char* help,
                    const std::string& label, double value) {
  out << "# HELP vllm:" << name << ' ' << help << '\n';
  out << "# TYPE vllm:" << name << " gauge\n";
  out << "vllm:" << name << '{' << label << "} " << value << '\n';
}

void add_reference_metrics(std::ostringstream& out, const scheduler::MetricsSnapshot& m) {
  add_metric(out, "prompt_tokens_total", "counter",
             "Number of prompt tokens processed, excluding cached tokens",
             static_cast<double>(m.prompt_tokens_total));
  add_metric(out, "prompt_tokens_cached_total", "counter",
             "Number of prompt tokens reused from the cache",
             static_cast<double>(m.prompt_tokens_cached_total));
  add_metric(out, "prompt_seconds_total", "counter", "Total time spent processing prompts",
             m.prompt_seconds_total);
  add_metric(out, "tokens_predicted_total", "counter", "Number of generation tokens processed",
             static_cast<double>(m.tokens_predicted_total));
  add_metric(out, "tokens_predicted_seconds_total", "counter", "Total time spent generating tokens",
             m.tokens_predicted_seconds_total);
  add_metric(out, "n_decode_total", "counter",
             "Total number of llama_decode() calls, excluding speculative decoding and multimodal "
             "decoding",
             static_cast<double>(m.n_decode_total));
  add_metric(out, "n_tokens_max", "counter",
             "Largest observed sequence length (prompt + generation)",
             static_cast<double>(m.n_tokens_max));
  add_metric(out, "spec_decode_num_draft_tokens_total", "counter",
             "Speculative: Total draft tokens generated", static_cast<double>(m.n_draft_tokens));
  add_metric(out, "spec_decode_num_accepted_tokens_total", "counter",
             "Speculative: Total draft tokens accepted by the target model",
             static_cast<double>(m.n_draft_accepted));
  add_metric(out, "spec_decode_num_drafts_total", "counter",
             "Speculative: Total speculative decoding verification steps",
             static_cast<double>(m.n_draft_steps));
  add_metric(out, "prompt_tokens_seconds", "gauge", "Average prompt throughput in tokens/s",
             m.window_prompt_seconds > 0 ? m.window_prompt_tokens / m.window_prompt_seconds : 0.0);
  add_metric(out, "predicted_tokens_seconds", "gauge", "Average generation throughput in tokens/s",
             m.window_predicted_seconds > 0 ? m.window_predicted_tokens / m.window_predicted_seconds
                                            : 0.0);
  add_metric(out, "requests_processing", "gauge", "Number of requests processing",
             m.requests_processing);
  add_metric(out, "requests_deferred", "gauge", "Number of requests deferred", m.requests_deferred);
  add_metric(
      out, "n_busy_slots_per_decode", "gauge",
      "Average number of busy slots per llama_decode() call",
      m.n_decode_total > 0 ? static_cast<double>(m.n_busy_slots_total) / m.n_decode_total : 0.0);
  // One series per draft position, once anything was drafted (as the reference).
  if (!m.n_accepted_per_pos.empty()) {
    out << "# HELP llamacpp:spec_decode_num_accepted_tokens_per_pos_total Accepted tokens per "
           "draft position\n"
        << "# TYPE llamacpp:spec_decode_num_accepted_tokens_per_pos_total counter\n";
    for (size_t i = 0; i < m.n_accepted_per_pos.size(); ++i)
      out << "llamacpp:spec_decode_num_accepted_tokens_per_pos_total{position=\"" << i << "\"} "
          << m.n_accepted_per_pos[i] << "\n";
  }
}

void add_hearth_metrics(std::ostringstream& out, const scheduler::MetricsSnapshot& m,
                        const std::string& model) {
  const std::string label = model_label(model);
  const double kv_usage =
      m.kv_blocks_total > 0 ? static_cast<double>(m.kv_blocks_used) / m.kv_blocks_total : 0.0;
  add_metric(out, "kv_cache_usage_ratio", "gauge",
             "Fraction of the KV cache in use (0 to 1), idle slots' cached prompts included",
             kv_usage);
  add_metric(out, "prefix_cache_hits_total", "counter",
             "Prompt tokens found in a slot's or the host prompt cache (not evaluated)",
             static_cast<double>(m.prompt_tokens_cached_total));
  add_metric(out, "prefix_cache_misses_total", "counter",
             "Prompt tokens not found in any cache (evaluated)",
             static_cast<double>(m.prompt_tokens_total));
  add_histogram(out, "time_to_first_token_seconds",
                "Time from a request being queued to its first generated token",
                m.time_to_first_token, label);
  add_histogram(out, "time_per_output_token_seconds",
                "Time between consecutive generated tokens of a request", m.time_per_output_token,
                label);
  add_vllm_gauge(out, "num_requests_running", "Requests being processed (in a slot)", label,
                 m.requests_processing);
  add_vllm_gauge(out, "num_requests_waiting", "Requests waiting for a slot", label,
                 m.requests_deferred);
  add_vllm_gauge(out, "kv_cache_usage_perc", "KV-cache usage; 1 means 100 percent", label,
                 kv_usage);
}

}  // namespace

http::Response handle_metrics(ServerState& s, const http::Request&) {
  if (!s.config.endpoint_metrics) {
    return handle_not_supported(
        "This server does not support metrics endpoint. Start it with `--metrics`");
  }
  const scheduler::MetricsSnapshot m = s.scheduler->metrics(true);
  std::ostringstream out;
  add_reference_metrics(out, m);
  add_hearth_metrics(out, m, s.config.model_name());
  http::Response response;
  response.content_type = "text/plain; version=0.0.4";
  response.body = out.str();
  response.headers.emplace_back("Process-Start-Time-Unix", std::to_string(s.start_time_us));
  return response;
}

}  // namespace hearth::server

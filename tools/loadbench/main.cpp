// hearth-loadbench: drives N concurrent streaming clients against a llama-server compatible
// base URL and reports throughput, time to first token and inter-token latency.
//
//   hearth-loadbench --url http://127.0.0.1:8080 --clients 8 --requests 64 --n-predict 128
//
// Exit status: 0 when every request succeeded, 1 when any failed, 2 on bad arguments.
#include <CLI/CLI.hpp>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "tools/loadbench/loadbench.h"

namespace {

using hearth::loadbench::RequestResult;
using hearth::loadbench::RequestSpec;
using hearth::loadbench::Summary;

// Used when no --prompt is given; requests take them in turn.
const std::vector<std::string> kBuiltinPrompts = {
    "Once upon a time, in a village at the edge of a forest, there lived",
    "The old lighthouse keeper climbed the stairs one last time and",
    "Write a short story about a robot who learns to bake bread.",
    "In the morning the river was quiet, and the children",
    "Explain in simple words why the sky looks blue during the day.",
    "The ship's captain looked at the map and said",
    "List three things a cat might think about while sitting by a window:",
    "Long ago, before the mountains had names, a small bird",
};

struct Settings {
  std::string url = "http://127.0.0.1:8080";
  int clients = 4;
  int requests = 16;
  int n_predict = 64;
  std::vector<std::string> prompts;
  std::optional<double> temperature;
  bool ignore_eos = false;
  std::string extra;
  std::string api_key;
  double timeout_s = 600;
  bool json = false;
};

void print_text(const Settings& s, const Summary& sum) {
  std::printf("hearth-loadbench: %s, %d clients, %d requests, n_predict %d\n", s.url.c_str(),
              s.clients, s.requests, s.n_predict);
  std::printf("  requests     %lld ok, %lld failed\n", static_cast<long long>(sum.requests_ok),
              static_cast<long long>(sum.requests_failed));
  std::printf("  wall time    %.3f s\n", sum.wall_s);
  std::printf("  throughput   %.2f generated tokens/s (%lld tokens), %.3f requests/s\n",
              sum.tokens_per_s, static_cast<long long>(sum.tokens_predicted), sum.requests_per_s);
  std::printf("  TTFT         p50 %.2f ms, p99 %.2f ms, mean %.2f ms\n", sum.ttft_p50_ms,
              sum.ttft_p99_ms, sum.ttft_mean_ms);
  std::printf("  inter-token  p50 %.2f ms, p99 %.2f ms\n", sum.itl_p50_ms, sum.itl_p99_ms);
  for (const std::string& e : sum.errors) std::fprintf(stderr, "error: %s\n", e.c_str());
}

void print_json(const Settings& s, const Summary& sum) {
  const nlohmann::json out = {
      {"url", s.url},
      {"clients", s.clients},
      {"requests", s.requests},
      {"n_predict", s.n_predict},
      {"requests_ok", sum.requests_ok},
      {"requests_failed", sum.requests_failed},
      {"wall_s", sum.wall_s},
      {"tokens_predicted", sum.tokens_predicted},
      {"tokens_evaluated", sum.tokens_evaluated},
      {"tokens_per_s", sum.tokens_per_s},
      {"requests_per_s", sum.requests_per_s},
      {"ttft_ms", {{"p50", sum.ttft_p50_ms}, {"p99", sum.ttft_p99_ms}, {"mean", sum.ttft_mean_ms}}},
      {"inter_token_ms", {{"p50", sum.itl_p50_ms}, {"p99", sum.itl_p99_ms}}},
      {"errors", sum.errors},
  };
  std::printf("%s\n", out.dump(2).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  Settings s;
  CLI::App app{"Concurrent streaming load against a llama-server compatible server"};
  app.add_option("--url", s.url, "Base URL, http://host:port[/prefix]")->capture_default_str();
  app.add_option("-c,--clients", s.clients, "Concurrent clients (one thread and connection each)")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  app.add_option("-n,--requests", s.requests, "Total requests, shared out among the clients")
      ->check(CLI::Range(1, 100000000))
      ->capture_default_str();
  app.add_option("--n-predict", s.n_predict, "n_predict sent with every request")
      ->check(CLI::Range(-1, 1000000))
      ->capture_default_str();
  app.add_option("-p,--prompt", s.prompts,
                 "Prompt (repeatable; requests cycle through them). "
                 "Default: a built-in set of short prompts");
  app.add_option("--temperature", s.temperature,
                 "temperature sent with every request "
                 "(default: not sent, the server decides)");
  app.add_flag("--ignore-eos", s.ignore_eos, "Send ignore_eos, so every request runs n_predict");
  app.add_option("--extra", s.extra,
                 "A JSON object merged into every request body, e.g. '{\"json_schema\": {}}'");
  app.add_option("--api-key", s.api_key, "Sent as 'Authorization: Bearer <key>'")
      ->envname("LLAMA_API_KEY");
  app.add_option("--timeout", s.timeout_s, "Per-request deadline in seconds (0: none)")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app.add_flag("--json", s.json, "Print the summary as JSON");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }

  std::string error;
  const auto url = hearth::loadbench::parse_url(s.url, error);
  if (!url) {
    std::fprintf(stderr, "hearth-loadbench: --url %s: %s\n", s.url.c_str(), error.c_str());
    return 2;
  }
  if (!s.extra.empty()) {
    const auto extra = nlohmann::json::parse(s.extra, nullptr, false);
    if (!extra.is_object()) {
      std::fprintf(stderr, "hearth-loadbench: --extra must be a JSON object\n");
      return 2;
    }
  }
  const std::vector<std::string>& prompts = s.prompts.empty() ? kBuiltinPrompts : s.prompts;
  hearth::loadbench::ClientConfig config;
  config.url = *url;
  config.api_key = s.api_key;
  config.timeout = std::chrono::milliseconds(static_cast<int64_t>(s.timeout_s * 1000.0));

  std::vector<RequestResult> results(static_cast<size_t>(s.requests));
  std::atomic<int> next{0};
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int c = 0; c < std::min(s.clients, s.requests); ++c) {
    threads.emplace_back([&] {
      for (int i = next.fetch_add(1); i < s.requests; i = next.fetch_add(1)) {
        RequestSpec spec;
        spec.prompt = prompts[static_cast<size_t>(i) % prompts.size()];
        spec.n_predict = s.n_predict;
        spec.temperature = s.temperature;
        spec.ignore_eos = s.ignore_eos;
        spec.extra_json = s.extra;
        results[static_cast<size_t>(i)] = hearth::loadbench::run_request(config, spec);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  const Summary summary = hearth::loadbench::summarize(results, wall_s);
  if (s.json) {
    print_json(s, summary);
  } else {
    print_text(s, summary);
  }
  return summary.requests_failed == 0 ? 0 : 1;
}

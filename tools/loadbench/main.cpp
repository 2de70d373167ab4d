// hearth-loadbench: drives N concurrent streaming clients against a llama-server compatible
// base URL and reports throughput, time to first token and inter-token latency.
//
//   hearth-loadbench --url http://127.0.0.1:8080 --clients 8 --requests 64 --n-predict 128
//
// Exit status: 0 when every request succeeded, 1 when any failed, 2 on bad arguments.
#include <netdb.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <thread>

#include "tools/loadbench/hostile.h"
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
  bool mix = false;          // the soak mix: streaming, non-streaming, stop strings, cancels
  int server_pid = 0;        // > 0: sample the server's RSS and threads from /proc
  int idle_connections = 0;  // held open (sending nothing) for the whole run
  int embeddings = 0;        // > 0: /v1/embeddings requests of this many inputs each
  int hostile = 0;           // > 0: the hostile probe with this many attacker clients
};

// What /proc says about the server process.
struct ServerSample {
  long rss_kib = -1;
  int threads = -1;
};

ServerSample sample_server(int pid) {
  ServerSample out;
  if (pid <= 0) return out;
  std::ifstream status("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmRSS:", 0) == 0) out.rss_kib = std::atol(line.c_str() + 6);
    if (line.rfind("Threads:", 0) == 0) out.threads = std::atoi(line.c_str() + 8);
  }
  return out;
}

struct ServerReport {
  ServerSample after_first_100;
  ServerSample after_last;
  ServerSample with_idle;  // while the idle connections were held
  int idle_held = 0;
};

void print_text(const Settings& s, const Summary& sum, const ServerReport& server) {
  std::printf("hearth-loadbench: %s, %d clients, %d requests, n_predict %d%s\n", s.url.c_str(),
              s.clients, s.requests, s.n_predict, s.mix ? ", soak mix" : "");
  std::printf("  requests     %lld ok, %lld cancelled by the client, %lld failed\n",
              static_cast<long long>(sum.requests_ok),
              static_cast<long long>(sum.requests_cancelled),
              static_cast<long long>(sum.requests_failed));
  std::printf("  wall time    %.3f s\n", sum.wall_s);
  std::printf("  throughput   %.2f generated tokens/s (%lld tokens), %.3f requests/s\n",
              sum.tokens_per_s, static_cast<long long>(sum.tokens_predicted), sum.requests_per_s);
  if (sum.decode_tokens_per_s > 0)
    std::printf("  decode       %.2f tokens/s per stream by the timings (prompt excluded)\n",
                sum.decode_tokens_per_s);
  if (sum.draft_n > 0) {
    std::printf(
        "  speculation  %lld drafted, %lld accepted (%.1f %%), %.3f tokens per target step\n",
        static_cast<long long>(sum.draft_n), static_cast<long long>(sum.draft_accepted),
        100.0 * static_cast<double>(sum.draft_accepted) / static_cast<double>(sum.draft_n),
        sum.tokens_per_step);
  }
  if (s.embeddings > 0) {
    std::printf("  embeddings   %.2f inputs/s (%lld inputs, %lld tokens)\n", sum.embeddings_per_s,
                static_cast<long long>(sum.embeddings),
                static_cast<long long>(sum.tokens_evaluated));
    std::printf("  latency      p50 %.2f ms, p99 %.2f ms per request\n", sum.ttft_p50_ms,
                sum.ttft_p99_ms);
  } else {
    std::printf("  TTFT         p50 %.2f ms, p99 %.2f ms, mean %.2f ms\n", sum.ttft_p50_ms,
                sum.ttft_p99_ms, sum.ttft_mean_ms);
    std::printf("  inter-token  p50 %.2f ms, p99 %.2f ms\n", sum.itl_p50_ms, sum.itl_p99_ms);
  }
  if (s.server_pid > 0) {
    const ServerSample& a = server.after_first_100;
    const ServerSample& b = server.after_last;
    std::printf("  server RSS   %.1f MiB after the first 100 requests, %.1f MiB after the last",
                a.rss_kib / 1024.0, b.rss_kib / 1024.0);
    if (a.rss_kib > 0) std::printf(" (%+.1f %%)", 100.0 * (b.rss_kib - a.rss_kib) / a.rss_kib);
    std::printf("; %d threads\n", b.threads);
    if (server.idle_held > 0) {
      std::printf("  idle         %d connections held; server threads meanwhile: %d\n",
                  server.idle_held, server.with_idle.threads);
    }
  }
  for (const std::string& e : sum.errors) std::fprintf(stderr, "error: %s\n", e.c_str());
}

void print_json(const Settings& s, const Summary& sum, const ServerReport& server) {
  nlohmann::json out = {
      {"url", s.url},
      {"clients", s.clients},
      {"requests", s.requests},
      {"n_predict", s.n_predict},
      {"requests_ok", sum.requests_ok},
      {"requests_failed", sum.requests_failed},
      {"requests_cancelled", sum.requests_cancelled},
      {"mix", s.mix},
      {"wall_s", sum.wall_s},
      {"tokens_predicted", sum.tokens_predicted},
      {"tokens_evaluated", sum.tokens_evaluated},
      {"draft_n", sum.draft_n},
      {"draft_n_accepted", sum.draft_accepted},
      {"tokens_per_step", sum.tokens_per_step},
      {"decode_tokens_per_s", sum.decode_tokens_per_s},
      {"tokens_per_s", sum.tokens_per_s},
      {"embeddings", sum.embeddings},
      {"embeddings_per_s", sum.embeddings_per_s},
      {"requests_per_s", sum.requests_per_s},
      {"ttft_ms", {{"p50", sum.ttft_p50_ms}, {"p99", sum.ttft_p99_ms}, {"mean", sum.ttft_mean_ms}}},
      {"inter_token_ms", {{"p50", sum.itl_p50_ms}, {"p99", sum.itl_p99_ms}}},
      {"errors", sum.errors},
  };
  if (s.server_pid > 0) {
    out["server"] = {{"rss_kib_after_first_100", server.after_first_100.rss_kib},
                     {"rss_kib_after_last", server.after_last.rss_kib},
                     {"threads", server.after_last.threads},
                     {"idle_connections_held", server.idle_held},
                     {"threads_with_idle_connections", server.with_idle.threads}};
  }
  std::printf("%s\n", out.dump(2).c_str());
}

// Connections that send nothing, held for the run (what an idle keep-alive pool or a
// slow-loris attacker leaves on a server).
std::vector<int> hold_idle_connections(const hearth::loadbench::Url& url, int n) {
  std::vector<int> fds;
  if (n <= 0) return fds;
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur < limit.rlim_max) {
    limit.rlim_cur = limit.rlim_max;
    setrlimit(RLIMIT_NOFILE, &limit);
  }
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  if (getaddrinfo(url.host.c_str(), url.port.c_str(), &hints, &found) != 0) return fds;
  for (int i = 0; i < n; ++i) {
    const int fd = ::socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || ::connect(fd, found->ai_addr, found->ai_addrlen) != 0) {
      if (fd >= 0) ::close(fd);
      std::fprintf(stderr, "hearth-loadbench: held %d idle connections, then: %s\n", i,
                   std::strerror(errno));
      break;
    }
    fds.push_back(fd);
  }
  freeaddrinfo(found);
  return fds;
}

// The command line into `s`; nullopt to go on, else the exit status (help, bad arguments).
std::optional<int> parse_command_line(int argc, char** argv, Settings& s) {
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
  app.add_option("--embeddings", s.embeddings,
                 "Send POST /v1/embeddings requests of N inputs each (the prompts in turn) "
                 "instead of completions, and report embeddings per second")
      ->check(CLI::Range(0, 100000));
  app.add_flag("--mix", s.mix,
               "Soak mix: requests alternate streaming, non-streaming, streaming with stop "
               "strings, and streaming cancelled by the client after a few tokens");
  app.add_option("--server-pid", s.server_pid,
                 "Report the server's RSS after the first 100 requests and after the last, and "
                 "its thread count (read from /proc)");
  app.add_option("--hostile", s.hostile,
                 "The hostile probe: run the clients once alone, then again while this many "
                 "attacker clients send issue 32's worst requests in a loop and /health is "
                 "polled; report both latencies, the attackers' answers and the server's RSS "
                 "before and after (with --server-pid; after a warm-up pass of every attack). "
                 "The chat cases need --jinja")
      ->check(CLI::Range(0, 256));
  app.add_option("--idle-connections", s.idle_connections,
                 "Hold this many idle connections to the server during the run")
      ->check(CLI::Range(0, 1000000));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  }
  if (!s.extra.empty() && !nlohmann::json::parse(s.extra, nullptr, false).is_object()) {
    std::fprintf(stderr, "hearth-loadbench: --extra must be a JSON object\n");
    return 2;
  }
  return std::nullopt;
}

// Runs every request from s.clients threads; the server is sampled after the 100th.
std::vector<RequestResult> run_clients(const Settings& s,
                                       const hearth::loadbench::ClientConfig& config,
                                       ServerReport& server) {
  const std::vector<std::string>& prompts = s.prompts.empty() ? kBuiltinPrompts : s.prompts;
  std::vector<RequestResult> results(static_cast<size_t>(s.requests));
  std::atomic<int> next{0};
  std::atomic<int> done{0};
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
        if (s.mix) spec = hearth::loadbench::mixed_request(i, spec);
        if (s.embeddings > 0) spec.stream = false;
        for (int k = 0; k < s.embeddings; ++k)
          spec.inputs.push_back(
              prompts[static_cast<size_t>(i * s.embeddings + k) % prompts.size()]);
        results[static_cast<size_t>(i)] = hearth::loadbench::run_request(config, spec);
        if (done.fetch_add(1) + 1 == 100) server.after_first_100 = sample_server(s.server_pid);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  return results;
}

}  // namespace

// --hostile: the same clients alone and beside the attackers.
int run_hostile_probe(const Settings& s, const hearth::loadbench::ClientConfig& config) {
  ServerReport unused;
  const auto timed = [&](Summary& out) {
    const auto start = std::chrono::steady_clock::now();
    const std::vector<RequestResult> results = run_clients(s, config, unused);
    out = hearth::loadbench::summarize(
        results, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  };
  Summary idle, attacked;
  hearth::loadbench::warm_up(config);
  timed(idle);
  const ServerSample before = sample_server(s.server_pid);
  hearth::loadbench::HostileReport report;
  std::atomic<bool> stop{false};
  std::thread attackers([&] { hearth::loadbench::run_attackers(config, s.hostile, stop, report); });
  std::this_thread::sleep_for(std::chrono::seconds(1));  // the attack under way first
  timed(attacked);
  stop = true;
  attackers.join();
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const ServerSample after = sample_server(s.server_pid);
  const double ratio = idle.latency_p99_ms > 0 ? attacked.latency_p99_ms / idle.latency_p99_ms : 0;
  nlohmann::json out = {{"clients", s.clients},
                        {"requests", s.requests},
                        {"attackers", s.hostile},
                        {"idle",
                         {{"p50_ms", idle.latency_p50_ms},
                          {"p99_ms", idle.latency_p99_ms},
                          {"failed", idle.requests_failed}}},
                        {"attacked",
                         {{"p50_ms", attacked.latency_p50_ms},
                          {"p99_ms", attacked.latency_p99_ms},
                          {"failed", attacked.requests_failed}}},
                        {"p99_ratio", ratio},
                        {"attack_requests", report.sent},
                        {"attack_transport_failures", report.transport_failures},
                        {"health_checks", report.health_checks},
                        {"health_failures", report.health_failures},
                        {"health_max_ms", report.health_max_ms},
                        {"rss_kib_before", before.rss_kib},
                        {"rss_kib_after", after.rss_kib}};
  for (const auto& [name, counts] : report.statuses) {
    for (const auto& [status, n] : counts) out["attack_statuses"][name][std::to_string(status)] = n;
  }
  if (s.json) {
    std::printf("%s\n", out.dump(2).c_str());
  } else {
    std::printf("hostile probe: %d clients x %d requests, %d attackers\n", s.clients, s.requests,
                s.hostile);
    std::printf("  alone        latency p50 %.1f ms, p99 %.1f ms\n", idle.latency_p50_ms,
                idle.latency_p99_ms);
    std::printf("  attacked     latency p50 %.1f ms, p99 %.1f ms (p99 %.2fx alone)\n",
                attacked.latency_p50_ms, attacked.latency_p99_ms, ratio);
    std::printf("  /health      %lld checks, %lld failed, slowest %.1f ms\n",
                static_cast<long long>(report.health_checks),
                static_cast<long long>(report.health_failures), report.health_max_ms);
    for (const auto& [name, counts] : report.statuses) {
      std::printf("  attack       %-36s", name.c_str());
      for (const auto& [status, n] : counts)
        std::printf(" %d x%lld", status, static_cast<long long>(n));
      std::printf("\n");
    }
    if (s.server_pid > 0) {
      std::printf(
          "  server RSS   %.1f MiB before the attack, %.1f MiB after (%+.1f %%)\n",
          before.rss_kib / 1024.0, after.rss_kib / 1024.0,
          before.rss_kib > 0 ? 100.0 * (after.rss_kib - before.rss_kib) / before.rss_kib : 0);
    }
  }
  const bool ok =
      idle.requests_failed == 0 && attacked.requests_failed == 0 && report.health_failures == 0;
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  Settings s;
  if (auto exit_code = parse_command_line(argc, argv, s)) return *exit_code;
  std::string error;
  const auto url = hearth::loadbench::parse_url(s.url, error);
  if (!url) {
    std::fprintf(stderr, "hearth-loadbench: --url %s: %s\n", s.url.c_str(), error.c_str());
    return 2;
  }
  hearth::loadbench::ClientConfig config;
  config.url = *url;
  config.api_key = s.api_key;
  config.timeout = std::chrono::milliseconds(static_cast<int64_t>(s.timeout_s * 1000.0));

  if (s.hostile > 0) return run_hostile_probe(s, config);
  ServerReport server;
  std::vector<int> idle = hold_idle_connections(*url, s.idle_connections);
  server.idle_held = static_cast<int>(idle.size());
  if (!idle.empty()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // let the server accept
    server.with_idle = sample_server(s.server_pid);
  }
  const auto start = std::chrono::steady_clock::now();
  const std::vector<RequestResult> results = run_clients(s, config, server);
  const double wall_s =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  server.after_last = sample_server(s.server_pid);
  for (int fd : idle) ::close(fd);

  const Summary summary = hearth::loadbench::summarize(results, wall_s);
  if (s.json) {
    print_json(s, summary, server);
  } else {
    print_text(s, summary, server);
  }
  return summary.requests_failed == 0 ? 0 : 1;
}

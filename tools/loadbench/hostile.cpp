#include "tools/loadbench/hostile.h"

#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <chrono>
#include <mutex>
#include <thread>

namespace hearth::loadbench {

namespace {

RequestSpec raw(const std::string& path, std::string body) {
  RequestSpec spec;
  spec.method = "POST";
  spec.path = path;
  spec.raw_body = std::move(body);
  return spec;
}

// The attackers run at a lower priority than the measured clients: on a machine shared
// with the server, their own CPU (writing and reading megabytes) would otherwise be
// measured as the server's unfairness.
void lower_priority() {
  const auto tid = static_cast<id_t>(syscall(SYS_gettid));
  (void)setpriority(PRIO_PROCESS, tid, getpriority(PRIO_PROCESS, tid) + 10);
}

std::string nested(size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

std::string repeated(const std::string& item, size_t n) {
  std::string out;
  for (size_t i = 0; i < n; ++i) out += (i ? "," : "") + item;
  return out;
}

const char* kTool =
    R"({"type":"function","function":{"name":"get_weather","parameters":{"type":"object",)"
    R"("properties":{"city":{"type":"string","maxLength":8}},"required":["city"]}}})";

}  // namespace

std::vector<HostileRequest> hostile_requests() {
  std::vector<HostileRequest> out;
  const std::string deep = nested(60000);
  out.push_back({"chat, arguments 60,000 deep",
                 raw("/v1/chat/completions",
                     R"({"max_tokens":4,"tools":[)" + std::string(kTool) +
                         R"(],"messages":[{"role":"user","content":"hi"},{"role":"assistant",)"
                         R"("content":"","tool_calls":[{"id":"c","type":"function","function":)"
                         R"({"name":"get_weather","arguments":")" +
                         deep + R"("}}]},{"role":"tool","tool_call_id":"c","content":"ok"}]})")});
  out.push_back(
      {"responses, arguments 60,000 deep",
       raw("/v1/responses",
           R"({"max_output_tokens":4,"input":[{"type":"message","role":"user",)"
           R"("content":"hi"},{"type":"function_call","call_id":"c","name":"f",)"
           R"("arguments":")" +
               deep + R"("},{"type":"function_call_output","call_id":"c","output":"ok"}]})")});
  std::string keys;
  for (int i = 0; i < 100000; ++i) keys += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":1";
  out.push_back(
      {"100,000 keys", raw("/completion", R"({"prompt":"x","n_predict":2,)" + keys + "}")});
  const std::string trigger_body_head =
      R"({"prompt":"Once upon a time","n_predict":48,"ignore_eos":true,"temperature":0,)"
      R"("logit_bias":[["a",30]],"grammar":"root ::= [0-9]+","grammar_lazy":true,)"
      R"("grammar_triggers":[)";
  out.push_back(
      {"64 nested trigger patterns",
       raw("/completion",
           trigger_body_head + repeated(R"({"type":2,"value":"(( ?a| a)+)+[0-9]"})", 64) + "]}")});
  out.push_back(
      {"64 backtracking trigger patterns",
       raw("/completion",
           trigger_body_head + repeated(R"({"type":2,"value":"( a| a)*[0-9]"})", 64) + "]}")});
  std::string any_of;
  for (int i = 0; i < 2000; ++i) {
    any_of += (i ? "," : "") + std::string(R"({"type":"object","properties":{"k)") +
              std::to_string(i) + R"(":{"type":"integer"}},"required":["k)" + std::to_string(i) +
              R"("]})";
  }
  out.push_back({"2,000-alternative schema",
                 raw("/completion",
                     R"({"prompt":"x","n_predict":8,"json_schema":{"anyOf":[)" + any_of + "]}}")});
  out.push_back(
      {"budget 0 with a forced call",
       raw("/v1/chat/completions",
           R"({"max_tokens":64,"thinking_budget_tokens":0,"tool_choice":"required",)"
           R"("tools":[)" +
               std::string(kTool) + R"(],"messages":[{"role":"user","content":"hi"}]})")});
  out.push_back(
      {"ignore_eos, forced call, stream",
       raw("/v1/chat/completions",
           R"({"max_tokens":128,"ignore_eos":true,"stream":true,"tool_choice":"required",)"
           R"("parallel_tool_calls":false,"tools":[)" +
               std::string(kTool) + R"(],"messages":[{"role":"user","content":"hi"}]})")});
  std::string text;
  while (text.size() < 1300000) text += "Once upon a time, there was a little girl named Lily. ";
  out.push_back({"1.3 MB /tokenize with pieces",
                 raw("/tokenize", R"({"with_pieces":true,"content":")" + text + "\"}")});
  return out;
}

void warm_up(const ClientConfig& config) {
  for (const HostileRequest& r : hostile_requests()) (void)run_request(config, r.spec);
}

void run_attackers(const ClientConfig& config, int attackers, const std::atomic<bool>& stop,
                   HostileReport& report) {
  const std::vector<HostileRequest> requests = hostile_requests();
  std::mutex mutex;
  std::atomic<int64_t> next{0};
  std::vector<std::thread> threads;
  for (int a = 0; a < attackers; ++a) {
    threads.emplace_back([&] {
      lower_priority();
      while (!stop) {
        const HostileRequest& r = requests[static_cast<size_t>(next++) % requests.size()];
        const RequestResult result = run_request(config, r.spec);
        std::lock_guard<std::mutex> lock(mutex);
        ++report.sent;
        if (result.status == 0) ++report.transport_failures;
        ++report.statuses[r.name][result.status];
      }
    });
  }
  threads.emplace_back([&] {
    ClientConfig health = config;
    health.timeout = std::chrono::seconds(5);
    RequestSpec spec;
    spec.method = "GET";
    spec.path = "/health";
    while (!stop) {
      const RequestResult result = run_request(health, spec);
      {
        std::lock_guard<std::mutex> lock(mutex);
        ++report.health_checks;
        if (result.status != 200) ++report.health_failures;
        report.health_max_ms = std::max(report.health_max_ms, result.total_ms);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
  });
  for (std::thread& t : threads) t.join();
}

}  // namespace hearth::loadbench

#include "server/openai/oai_common.h"

#include <chrono>
#include <random>

#include "server/server_state.h"

namespace hearth::server::openai {

std::string random_id(size_t n) {
  static constexpr char kChars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  thread_local std::mt19937_64 rng{std::random_device{}()};
  std::uniform_int_distribution<size_t> pick(0, sizeof(kChars) - 2);
  std::string out(n, '0');
  for (char& c : out) c = kChars[pick(rng)];
  return out;
}

ResponseMeta make_meta(const ServerState& s) {
  return {"chatcmpl-" + random_id(), s.config.model_name(), s.config.build_info};
}

int64_t unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

bool stopped_naturally(const scheduler::FinalResult& r) {
  return r.stop_type == scheduler::StopType::kEos || r.stop_type == scheduler::StopType::kWord;
}

const char* finish_reason(const scheduler::FinalResult& r, bool tool_calls) {
  if (!stopped_naturally(r)) return "length";
  return tool_calls ? "tool_calls" : "stop";
}

Json usage_json(const scheduler::FinalResult& r) {
  const int32_t prompt = r.timings.cache_n + r.timings.prompt_n;
  Json u = Json::object();
  u["completion_tokens"] = r.n_predicted;
  u["prompt_tokens"] = prompt;
  u["total_tokens"] = prompt + r.n_predicted;
  u["prompt_tokens_details"] = Json{{"cached_tokens", r.timings.cache_n}};
  return u;
}

Json logprobs_json(const std::vector<scheduler::TokenProbs>& probs,
                   const CompletionSettings& settings, const ResultContext& ctx) {
  if (settings.task.n_probs <= 0) return nullptr;
  Json content = Json::array();
  for (const scheduler::TokenProbs& p : probs) {
    content.push_back(probs_json(p, settings.task.post_sampling_probs, ctx));
  }
  return Json{{"content", std::move(content)}};
}

}  // namespace hearth::server::openai

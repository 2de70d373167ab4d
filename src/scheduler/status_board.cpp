#include "scheduler/status_board.h"

#include <algorithm>

#include "base/timer.h"

namespace hearth::scheduler::detail {
namespace {

double seconds(double ms) {
  return ms / 1000.0;
}

}  // namespace

std::vector<SlotInfo> StatusBoard::slots() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshot_;
}

bool StatusBoard::has_idle_slot() const {
  std::lock_guard<std::mutex> lock(mu_);
  return std::any_of(snapshot_.begin(), snapshot_.end(),
                     [](const SlotInfo& s) { return !s.is_processing; });
}

MetricsSnapshot StatusBoard::metrics(bool reset_window) {
  std::lock_guard<std::mutex> lock(mu_);
  MetricsSnapshot out = metrics_;
  if (reset_window) {
    metrics_.window_prompt_tokens = 0;
    metrics_.window_prompt_seconds = 0.0;
    metrics_.window_predicted_tokens = 0;
    metrics_.window_predicted_seconds = 0.0;
  }
  return out;
}

void StatusBoard::set_deferred(size_t queued) {
  std::lock_guard<std::mutex> lock(mu_);
  metrics_.requests_deferred = static_cast<int32_t>(queued);
}

void StatusBoard::count_decode(int32_t busy_slots) {
  std::lock_guard<std::mutex> lock(mu_);
  ++metrics_.n_decode_total;
  metrics_.n_busy_slots_total += static_cast<uint64_t>(busy_slots);
}

void StatusBoard::note_longest_sequence(uint64_t tokens) {
  std::lock_guard<std::mutex> lock(mu_);
  metrics_.n_tokens_max = std::max(metrics_.n_tokens_max, tokens);
}

void StatusBoard::account_prompt(const RunningTask& t) {
  std::lock_guard<std::mutex> lock(mu_);
  const double ms = static_cast<double>(now_us() - t.t_start_us) / 1000.0;
  metrics_.prompt_tokens_total += static_cast<uint64_t>(t.n_prompt_decoded);
  metrics_.prompt_tokens_cached_total += static_cast<uint64_t>(t.n_past);
  metrics_.prompt_seconds_total += seconds(ms);
  metrics_.window_prompt_tokens += static_cast<uint64_t>(t.n_prompt_decoded);
  metrics_.window_prompt_seconds += seconds(ms);
}

void StatusBoard::account_release(const RunningTask& t) {
  std::lock_guard<std::mutex> lock(mu_);
  const double ms = t.timings().predicted_ms;
  metrics_.tokens_predicted_total += static_cast<uint64_t>(t.n_decoded);
  metrics_.tokens_predicted_seconds_total += seconds(ms);
  // The throughput gauge counts decode steps: the first token comes from the prompt pass.
  metrics_.window_predicted_tokens += static_cast<uint64_t>(std::max(t.n_decoded - 1, 0));
  metrics_.window_predicted_seconds += seconds(ms);
  // Drafts count when the request ends, as the reference adds them.
  metrics_.n_draft_tokens += static_cast<uint64_t>(t.n_draft);
  metrics_.n_draft_accepted += static_cast<uint64_t>(t.n_draft_accepted);
  metrics_.n_draft_steps += static_cast<uint64_t>(t.n_draft_steps);
  if (metrics_.n_accepted_per_pos.size() < t.n_accepted_per_pos.size())
    metrics_.n_accepted_per_pos.resize(t.n_accepted_per_pos.size(), 0);
  for (size_t i = 0; i < t.n_accepted_per_pos.size(); ++i)
    metrics_.n_accepted_per_pos[i] += static_cast<uint64_t>(t.n_accepted_per_pos[i]);
}

void StatusBoard::publish(std::vector<SlotInfo> slots, int32_t busy_slots,
                          const engine::KvCache& kv) {
  std::lock_guard<std::mutex> lock(mu_);
  snapshot_ = std::move(slots);
  metrics_.requests_processing = busy_slots;
  metrics_.kv_blocks_used = kv.used_blocks();
  metrics_.kv_blocks_total = kv.n_blocks();
  metrics_.time_to_first_token.absorb(unpublished_ttft_);
  metrics_.time_per_output_token.absorb(unpublished_tpot_);
}

}  // namespace hearth::scheduler::detail

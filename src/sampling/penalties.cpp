#include "sampling/penalties.h"

#include <cmath>
#include <string>

namespace hearth::sampling {

Status validate_penalty_params(const PenaltyParams& params) {
  const auto invalid = [](const char* field, const char* requirement, float value) {
    return error(ErrorCode::kInvalidArgument,
                 std::string(field) + " must be " + requirement + ", got " + std::to_string(value));
  };
  const float repeat = params.repeat;
  if (!std::isfinite(repeat) || !(repeat > 0.0f) || !std::isfinite(1.0f / repeat)) {
    return invalid("repeat_penalty", "finite, > 0 and with a finite reciprocal", repeat);
  }
  if (!std::isfinite(params.frequency))
    return invalid("frequency_penalty", "finite", params.frequency);
  if (!std::isfinite(params.presence))
    return invalid("presence_penalty", "finite", params.presence);
  return Status::ok();
}

PenaltiesStage::PenaltiesStage(const PenaltyParams& params) : params_(params) {
  const bool neutral = params.repeat == 1.0f && params.frequency == 0.0f && params.presence == 0.0f;
  if (params.last_n > 0 && !neutral) window_size_ = static_cast<size_t>(params.last_n);
}

int32_t PenaltiesStage::count(int32_t token) const {
  const auto it = counts_.find(token);
  return it == counts_.end() ? 0 : it->second;
}

void PenaltiesStage::accept(int32_t token) {
  if (inert()) return;
  window_.push_back(token);
  ++counts_[token];
  if (window_.size() > window_size_) {
    const auto oldest = counts_.find(window_.front());
    if (--oldest->second == 0) counts_.erase(oldest);
    window_.pop_front();
  }
}

void PenaltiesStage::reset() {
  window_.clear();
  counts_.clear();
}

void PenaltiesStage::apply(Candidates& candidates) {
  if (inert()) return;
  if (!counts_.empty()) {
    for (TokenData& entry : candidates.entries()) {
      const auto it = counts_.find(entry.id);
      if (it == counts_.end()) continue;
      const int32_t seen = it->second;
      float logit = entry.logit;
      logit = logit <= 0.0f ? logit * params_.repeat : logit / params_.repeat;
      // One subtraction of the combined amount, rounded as the reference rounds it.
      logit -= static_cast<float>(seen) * params_.frequency + params_.presence;
      entry.logit = logit;
    }
  }
  candidates.set_sorted(false);
}

}  // namespace hearth::sampling

#include "sampling/chain.h"

#include <string>
#include <utility>

namespace hearth::sampling {

Chain& Chain::add(std::unique_ptr<Stage> stage) {
  if (stage) stages_.push_back(std::move(stage));
  return *this;
}

std::vector<std::string_view> Chain::stage_names() const {
  std::vector<std::string_view> names;
  names.reserve(stages_.size());
  for (const auto& stage : stages_) names.push_back(stage->name());
  return names;
}

Result<int32_t> Chain::sample(std::span<const float> logits) {
  if (logits.empty()) {
    return error(ErrorCode::kInvalidArgument, "sampling: no logits to sample from");
  }
  candidates_.assign(logits);
  return sample(candidates_);
}

Result<int32_t> Chain::sample(Candidates& candidates) {
  if (candidates.empty()) {
    return error(ErrorCode::kInvalidArgument, "sampling: no candidates to sample from");
  }
  candidates.select(-1);
  for (const auto& stage : stages_) stage->apply(candidates);
  const int32_t token = candidates.selected_id();
  if (token < 0) {
    std::string last = stages_.empty() ? "no stages" : std::string(stages_.back()->name());
    return error(ErrorCode::kInvalidArgument,
                 "sampling: the chain selected no token (last stage: " + last +
                     "; it must be a selecting stage, and some candidate must be above -inf)");
  }
  return token;
}

void Chain::accept(int32_t token) {
  for (const auto& stage : stages_) stage->accept(token);
}

void Chain::reset() {
  for (const auto& stage : stages_) stage->reset();
}

}  // namespace hearth::sampling

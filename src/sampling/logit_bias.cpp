#include "sampling/logit_bias.h"

#include <unordered_map>

namespace hearth::sampling {
namespace {

// Whether entry i holds token i for every i: the freshly filled array.
bool in_vocabulary_order(const Candidates& candidates) {
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (candidates[i].id != static_cast<int32_t>(i)) return false;
  }
  return true;
}

}  // namespace

LogitBiasStage::LogitBiasStage(std::vector<std::pair<int32_t, float>> biases)
    : biases_(std::move(biases)) {}

void LogitBiasStage::apply(Candidates& candidates) {
  if (biases_.empty() || candidates.empty()) return;
  if (in_vocabulary_order(candidates)) {
    for (const auto& [token, bias] : biases_) {
      if (token < 0 || static_cast<size_t>(token) >= candidates.size()) continue;
      candidates[static_cast<size_t>(token)].logit += bias;
    }
  } else {
    std::unordered_map<int32_t, float> first_bias;
    for (const auto& [token, bias] : biases_) first_bias.emplace(token, bias);
    for (TokenData& entry : candidates.entries()) {
      const auto it = first_bias.find(entry.id);
      if (it != first_bias.end()) entry.logit += it->second;
    }
  }
  // A bias can move a token past its neighbours.
  candidates.set_sorted(false);
}

}  // namespace hearth::sampling

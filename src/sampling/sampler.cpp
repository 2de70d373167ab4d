#include "sampling/sampler.h"

#include <utility>

namespace hearth::sampling {

Sampler::Sampler(Chain chain, std::unique_ptr<GrammarSampler> grammar)
    : chain_(std::move(chain)), grammar_(std::move(grammar)) {}
Sampler::Sampler(Sampler&&) noexcept = default;
Sampler& Sampler::operator=(Sampler&&) noexcept = default;
Sampler::~Sampler() = default;

Result<int32_t> Sampler::sample(std::span<const float> logits) {
  last_was_masked_ = false;
  auto first = chain_.sample(logits);
  // A chain that selects nothing (every candidate masked by logit bias) cannot be helped by
  // the grammar either, so its error stands.
  if (!first.is_ok() || !grammar_ || !grammar_->constraining() || grammar_->allows(*first)) {
    return first;
  }
  ++n_resampled_;
  last_was_masked_ = true;
  masked_.assign(logits);
  grammar_->apply(masked_);
  auto second = chain_.sample(masked_);
  if (!second.is_ok()) {
    return error(ErrorCode::kInvalidArgument,
                 "the grammar allows none of the tokens the sampler chain can choose");
  }
  return second;
}

const Candidates& Sampler::candidates() const {
  return last_was_masked_ ? masked_ : chain_.candidates();
}

Status Sampler::accept(int32_t token, bool generated) {
  if (generated && grammar_) {
    Status st = grammar_->accept(token);
    if (!st.is_ok()) return st;
  }
  chain_.accept(token);
  return Status::ok();
}

}  // namespace hearth::sampling

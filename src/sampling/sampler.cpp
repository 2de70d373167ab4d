#include "sampling/sampler.h"

#include <limits>
#include <utility>

namespace hearth::sampling {

Sampler::Sampler(Chain chain, std::unique_ptr<GrammarSampler> grammar,
                 std::unique_ptr<ReasoningBudget> budget)
    : chain_(std::move(chain)), grammar_(std::move(grammar)), budget_(std::move(budget)) {}
Sampler::Sampler(Sampler&&) noexcept = default;
Sampler& Sampler::operator=(Sampler&&) noexcept = default;
Sampler::~Sampler() = default;

// A lazy grammar, or one that constrains only the answer, waits out the thinking block.
bool Sampler::grammar_waits() const {
  return grammar_ && (grammar_->lazy() || grammar_->after_reasoning()) && budget_ &&
         budget_->thinking();
}

bool Sampler::grammar_applies() const {
  return grammar_ && grammar_->constraining() && !grammar_waits();
}

Result<int32_t> Sampler::sample(std::span<const float> logits) {
  last_was_masked_ = false;
  if (budget_) {
    std::optional<int32_t> forced = budget_->forced_token();
    // A grammar that constrains this step has the last word: a forced token it does not
    // allow is not forced (the budget waits; nothing is sampled the grammar refuses).
    if (forced && grammar_applies() && !grammar_->allows(*forced)) forced.reset();
    if (forced) {
      // Every logit but the forced token's is -inf; the chain still runs (its state and
      // the reported probabilities stay those of a normal step).
      masked_.assign(logits);
      for (size_t i = 0; i < masked_.size(); ++i) {
        if (masked_[i].id != *forced) masked_[i].logit = -std::numeric_limits<float>::infinity();
      }
      last_was_masked_ = true;
      return chain_.sample(masked_);
    }
  }
  auto first = chain_.sample(logits);
  // A chain that selects nothing (every candidate masked by logit bias) cannot be helped by
  // the grammar either, so its error stands.
  if (!first.is_ok() || !grammar_applies() || grammar_->allows(*first)) return first;
  ++n_resampled_;
  last_was_masked_ = true;
  masked_.assign(logits);
  grammar_->apply(masked_);
  auto second = chain_.sample(masked_);
  if (!second.is_ok()) {
    if (grammar_->can_end()) {
      // Only an end of generation could follow and the request bans it (ignore_eos): the
      // grammar's answer is complete, so the output ends here (kOutOfRange: not an error).
      return error(ErrorCode::kOutOfRange, "the grammar is complete");
    }
    if (grammar_->overflowed()) {
      // Not the request's other fields: the grammar has too many paths here to check.
      return error(ErrorCode::kResourceExhausted,
                   "the grammar (the request's grammar, json_schema or response_format) is too "
                   "large for the matcher: more than " +
                       std::to_string(grammar_->max_stacks()) +
                       " matcher stacks after the text so far");
    }
    return error(ErrorCode::kInvalidArgument,
                 "the grammar allows none of the tokens the sampler chain can choose");
  }
  return second;
}

const Candidates& Sampler::candidates() const {
  return last_was_masked_ ? masked_ : chain_.candidates();
}

Status Sampler::accept(int32_t token, bool generated) {
  if (generated) {
    // Inside the thinking block a waiting grammar neither constrains nor watches for its
    // trigger; the tokens that end the block are the budget's.
    const bool grammar_sees = grammar_ && !grammar_waits();
    if (budget_) budget_->accept(token);
    if (grammar_sees) {
      Status st = grammar_->accept(token);
      if (!st.is_ok()) return st;
    }
  }
  chain_.accept(token);
  return Status::ok();
}

}  // namespace hearth::sampling

// One request's sampling step (sampling.md 2.3-2.5): the chain picks a token; when a grammar
// constrains this step and rejects that token, the candidates are refilled from the same
// logits, the grammar masks them and the whole chain runs again. Checking only the chosen
// token first keeps constrained decoding from scanning the vocabulary on most steps.
#pragma once

#include <cstdint>
#include <memory>
#include <span>

#include "base/status.h"
#include "sampling/candidates.h"
#include "sampling/chain.h"
#include "sampling/grammar_sampler.h"
#include "sampling/reasoning_budget.h"

namespace hearth::sampling {

class Sampler {
 public:
  Sampler() = default;
  // `budget` (may be null) forces the end of the thinking block; a lazy grammar, or one
  // made for the answer (GrammarConfig::after_reasoning), does not apply inside the block
  // (sampling.md §7.2). A grammar that applies is never made to take a forced token.
  Sampler(Chain chain, std::unique_ptr<GrammarSampler> grammar,
          std::unique_ptr<ReasoningBudget> budget = nullptr);
  Sampler(Sampler&&) noexcept;
  Sampler& operator=(Sampler&&) noexcept;
  ~Sampler();

  // kOutOfRange when a complete grammar could only be followed by an end of generation
  // that the logits ban (ignore_eos): the output is finished, no token is chosen.
  Result<int32_t> sample(std::span<const float> logits);
  // The candidates as the deciding pass left them (the post-sampling view).
  const Candidates& candidates() const;
  // A prompt token (generated = false: only the chain's history sees it) or a generated
  // one (the grammar advances too). Errors come from the grammar (no path accepts it).
  Status accept(int32_t token, bool generated);
  bool has_grammar() const { return grammar_ != nullptr; }
  const ReasoningBudget* budget() const { return budget_.get(); }
  // How many steps needed the second, grammar-masked pass (for tests and benchmarks).
  int64_t n_resampled() const { return n_resampled_; }

 private:
  bool grammar_waits() const;
  bool grammar_applies() const;

  Chain chain_;
  std::unique_ptr<GrammarSampler> grammar_;
  std::unique_ptr<ReasoningBudget> budget_;
  Candidates masked_;
  bool last_was_masked_ = false;
  int64_t n_resampled_ = 0;
};

}  // namespace hearth::sampling

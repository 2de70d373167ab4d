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

namespace hearth::sampling {

class Sampler {
 public:
  Sampler() = default;
  Sampler(Chain chain, std::unique_ptr<GrammarSampler> grammar);
  Sampler(Sampler&&) noexcept;
  Sampler& operator=(Sampler&&) noexcept;
  ~Sampler();

  Result<int32_t> sample(std::span<const float> logits);
  // The candidates as the deciding pass left them (the post-sampling view).
  const Candidates& candidates() const;
  // A prompt token (generated = false: only the chain's history sees it) or a generated
  // one (the grammar advances too). Errors come from the grammar (no path accepts it).
  Status accept(int32_t token, bool generated);
  bool has_grammar() const { return grammar_ != nullptr; }
  // How many steps needed the second, grammar-masked pass (for tests and benchmarks).
  int64_t n_resampled() const { return n_resampled_; }

 private:
  Chain chain_;
  std::unique_ptr<GrammarSampler> grammar_;
  Candidates masked_;
  bool last_was_masked_ = false;
  int64_t n_resampled_ = 0;
};

}  // namespace hearth::sampling

// infill: the fill-in-the-middle filter. When end-of-generation tokens carry enough of the
// probability it keeps only them (ending the infill); otherwise it folds tokens whose text is
// a prefix of another candidate's into the more likely one (masking the other), drops
// unlikely text tokens, and falls back to the end-of-text token when no text token is left.
// Needs the vocabulary for token text and EOG flags. The folding compares every candidate
// with every other, so it belongs after a stage that has shrunk the array.
#pragma once

#include "sampling/stage.h"
#include "sampling/vocab_view.h"

namespace hearth::sampling {

class InfillStage final : public Stage {
 public:
  // `vocab` must outlive the stage.
  explicit InfillStage(const VocabView& vocab) : vocab_(vocab) {}
  std::string_view name() const override { return "infill"; }
  void apply(Candidates& candidates) override;

 private:
  // Step 3 of sampling.md 5.16: a candidate whose text is a prefix of another's is merged
  // with it, into whichever is more likely.
  void merge_prefixes(Candidates& candidates) const;
  // Keeps EOG entries and text entries with p >= threshold, renormalizes the kept
  // probabilities and returns how many text entries survived.
  size_t keep_likely(Candidates& candidates, float threshold) const;

  const VocabView& vocab_;
};

}  // namespace hearth::sampling

// llama-server's ngram-mod drafting: one table shared by all slots maps the hash of every n
// consecutive tokens seen (prompts and generated text) to the token that followed them, the
// latest writer winning (no collision check: a wrong entry only costs a rejected draft).
// A draft chains lookups from the last n tokens: each found token extends the key window,
// so a repeated passage or a loop is drafted a whole span at a time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace hearth::scheduler {

struct NgramModParams {
  int32_t n_match = 24;  // --spec-ngram-mod-n-match: tokens hashed
  int32_t n_min = 48;    // --spec-ngram-mod-n-min: shorter chains are not proposed
  int32_t n_max = 64;    // --spec-ngram-mod-n-max: longest draft
};

class NgramModTable {
 public:
  static constexpr int32_t kEmpty = -1;

  // `n_entries` slots (the reference's 4 Mi).
  NgramModTable(int32_t n_match, size_t n_entries);

  // Records tokens[n_match] as the successor of tokens[0, n_match).
  void add(const int32_t* tokens);
  // The successor recorded for tokens[0, n_match), or kEmpty.
  int32_t get(const int32_t* tokens) const;
  void reset();

  int32_t n_match() const { return n_match_; }
  double occupancy() const { return static_cast<double>(used_) / entries_.size(); }

 private:
  size_t index(const int32_t* tokens) const;

  int32_t n_match_;
  size_t used_ = 0;
  std::vector<int32_t> entries_;
};

// Per slot: where the slot's tokens were last added and the outcome of its last drafts.
struct NgramModSlot {
  size_t added_until = 0;  // history positions below this have been added
  int32_t last_draft = 0;  // length of the slot's latest draft from this source
  int32_t low_rounds = 0;  // drafts in a row with under a quarter accepted
};

// A request's prompt is evaluated: its n-grams go into the table, which is emptied once
// over a quarter full.
void ngram_mod_begin(NgramModTable& table, NgramModSlot& slot, std::span<const int32_t> prompt);
// The draft after `sampled` following `history` (the slot's tokens); first adds the
// history's n-grams when more than 32 arrived since the last time. Empty when the chain
// breaks before n_min tokens.
std::vector<int32_t> ngram_mod_draft(NgramModTable& table, NgramModSlot& slot,
                                     std::span<const int32_t> history, int32_t sampled,
                                     const NgramModParams& params);
// After verification: five drafts in a row with under a quarter accepted empty the table.
void ngram_mod_accept(NgramModTable& table, NgramModSlot& slot, int32_t accepted);

}  // namespace hearth::scheduler

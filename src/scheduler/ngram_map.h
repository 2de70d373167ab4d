// llama-server's ngram-map-k and ngram-map-k4v drafting: the n tokens ending with the one
// just sampled (the key) are looked up among the earlier n-grams of the slot's tokens,
// through an index from n-gram hash to start positions that grows with the sequence.
//  - ngram-map-k (keys only): the m tokens that followed the key's most recent earlier
//    occurrence are proposed.
//  - ngram-map-k4v (keys and up to four values): the m-grams that followed each earlier
//    occurrence are counted (the first four distinct ones), and the most frequent is
//    proposed only when it occurred at least twice as often as the others together.
// Both need the key seen at least min_hits times before, and remember per key (and value)
// how much of their last draft was accepted: a partly accepted draft is next time cut to
// what was accepted plus one, a whole one may run to m again.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace hearth::scheduler {

struct NgramMapParams {
  int32_t size_n = 12;   // --spec-ngram-map-k[4v]-size-n: key length
  int32_t size_m = 48;   // --spec-ngram-map-k[4v]-size-m: longest draft
  int32_t min_hits = 1;  // --spec-ngram-map-k[4v]-min-hits: earlier occurrences needed
};

class NgramMap {
 public:
  // `with_values`: ngram-map-k4v's value statistics; otherwise ngram-map-k.
  NgramMap(const NgramMapParams& params, bool with_values);

  // A request's tokens are evaluated: the index is rebuilt over them.
  void begin(std::span<const int32_t> history);
  // The draft for `sampled` following `history` (the slot's tokens); empty when the key
  // has no usable earlier occurrence.
  std::vector<int32_t> draft(std::span<const int32_t> history, int32_t sampled);
  // How many tokens of the latest draft were verified (it may have been cut) and accepted.
  void accept(int32_t drafted, int32_t accepted);

 private:
  struct Value {
    size_t start = 0;  // where the m-gram first follows the key
    int32_t count = 0;
  };
  uint64_t hash(const int32_t* tokens) const;
  void index_until(std::span<const int32_t> history, size_t end);
  std::vector<size_t> occurrences(std::span<const int32_t> history,
                                  std::span<const int32_t> key) const;
  bool pick_value(std::span<const int32_t> history, const std::vector<size_t>& at,
                  size_t& start) const;

  NgramMapParams params_;
  bool with_values_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> starts_;  // n-gram hash -> starts, ascending
  size_t indexed_ = 0;                                          // starts below this are indexed
  std::unordered_map<uint64_t, int32_t> next_length_;           // key (and value) -> draft length
  uint64_t last_feedback_ = 0;
  int32_t last_length_ = 0;  // 0: no draft pending feedback
};

}  // namespace hearth::scheduler

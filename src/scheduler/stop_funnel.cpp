#include "scheduler/stop_funnel.h"

#include <algorithm>

#include "tokenizer/tokenizer.h"

namespace hearth::scheduler {
namespace {

// Start of the longest suffix of `text` that is a prefix of `stop` (the whole word
// included), or npos.
size_t partial_start(std::string_view text, std::string_view stop) {
  if (text.empty() || stop.empty()) return std::string_view::npos;
  for (size_t len = std::min(stop.size(), text.size()); len > 0; --len) {
    if (text.substr(text.size() - len) == stop.substr(0, len)) return text.size() - len;
  }
  return std::string_view::npos;
}

}  // namespace

StopFunnel::StopFunnel(std::vector<std::string> stops) : stops_(std::move(stops)) {}

size_t StopFunnel::find_full(std::string_view text, size_t last_piece,
                             const std::vector<std::string>& stops, std::string* word) {
  size_t best = std::string_view::npos;
  for (const std::string& s : stops) {
    if (s.empty()) continue;
    // A new match must overlap the newest piece, so it starts at most this far back.
    const size_t back = s.size() + last_piece;
    const size_t from = text.size() > back ? text.size() - back : 0;
    const size_t pos = text.find(s, from);
    if (pos != std::string_view::npos && (best == std::string_view::npos || pos < best)) {
      best = pos;
      if (word) *word = s;
    }
  }
  return best;
}

size_t StopFunnel::find_partial(std::string_view text, const std::vector<std::string>& stops) {
  size_t best = std::string_view::npos;
  for (const std::string& s : stops) {
    const size_t pos = partial_start(text, s);
    if (pos != std::string_view::npos && (best == std::string_view::npos || pos < best)) best = pos;
  }
  return best;
}

FunnelStep StopFunnel::push(std::string_view piece, bool may_continue) {
  FunnelStep step;
  text_ += piece;
  if (tokenizer::complete_utf8_prefix(text_) < text_.size()) {
    step.incomplete = true;
    return step;
  }
  size_t pos = std::min(n_sent_, text_.size());
  const std::string_view unsent = std::string_view(text_).substr(pos);
  bool send = true;
  const size_t stop_pos = find_full(unsent, piece.size(), stops_, &stopping_word_);
  if (stop_pos != std::string_view::npos) {
    text_.resize(pos + stop_pos);
    step.matched = true;
    pos = std::min(n_sent_, text_.size());
  } else if (may_continue) {
    // The reference withholds all unsent text, not only the overlapping tail, while it
    // could still become a stop string.
    send = find_partial(unsent, stops_) == std::string_view::npos;
  }
  if (send) {
    step.released = text_.substr(pos);
    n_sent_ += step.released.size();
  }
  return step;
}

void StopFunnel::cut(size_t size) {
  if (size < text_.size()) text_.resize(size);
}

}  // namespace hearth::scheduler

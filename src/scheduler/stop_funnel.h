// The text side of llama-server's stop rules: generated pieces go in, and what comes out
// is the text that may be released to the client at this step. Text is held back while
// it ends inside a UTF-8 character or while its unsent part ends with the beginning of a
// stop string; a complete stop string cuts the text at its earliest occurrence.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::scheduler {

struct FunnelStep {
  // The text ends inside a UTF-8 character: nothing was checked or released, and the
  // reference sends no event for such a token.
  bool incomplete = false;
  bool matched = false;  // a stop string matched; text() now ends before it
  std::string released;  // text released at this step ("" while withheld)
};

class StopFunnel {
 public:
  explicit StopFunnel(std::vector<std::string> stops = {});

  // Appends the piece of one generated token. `may_continue` is false for a token that ends
  // the generation anyway (end-of-generation): then a partial stop-string prefix is not
  // withheld.
  FunnelStep push(std::string_view piece, bool may_continue = true);

  // All generated text so far (cut at a matched stop string).
  const std::string& text() const { return text_; }
  // Cuts the text at `size` (n_indent drops the last line); never below what was released.
  void cut(size_t size);
  const std::string& stopping_word() const { return stopping_word_; }
  size_t n_released() const { return n_sent_; }

  // Earliest position in `text` of a complete stop string that may overlap the newest
  // `last_piece` bytes (the search starts word + piece bytes before the end), or npos.
  static size_t find_full(std::string_view text, size_t last_piece,
                          const std::vector<std::string>& stops, std::string* word);
  // Earliest start of a suffix of `text` that is a prefix of some stop string, or npos.
  static size_t find_partial(std::string_view text, const std::vector<std::string>& stops);

 private:
  std::vector<std::string> stops_;
  std::string text_;
  size_t n_sent_ = 0;  // bytes of text_ already released
  std::string stopping_word_;
};

}  // namespace hearth::scheduler

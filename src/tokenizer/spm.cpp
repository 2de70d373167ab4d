// SentencePiece-style BPE (llama.cpp's llm_tokenizer_spm): characters are merged pairwise,
// highest-scoring vocabulary pair first, using a priority queue over a linked list of
// symbols, so a text of n characters costs O(n log n).
#include <algorithm>
#include <queue>

#include "tokenizer/encoders.h"
#include "tokenizer/unicode.h"

namespace hearth::tokenizer {
namespace {

struct Symbol {
  int prev;
  int next;
  size_t start;  // byte offset in the text; a symbol always covers contiguous bytes
  size_t n;      // byte length; 0 once merged into its left neighbour
};

struct Bigram {
  int left;
  int right;
  float score;
  size_t size;
};

// Highest score first; equal scores: leftmost first.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  }
};

class SpmSession {
 public:
  SpmSession(const Vocab& vocab, std::string_view text) : vocab_(vocab), text_(text) {}

  void encode(std::vector<TokenId>& out) {
    split_characters();
    for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) try_add_bigram(i - 1, i);
    while (!queue_.empty()) {
      const Bigram b = queue_.top();
      queue_.pop();
      Symbol& left = symbols_[b.left];
      Symbol& right = symbols_[b.right];
      if (left.n == 0 || right.n == 0 || left.n + right.n != b.size) continue;  // stale
      left.n += right.n;
      right.n = 0;
      left.next = right.next;
      if (right.next >= 0) symbols_[right.next].prev = b.left;
      try_add_bigram(left.prev, b.left);
      try_add_bigram(b.left, left.next);
    }
    for (int i = symbols_.empty() ? -1 : 0; i != -1; i = symbols_[i].next) emit(symbols_[i], out);
  }

 private:
  void split_characters() {
    symbols_.reserve(text_.size());
    size_t offset = 0;
    int index = 0;
    while (offset < text_.size()) {
      const size_t len = std::min(unicode::sequence_length(static_cast<uint8_t>(text_[offset])),
                                  text_.size() - offset);
      const size_t start = offset;
      offset += len;
      symbols_.push_back({index - 1, offset == text_.size() ? -1 : index + 1, start, len});
      ++index;
    }
  }

  void try_add_bigram(int left, int right) {
    if (left == -1 || right == -1) return;
    const size_t size = symbols_[left].n + symbols_[right].n;
    const TokenId id = vocab_.find(text_.substr(symbols_[left].start, size));
    if (id == kNoToken || id >= vocab_.size()) return;
    queue_.push({left, right, vocab_.tokens[id].score, size});
  }

  // A symbol that is not a token is a single character: emit its bytes.
  void emit(const Symbol& s, std::vector<TokenId>& out) const {
    const std::string_view piece = text_.substr(s.start, s.n);
    const TokenId id = vocab_.find(piece);
    if (id != kNoToken) {
      out.push_back(id);
      return;
    }
    for (char c : piece) {
      TokenId byte_id = vocab_.byte_token(static_cast<uint8_t>(c));
      // llama.cpp throws when neither <0xXX> nor the byte exists; fall back to UNK instead.
      if (byte_id == kNoToken) byte_id = vocab_.id(SpecialSlot::kUnk);
      if (byte_id != kNoToken) out.push_back(byte_id);
    }
  }

  const Vocab& vocab_;
  std::string_view text_;
  std::vector<Symbol> symbols_;
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue_;
};

}  // namespace

void spm_encode(const Vocab& vocab, std::string_view text, std::vector<TokenId>& out) {
  SpmSession(vocab, text).encode(out);
}

}  // namespace hearth::tokenizer

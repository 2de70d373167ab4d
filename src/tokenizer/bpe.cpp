// Byte-level BPE (llama.cpp's llm_tokenizer_bpe): each pre-tokenized word is merged pairwise,
// lowest merge rank first (leftmost on ties), with a priority queue over a linked list of
// symbols.
#include <algorithm>
#include <queue>

#include "tokenizer/encoders.h"
#include "tokenizer/unicode.h"

namespace hearth::tokenizer {
namespace {

struct Symbol {
  int prev;
  int next;
  size_t start;  // byte offset in the word
  size_t n;      // byte length; 0 once merged into its left neighbour
  TokenId id;    // the token this text is, or kNoToken
};

struct Bigram {
  int left;
  int right;
  int32_t rank;
  size_t size;
};

// Lowest rank first; equal ranks: leftmost first.
struct BigramOrder {
  bool operator()(const Bigram& a, const Bigram& b) const {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  }
};

class BpeSession {
 public:
  explicit BpeSession(const Vocab& vocab) : vocab_(vocab) {}

  void encode_word(std::string_view word, std::vector<TokenId>& out) {
    word_ = word;
    symbols_.clear();
    queue_ = {};
    if (emit_whole_word(out)) return;
    split_characters();
    for (int i = 1; i < static_cast<int>(symbols_.size()); ++i) add_bigram(i - 1, i);
    while (!queue_.empty()) {
      const Bigram b = queue_.top();
      queue_.pop();
      Symbol& left = symbols_[b.left];
      Symbol& right = symbols_[b.right];
      if (left.n == 0 || right.n == 0 || left.n + right.n != b.size) continue;  // stale
      left.n += right.n;
      left.id = vocab_.merge_result[b.rank];  // a live bigram's texts are exactly its merge's
      right.n = 0;
      left.next = right.next;
      if (right.next >= 0) symbols_[right.next].prev = b.left;
      add_bigram(left.prev, b.left);
      add_bigram(b.left, left.next);
    }
    for (const Symbol& s : symbols_) {
      if (s.n == 0) continue;
      if (s.id != kNoToken) {
        out.push_back(s.id);
      } else {
        emit_bytes(word_.substr(s.start, s.n), out);
      }
    }
  }

 private:
  // Words that are a token themselves skip merging: with ignore_merges (Llama 3, tekken),
  // and gemma4's runs of newlines.
  bool emit_whole_word(std::vector<TokenId>& out) const {
    const bool newlines_only =
        vocab_.pre.name == "gemma4" && word_.find_first_not_of('\n') == std::string_view::npos;
    if (!vocab_.ignore_merges && !newlines_only) return false;
    const TokenId id = vocab_.find(word_);
    if (id == kNoToken) return false;
    out.push_back(id);
    return true;
  }

  void split_characters() {
    size_t offset = 0;
    int index = 0;
    while (offset < word_.size()) {
      const size_t len = std::min(unicode::sequence_length(static_cast<uint8_t>(word_[offset])),
                                  word_.size() - offset);
      const size_t start = offset;
      offset += len;
      const TokenId id = vocab_.find(word_.substr(start, len));
      symbols_.push_back({index - 1, offset == word_.size() ? -1 : index + 1, start, len, id});
      ++index;
    }
  }

  void add_bigram(int left, int right) {
    if (left == -1 || right == -1) return;
    const Symbol& l = symbols_[left];
    const Symbol& r = symbols_[right];
    const int32_t rank = vocab_.merge_rank(l.id, r.id, word_.substr(l.start, l.n),
                                           word_.substr(r.start, r.n), scratch_);
    if (rank < 0) return;
    queue_.push({left, right, rank, l.n + r.n});
  }

  // A final symbol that is not a token falls back to single-byte tokens; bytes without one
  // are dropped, as in llama.cpp.
  void emit_bytes(std::string_view piece, std::vector<TokenId>& out) const {
    static constexpr char kHex[] = "0123456789ABCDEF";
    for (char c : piece) {
      const auto b = static_cast<uint8_t>(c);
      TokenId byte_id = kNoToken;
      if (vocab_.pre.byte_encode) {
        byte_id = vocab_.find(std::string_view(&c, 1));
      } else {
        const char buf[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
        byte_id = vocab_.find(std::string_view(buf, 6));
      }
      if (byte_id != kNoToken) out.push_back(byte_id);
    }
  }

  const Vocab& vocab_;
  std::string_view word_;
  std::vector<Symbol> symbols_;
  std::priority_queue<Bigram, std::vector<Bigram>, BigramOrder> queue_;
  std::string scratch_;
};

}  // namespace

void bpe_encode(const Vocab& vocab, const RegexSplitter& splitter, std::string_view text,
                std::vector<TokenId>& out) {
  const std::vector<std::string> words = splitter.split(text, vocab.pre.byte_encode);
  BpeSession session(vocab);
  for (const std::string& word : words) session.encode_word(word, out);
}

}  // namespace hearth::tokenizer

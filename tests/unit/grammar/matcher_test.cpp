// Token-level matching (grammar.md 2.2-2.4) against a small fake vocabulary.
#include <gtest/gtest.h>

#include <memory>
#include <numeric>
#include <set>
#include <string>
#include <vector>

#include "grammar/grammar.h"

namespace hearth::grammar {
namespace {

struct Vocab {
  std::vector<std::string> pieces;
  std::set<int32_t> eog;

  std::shared_ptr<const TokenTable> table() const {
    return std::make_shared<TokenTable>(
        static_cast<int32_t>(pieces.size()), [this](int32_t id) { return pieces[id]; },
        [this](int32_t id) { return eog.contains(id); });
  }
};

std::shared_ptr<const Grammar> must_parse(std::string_view text) {
  auto g = parse(text);
  EXPECT_TRUE(g.is_ok()) << g.status().to_string();
  return g.is_ok() ? *g : nullptr;
}

// allowed() over the whole vocabulary (the trie walk), checked against allows() per token.
std::vector<int32_t> allowed_ids(const Matcher& m, int32_t n_vocab) {
  std::vector<int32_t> ids(n_vocab);
  std::iota(ids.begin(), ids.end(), 0);
  std::vector<uint8_t> out(ids.size());
  m.allowed(ids, out);
  std::vector<int32_t> result;
  for (int32_t id = 0; id < n_vocab; ++id) {
    EXPECT_EQ(out[id] != 0, m.allows(id)) << "token " << id;
    if (out[id]) result.push_back(id);
  }
  return result;
}

TEST(GrammarMatcher, MultiCodePointPiecesAndEog) {
  const Vocab vocab{{"hel", "lo", "hello", " world", "x", "", std::string("\0a", 2), "</s>",
                     "hello world!", "hello world", "d"},
                    {7}};
  const auto table = vocab.table();
  Matcher m(must_parse(R"g(root ::= "hello" " world")g"), table);
  EXPECT_EQ(allowed_ids(m, 11), (std::vector<int32_t>{0, 2, 9}));  // not 8: straddles the end
  EXPECT_FALSE(m.can_end());
  ASSERT_TRUE(m.accept(0).is_ok());
  EXPECT_EQ(allowed_ids(m, 11), (std::vector<int32_t>{1}));
  EXPECT_FALSE(m.accept(4).is_ok());
  EXPECT_FALSE(m.accept(7).is_ok());  // EOG before the end
  ASSERT_TRUE(m.accept(1).is_ok());
  EXPECT_EQ(allowed_ids(m, 11), (std::vector<int32_t>{3}));
  ASSERT_TRUE(m.accept(3).is_ok());
  EXPECT_TRUE(m.can_end());
  EXPECT_EQ(allowed_ids(m, 11), (std::vector<int32_t>{7}));  // only EOG once complete
  EXPECT_TRUE(m.accept(7).is_ok());
  EXPECT_FALSE(m.accept(10).is_ok());
}

TEST(GrammarMatcher, EogAllowedAlongsideContinuations) {
  const Vocab vocab{{"a", "b", "<eos>"}, {2}};
  Matcher m(must_parse(R"g(root ::= "a" "b"?)g"), vocab.table());
  EXPECT_EQ(allowed_ids(m, 3), (std::vector<int32_t>{0}));
  ASSERT_TRUE(m.accept(0).is_ok());
  EXPECT_EQ(allowed_ids(m, 3), (std::vector<int32_t>{1, 2}));
}

TEST(GrammarMatcher, PartialUtf8AcrossTokens) {
  // U+1F600 is F0 9F 98 80; U+1F601 ends in 81.
  const Vocab vocab{{"\xf0\x9f", "\x98\x80", "!", "\xf0\x9f\x98", "\x80", "<eos>", "\xe4",
                     "\x98\x81", "\xf0\x9f\x98\x80", "\x98"},
                    {5}};
  Matcher m(must_parse(R"g(root ::= "😀" "!")g"), vocab.table());
  EXPECT_EQ(allowed_ids(m, 10), (std::vector<int32_t>{0, 3, 8}));
  ASSERT_TRUE(m.accept(0).is_ok());
  EXPECT_FALSE(m.can_end());
  EXPECT_EQ(allowed_ids(m, 10), (std::vector<int32_t>{1, 9}));
  EXPECT_FALSE(m.accept(7).is_ok());  // completes to U+1F601
  EXPECT_FALSE(m.accept(2).is_ok());  // not a continuation byte
  ASSERT_TRUE(m.accept(9).is_ok());
  EXPECT_EQ(allowed_ids(m, 10), (std::vector<int32_t>{4}));
  ASSERT_TRUE(m.accept(4).is_ok());
  EXPECT_EQ(allowed_ids(m, 10), (std::vector<int32_t>{2}));
  ASSERT_TRUE(m.accept(2).is_ok());
  EXPECT_TRUE(m.can_end());
}

TEST(GrammarMatcher, PartialCharacterNeedsAMatchingCharElement) {
  // A lead byte whose possible code points miss the class is rejected; overlong leads never fit.
  const Vocab vocab{{"\xe4", "\xe9", "\xc3", "\xc0", "\xe4\xb8"}, {}};
  Matcher m(must_parse(R"g(root ::= [一-龥])g"), vocab.table());
  // E4 -> U+4000..U+4FFF (intersects), E9 -> U+9000..U+9FFF (intersects), C3 no, C0 invalid,
  // E4 B8 -> U+4E00..U+4E3F.
  EXPECT_EQ(allowed_ids(m, 5), (std::vector<int32_t>{0, 1, 4}));
  Matcher tail(must_parse(R"g(root ::= "a" [\u4E40-\u4E50])g"), vocab.table());
  ASSERT_TRUE(tail.accept_text("a").is_ok());
  EXPECT_EQ(allowed_ids(tail, 5), (std::vector<int32_t>{0}));  // E4 B8 only reaches U+4E3F
}

TEST(GrammarMatcher, TokenElements) {
  const Vocab vocab{{"a", "b", "c", "<eos>", "x", "zzz", "", "\xff"}, {3}};
  const auto table = vocab.table();
  Matcher m(must_parse(R"g(root ::= <[5]> "a" !<[5]>)g"), table);
  EXPECT_EQ(allowed_ids(m, 8), (std::vector<int32_t>{5}));  // matched by id, not by text
  EXPECT_FALSE(m.accept(4).is_ok());
  ASSERT_TRUE(m.accept(5).is_ok());
  EXPECT_EQ(allowed_ids(m, 8), (std::vector<int32_t>{0}));
  ASSERT_TRUE(m.accept(0).is_ok());
  // Any token except 5; never EOG, an empty piece or invalid UTF-8.
  EXPECT_EQ(allowed_ids(m, 8), (std::vector<int32_t>{0, 1, 2, 4}));
  EXPECT_FALSE(m.accept(5).is_ok());
  ASSERT_TRUE(m.accept(2).is_ok());
  EXPECT_TRUE(m.can_end());
}

TEST(GrammarMatcher, TokenElementAfterPartlyConsumedPiece) {
  // "ab" cannot match "a" and then the token element: tokens match whole.
  const Vocab vocab{{"a", "b", "ab"}, {}};
  Matcher m(must_parse(R"g(root ::= "a" <[1]>)g"), vocab.table());
  EXPECT_EQ(allowed_ids(m, 3), (std::vector<int32_t>{0}));
  ASSERT_TRUE(m.accept(0).is_ok());
  EXPECT_EQ(allowed_ids(m, 3), (std::vector<int32_t>{1}));
}

TEST(GrammarMatcher, TwoNegatedTokensAllowEverything) {
  const Vocab vocab{{"a", "b", "c"}, {}};
  Matcher m(must_parse(R"g(root ::= !<[0]> | !<[1]>)g"), vocab.table());
  EXPECT_EQ(allowed_ids(m, 3), (std::vector<int32_t>{0, 1, 2}));
}

TEST(GrammarMatcher, FailedAcceptLeavesStateUnchanged) {
  const Vocab vocab{{"a", "b", "c"}, {}};
  Matcher m(must_parse(R"g(root ::= "ab")g"), vocab.table());
  ASSERT_TRUE(m.accept(0).is_ok());
  auto status = m.accept(2);
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_FALSE(m.accept_text("x").is_ok());
  EXPECT_FALSE(m.accept_text("\xff").is_ok());
  EXPECT_EQ(allowed_ids(m, 3), (std::vector<int32_t>{1}));
  EXPECT_TRUE(m.accept(1).is_ok());
  EXPECT_TRUE(m.can_end());
}

TEST(GrammarMatcher, OutOfRangeIdsAndTextOnlyMatchers) {
  const Vocab vocab{{"a"}, {}};
  Matcher m(must_parse(R"g(root ::= "a")g"), vocab.table());
  EXPECT_FALSE(m.allows(-1));
  EXPECT_FALSE(m.allows(1));
  EXPECT_FALSE(m.accept(1).is_ok());
  const std::vector<int32_t> ids{-5, 0, 99};
  std::vector<uint8_t> out(3, 7);
  m.allowed(ids, out);
  EXPECT_EQ(out, (std::vector<uint8_t>{0, 1, 0}));

  Matcher text_only(must_parse(R"g(root ::= "a")g"), nullptr);
  EXPECT_FALSE(text_only.allows(0));
  EXPECT_FALSE(text_only.accept(0).is_ok());
  EXPECT_TRUE(text_only.accept_text("a").is_ok());
  EXPECT_TRUE(text_only.can_end());
}

// A vocabulary of all short substrings of some sentences plus single bytes; walking a JSON
// sentence token by token, the trie walk and the per-token check must agree at every step.
TEST(GrammarMatcher, TrieWalkAgreesWithPerTokenChecks) {
  const std::string sentence =
      "{\"name\": \"caf\xc3\xa9 \xf0\x9f\x98\x80\", \"n\": [1, -2.5e3, true], \"o\": {}}";
  std::set<std::string> pieces;
  for (size_t i = 0; i < sentence.size(); ++i) {
    for (size_t len = 1; len <= 4 && i + len <= sentence.size(); ++len) {
      pieces.insert(sentence.substr(i, len));
    }
  }
  for (int b = 1; b < 256; ++b) pieces.insert(std::string(1, static_cast<char>(b)));
  Vocab vocab{{pieces.begin(), pieces.end()}, {}};
  vocab.pieces.push_back("<eos>");
  vocab.eog.insert(static_cast<int32_t>(vocab.pieces.size() - 1));
  const auto n = static_cast<int32_t>(vocab.pieces.size());
  auto g = must_parse(R"g(
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9]+)? ws
ws ::= | " " | "\n" [ \t]{0,20}
)g");
  Matcher m(g, vocab.table());
  // Tokenize the sentence greedily with pieces of 3 bytes (splitting UTF-8 characters).
  size_t at = 0;
  while (at < sentence.size()) {
    const std::string piece = sentence.substr(at, 3);
    const auto id = static_cast<int32_t>(std::distance(pieces.begin(), pieces.find(piece)));
    const std::vector<int32_t> allowed = allowed_ids(m, n);
    ASSERT_TRUE(std::binary_search(allowed.begin(), allowed.end(), id)) << "at " << at;
    ASSERT_TRUE(m.accept(id).is_ok()) << "at " << at;
    at += piece.size();
  }
  EXPECT_TRUE(m.can_end());
  EXPECT_TRUE(m.allows(n - 1));
}

// A token refused only because checking it passed the stack limit is reported as an
// overflow, so the sampler can say the grammar is too large instead of blaming the request's
// other fields; a token refused by the grammar itself is not.
TEST(GrammarMatcher, RefusalsAtTheStackLimitAreReportedAsOverflow) {
  // After "{" every one of 12 alternatives is alive: more than a limit of 8 stacks.
  std::string gbnf = "root ::= \"{\" x\nx ::= ";
  for (int i = 0; i < 12; ++i) gbnf += (i ? " | " : "") + std::string("\"") + char('a' + i) + "\"";
  const Vocab vocab{{"{", "{a", "x"}, {}};
  Limits limits;
  limits.max_stacks = 8;
  Matcher small(must_parse(gbnf), vocab.table(), limits);
  ASSERT_TRUE(small.status().is_ok());
  EXPECT_FALSE(small.allows(0));
  EXPECT_TRUE(small.overflowed());
  Matcher roomy(must_parse(gbnf), vocab.table());
  EXPECT_TRUE(roomy.allows(0));
  EXPECT_FALSE(roomy.allows(2));  // "x" is refused by the grammar, not by a limit
  EXPECT_FALSE(roomy.overflowed());
  EXPECT_EQ(roomy.max_stacks(), Limits{}.max_stacks);
}

}  // namespace
}  // namespace hearth::grammar

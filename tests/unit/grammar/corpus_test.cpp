// A corpus of grammars, each with sentences it must accept and strings it must reject.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "grammar/grammar.h"

namespace hearth::grammar {
namespace {

struct Case {
  const char* name;
  const char* gbnf;
  std::vector<std::string> accept;
  std::vector<std::string> reject;
};

const char* const kJson = R"g(
root   ::= object
value  ::= object | array | string | number | ("true" | "false" | "null") ws
object ::= "{" ws ( string ":" ws value ("," ws string ":" ws value)* )? "}" ws
array  ::= "[" ws ( value ("," ws value)* )? "]" ws
string ::= "\"" ( [^"\\\x7F\x00-\x1F] | "\\" (["\\bfnrt] | "u" [0-9a-fA-F]{4}) )* "\"" ws
number ::= ("-"? ([0-9] | [1-9] [0-9]{0,15})) ("." [0-9]+)? ([eE] [-+]? [0-9] [1-9]{0,15})? ws
ws ::= | " " | "\n" [ \t]{0,20}
)g";

const char* const kArithmetic = R"g(
root  ::= expr
expr  ::= term (("+" | "-") term)*
term  ::= factor (("*" | "/") factor)*
factor ::= number | "(" expr ")" | "-" factor
number ::= [0-9]+
)g";

const std::vector<Case>& corpus() {
  static const std::vector<Case> cases = {
      {"json",
       kJson,
       {"{}", "{\"a\":1}", "{\"a\": [1, 2.5, -3e+7, true, null], \"b\": {\"c\": \"\\u00e9x\"}}",
        "{\"k\": \"caf\xc3\xa9 \xe4\xb8\xad\"}\n"},
       {"", "[]", "{", "{\"a\"}", "{\"a\":01}", "{\"a\":1,}", "{'a':1}", "{\"a\":\"\x01\"}"}},
      {"arithmetic",
       kArithmetic,
       {"1", "1+2*3", "(1+2)*3", "-(4/2)-7", "((((1))))"},
       {"", "1+", "(1", "1)", "1++2", "a"}},
      {"list",
       R"g(root ::= item ("," " "? item)*
item ::= [a-z]+)g",
       {"a", "a,b", "apple, banana,cherry"},
       {"", ",", "a,", "a,,b", "a, ,b", "A"}},
      {"c-identifier",
       R"g(root ::= [a-zA-Z_] [a-zA-Z0-9_]*)g",
       {"x", "_tmp", "camelCase99", "__"},
       {"", "9lives", "has space", "dash-ed"}},
      {"nested-repetitions",
       R"g(root ::= ("a"{1,2} "b"?){2,3} "!")g",
       {"aa!", "abab!", "aabaab!", "aaa!", "aaaaaa!"},
       {"a!", "!", "aaaaaaa!", "abababab!", "abbaa!"}},
      {"latin1-class",
       R"g(root ::= [À-ÿ]+)g",
       {"\xc3\x80", "\xc3\xa9\xc3\xbf", "\xc3\x9f"},
       {"", "a", "\xc4\x80", "\xc3\xa9z"}},
      {"cjk-range",
       R"g(root ::= [一-鿿]{2,4})g",
       {"\xe4\xb8\xad\xe6\x96\x87", "\xe6\xbc\xa2\xe5\xad\x97\xe6\xbc\xa2\xe5\xad\x97"},
       {"\xe4\xb8\xad", "ab", "\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad\xe6\x96\x87\xe4\xb8\xad"}},
      {"emoji-escapes",
       R"g(root ::= "\U0001F600" [\U0001F300-\U0001F5FF]?)g",
       {"\xf0\x9f\x98\x80", "\xf0\x9f\x98\x80\xf0\x9f\x8c\x8d"},
       {"\xf0\x9f\x98", "\xf0\x9f\x98\x80\xf0\x9f\x98\x80", ":)"}},
      {"alternation-with-empty",
       R"g(root ::= "a" opt "c"
opt ::= "b" | )g",
       {"ac", "abc"},
       {"abbc", "a", "bc"}},
      {"empty-alternative-first",
       R"g(root ::= ( | "x" | "yy") "z")g",
       {"z", "xz", "yyz"},
       {"yz", "xxz", ""}},
      {"negated-class",
       R"g(root ::= "\"" [^"\n]* "\"")g",
       {"\"\"", "\"hello world\"", "\"\xe2\x82\xac\""},
       {"\"a\"b\"", "\"a\nb\"", "\"open"}},
      {"any-char",
       R"g(root ::= "<" . . ">")g",
       {"<ab>", "<\n\t>", "<\xe2\x82\xac\xf0\x9f\x98\x80>"},
       {"<a>", "<abc>"}},
      {"balanced-parens",
       R"g(root ::= pair*
pair ::= "(" root ")")g",
       {"", "()", "(())()", "((()()))"},
       {"(", ")(", "(()", "())"}},
      {"keywords",
       R"g(root ::= ("if" | "else" | "elif" | "end") (" " root)?)g",
       {"if", "if else", "elif end if"},
       {"els", "if  else", "iff", ""}},
      {"exact-count",
       R"g(root ::= [0-9]{3} "-" [0-9]{4})g",
       {"555-1234"},
       {"55-1234", "5555-1234", "555-123", "555 1234"}},
      {"bounded-range", R"g(root ::= "x"{2,5})g", {"xx", "xxx", "xxxxx"}, {"x", "xxxxxx", ""}},
      {"ambiguous",
       R"g(root ::= ("a" | "a" | "a")* "b")g",
       {"b", "ab", "aaaaab"},
       {"", "aaaa", "ba"}},
      {"right-recursive",
       R"g(root ::= "x" root | "y")g",
       {"y", "xy", "xxxxxxxxy"},
       {"x", "yx", ""}},
      {"csv-row",
       R"g(root ::= field ("," field)* "\n"
field ::= [^,\n"]* | "\"" ([^"] | "\"\"")* "\"")g",
       {"a,b,c\n", ",,\n", "\"q,\"\"x\"\"\",2\n", "\n"},
       {"a,b", "\"open,\n", "a\"b\n,"}},
      {"date",
       R"g(root ::= year "-" month "-" day
year ::= [0-9]{4}
month ::= "0" [1-9] | "1" [0-2]
day ::= "0" [1-9] | [12] [0-9] | "3" [01])g",
       {"2024-01-31", "1999-12-09"},
       {"2024-13-01", "2024-00-10", "2024-1-01", "2024-01-32"}},
      {"boolean-expr",
       R"g(root ::= or
or ::= and (" or " and)*
and ::= atom (" and " atom)*
atom ::= "true" | "false" | "not " atom | "(" or ")")g",
       {"true", "not false and true", "(true or false) and not (false)"},
       {"true or", "and true", "truefalse"}},
      {"nested-groups",
       R"g(root ::= ((("a" | "b") ("c" | "d"))+ ("e" | ))?)g",
       {"", "ac", "bdace", "ade"},
       {"a", "e", "acee"}},
      {"escapes-in-class", R"g(root ::= [\[\]\\-]+)g", {"[", "]\\", "-[]"}, {"a", ""}},
      {"dashes-in-class", R"g(root ::= [-a]+ [a-]+)g", {"-a", "a-", "--aa"}, {"b", "-"}},
  };
  return cases;
}

TEST(GrammarCorpus, AcceptsAndRejects) {
  ASSERT_GE(corpus().size(), 20u);
  for (const Case& c : corpus()) {
    SCOPED_TRACE(c.name);
    auto g = parse(c.gbnf);
    ASSERT_TRUE(g.is_ok()) << g.status().to_string();
    for (const std::string& text : c.accept) EXPECT_TRUE(accepts(*g, text)) << "'" << text << "'";
    for (const std::string& text : c.reject) EXPECT_FALSE(accepts(*g, text)) << "'" << text << "'";
  }
}

// Feeding the same text in every possible split (including inside UTF-8 characters) must
// give the same verdict as feeding it whole.
TEST(GrammarCorpus, SplitTextGivesTheSameVerdict) {
  for (const Case& c : corpus()) {
    SCOPED_TRACE(c.name);
    auto g = parse(c.gbnf);
    ASSERT_TRUE(g.is_ok());
    for (const auto* list : {&c.accept, &c.reject}) {
      for (const std::string& text : *list) {
        const bool whole = accepts(*g, text);
        for (size_t cut = 0; cut <= text.size(); ++cut) {
          Matcher m(*g, nullptr);
          const bool ok = m.accept_text(text.substr(0, cut)).is_ok() &&
                          m.accept_text(text.substr(cut)).is_ok() && m.can_end();
          EXPECT_EQ(ok, whole) << "'" << text << "' cut at " << cut;
        }
      }
    }
  }
}

}  // namespace
}  // namespace hearth::grammar

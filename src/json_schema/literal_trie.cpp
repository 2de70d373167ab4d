#include "json_schema/literal_trie.h"

#include <deque>
#include <map>

#include "json_schema/gbnf_text.h"

namespace hearth::json_schema::detail {
namespace {

struct Node {
  std::map<uint32_t, size_t> children;
  bool end = false;
};

class LiteralTrie {
 public:
  LiteralTrie(Converter& converter, std::string base)
      : converter_(converter), base_(std::move(base)), nodes_(1) {}

  void insert(const std::string& text) {
    size_t node = 0;
    for (uint32_t cp : decode_utf8(text)) {
      auto [it, added] = nodes_[node].children.emplace(cp, nodes_.size());
      if (added) nodes_.emplace_back();
      node = it->second;
    }
    nodes_[node].end = true;
  }

  std::string emit() {
    std::string out = node(0, 0);
    while (!pending_.empty()) {
      auto [index, name] = pending_.front();
      pending_.pop_front();
      converter_.define_rule(name, Built{node(index, 0), false, {}});
    }
    return out;
  }

 private:
  static constexpr int kInlineDepth = 24;

  std::string node(size_t index, int depth) {
    std::string alts;
    for (const auto& [first, child] : nodes_[index].children) {
      // Chains without branching become one literal.
      std::string run;
      append_utf8(run, first);
      size_t n = child;
      while (nodes_[n].children.size() == 1 && !nodes_[n].end) {
        append_utf8(run, nodes_[n].children.begin()->first);
        n = nodes_[n].children.begin()->second;
      }
      std::string alt = gbnf_literal(run);
      if (!nodes_[n].children.empty()) {
        if (depth + 1 >= kInlineDepth) {
          const std::string name =
              converter_.reserve_rule(base_ + "-" + std::to_string(++spilled_));
          pending_.emplace_back(n, name);
          alt += " " + name;
        } else {
          alt += " " + node(n, depth + 1);
        }
      }
      alts += (alts.empty() ? "" : " | ") + alt;
    }
    if (nodes_[index].end) alts += " | ";
    return "(" + alts + ")";
  }

  Converter& converter_;
  std::string base_;
  std::vector<Node> nodes_;
  std::deque<std::pair<size_t, std::string>> pending_;
  int spilled_ = 0;
};

}  // namespace

std::string literal_alternation(const std::vector<std::string>& texts, Converter& converter,
                                const std::string& base) {
  LiteralTrie trie(converter, base);
  for (const auto& text : texts) trie.insert(text);
  return trie.emit();
}

}  // namespace hearth::json_schema::detail

// Jinja2's parser (parser.py) over the lexer's tokens, building the nodes of ast.h, followed by
// the checks Jinja2's compiler makes (unknown filters and tests, `break` outside a loop) and its
// scope analysis (which names a new frame starts with as undefined).
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "jinja/ast.h"
#include "jinja/lexer.h"
#include "jinja/template.h"

namespace hearth::jinja {

namespace detail {

struct Program {
  Body body;
  ScopeInfo scope;
  std::vector<std::string> names;  // by NameId
  std::unordered_map<std::string, NameId> name_ids;
  NameId loop_id = 0;
  // Builtin globals (range, namespace, ...) for the names the template mentions.
  std::vector<std::pair<NameId, Value>> builtin_globals;

  NameId intern(std::string_view name);
};

}  // namespace detail

// Parses and checks a whole template. Errors: kInvalidArgument "line L, column C: <reason>";
// kResourceExhausted when nesting exceeds options.max_nesting.
Status parse_program(std::string_view source, const ParseOptions& options,
                     detail::Program& program);

// The compile-time pass (parser_scopes.cpp): scope analysis and Jinja2's compiler checks.
Status analyze_program(detail::Program& program);

// The builtin global functions by name (globals.cpp); undefined for other names.
Value builtin_global(std::string_view name);

class Parser {
 public:
  Parser(std::vector<Token> tokens, const ParseOptions& options, detail::Program& program)
      : tokens_(std::move(tokens)), options_(options), program_(program) {}

  Result<Body> parse_template() { return subparse(nullptr); }

 private:
  using EndTokens = std::vector<std::string_view>;

  // Token stream.
  const Token& current() const { return tokens_[index_]; }
  const Token& look() const;
  const Token& advance();  // returns the token it moves past
  bool at_operator(std::string_view op) const { return current().is_operator(op); }
  bool at_name(std::string_view name) const { return current().is_name(name); }
  bool skip_operator(std::string_view op);
  bool skip_name(std::string_view name);
  Status expect_operator(std::string_view op);
  Status expect_type(TokenType type);
  Result<std::string> expect_name(std::string_view name = {});
  Status expected_error(const std::string& expected) const;
  Status fail(SourcePos pos, std::string reason) const;
  Status fail_unknown_tag(const std::string& name, SourcePos pos) const;
  Status fail_eof(const EndTokens* end_tokens, SourcePos pos) const;
  // Sets node.depth from its children's; an error beyond ParseOptions::max_nesting.
  Status check_depth(Expr& node, std::initializer_list<const Expr*> children) const;
  Status finish_depth(Expr& node, int child_depth) const;

  // Statements (parser.cpp).
  Result<Body> subparse(const EndTokens* end_tokens);
  Result<Body> parse_statements(const EndTokens& end_tokens, bool drop_needle);
  Result<Body> parse_statement();
  Result<StmtPtr> parse_set();
  Result<StmtPtr> parse_for();
  Result<StmtPtr> parse_if();
  Result<StmtPtr> parse_with();
  Result<StmtPtr> parse_macro();
  Result<StmtPtr> parse_call_block();
  Result<StmtPtr> parse_filter_block();
  Result<Body> parse_print();
  Result<StmtPtr> parse_generation();
  Status parse_signature(MacroDef& def);
  Result<Target> parse_assign_target(const EndTokens* extra_end_rules, bool name_only);
  Result<Target> expr_to_target(const Expr& expr);

  // Expressions (parser_expr.cpp).
  Result<ExprPtr> parse_expression(bool with_condexpr = true);
  Result<ExprPtr> parse_condexpr();
  Result<ExprPtr> parse_or();
  Result<ExprPtr> parse_and();
  Result<ExprPtr> parse_not();
  Result<ExprPtr> parse_compare();
  Result<ExprPtr> parse_math1();
  Result<ExprPtr> parse_concat();
  Result<ExprPtr> parse_math2();
  Result<ExprPtr> parse_pow();
  Result<ExprPtr> parse_unary(bool with_filter);
  Result<ExprPtr> parse_primary();
  Result<ExprPtr> parse_tuple(bool simplified, bool with_condexpr, const EndTokens* extra_end_rules,
                              bool explicit_parentheses);
  Result<ExprPtr> parse_list();
  Result<ExprPtr> parse_dict();
  Result<ExprPtr> parse_postfix(ExprPtr node);
  Result<ExprPtr> parse_filter_expr(ExprPtr node);
  Result<ExprPtr> parse_subscript(ExprPtr node);
  Result<ExprPtr> parse_subscribed();
  Status parse_call_args(CallArgsExpr& args);
  Result<ExprPtr> parse_call(ExprPtr node);
  Result<ExprPtr> parse_filter(ExprPtr node, bool start_inline);
  Result<ExprPtr> parse_test(ExprPtr node);
  Result<std::string> parse_dotted_name();
  bool is_tuple_end(const EndTokens* extra_end_rules) const;
  ExprPtr make_name(SourcePos pos, const std::string& name);

  // Recursion guard for nested parentheses, unary operators and blocks.
  class DepthGuard {
   public:
    explicit DepthGuard(Parser& parser) : parser_(parser) { ++parser_.recursion_; }
    ~DepthGuard() { --parser_.recursion_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;
    Status check() const;

   private:
    Parser& parser_;
  };

  std::vector<Token> tokens_;
  size_t index_ = 0;
  const ParseOptions& options_;
  detail::Program& program_;
  int recursion_ = 0;
  std::vector<std::string> tag_stack_;
  std::vector<const EndTokens*> end_token_stack_;
};

}  // namespace hearth::jinja

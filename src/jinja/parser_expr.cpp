// Expression parsing with Jinja2's precedence, from lowest to highest: inline if, or, and,
// not, comparisons (in, not in), + -, ~, * / // %, **, unary - +, then postfix .attr [item]
// (call) and filters/tests.
#include <algorithm>

#include "jinja/parser.h"

namespace hearth::jinja {

ExprPtr Parser::make_name(SourcePos pos, const std::string& name) {
  const NameId id = program_.intern(name);
  return std::make_unique<NameExpr>(pos, id, Value::undefined("'" + name + "' is undefined"));
}

Result<ExprPtr> Parser::parse_expression(bool with_condexpr) {
  if (with_condexpr) return parse_condexpr();
  return parse_or();
}

Result<ExprPtr> Parser::parse_condexpr() {
  const SourcePos pos = current().pos;
  HEARTH_ASSIGN_OR_RETURN(ExprPtr expr, parse_or());
  while (skip_name("if")) {
    HEARTH_ASSIGN_OR_RETURN(ExprPtr test, parse_or());
    ExprPtr otherwise;
    if (skip_name("else")) {
      DepthGuard guard(*this);
      HEARTH_RETURN_IF_ERROR(guard.check());
      HEARTH_ASSIGN_OR_RETURN(otherwise, parse_condexpr());
    }
    Value missing =
        Value::undefined("the inline if-expression on line " + std::to_string(pos.line) +
                         " evaluated to false and no else section was defined.");
    auto node = std::make_unique<CondExpr>(pos, std::move(test), std::move(expr),
                                           std::move(otherwise), std::move(missing));
    HEARTH_RETURN_IF_ERROR(
        check_depth(*node, {node->test.get(), node->then_expr.get(), node->else_expr.get()}));
    expr = std::move(node);
  }
  return expr;
}

Result<ExprPtr> Parser::parse_or() {
  HEARTH_ASSIGN_OR_RETURN(ExprPtr left, parse_and());
  while (at_name("or")) {
    const SourcePos pos = advance().pos;
    HEARTH_ASSIGN_OR_RETURN(ExprPtr right, parse_and());
    auto node = std::make_unique<LogicalExpr>(pos, false, std::move(left), std::move(right));
    HEARTH_RETURN_IF_ERROR(check_depth(*node, {node->left.get(), node->right.get()}));
    left = std::move(node);
  }
  return left;
}

Result<ExprPtr> Parser::parse_and() {
  HEARTH_ASSIGN_OR_RETURN(ExprPtr left, parse_not());
  while (at_name("and")) {
    const SourcePos pos = advance().pos;
    HEARTH_ASSIGN_OR_RETURN(ExprPtr right, parse_not());
    auto node = std::make_unique<LogicalExpr>(pos, true, std::move(left), std::move(right));
    HEARTH_RETURN_IF_ERROR(check_depth(*node, {node->left.get(), node->right.get()}));
    left = std::move(node);
  }
  return left;
}

Result<ExprPtr> Parser::parse_not() {
  if (!at_name("not")) return parse_compare();
  const SourcePos pos = advance().pos;
  DepthGuard guard(*this);
  HEARTH_RETURN_IF_ERROR(guard.check());
  HEARTH_ASSIGN_OR_RETURN(ExprPtr operand, parse_not());
  auto node = std::make_unique<UnaryExpr>(pos, UnaryOp::kNot, std::move(operand));
  HEARTH_RETURN_IF_ERROR(check_depth(*node, {node->operand.get()}));
  return ExprPtr(std::move(node));
}

Result<ExprPtr> Parser::parse_compare() {
  const SourcePos pos = current().pos;
  HEARTH_ASSIGN_OR_RETURN(ExprPtr expr, parse_math1());
  std::unique_ptr<CompareExpr> node;
  while (true) {
    const Token& token = current();
    CompareOp op;
    if (token.type == TokenType::kOperator &&
        (token.text == "==" || token.text == "!=" || token.text == "<" || token.text == "<=" ||
         token.text == ">" || token.text == ">=")) {
      op = token.text == "=="   ? CompareOp::kEq
           : token.text == "!=" ? CompareOp::kNe
           : token.text == "<"  ? CompareOp::kLt
           : token.text == "<=" ? CompareOp::kLe
           : token.text == ">"  ? CompareOp::kGt
                                : CompareOp::kGe;
      advance();
    } else if (token.is_name("in")) {
      op = CompareOp::kIn;
      advance();
    } else if (token.is_name("not") && look().is_name("in")) {
      op = CompareOp::kNotIn;
      advance();
      advance();
    } else {
      break;
    }
    HEARTH_ASSIGN_OR_RETURN(ExprPtr operand, parse_math1());
    if (node == nullptr) node = std::make_unique<CompareExpr>(pos, std::move(expr));
    node->rest.push_back({op, std::move(operand), token.pos});
    int depth = node->first->depth;
    for (const auto& item : node->rest) depth = std::max(depth, item.expr->depth);
    HEARTH_RETURN_IF_ERROR(finish_depth(*node, depth));
  }
  if (node == nullptr) return expr;
  return ExprPtr(std::move(node));
}

Result<ExprPtr> Parser::parse_math1() {
  HEARTH_ASSIGN_OR_RETURN(ExprPtr left, parse_concat());
  while (at_operator("+") || at_operator("-")) {
    const Token& token = advance();
    const BinaryOp op = token.text == "+" ? BinaryOp::kAdd : BinaryOp::kSub;
    HEARTH_ASSIGN_OR_RETURN(ExprPtr right, parse_concat());
    auto node = std::make_unique<BinaryExpr>(token.pos, op, std::move(left), std::move(right));
    HEARTH_RETURN_IF_ERROR(check_depth(*node, {node->left.get(), node->right.get()}));
    left = std::move(node);
  }
  return left;
}

Result<ExprPtr> Parser::parse_concat() {
  const SourcePos pos = current().pos;
  HEARTH_ASSIGN_OR_RETURN(ExprPtr first, parse_math2());
  if (!at_operator("~")) return first;
  auto node = std::make_unique<ConcatExpr>(pos);
  node->parts.push_back(std::move(first));
  while (skip_operator("~")) {
    HEARTH_ASSIGN_OR_RETURN(ExprPtr part, parse_math2());
    node->parts.push_back(std::move(part));
  }
  int depth = 0;
  for (const auto& part : node->parts) depth = std::max(depth, part->depth);
  HEARTH_RETURN_IF_ERROR(finish_depth(*node, depth));
  return ExprPtr(std::move(node));
}

Result<ExprPtr> Parser::parse_math2() {
  HEARTH_ASSIGN_OR_RETURN(ExprPtr left, parse_pow());
  while (at_operator("*") || at_operator("/") || at_operator("//") || at_operator("%")) {
    const Token& token = advance();
    const BinaryOp op = token.text == "*"    ? BinaryOp::kMul
                        : token.text == "/"  ? BinaryOp::kDiv
                        : token.text == "//" ? BinaryOp::kFloorDiv
                                             : BinaryOp::kMod;
    HEARTH_ASSIGN_OR_RETURN(ExprPtr right, parse_pow());
    auto node = std::make_unique<BinaryExpr>(token.pos, op, std::move(left), std::move(right));
    HEARTH_RETURN_IF_ERROR(check_depth(*node, {node->left.get(), node->right.get()}));
    left = std::move(node);
  }
  return left;
}

Result<ExprPtr> Parser::parse_pow() {
  HEARTH_ASSIGN_OR_RETURN(ExprPtr left, parse_unary(true));
  while (at_operator("**")) {  // left-associative in Jinja2: 2**3**2 == 64
    const Token& token = advance();
    HEARTH_ASSIGN_OR_RETURN(ExprPtr right, parse_unary(true));
    auto node =
        std::make_unique<BinaryExpr>(token.pos, BinaryOp::kPow, std::move(left), std::move(right));
    HEARTH_RETURN_IF_ERROR(check_depth(*node, {node->left.get(), node->right.get()}));
    left = std::move(node);
  }
  return left;
}

Result<ExprPtr> Parser::parse_unary(bool with_filter) {
  ExprPtr node;
  if (at_operator("-") || at_operator("+")) {
    const Token& token = advance();
    DepthGuard guard(*this);
    HEARTH_RETURN_IF_ERROR(guard.check());
    HEARTH_ASSIGN_OR_RETURN(ExprPtr operand, parse_unary(false));
    auto unary = std::make_unique<UnaryExpr>(
        token.pos, token.text == "-" ? UnaryOp::kNeg : UnaryOp::kPos, std::move(operand));
    HEARTH_RETURN_IF_ERROR(check_depth(*unary, {unary->operand.get()}));
    node = std::move(unary);
  } else {
    HEARTH_ASSIGN_OR_RETURN(node, parse_primary());
  }
  HEARTH_ASSIGN_OR_RETURN(node, parse_postfix(std::move(node)));
  if (with_filter) {
    HEARTH_ASSIGN_OR_RETURN(node, parse_filter_expr(std::move(node)));
  }
  return node;
}

Result<ExprPtr> Parser::parse_primary() {
  const Token& token = current();
  switch (token.type) {
    case TokenType::kName: {
      advance();
      if (token.text == "true" || token.text == "True") {
        return ExprPtr(std::make_unique<ConstExpr>(token.pos, Value(true)));
      }
      if (token.text == "false" || token.text == "False") {
        return ExprPtr(std::make_unique<ConstExpr>(token.pos, Value(false)));
      }
      if (token.text == "none" || token.text == "None") {
        return ExprPtr(std::make_unique<ConstExpr>(token.pos, Value::none()));
      }
      return make_name(token.pos, token.text);
    }
    case TokenType::kString: {
      std::string text;
      while (current().type == TokenType::kString) text += advance().text;
      return ExprPtr(std::make_unique<ConstExpr>(token.pos, Value(std::move(text))));
    }
    case TokenType::kInteger:
      advance();
      return ExprPtr(std::make_unique<ConstExpr>(token.pos, Value(token.int_value)));
    case TokenType::kFloat:
      advance();
      return ExprPtr(std::make_unique<ConstExpr>(token.pos, Value(token.float_value)));
    default:
      break;
  }
  if (token.is_operator("(") || token.is_operator("[") || token.is_operator("{")) {
    DepthGuard guard(*this);
    HEARTH_RETURN_IF_ERROR(guard.check());
    if (token.is_operator("[")) return parse_list();
    if (token.is_operator("{")) return parse_dict();
    advance();
    HEARTH_ASSIGN_OR_RETURN(ExprPtr node, parse_tuple(false, true, nullptr, true));
    HEARTH_RETURN_IF_ERROR(expect_operator(")"));
    return node;
  }
  return fail(token.pos, "unexpected '" + describe_token(token) + "'");
}

bool Parser::is_tuple_end(const EndTokens* extra_end_rules) const {
  const Token& token = current();
  if (token.type == TokenType::kVariableEnd || token.type == TokenType::kBlockEnd ||
      token.is_operator(")")) {
    return true;
  }
  if (extra_end_rules == nullptr || token.type != TokenType::kName) return false;
  return std::find(extra_end_rules->begin(), extra_end_rules->end(), token.text) !=
         extra_end_rules->end();
}

Result<ExprPtr> Parser::parse_tuple(bool simplified, bool with_condexpr,
                                    const EndTokens* extra_end_rules, bool explicit_parentheses) {
  SourcePos pos = current().pos;
  std::vector<ExprPtr> items;
  bool is_tuple = false;
  while (true) {
    if (!items.empty()) HEARTH_RETURN_IF_ERROR(expect_operator(","));
    if (is_tuple_end(extra_end_rules)) break;
    Result<ExprPtr> item = simplified ? parse_primary() : parse_expression(with_condexpr);
    if (!item.is_ok()) return item.status();
    items.push_back(std::move(item).value());
    if (!at_operator(",")) break;
    is_tuple = true;
  }
  if (!is_tuple) {
    if (!items.empty()) return std::move(items.front());
    if (!explicit_parentheses) {
      return fail(current().pos, "Expected an expression, got '" + describe_token(current()) + "'");
    }
  }
  auto node = std::make_unique<ListExpr>(pos, true);
  node->items = std::move(items);
  int depth = 0;
  for (const auto& item : node->items) depth = std::max(depth, item->depth);
  HEARTH_RETURN_IF_ERROR(finish_depth(*node, depth));
  return ExprPtr(std::move(node));
}

Result<ExprPtr> Parser::parse_list() {
  auto node = std::make_unique<ListExpr>(advance().pos, false);
  int depth = 0;
  while (!at_operator("]")) {
    if (!node->items.empty()) HEARTH_RETURN_IF_ERROR(expect_operator(","));
    if (at_operator("]")) break;
    HEARTH_ASSIGN_OR_RETURN(ExprPtr item, parse_expression());
    depth = std::max(depth, item->depth);
    node->items.push_back(std::move(item));
  }
  HEARTH_RETURN_IF_ERROR(expect_operator("]"));
  HEARTH_RETURN_IF_ERROR(finish_depth(*node, depth));
  return ExprPtr(std::move(node));
}

Result<ExprPtr> Parser::parse_dict() {
  auto node = std::make_unique<DictExpr>(advance().pos);
  int depth = 0;
  while (!at_operator("}")) {
    if (!node->items.empty()) HEARTH_RETURN_IF_ERROR(expect_operator(","));
    if (at_operator("}")) break;
    HEARTH_ASSIGN_OR_RETURN(ExprPtr key, parse_expression());
    HEARTH_RETURN_IF_ERROR(expect_operator(":"));
    HEARTH_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
    depth = std::max({depth, key->depth, value->depth});
    node->items.emplace_back(std::move(key), std::move(value));
  }
  HEARTH_RETURN_IF_ERROR(expect_operator("}"));
  HEARTH_RETURN_IF_ERROR(finish_depth(*node, depth));
  return ExprPtr(std::move(node));
}

Result<ExprPtr> Parser::parse_postfix(ExprPtr node) {
  while (true) {
    if (at_operator(".") || at_operator("[")) {
      HEARTH_ASSIGN_OR_RETURN(node, parse_subscript(std::move(node)));
    } else if (at_operator("(")) {
      HEARTH_ASSIGN_OR_RETURN(node, parse_call(std::move(node)));
    } else {
      return node;
    }
  }
}

Result<ExprPtr> Parser::parse_filter_expr(ExprPtr node) {
  while (true) {
    if (at_operator("|")) {
      HEARTH_ASSIGN_OR_RETURN(node, parse_filter(std::move(node), false));
    } else if (at_name("is")) {
      HEARTH_ASSIGN_OR_RETURN(node, parse_test(std::move(node)));
    } else if (at_operator("(")) {
      HEARTH_ASSIGN_OR_RETURN(node, parse_call(std::move(node)));
    } else {
      return node;
    }
  }
}

Result<ExprPtr> Parser::parse_subscript(ExprPtr node) {
  const Token& token = advance();
  if (token.is_operator(".")) {
    const Token& attr = advance();
    if (attr.type == TokenType::kName) {
      auto result = std::make_unique<GetAttrExpr>(token.pos, std::move(node), attr.text);
      HEARTH_RETURN_IF_ERROR(check_depth(*result, {result->object.get()}));
      return ExprPtr(std::move(result));
    }
    if (attr.type != TokenType::kInteger) return fail(attr.pos, "expected name or number");
    auto key = std::make_unique<ConstExpr>(attr.pos, Value(attr.int_value));
    auto result = std::make_unique<GetItemExpr>(token.pos, std::move(node), std::move(key));
    HEARTH_RETURN_IF_ERROR(check_depth(*result, {result->object.get()}));
    return ExprPtr(std::move(result));
  }
  std::vector<ExprPtr> args;
  while (!at_operator("]")) {
    if (!args.empty()) HEARTH_RETURN_IF_ERROR(expect_operator(","));
    HEARTH_ASSIGN_OR_RETURN(ExprPtr arg, parse_subscribed());
    args.push_back(std::move(arg));
  }
  HEARTH_RETURN_IF_ERROR(expect_operator("]"));
  ExprPtr key;
  if (args.size() == 1) {
    key = std::move(args.front());
  } else {
    // Jinja2 compiles x[a:b, c] to invalid Python: a syntax error when the template loads.
    for (const auto& arg : args) {
      if (arg->kind == ExprKind::kSlice) return fail(arg->pos, "invalid syntax");
    }
    auto tuple = std::make_unique<ListExpr>(token.pos, true);
    int depth = 0;
    for (const auto& arg : args) depth = std::max(depth, arg->depth);
    tuple->items = std::move(args);
    HEARTH_RETURN_IF_ERROR(finish_depth(*tuple, depth));
    key = std::move(tuple);
  }
  auto result = std::make_unique<GetItemExpr>(token.pos, std::move(node), std::move(key));
  HEARTH_RETURN_IF_ERROR(check_depth(*result, {result->object.get(), result->key.get()}));
  return ExprPtr(std::move(result));
}

Result<ExprPtr> Parser::parse_subscribed() {
  const SourcePos pos = current().pos;
  auto slice = std::make_unique<SliceExpr>(pos);
  if (!skip_operator(":")) {
    HEARTH_ASSIGN_OR_RETURN(ExprPtr node, parse_expression());
    if (!skip_operator(":")) return node;
    slice->start = std::move(node);
  }
  if (!at_operator(":") && !at_operator("]") && !at_operator(",")) {
    HEARTH_ASSIGN_OR_RETURN(slice->stop, parse_expression());
  }
  if (skip_operator(":") && !at_operator("]") && !at_operator(",")) {
    HEARTH_ASSIGN_OR_RETURN(slice->step, parse_expression());
  }
  HEARTH_RETURN_IF_ERROR(
      check_depth(*slice, {slice->start.get(), slice->stop.get(), slice->step.get()}));
  return ExprPtr(std::move(slice));
}

Status Parser::parse_call_args(CallArgsExpr& args) {
  const SourcePos pos = current().pos;
  HEARTH_RETURN_IF_ERROR(expect_operator("("));
  bool require_comma = false;
  auto ensure = [&](bool ok) {
    return ok ? Status::ok() : fail(pos, "invalid syntax for function call expression");
  };
  while (!at_operator(")")) {
    if (require_comma) {
      HEARTH_RETURN_IF_ERROR(expect_operator(","));
      if (at_operator(")")) break;  // trailing comma
    }
    if (skip_operator("*")) {
      HEARTH_RETURN_IF_ERROR(ensure(args.star_args == nullptr && args.star_kwargs == nullptr));
      HEARTH_ASSIGN_OR_RETURN(args.star_args, parse_expression());
    } else if (skip_operator("**")) {
      HEARTH_RETURN_IF_ERROR(ensure(args.star_kwargs == nullptr));
      HEARTH_ASSIGN_OR_RETURN(args.star_kwargs, parse_expression());
    } else if (current().type == TokenType::kName && look().is_operator("=")) {
      HEARTH_RETURN_IF_ERROR(ensure(args.star_kwargs == nullptr));
      std::string key = advance().text;
      advance();
      HEARTH_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
      args.keyword.emplace_back(std::move(key), std::move(value));
    } else {
      HEARTH_RETURN_IF_ERROR(
          ensure(args.star_args == nullptr && args.star_kwargs == nullptr && args.keyword.empty()));
      HEARTH_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
      args.positional.push_back(std::move(value));
    }
    require_comma = true;
  }
  return expect_operator(")");
}

int call_args_depth(const CallArgsExpr& args) {
  int depth = 0;
  for (const auto& arg : args.positional) depth = std::max(depth, arg->depth);
  for (const auto& [key, arg] : args.keyword) depth = std::max(depth, arg->depth);
  if (args.star_args) depth = std::max(depth, args.star_args->depth);
  if (args.star_kwargs) depth = std::max(depth, args.star_kwargs->depth);
  return depth;
}

Result<ExprPtr> Parser::parse_call(ExprPtr node) {
  auto call = std::make_unique<CallExpr>(current().pos, std::move(node));
  HEARTH_RETURN_IF_ERROR(parse_call_args(call->args));
  HEARTH_RETURN_IF_ERROR(
      finish_depth(*call, std::max(call->callee->depth, call_args_depth(call->args))));
  return ExprPtr(std::move(call));
}

Result<std::string> Parser::parse_dotted_name() {
  HEARTH_ASSIGN_OR_RETURN(std::string name, expect_name());
  while (skip_operator(".")) {
    HEARTH_ASSIGN_OR_RETURN(std::string part, expect_name());
    name += "." + part;
  }
  return name;
}

Result<ExprPtr> Parser::parse_filter(ExprPtr node, bool start_inline) {
  while (at_operator("|") || start_inline) {
    if (!start_inline) advance();
    start_inline = false;
    const SourcePos pos = current().pos;
    HEARTH_ASSIGN_OR_RETURN(std::string name, parse_dotted_name());
    auto filter = std::make_unique<FilterExpr>(pos, std::move(node), std::move(name));
    filter->fn = find_filter(filter->name);
    if (at_operator("(")) HEARTH_RETURN_IF_ERROR(parse_call_args(filter->args));
    const int input_depth = filter->input ? filter->input->depth : 0;
    HEARTH_RETURN_IF_ERROR(
        finish_depth(*filter, std::max(input_depth, call_args_depth(filter->args))));
    node = std::move(filter);
  }
  return node;
}

Result<ExprPtr> Parser::parse_test(ExprPtr node) {
  const SourcePos pos = advance().pos;  // `is`
  const bool negated = skip_name("not");
  HEARTH_ASSIGN_OR_RETURN(std::string name, parse_dotted_name());
  auto test = std::make_unique<TestExpr>(pos, std::move(node), std::move(name));
  test->fn = find_test(test->name);
  const Token& token = current();
  if (token.is_operator("(")) {
    HEARTH_RETURN_IF_ERROR(parse_call_args(test->args));
  } else if ((token.type == TokenType::kName || token.type == TokenType::kString ||
              token.type == TokenType::kInteger || token.type == TokenType::kFloat ||
              token.is_operator("[") || token.is_operator("{")) &&
             !token.is_name("else") && !token.is_name("or") && !token.is_name("and")) {
    // `x is divisibleby 3`: one argument without parentheses.
    if (token.is_name("is")) return fail(token.pos, "You cannot chain multiple tests with is");
    HEARTH_ASSIGN_OR_RETURN(ExprPtr arg, parse_primary());
    HEARTH_ASSIGN_OR_RETURN(arg, parse_postfix(std::move(arg)));
    test->args.positional.push_back(std::move(arg));
  }
  HEARTH_RETURN_IF_ERROR(
      finish_depth(*test, std::max(test->input->depth, call_args_depth(test->args))));
  if (!negated) return ExprPtr(std::move(test));
  auto negation = std::make_unique<UnaryExpr>(pos, UnaryOp::kNot, std::move(test));
  HEARTH_RETURN_IF_ERROR(check_depth(*negation, {negation->operand.get()}));
  return ExprPtr(std::move(negation));
}

}  // namespace hearth::jinja

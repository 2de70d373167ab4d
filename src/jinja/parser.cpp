// Statement parsing, following Jinja2's parser.py (subparse, parse_statement and one parse_*
// method per tag), with its error messages.
#include "jinja/parser.h"

#include <algorithm>
#include <set>

namespace hearth::jinja {

NameId detail::Program::intern(std::string_view name) {
  const auto it = name_ids.find(std::string(name));
  if (it != name_ids.end()) return it->second;
  const auto id = static_cast<NameId>(names.size());
  names.emplace_back(name);
  name_ids.emplace(std::string(name), id);
  return id;
}

const Token& Parser::look() const {
  return index_ + 1 < tokens_.size() ? tokens_[index_ + 1] : tokens_.back();
}

const Token& Parser::advance() {
  const Token& token = tokens_[index_];
  if (token.type != TokenType::kEof) ++index_;
  return token;
}

bool Parser::skip_operator(std::string_view op) {
  if (!at_operator(op)) return false;
  advance();
  return true;
}

bool Parser::skip_name(std::string_view name) {
  if (!at_name(name)) return false;
  advance();
  return true;
}

Status Parser::fail(SourcePos pos, std::string reason) const {
  return Status(ErrorCode::kInvalidArgument, format_position(pos, reason));
}

Status Parser::expected_error(const std::string& expected) const {
  if (current().type == TokenType::kEof) {
    return fail(current().pos, "unexpected end of template, expected '" + expected + "'.");
  }
  return fail(current().pos,
              "expected token '" + expected + "', got '" + describe_token(current()) + "'");
}

Status Parser::expect_operator(std::string_view op) {
  if (skip_operator(op)) return Status::ok();
  return expected_error(std::string(op));
}

Status Parser::expect_type(TokenType type) {
  if (current().type == type) {
    advance();
    return Status::ok();
  }
  return expected_error(describe_token_type(type));
}

Result<std::string> Parser::expect_name(std::string_view name) {
  const Token& token = current();
  if (token.type == TokenType::kName && (name.empty() || token.text == name)) {
    advance();
    return token.text;
  }
  return expected_error(name.empty() ? "name" : std::string(name));
}

Status Parser::DepthGuard::check() const {
  if (parser_.recursion_ <= parser_.options_.max_nesting) return Status::ok();
  return Status(ErrorCode::kResourceExhausted,
                format_position(parser_.current().pos,
                                "template nested too deeply (more than " +
                                    std::to_string(parser_.options_.max_nesting) + " levels)"));
}

Status Parser::check_depth(Expr& node, std::initializer_list<const Expr*> children) const {
  int depth = 0;
  for (const Expr* child : children) {
    if (child != nullptr) depth = std::max(depth, child->depth);
  }
  return finish_depth(node, depth);
}

Status Parser::finish_depth(Expr& node, int child_depth) const {
  node.depth = child_depth + 1;
  if (node.depth <= options_.max_nesting) return Status::ok();
  return Status(ErrorCode::kResourceExhausted,
                format_position(node.pos, "expression nested too deeply (more than " +
                                              std::to_string(options_.max_nesting) + " levels)"));
}

// Jinja2's _fail_ut_eof: names the tags the parser was looking for and the open block.
Status Parser::fail_unknown_tag(const std::string& name, SourcePos pos) const {
  std::set<std::string_view> expected;
  for (const EndTokens* tokens : end_token_stack_) expected.insert(tokens->begin(), tokens->end());
  std::string message =
      name.empty() ? "Unexpected end of template." : "Encountered unknown tag '" + name + "'.";
  if (!end_token_stack_.empty()) {
    std::string looking;
    for (std::string_view tag : *end_token_stack_.back()) {
      if (!looking.empty()) looking += " or ";
      looking += "'" + std::string(tag) + "'";
    }
    if (!name.empty() && expected.count(name) != 0) {
      message +=
          " You probably made a nesting mistake. Jinja is expecting this tag, but "
          "currently looking for " +
          looking + ".";
    } else {
      message += " Jinja was looking for the following tags: " + looking + ".";
    }
  }
  if (!tag_stack_.empty()) {
    message += " The innermost block that needs to be closed is '" + tag_stack_.back() + "'.";
  }
  return fail(pos, message);
}

Status Parser::fail_eof(const EndTokens* end_tokens, SourcePos pos) const {
  auto* self = const_cast<Parser*>(this);
  if (end_tokens != nullptr) self->end_token_stack_.push_back(end_tokens);
  Status status = fail_unknown_tag("", pos);
  if (end_tokens != nullptr) self->end_token_stack_.pop_back();
  return status;
}

Result<Body> Parser::subparse(const EndTokens* end_tokens) {
  if (end_tokens != nullptr) end_token_stack_.push_back(end_tokens);
  Body body;
  Status status;
  while (current().type != TokenType::kEof) {
    const Token& token = current();
    if (token.type == TokenType::kData) {
      body.push_back(std::make_unique<TextStmt>(token.pos, token.text));
      advance();
    } else if (token.type == TokenType::kVariableBegin) {
      advance();
      auto expr = parse_tuple(false, true, nullptr, false);
      if (!expr.is_ok()) {
        status = expr.status();
        break;
      }
      body.push_back(std::make_unique<OutputStmt>(token.pos, std::move(expr).value()));
      status = expect_type(TokenType::kVariableEnd);
      if (!status.is_ok()) break;
    } else {  // block begin
      advance();
      if (end_tokens != nullptr && current().type == TokenType::kName &&
          std::find(end_tokens->begin(), end_tokens->end(), current().text) != end_tokens->end()) {
        break;
      }
      auto statements = parse_statement();
      if (!statements.is_ok()) {
        status = statements.status();
        break;
      }
      for (auto& statement : statements.value()) body.push_back(std::move(statement));
      status = expect_type(TokenType::kBlockEnd);
      if (!status.is_ok()) break;
    }
  }
  if (end_tokens != nullptr) end_token_stack_.pop_back();
  if (!status.is_ok()) return status;
  return body;
}

Result<Body> Parser::parse_statements(const EndTokens& end_tokens, bool drop_needle) {
  skip_operator(":");  // Python-style `{% if x: %}` is accepted
  HEARTH_RETURN_IF_ERROR(expect_type(TokenType::kBlockEnd));
  HEARTH_ASSIGN_OR_RETURN(Body body, subparse(&end_tokens));
  if (current().type == TokenType::kEof) return fail_eof(&end_tokens, current().pos);
  if (drop_needle) advance();
  return body;
}

Result<Body> Parser::parse_statement() {
  DepthGuard guard(*this);
  HEARTH_RETURN_IF_ERROR(guard.check());
  const Token& token = current();
  if (token.type != TokenType::kName) return fail(token.pos, "tag name expected");
  const std::string tag = token.text;
  static const std::set<std::string_view> kUnsupported = {"block",  "extends", "include",
                                                          "import", "from",    "autoescape"};
  if (kUnsupported.count(tag) != 0) {
    return fail(token.pos, "the '" + tag + "' tag is not supported");
  }
  tag_stack_.push_back(tag);
  Result<StmtPtr> statement = Status(ErrorCode::kInternal, "unreachable");
  Body body;
  if (tag == "print") {
    auto printed = parse_print();
    tag_stack_.pop_back();
    return printed;
  }
  if (tag == "set") {
    statement = parse_set();
  } else if (tag == "for") {
    statement = parse_for();
  } else if (tag == "if") {
    statement = parse_if();
  } else if (tag == "with") {
    statement = parse_with();
  } else if (tag == "macro") {
    statement = parse_macro();
  } else if (tag == "call") {
    statement = parse_call_block();
  } else if (tag == "filter") {
    statement = parse_filter_block();
  } else if (tag == "generation") {
    statement = parse_generation();
  } else if (tag == "break" || tag == "continue") {
    advance();
    statement = StmtPtr(std::make_unique<LoopControlStmt>(
        tag == "break" ? StmtKind::kBreak : StmtKind::kContinue, token.pos));
  } else {
    tag_stack_.pop_back();
    return fail_unknown_tag(tag, token.pos);
  }
  tag_stack_.pop_back();
  if (!statement.is_ok()) return statement.status();
  body.push_back(std::move(statement).value());
  return body;
}

Result<StmtPtr> Parser::parse_set() {
  const SourcePos pos = advance().pos;
  NamespaceRef namespace_target;
  bool is_namespace = false;
  Target target;
  if (look().is_operator(".")) {
    namespace_target.pos = current().pos;
    HEARTH_ASSIGN_OR_RETURN(std::string name, expect_name());
    advance();  // the dot
    HEARTH_ASSIGN_OR_RETURN(namespace_target.attr, expect_name());
    namespace_target.name = program_.intern(name);
    is_namespace = true;
  } else {
    HEARTH_ASSIGN_OR_RETURN(target, parse_assign_target(nullptr, false));
  }
  if (skip_operator("=")) {
    HEARTH_ASSIGN_OR_RETURN(ExprPtr value, parse_tuple(false, true, nullptr, false));
    if (is_namespace) {
      auto node = std::make_unique<SetNamespaceAttrStmt>(pos);
      node->target = std::move(namespace_target);
      node->value = std::move(value);
      return StmtPtr(std::move(node));
    }
    auto node = std::make_unique<SetStmt>(pos);
    node->target = std::move(target);
    node->value = std::move(value);
    return StmtPtr(std::move(node));
  }
  auto node = std::make_unique<SetBlockStmt>(pos);
  node->is_namespace_attr = is_namespace;
  node->target = std::move(target);
  node->namespace_target = std::move(namespace_target);
  if (at_operator("|")) {
    HEARTH_ASSIGN_OR_RETURN(node->filter, parse_filter(nullptr, false));
  }
  static const EndTokens kEnd = {"endset"};
  HEARTH_ASSIGN_OR_RETURN(node->body, parse_statements(kEnd, true));
  return StmtPtr(std::move(node));
}

Result<StmtPtr> Parser::parse_for() {
  auto node = std::make_unique<ForStmt>(advance().pos);
  static const EndTokens kIn = {"in"};
  HEARTH_ASSIGN_OR_RETURN(node->target, parse_assign_target(&kIn, false));
  HEARTH_RETURN_IF_ERROR(expect_name("in").status());
  static const EndTokens kRecursive = {"recursive"};
  HEARTH_ASSIGN_OR_RETURN(node->iter, parse_tuple(false, false, &kRecursive, false));
  if (skip_name("if")) {
    HEARTH_ASSIGN_OR_RETURN(node->filter, parse_expression());
  }
  node->recursive = skip_name("recursive");
  static const EndTokens kBodyEnd = {"endfor", "else"};
  HEARTH_ASSIGN_OR_RETURN(node->body, parse_statements(kBodyEnd, false));
  if (advance().text != "endfor") {
    static const EndTokens kElseEnd = {"endfor"};
    HEARTH_ASSIGN_OR_RETURN(node->else_body, parse_statements(kElseEnd, true));
  }
  return StmtPtr(std::move(node));
}

Result<StmtPtr> Parser::parse_if() {
  auto result = std::make_unique<IfStmt>(advance().pos);
  IfStmt* node = result.get();
  static const EndTokens kBranchEnd = {"elif", "else", "endif"};
  static const EndTokens kElseEnd = {"endif"};
  while (true) {
    HEARTH_ASSIGN_OR_RETURN(node->test, parse_tuple(false, false, nullptr, false));
    HEARTH_ASSIGN_OR_RETURN(node->body, parse_statements(kBranchEnd, false));
    const Token& token = advance();
    if (token.text == "elif") {
      result->elifs.push_back(std::make_unique<IfStmt>(current().pos));
      node = result->elifs.back().get();
      continue;
    }
    if (token.text == "else") {
      HEARTH_ASSIGN_OR_RETURN(result->else_body, parse_statements(kElseEnd, true));
    }
    break;
  }
  return StmtPtr(std::move(result));
}

Result<StmtPtr> Parser::parse_with() {
  auto node = std::make_unique<WithStmt>(advance().pos);
  while (current().type != TokenType::kBlockEnd) {
    if (!node->targets.empty()) HEARTH_RETURN_IF_ERROR(expect_operator(","));
    HEARTH_ASSIGN_OR_RETURN(Target target, parse_assign_target(nullptr, false));
    node->targets.push_back(std::move(target));
    HEARTH_RETURN_IF_ERROR(expect_operator("="));
    HEARTH_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
    node->values.push_back(std::move(value));
  }
  static const EndTokens kEnd = {"endwith"};
  HEARTH_ASSIGN_OR_RETURN(node->body, parse_statements(kEnd, true));
  return StmtPtr(std::move(node));
}

Status Parser::parse_signature(MacroDef& def) {
  HEARTH_RETURN_IF_ERROR(expect_operator("("));
  while (!at_operator(")")) {
    if (!def.params.empty()) HEARTH_RETURN_IF_ERROR(expect_operator(","));
    HEARTH_ASSIGN_OR_RETURN(Target param, parse_assign_target(nullptr, true));
    if (skip_operator("=")) {
      HEARTH_ASSIGN_OR_RETURN(ExprPtr value, parse_expression());
      def.defaults.push_back(std::move(value));
    } else if (!def.defaults.empty()) {
      return fail(current().pos, "non-default argument follows default argument");
    }
    def.params.push_back(param.name);
    def.param_names.push_back(program_.names[param.name]);
  }
  return expect_operator(")");
}

Result<StmtPtr> Parser::parse_macro() {
  auto node = std::make_unique<MacroStmt>(advance().pos);
  HEARTH_ASSIGN_OR_RETURN(Target name, parse_assign_target(nullptr, true));
  node->name = name.name;
  node->def = std::make_unique<MacroDef>();
  node->def->name = program_.names[name.name];
  node->def->pos = node->pos;
  HEARTH_RETURN_IF_ERROR(parse_signature(*node->def));
  static const EndTokens kEnd = {"endmacro"};
  HEARTH_ASSIGN_OR_RETURN(node->def->body, parse_statements(kEnd, true));
  return StmtPtr(std::move(node));
}

Result<StmtPtr> Parser::parse_call_block() {
  auto node = std::make_unique<CallBlockStmt>(advance().pos);
  node->caller = std::make_unique<MacroDef>();
  node->caller->name = "caller";
  node->caller->pos = node->pos;
  if (at_operator("(")) HEARTH_RETURN_IF_ERROR(parse_signature(*node->caller));
  HEARTH_ASSIGN_OR_RETURN(ExprPtr call, parse_expression());
  if (call->kind != ExprKind::kCall) return fail(node->pos, "expected call");
  node->call.reset(static_cast<CallExpr*>(call.release()));
  static const EndTokens kEnd = {"endcall"};
  HEARTH_ASSIGN_OR_RETURN(node->caller->body, parse_statements(kEnd, true));
  return StmtPtr(std::move(node));
}

Result<StmtPtr> Parser::parse_filter_block() {
  auto node = std::make_unique<FilterBlockStmt>(advance().pos);
  HEARTH_ASSIGN_OR_RETURN(node->filter, parse_filter(nullptr, true));
  static const EndTokens kEnd = {"endfilter"};
  HEARTH_ASSIGN_OR_RETURN(node->body, parse_statements(kEnd, true));
  return StmtPtr(std::move(node));
}

Result<StmtPtr> Parser::parse_generation() {
  auto node = std::make_unique<GenerationStmt>(advance().pos);
  static const EndTokens kEnd = {"endgeneration"};
  HEARTH_ASSIGN_OR_RETURN(node->body, parse_statements(kEnd, true));
  return StmtPtr(std::move(node));
}

Result<Body> Parser::parse_print() {
  advance();
  Body body;
  while (current().type != TokenType::kBlockEnd) {
    if (!body.empty()) HEARTH_RETURN_IF_ERROR(expect_operator(","));
    const SourcePos pos = current().pos;
    HEARTH_ASSIGN_OR_RETURN(ExprPtr expr, parse_expression());
    body.push_back(std::make_unique<OutputStmt>(pos, std::move(expr)));
  }
  return body;
}

// Jinja2 node class names, as its "can't assign to 'x'" message spells them.
const char* node_type_name(const Expr& expr) {
  switch (expr.kind) {
    case ExprKind::kConst:
      return "const";
    case ExprKind::kName:
      return "name";
    case ExprKind::kList:
      return static_cast<const ListExpr&>(expr).is_tuple ? "tuple" : "list";
    case ExprKind::kDict:
      return "dict";
    case ExprKind::kUnary:
      return "unaryexpr";
    case ExprKind::kBinary:
      return "binexpr";
    case ExprKind::kLogical:
      return "binexpr";
    case ExprKind::kCompare:
      return "compare";
    case ExprKind::kConcat:
      return "concat";
    case ExprKind::kCondExpr:
      return "condexpr";
    case ExprKind::kGetAttr:
      return "getattr";
    case ExprKind::kGetItem:
      return "getitem";
    case ExprKind::kSlice:
      return "slice";
    case ExprKind::kCall:
      return "call";
    case ExprKind::kFilter:
      return "filter";
    case ExprKind::kTest:
      return "test";
  }
  return "expr";
}

Result<Target> Parser::expr_to_target(const Expr& expr) {
  Target target;
  target.pos = expr.pos;
  if (expr.kind == ExprKind::kName) {
    target.name = static_cast<const NameExpr&>(expr).id;
    return target;
  }
  if (expr.kind == ExprKind::kList && static_cast<const ListExpr&>(expr).is_tuple) {
    target.is_tuple = true;
    for (const auto& item : static_cast<const ListExpr&>(expr).items) {
      HEARTH_ASSIGN_OR_RETURN(Target sub, expr_to_target(*item));
      target.items.push_back(std::move(sub));
    }
    return target;
  }
  return fail(expr.pos, std::string("can't assign to '") + node_type_name(expr) + "'");
}

Result<Target> Parser::parse_assign_target(const EndTokens* extra_end_rules, bool name_only) {
  if (name_only) {
    Target target;
    target.pos = current().pos;
    HEARTH_ASSIGN_OR_RETURN(std::string name, expect_name());
    target.name = program_.intern(name);
    return target;
  }
  HEARTH_ASSIGN_OR_RETURN(ExprPtr expr, parse_tuple(true, true, extra_end_rules, false));
  return expr_to_target(*expr);
}

Status parse_program(std::string_view source, const ParseOptions& options,
                     detail::Program& program) {
  if (source.size() > options.max_source_bytes) {
    return Status(ErrorCode::kResourceExhausted,
                  "line 1, column 1: template source is " + std::to_string(source.size()) +
                      " bytes, more than the limit of " + std::to_string(options.max_source_bytes));
  }
  LexOptions lex_options;
  lex_options.trim_blocks = options.trim_blocks;
  lex_options.lstrip_blocks = options.lstrip_blocks;
  lex_options.keep_trailing_newline = options.keep_trailing_newline;
  HEARTH_ASSIGN_OR_RETURN(std::vector<Token> tokens, tokenize(source, lex_options));
  program.loop_id = program.intern("loop");
  Parser parser(std::move(tokens), options, program);
  HEARTH_ASSIGN_OR_RETURN(program.body, parser.parse_template());
  return analyze_program(program);
}

}  // namespace hearth::jinja

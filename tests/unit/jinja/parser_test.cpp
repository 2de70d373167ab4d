// The parser's trees: Jinja2's precedence and associativity, tuples without parentheses,
// subscripts and slices, call arguments, filter and test forms, statement structure, and the
// compile-time checks (unknown filters and tests, loop controls).
#include "jinja/parser.h"

#include <gtest/gtest.h>

#include <string>

namespace hearth::jinja {
namespace {

class Dumper {
 public:
  explicit Dumper(const detail::Program& program) : program_(program) {}

  std::string expr(const Expr* e) const {
    if (e == nullptr) return "_";
    switch (e->kind) {
      case ExprKind::kConst:
        return repr(static_cast<const ConstExpr*>(e)->value);
      case ExprKind::kName:
        return program_.names[static_cast<const NameExpr*>(e)->id];
      case ExprKind::kList: {
        const auto* node = static_cast<const ListExpr*>(e);
        return list(node->is_tuple ? "(tuple" : "(list", node->items);
      }
      case ExprKind::kDict: {
        std::string out = "(dict";
        for (const auto& [key, value] : static_cast<const DictExpr*>(e)->items) {
          out += " " + expr(key.get()) + ":" + expr(value.get());
        }
        return out + ")";
      }
      case ExprKind::kUnary: {
        const auto* node = static_cast<const UnaryExpr*>(e);
        const char* op = node->op == UnaryOp::kNeg   ? "neg"
                         : node->op == UnaryOp::kPos ? "pos"
                                                     : "not";
        return std::string("(") + op + " " + expr(node->operand.get()) + ")";
      }
      case ExprKind::kBinary: {
        static const char* const kOps[] = {"+", "-", "*", "/", "//", "%", "**"};
        const auto* node = static_cast<const BinaryExpr*>(e);
        return std::string("(") + kOps[static_cast<int>(node->op)] + " " + expr(node->left.get()) +
               " " + expr(node->right.get()) + ")";
      }
      case ExprKind::kLogical: {
        const auto* node = static_cast<const LogicalExpr*>(e);
        return std::string(node->is_and ? "(and " : "(or ") + expr(node->left.get()) + " " +
               expr(node->right.get()) + ")";
      }
      case ExprKind::kCompare: {
        static const char* const kOps[] = {"==", "!=", "<", "<=", ">", ">=", "in", "notin"};
        const auto* node = static_cast<const CompareExpr*>(e);
        std::string out = "(cmp " + expr(node->first.get());
        for (const auto& operand : node->rest) {
          out += std::string(" ") + kOps[static_cast<int>(operand.op)] + " " +
                 expr(operand.expr.get());
        }
        return out + ")";
      }
      case ExprKind::kConcat:
        return list("(~", static_cast<const ConcatExpr*>(e)->parts);
      case ExprKind::kCondExpr: {
        const auto* node = static_cast<const CondExpr*>(e);
        return "(if " + expr(node->test.get()) + " " + expr(node->then_expr.get()) + " " +
               expr(node->else_expr.get()) + ")";
      }
      case ExprKind::kGetAttr: {
        const auto* node = static_cast<const GetAttrExpr*>(e);
        return "(. " + expr(node->object.get()) + " " + node->name + ")";
      }
      case ExprKind::kGetItem: {
        const auto* node = static_cast<const GetItemExpr*>(e);
        return "([] " + expr(node->object.get()) + " " + expr(node->key.get()) + ")";
      }
      case ExprKind::kSlice: {
        const auto* node = static_cast<const SliceExpr*>(e);
        return "(: " + expr(node->start.get()) + " " + expr(node->stop.get()) + " " +
               expr(node->step.get()) + ")";
      }
      case ExprKind::kCall: {
        const auto* node = static_cast<const CallExpr*>(e);
        return "(call " + expr(node->callee.get()) + args(node->args) + ")";
      }
      case ExprKind::kFilter: {
        const auto* node = static_cast<const FilterExpr*>(e);
        return "(|" + node->name + " " + expr(node->input.get()) + args(node->args) + ")";
      }
      case ExprKind::kTest: {
        const auto* node = static_cast<const TestExpr*>(e);
        return "(is-" + node->name + " " + expr(node->input.get()) + args(node->args) + ")";
      }
    }
    return "?";
  }

 private:
  std::string list(const char* head, const std::vector<ExprPtr>& items) const {
    std::string out = head;
    for (const auto& item : items) out += " " + expr(item.get());
    return out + ")";
  }
  std::string args(const CallArgsExpr& a) const {
    std::string out;
    for (const auto& arg : a.positional) out += " " + expr(arg.get());
    for (const auto& [key, arg] : a.keyword) out += " " + key + "=" + expr(arg.get());
    if (a.star_args) out += " *" + expr(a.star_args.get());
    if (a.star_kwargs) out += " **" + expr(a.star_kwargs.get());
    return out;
  }

  const detail::Program& program_;
};

// The tree of the single expression in `{{ ... }}`.
std::string tree(std::string_view expression) {
  detail::Program program;
  const std::string source = "{{ " + std::string(expression) + " }}";
  Status status = parse_program(source, ParseOptions{}, program);
  if (!status.is_ok()) return "ERROR: " + status.message();
  if (program.body.size() != 1 || program.body[0]->kind != StmtKind::kOutput)
    return "not one output";
  return Dumper(program).expr(static_cast<const OutputStmt&>(*program.body[0]).expr.get());
}

Status parse_status(std::string_view source) {
  detail::Program program;
  return parse_program(source, ParseOptions{}, program);
}

TEST(ParserTest, ArithmeticPrecedence) {
  EXPECT_EQ(tree("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(tree("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(tree("a * b // c % d / e"), "(/ (% (// (* a b) c) d) e)");
  EXPECT_EQ(tree("a ** b ** c"), "(** (** a b) c)");  // left-associative in Jinja2
  EXPECT_EQ(tree("a * b ** c"), "(* a (** b c))");
}

TEST(ParserTest, ConcatSitsBetweenAdditionAndMultiplication) {
  EXPECT_EQ(tree("a ~ b ~ c"), "(~ a b c)");
  EXPECT_EQ(tree("a + b ~ c"), "(+ a (~ b c))");
  EXPECT_EQ(tree("a * b ~ c"), "(~ (* a b) c)");
}

TEST(ParserTest, UnaryOperators) {
  EXPECT_EQ(tree("-a ** 2"), "(** (neg a) 2)");
  EXPECT_EQ(tree("- -a"), "(neg (neg a))");
  EXPECT_EQ(tree("-a.b"), "(neg (. a b))");
  // A filter applies to the whole unary expression.
  EXPECT_EQ(tree("-a | abs"), "(|abs (neg a))");
  EXPECT_EQ(tree("+a"), "(pos a)");
}

TEST(ParserTest, LogicAndComparisons) {
  EXPECT_EQ(tree("a or b and not c"), "(or a (and b (not c)))");
  EXPECT_EQ(tree("not a == b"), "(not (cmp a == b))");
  EXPECT_EQ(tree("a < b <= c"), "(cmp a < b <= c)");
  EXPECT_EQ(tree("a in b"), "(cmp a in b)");
  EXPECT_EQ(tree("a not in b"), "(cmp a notin b)");
  EXPECT_EQ(tree("a + 1 > b"), "(cmp (+ a 1) > b)");
}

TEST(ParserTest, ConditionalExpression) {
  EXPECT_EQ(tree("a if b else c"), "(if b a c)");
  EXPECT_EQ(tree("a if b"), "(if b a _)");
  EXPECT_EQ(tree("a if b else c if d else e"), "(if b a (if d c e))");
  EXPECT_EQ(tree("a or b if c or d else e"), "(if (or c d) (or a b) e)");
}

TEST(ParserTest, Literals) {
  EXPECT_EQ(tree("[1, 'a', none, true, 1.5]"), "(list 1 'a' None True 1.5)");
  EXPECT_EQ(tree("[1,]"), "(list 1)");
  EXPECT_EQ(tree("(1,)"), "(tuple 1)");
  EXPECT_EQ(tree("()"), "(tuple)");
  EXPECT_EQ(tree("(1)"), "1");
  EXPECT_EQ(tree("{'a': 1, b: [2]}"), "(dict 'a':1 b:(list 2))");
  EXPECT_EQ(tree("'a' \"b\" 'c'"), "'abc'");
  EXPECT_EQ(tree("True, False, None"), "(tuple True False None)");
}

TEST(ParserTest, TupleWithoutParentheses) {
  EXPECT_EQ(tree("a, b"), "(tuple a b)");
  EXPECT_EQ(tree("a,"), "(tuple a)");
}

TEST(ParserTest, PostfixOperators) {
  EXPECT_EQ(tree("a.b.c"), "(. (. a b) c)");
  EXPECT_EQ(tree("a[0]['k']"), "([] ([] a 0) 'k')");
  EXPECT_EQ(tree("a.0.1"), "([] ([] a 0) 1)");
  EXPECT_EQ(tree("a[b, c]"), "([] a (tuple b c))");
  EXPECT_EQ(tree("a.b(1)[2]"), "([] (call (. a b) 1) 2)");
}

TEST(ParserTest, Slices) {
  EXPECT_EQ(tree("a[1:2]"), "([] a (: 1 2 _))");
  EXPECT_EQ(tree("a[:2]"), "([] a (: _ 2 _))");
  EXPECT_EQ(tree("a[1:]"), "([] a (: 1 _ _))");
  EXPECT_EQ(tree("a[::-1]"), "([] a (: _ _ (neg 1)))");
  EXPECT_EQ(tree("a[1:2:3]"), "([] a (: 1 2 3))");
  EXPECT_EQ(tree("a[:]"), "([] a (: _ _ _))");
}

TEST(ParserTest, CallArguments) {
  EXPECT_EQ(tree("f()"), "(call f)");
  EXPECT_EQ(tree("f(1, b=2)"), "(call f 1 b=2)");
  EXPECT_EQ(tree("f(1, *rest, k=2, **more)"), "(call f 1 k=2 *rest **more)");
  EXPECT_EQ(tree("f(a, b,)"), "(call f a b)");
}

TEST(ParserTest, FiltersAndTests) {
  EXPECT_EQ(tree("a | upper | replace('x', y)"), "(|replace (|upper a) 'x' y)");
  EXPECT_EQ(tree("a | join(d=',')"), "(|join a d=',')");
  EXPECT_EQ(tree("a + b | upper"), "(+ a (|upper b))");
  EXPECT_EQ(tree("a is defined"), "(is-defined a)");
  EXPECT_EQ(tree("a is not none"), "(not (is-none a))");
  EXPECT_EQ(tree("a is divisibleby 3"), "(is-divisibleby a 3)");
  EXPECT_EQ(tree("a is divisibleby(3)"), "(is-divisibleby a 3)");
  EXPECT_EQ(tree("a is sameas b.c"), "(is-sameas a (. b c))");
  EXPECT_EQ(tree("a is odd and b"), "(and (is-odd a) b)");
  EXPECT_EQ(tree("a is none or b"), "(or (is-none a) b)");
  EXPECT_EQ(tree("1 if a is none else 2"), "(if (is-none a) 1 2)");
  EXPECT_EQ(tree("a|length is odd"), "(is-odd (|length a))");
}

TEST(ParserTest, Statements) {
  detail::Program program;
  ASSERT_TRUE(parse_program("{% for k, v in d if v recursive %}{% else %}{% endfor %}"
                            "{% if a %}{% elif b %}{% elif c %}{% else %}{% endif %}"
                            "{% macro m(x, y=1) %}{% endmacro %}{% set a, b = 1, 2 %}",
                            ParseOptions{}, program)
                  .is_ok());
  ASSERT_EQ(program.body.size(), 4u);
  const auto& loop = static_cast<const ForStmt&>(*program.body[0]);
  EXPECT_TRUE(loop.target.is_tuple);
  EXPECT_EQ(loop.target.items.size(), 2u);
  EXPECT_TRUE(loop.recursive);
  EXPECT_NE(loop.filter, nullptr);
  const auto& branch = static_cast<const IfStmt&>(*program.body[1]);
  EXPECT_EQ(branch.elifs.size(), 2u);
  const auto& macro = static_cast<const MacroStmt&>(*program.body[2]);
  EXPECT_EQ(macro.def->param_names, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(macro.def->defaults.size(), 1u);
  const auto& set = static_cast<const SetStmt&>(*program.body[3]);
  EXPECT_TRUE(set.target.is_tuple);
  EXPECT_EQ(Dumper(program).expr(set.value.get()), "(tuple 1 2)");
}

TEST(ParserTest, MacroImplicitParameters) {
  detail::Program program;
  ASSERT_TRUE(parse_program("{% macro a() %}{{ caller() }}{{ varargs }}{% endmacro %}"
                            "{% macro b(kwargs) %}{{ kwargs }}{% endmacro %}",
                            ParseOptions{}, program)
                  .is_ok());
  const MacroDef& a = *static_cast<const MacroStmt&>(*program.body[0]).def;
  EXPECT_TRUE(a.uses_caller);
  EXPECT_TRUE(a.uses_varargs);
  EXPECT_FALSE(a.uses_kwargs);
  const MacroDef& b = *static_cast<const MacroStmt&>(*program.body[1]).def;
  EXPECT_FALSE(b.uses_kwargs);  // an explicit parameter named kwargs is an ordinary one
}

TEST(ParserTest, ScopeAnalysisMarksAssignedBeforeRead) {
  detail::Program program;
  ASSERT_TRUE(parse_program("{% set a = 1 %}{{ b }}{% set b = 2 %}"
                            "{% if c %}{% set d = 1 %}{% endif %}",
                            ParseOptions{}, program)
                  .is_ok());
  std::vector<std::string> names;
  for (const auto& [id, value] : program.scope.undefined_names) {
    names.push_back(program.names[id]);
    EXPECT_TRUE(value.is_undefined());
  }
  // `a` is assigned before any read; `b` is read first; `d` only in one branch.
  EXPECT_EQ(names, std::vector<std::string>{"a"});
}

TEST(ParserTest, UnknownFiltersAndTestsFailOutsideConditionalBranches) {
  EXPECT_EQ(parse_status("{{ x | nope }}").message(), "line 1, column 8: No filter named 'nope'.");
  EXPECT_EQ(parse_status("{{ x is nope }}").message(), "line 1, column 6: No test named 'nope'.");
  EXPECT_EQ(parse_status("{% for x in y %}{{ x|nope }}{% endfor %}").message(),
            "line 1, column 22: No filter named 'nope'.");
  // Jinja2 defers the check to run time inside if/elif/else branches and inline ifs.
  EXPECT_TRUE(parse_status("{% if a %}{{ x|nope }}{% elif x is nope %}{% else %}{{ y|nope }}"
                           "{% endif %}{{ x|nope if a }}")
                  .is_ok());
  // A block nested in a branch is a new scope again.
  EXPECT_FALSE(parse_status("{% if a %}{% filter nope %}{% endfilter %}{% endif %}").is_ok());
}

TEST(ParserTest, LoopControlsOnlyInsideLoops) {
  EXPECT_EQ(parse_status("{% break %}").message(), "line 1, column 4: 'break' outside loop");
  EXPECT_EQ(parse_status("{% if x %}{% continue %}{% endif %}").message(),
            "line 1, column 14: 'continue' not properly in loop");
  EXPECT_TRUE(parse_status("{% for x in y %}{% if x %}{% break %}{% endif %}{% endfor %}").is_ok());
  // Macro and caller bodies are functions in Jinja2: a loop around them does not count.
  EXPECT_FALSE(
      parse_status("{% for x in y %}{% macro m() %}{% break %}{% endmacro %}{% endfor %}").is_ok());
  EXPECT_FALSE(parse_status("{% for x in y %}{% generation %}{% break %}{% endgeneration %}"
                            "{% endfor %}")
                   .is_ok());
  // An else branch runs after the loop.
  EXPECT_FALSE(parse_status("{% for x in y %}{% else %}{% break %}{% endfor %}").is_ok());
}

}  // namespace
}  // namespace hearth::jinja

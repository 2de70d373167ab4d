// The parsed template: expression and statement nodes as Jinja2's parser builds them, with
// names interned to ids and filters/tests resolved to their functions at parse time.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "jinja/builtins.h"
#include "jinja/lexer.h"
#include "jinja/value.h"

namespace hearth::jinja {

using NameId = uint32_t;

// ---------------------------------------------------------------------------------------------
// Expressions

enum class ExprKind : uint8_t {
  kConst,
  kName,
  kList,  // also tuples
  kDict,
  kUnary,
  kBinary,
  kLogical,
  kCompare,
  kConcat,
  kCondExpr,
  kGetAttr,
  kGetItem,
  kSlice,
  kCall,
  kFilter,
  kTest,
};

struct Expr {
  Expr(ExprKind k, SourcePos p) : kind(k), pos(p) {}
  virtual ~Expr() = default;
  Expr(const Expr&) = delete;
  Expr& operator=(const Expr&) = delete;

  ExprKind kind;
  int depth = 1;  // nesting depth of this subtree, bounded by ParseOptions::max_nesting
  SourcePos pos;
};
using ExprPtr = std::unique_ptr<Expr>;

struct ConstExpr : Expr {
  ConstExpr(SourcePos p, Value v) : Expr(ExprKind::kConst, p), value(std::move(v)) {}
  Value value;
};

struct NameExpr : Expr {
  NameExpr(SourcePos p, NameId i, Value u)
      : Expr(ExprKind::kName, p), id(i), undefined(std::move(u)) {}
  NameId id;
  Value undefined;  // what the name reads as when nothing defines it ("'x' is undefined")
};

struct ListExpr : Expr {
  ListExpr(SourcePos p, bool tuple) : Expr(ExprKind::kList, p), is_tuple(tuple) {}
  std::vector<ExprPtr> items;
  bool is_tuple;
};

struct DictExpr : Expr {
  explicit DictExpr(SourcePos p) : Expr(ExprKind::kDict, p) {}
  std::vector<std::pair<ExprPtr, ExprPtr>> items;
};

enum class UnaryOp : uint8_t { kNeg, kPos, kNot };
struct UnaryExpr : Expr {
  UnaryExpr(SourcePos p, UnaryOp o, ExprPtr e)
      : Expr(ExprKind::kUnary, p), op(o), operand(std::move(e)) {}
  UnaryOp op;
  ExprPtr operand;
};

enum class BinaryOp : uint8_t { kAdd, kSub, kMul, kDiv, kFloorDiv, kMod, kPow };
struct BinaryExpr : Expr {
  BinaryExpr(SourcePos p, BinaryOp o, ExprPtr l, ExprPtr r)
      : Expr(ExprKind::kBinary, p), op(o), left(std::move(l)), right(std::move(r)) {}
  BinaryOp op;
  ExprPtr left, right;
};

struct LogicalExpr : Expr {  // `and` / `or`: Python returns one of the operands
  LogicalExpr(SourcePos p, bool a, ExprPtr l, ExprPtr r)
      : Expr(ExprKind::kLogical, p), is_and(a), left(std::move(l)), right(std::move(r)) {}
  bool is_and;
  ExprPtr left, right;
};

enum class CompareOp : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe, kIn, kNotIn };
struct CompareExpr : Expr {  // a < b < c: each comparison with the previous operand
  CompareExpr(SourcePos p, ExprPtr f) : Expr(ExprKind::kCompare, p), first(std::move(f)) {}
  struct Operand {
    CompareOp op;
    ExprPtr expr;
    SourcePos pos;
  };
  ExprPtr first;
  std::vector<Operand> rest;
};

struct ConcatExpr : Expr {  // a ~ b ~ c
  explicit ConcatExpr(SourcePos p) : Expr(ExprKind::kConcat, p) {}
  std::vector<ExprPtr> parts;
};

struct CondExpr : Expr {  // then_expr if test else else_expr
  CondExpr(SourcePos p, ExprPtr t, ExprPtr a, ExprPtr b, Value u)
      : Expr(ExprKind::kCondExpr, p),
        test(std::move(t)),
        then_expr(std::move(a)),
        else_expr(std::move(b)),
        missing_else(std::move(u)) {}
  ExprPtr test, then_expr, else_expr;  // else_expr may be null
  Value missing_else;                  // the undefined a false test without else gives
};

struct GetAttrExpr : Expr {  // obj.name
  GetAttrExpr(SourcePos p, ExprPtr o, std::string n)
      : Expr(ExprKind::kGetAttr, p), object(std::move(o)), name(std::move(n)) {}
  ExprPtr object;
  std::string name;
};

struct GetItemExpr : Expr {  // obj[key]; a kSlice key slices
  GetItemExpr(SourcePos p, ExprPtr o, ExprPtr k)
      : Expr(ExprKind::kGetItem, p), object(std::move(o)), key(std::move(k)) {}
  ExprPtr object, key;
};

struct SliceExpr : Expr {  // start:stop:step inside a subscript; each part may be null
  explicit SliceExpr(SourcePos p) : Expr(ExprKind::kSlice, p) {}
  ExprPtr start, stop, step;
};

struct CallArgsExpr {
  std::vector<ExprPtr> positional;
  std::vector<std::pair<std::string, ExprPtr>> keyword;
  ExprPtr star_args;    // *args
  ExprPtr star_kwargs;  // **kwargs
};

struct CallExpr : Expr {
  CallExpr(SourcePos p, ExprPtr c) : Expr(ExprKind::kCall, p), callee(std::move(c)) {}
  ExprPtr callee;
  CallArgsExpr args;
};

struct FilterExpr : Expr {  // input|name(args); input is null inside filter blocks
  FilterExpr(SourcePos p, ExprPtr in, std::string n)
      : Expr(ExprKind::kFilter, p), input(std::move(in)), name(std::move(n)) {}
  ExprPtr input;
  std::string name;
  FilterFn fn = nullptr;  // null: unknown filter in a conditional branch, fails when evaluated
  CallArgsExpr args;
};

struct TestExpr : Expr {  // input is name(args)
  TestExpr(SourcePos p, ExprPtr in, std::string n)
      : Expr(ExprKind::kTest, p), input(std::move(in)), name(std::move(n)) {}
  ExprPtr input;
  std::string name;
  TestFn fn = nullptr;  // null: unknown test in a conditional branch, fails when evaluated
  CallArgsExpr args;
};

// ---------------------------------------------------------------------------------------------
// Statements

// Names a new frame starts with as undefined, shadowing outer values: Jinja2 gives names that
// a scope assigns before any read (and that no enclosing scope knows) an undefined initial value.
struct ScopeInfo {
  std::vector<std::pair<NameId, Value>> undefined_names;
};

// Assignment target: a name or a (possibly nested) tuple of names.
struct Target {
  SourcePos pos;
  NameId name = 0;
  bool is_tuple = false;
  std::vector<Target> items;
};

enum class StmtKind : uint8_t {
  kText,
  kOutput,
  kIf,
  kFor,
  kSet,
  kSetNamespaceAttr,
  kSetBlock,
  kMacro,
  kCallBlock,
  kFilterBlock,
  kWith,
  kBreak,
  kContinue,
  kGeneration,
};

struct Stmt {
  Stmt(StmtKind k, SourcePos p) : kind(k), pos(p) {}
  virtual ~Stmt() = default;
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  StmtKind kind;
  SourcePos pos;
};
using StmtPtr = std::unique_ptr<Stmt>;
using Body = std::vector<StmtPtr>;

struct TextStmt : Stmt {
  TextStmt(SourcePos p, std::string t) : Stmt(StmtKind::kText, p), text(std::move(t)) {}
  std::string text;
};

struct OutputStmt : Stmt {  // {{ expr }} and each expression of {% print a, b %}
  OutputStmt(SourcePos p, ExprPtr e) : Stmt(StmtKind::kOutput, p), expr(std::move(e)) {}
  ExprPtr expr;
};

struct IfStmt : Stmt {
  explicit IfStmt(SourcePos p) : Stmt(StmtKind::kIf, p) {}
  ExprPtr test;
  Body body;
  std::vector<std::unique_ptr<IfStmt>> elifs;  // each with test and body only
  Body else_body;
};

struct ForStmt : Stmt {
  explicit ForStmt(SourcePos p) : Stmt(StmtKind::kFor, p) {}
  Target target;
  ExprPtr iter;
  ExprPtr filter;  // `for x in xs if cond`
  bool recursive = false;
  Body body;
  Body else_body;
  ScopeInfo body_scope;
  ScopeInfo else_scope;
};

struct SetStmt : Stmt {  // {% set target = value %}
  SetStmt(SourcePos p) : Stmt(StmtKind::kSet, p) {}
  Target target;
  ExprPtr value;
};

struct NamespaceRef {  // ns.attr as an assignment target
  SourcePos pos;
  NameId name = 0;
  std::string attr;
};

struct SetNamespaceAttrStmt : Stmt {  // {% set ns.attr = value %}
  SetNamespaceAttrStmt(SourcePos p) : Stmt(StmtKind::kSetNamespaceAttr, p) {}
  NamespaceRef target;
  ExprPtr value;
};

struct SetBlockStmt : Stmt {  // {% set target | filters %}body{% endset %}
  SetBlockStmt(SourcePos p) : Stmt(StmtKind::kSetBlock, p) {}
  bool is_namespace_attr = false;
  Target target;
  NamespaceRef namespace_target;
  ExprPtr filter;  // filter chain whose innermost input is the body (null input); may be null
  Body body;
  ScopeInfo scope;
};

// A macro or the body of a call block (which becomes `caller`).
struct MacroDef {
  std::string name;  // "caller" for call blocks
  SourcePos pos;
  std::vector<NameId> params;
  std::vector<std::string> param_names;
  std::vector<ExprPtr> defaults;  // for the last defaults.size() params
  Body body;
  ScopeInfo scope;
  // Jinja2 gives a macro these implicit parameters only when its body mentions them.
  bool uses_caller = false;
  bool uses_varargs = false;
  bool uses_kwargs = false;
  bool explicit_caller = false;  // "caller" is one of params
  NameId caller_id = 0, varargs_id = 0, kwargs_id = 0;
  Value undefined_caller;             // "No caller defined"
  std::vector<Value> missing_params;  // "parameter 'x' was not provided", one per param
};

struct MacroStmt : Stmt {
  MacroStmt(SourcePos p) : Stmt(StmtKind::kMacro, p) {}
  NameId name = 0;
  std::unique_ptr<MacroDef> def;
};

struct CallBlockStmt : Stmt {  // {% call(args) callee(...) %}body{% endcall %}
  CallBlockStmt(SourcePos p) : Stmt(StmtKind::kCallBlock, p) {}
  std::unique_ptr<MacroDef> caller;
  std::unique_ptr<CallExpr> call;
};

struct FilterBlockStmt : Stmt {  // {% filter f|g %}body{% endfilter %}
  FilterBlockStmt(SourcePos p) : Stmt(StmtKind::kFilterBlock, p) {}
  ExprPtr filter;  // chain whose innermost input is the body
  Body body;
  ScopeInfo scope;
};

struct WithStmt : Stmt {
  WithStmt(SourcePos p) : Stmt(StmtKind::kWith, p) {}
  std::vector<Target> targets;
  std::vector<ExprPtr> values;
  Body body;
  ScopeInfo scope;
};

struct LoopControlStmt : Stmt {  // break / continue
  LoopControlStmt(StmtKind k, SourcePos p) : Stmt(k, p) {}
};

struct GenerationStmt : Stmt {  // {% generation %}: renders its body in a caller-like scope
  GenerationStmt(SourcePos p) : Stmt(StmtKind::kGeneration, p) {}
  Body body;
  ScopeInfo scope;
};

}  // namespace hearth::jinja

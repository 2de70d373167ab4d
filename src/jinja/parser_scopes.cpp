// What Jinja2 decides at compile time, after parsing:
//  - scope analysis (idtracking.py): a frame that assigns a name before any read of it, where
//    no enclosing frame knows the name, starts with that name undefined, hiding the context's
//    value (a macro that reads it before the assignment sees undefined);
//  - compiler checks: unknown filters and tests (tolerated inside if/elif/else branches and
//    inline ifs, where they only fail when evaluated), break/continue outside a loop,
//    assigning to `loop`, and the implicit caller/varargs/kwargs macro parameters.
#include <map>
#include <set>

#include "jinja/parser.h"

namespace hearth::jinja {

namespace {

enum class Load : uint8_t { kParam, kResolve, kAlias, kUndefined };

struct Symbols {
  const Symbols* parent = nullptr;
  std::map<NameId, Load> loads;  // the names this frame has a reference for
  std::set<NameId> stores;

  bool find_ref(NameId id) const {
    for (const Symbols* s = this; s != nullptr; s = s->parent) {
      if (s->loads.count(id) != 0) return true;
    }
    return false;
  }
  void load(NameId id) {
    if (!find_ref(id)) loads[id] = Load::kResolve;
  }
  void store(NameId id) {
    stores.insert(id);
    if (loads.count(id) != 0) return;
    loads[id] = parent != nullptr && parent->find_ref(id) ? Load::kAlias : Load::kUndefined;
  }
  void declare_parameter(NameId id) {
    stores.insert(id);
    loads[id] = Load::kParam;
  }
  // After an if: a name assigned in some branches only reads through to the outer value.
  void branch_update(const std::vector<Symbols>& branches) {
    std::map<NameId, size_t> stored_in;
    for (const Symbols& branch : branches) {
      for (NameId id : branch.stores) {
        if (stores.count(id) == 0) ++stored_in[id];
      }
    }
    for (const Symbols& branch : branches) {
      for (const auto& [id, load] : branch.loads) loads[id] = load;
      stores.insert(branch.stores.begin(), branch.stores.end());
    }
    for (const auto& [id, count] : stored_in) {
      if (count == branches.size()) continue;
      loads[id] = parent != nullptr && parent->find_ref(id) ? Load::kAlias : Load::kResolve;
    }
  }
};

// Jinja2's FrameSymbolVisitor: the references of one frame's own code (nested frames are
// visited only for what the outer frame evaluates: a loop's iterable, a call block's call).
class SymbolVisitor {
 public:
  explicit SymbolVisitor(Symbols* symbols) : symbols_(symbols) {}

  void visit_body(const Body& body) {
    for (const auto& stmt : body) visit_stmt(*stmt);
  }

  void visit_expr(const Expr* expr);
  void visit_args(const CallArgsExpr& args) {
    for (const auto& arg : args.positional) visit_expr(arg.get());
    for (const auto& [key, arg] : args.keyword) visit_expr(arg.get());
    visit_expr(args.star_args.get());
    visit_expr(args.star_kwargs.get());
  }
  void store_target(const Target& target) {
    if (!target.is_tuple) return symbols_->store(target.name);
    for (const Target& item : target.items) store_target(item);
  }
  void param_target(const Target& target) {
    if (!target.is_tuple) return symbols_->declare_parameter(target.name);
    for (const Target& item : target.items) param_target(item);
  }
  void visit_stmt(const Stmt& stmt);
  void visit_if(const IfStmt& node);

 private:
  Symbols* symbols_;
};

void SymbolVisitor::visit_expr(const Expr* expr) {
  if (expr == nullptr) return;
  switch (expr->kind) {
    case ExprKind::kConst:
      return;
    case ExprKind::kName:
      return symbols_->load(static_cast<const NameExpr*>(expr)->id);
    case ExprKind::kList:
      for (const auto& item : static_cast<const ListExpr*>(expr)->items) visit_expr(item.get());
      return;
    case ExprKind::kDict:
      for (const auto& [key, value] : static_cast<const DictExpr*>(expr)->items) {
        visit_expr(key.get());
        visit_expr(value.get());
      }
      return;
    case ExprKind::kUnary:
      return visit_expr(static_cast<const UnaryExpr*>(expr)->operand.get());
    case ExprKind::kBinary: {
      const auto* node = static_cast<const BinaryExpr*>(expr);
      visit_expr(node->left.get());
      return visit_expr(node->right.get());
    }
    case ExprKind::kLogical: {
      const auto* node = static_cast<const LogicalExpr*>(expr);
      visit_expr(node->left.get());
      return visit_expr(node->right.get());
    }
    case ExprKind::kCompare: {
      const auto* node = static_cast<const CompareExpr*>(expr);
      visit_expr(node->first.get());
      for (const auto& operand : node->rest) visit_expr(operand.expr.get());
      return;
    }
    case ExprKind::kConcat:
      for (const auto& part : static_cast<const ConcatExpr*>(expr)->parts) visit_expr(part.get());
      return;
    case ExprKind::kCondExpr: {
      const auto* node = static_cast<const CondExpr*>(expr);
      visit_expr(node->then_expr.get());
      visit_expr(node->test.get());
      return visit_expr(node->else_expr.get());
    }
    case ExprKind::kGetAttr:
      return visit_expr(static_cast<const GetAttrExpr*>(expr)->object.get());
    case ExprKind::kGetItem: {
      const auto* node = static_cast<const GetItemExpr*>(expr);
      visit_expr(node->object.get());
      return visit_expr(node->key.get());
    }
    case ExprKind::kSlice: {
      const auto* node = static_cast<const SliceExpr*>(expr);
      visit_expr(node->start.get());
      visit_expr(node->stop.get());
      return visit_expr(node->step.get());
    }
    case ExprKind::kCall: {
      const auto* node = static_cast<const CallExpr*>(expr);
      visit_expr(node->callee.get());
      return visit_args(node->args);
    }
    case ExprKind::kFilter: {
      const auto* node = static_cast<const FilterExpr*>(expr);
      visit_expr(node->input.get());
      return visit_args(node->args);
    }
    case ExprKind::kTest: {
      const auto* node = static_cast<const TestExpr*>(expr);
      visit_expr(node->input.get());
      return visit_args(node->args);
    }
  }
}

void SymbolVisitor::visit_if(const IfStmt& node) {
  visit_expr(node.test.get());
  Symbols* original = symbols_;
  std::vector<Symbols> branches(3, *original);
  symbols_ = &branches[0];
  visit_body(node.body);
  symbols_ = &branches[1];
  for (const auto& elif : node.elifs) visit_if(*elif);
  symbols_ = &branches[2];
  visit_body(node.else_body);
  symbols_ = original;
  original->branch_update(branches);
}

void SymbolVisitor::visit_stmt(const Stmt& stmt) {
  switch (stmt.kind) {
    case StmtKind::kOutput:
      return visit_expr(static_cast<const OutputStmt&>(stmt).expr.get());
    case StmtKind::kIf:
      return visit_if(static_cast<const IfStmt&>(stmt));
    case StmtKind::kFor:
      return visit_expr(static_cast<const ForStmt&>(stmt).iter.get());
    case StmtKind::kSet: {
      const auto& node = static_cast<const SetStmt&>(stmt);
      visit_expr(node.value.get());
      return store_target(node.target);
    }
    case StmtKind::kSetNamespaceAttr: {
      const auto& node = static_cast<const SetNamespaceAttrStmt&>(stmt);
      visit_expr(node.value.get());
      return symbols_->load(node.target.name);
    }
    case StmtKind::kSetBlock: {
      const auto& node = static_cast<const SetBlockStmt&>(stmt);
      if (node.is_namespace_attr) return symbols_->load(node.namespace_target.name);
      return store_target(node.target);
    }
    case StmtKind::kMacro:
      return symbols_->store(static_cast<const MacroStmt&>(stmt).name);
    case StmtKind::kCallBlock: {
      const auto& node = static_cast<const CallBlockStmt&>(stmt);
      visit_expr(node.call->callee.get());
      return visit_args(node.call->args);
    }
    case StmtKind::kFilterBlock:
      return visit_expr(static_cast<const FilterBlockStmt&>(stmt).filter.get());
    case StmtKind::kWith:
      for (const auto& value : static_cast<const WithStmt&>(stmt).values) visit_expr(value.get());
      return;
    default:
      return;
  }
}

void record_undefined_names(const Symbols& symbols, const detail::Program& program,
                            ScopeInfo* info) {
  for (const auto& [id, load] : symbols.loads) {
    if (load != Load::kUndefined) continue;
    info->undefined_names.emplace_back(
        id, Value::undefined("'" + program.names[id] + "' is undefined"));
  }
}

class ScopeAnalyzer {
 public:
  explicit ScopeAnalyzer(detail::Program& program) : program_(program) {}

  void analyze_template() {
    Symbols symbols;
    SymbolVisitor(&symbols).visit_body(program_.body);
    record_undefined_names(symbols, program_, &program_.scope);
    analyze_nested(program_.body, symbols);
  }

 private:
  void analyze_nested(const Body& body, const Symbols& symbols);
  void analyze_macro(MacroDef& def, const Symbols& parent);

  detail::Program& program_;
};

void ScopeAnalyzer::analyze_macro(MacroDef& def, const Symbols& parent) {
  Symbols symbols;
  symbols.parent = &parent;
  SymbolVisitor visitor(&symbols);
  for (NameId param : def.params) symbols.declare_parameter(param);
  for (const auto& value : def.defaults) visitor.visit_expr(value.get());
  visitor.visit_body(def.body);
  if (def.uses_caller && !def.explicit_caller) symbols.declare_parameter(def.caller_id);
  if (def.uses_kwargs) symbols.declare_parameter(def.kwargs_id);
  if (def.uses_varargs) symbols.declare_parameter(def.varargs_id);
  record_undefined_names(symbols, program_, &def.scope);
  analyze_nested(def.body, symbols);
}

void ScopeAnalyzer::analyze_nested(const Body& body, const Symbols& symbols) {
  for (const auto& stmt : body) {
    switch (stmt->kind) {
      case StmtKind::kIf: {
        auto& node = static_cast<IfStmt&>(*stmt);
        analyze_nested(node.body, symbols);
        for (const auto& elif : node.elifs) analyze_nested(elif->body, symbols);
        analyze_nested(node.else_body, symbols);
        break;
      }
      case StmtKind::kFor: {
        auto& node = static_cast<ForStmt&>(*stmt);
        Symbols loop;
        loop.parent = &symbols;
        SymbolVisitor visitor(&loop);
        loop.declare_parameter(program_.loop_id);
        visitor.param_target(node.target);
        visitor.visit_body(node.body);
        record_undefined_names(loop, program_, &node.body_scope);
        analyze_nested(node.body, loop);
        Symbols otherwise;
        otherwise.parent = &symbols;
        SymbolVisitor(&otherwise).visit_body(node.else_body);
        record_undefined_names(otherwise, program_, &node.else_scope);
        analyze_nested(node.else_body, otherwise);
        break;
      }
      case StmtKind::kMacro:
        analyze_macro(*static_cast<MacroStmt&>(*stmt).def, symbols);
        break;
      case StmtKind::kCallBlock:
        analyze_macro(*static_cast<CallBlockStmt&>(*stmt).caller, symbols);
        break;
      case StmtKind::kFilterBlock:
      case StmtKind::kSetBlock:
      case StmtKind::kWith:
      case StmtKind::kGeneration: {
        Symbols inner;
        inner.parent = &symbols;
        SymbolVisitor visitor(&inner);
        Body* inner_body = nullptr;
        ScopeInfo* info = nullptr;
        if (stmt->kind == StmtKind::kFilterBlock) {
          auto& node = static_cast<FilterBlockStmt&>(*stmt);
          visitor.visit_body(node.body);
          visitor.visit_expr(node.filter.get());
          inner_body = &node.body;
          info = &node.scope;
        } else if (stmt->kind == StmtKind::kSetBlock) {
          auto& node = static_cast<SetBlockStmt&>(*stmt);
          visitor.visit_body(node.body);
          inner_body = &node.body;
          info = &node.scope;
        } else if (stmt->kind == StmtKind::kWith) {
          auto& node = static_cast<WithStmt&>(*stmt);
          for (const Target& target : node.targets) visitor.param_target(target);
          visitor.visit_body(node.body);
          inner_body = &node.body;
          info = &node.scope;
        } else {
          auto& node = static_cast<GenerationStmt&>(*stmt);
          visitor.visit_body(node.body);
          inner_body = &node.body;
          info = &node.scope;
        }
        record_undefined_names(inner, program_, info);
        analyze_nested(*inner_body, inner);
        break;
      }
      default:
        break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Compiler checks

// Jinja2's find_undeclared over a macro body: whether caller/varargs/kwargs are read before
// anything binds them.
class UndeclaredNames {
 public:
  UndeclaredNames(std::set<std::string> names, const detail::Program& program)
      : pending_(std::move(names)), program_(program) {}

  const std::set<std::string>& found() const { return found_; }

  void body(const Body& statements) {
    for (const auto& stmt : statements) statement(*stmt);
  }

 private:
  void name(NameId id, bool is_load) {
    const std::string& text = program_.names[id];
    if (pending_.count(text) == 0) return;
    if (is_load) {
      found_.insert(text);
    } else {
      pending_.erase(text);
    }
  }
  void target(const Target& t) {
    if (!t.is_tuple) return name(t.name, false);
    for (const Target& item : t.items) target(item);
  }
  void expr(const Expr* e);
  void args(const CallArgsExpr& a) {
    for (const auto& arg : a.positional) expr(arg.get());
    for (const auto& [key, arg] : a.keyword) expr(arg.get());
    expr(a.star_args.get());
    expr(a.star_kwargs.get());
  }
  void macro(const MacroDef& def) {
    for (NameId param : def.params) name(param, false);
    for (const auto& value : def.defaults) expr(value.get());
    body(def.body);
  }
  void statement(const Stmt& stmt);

  std::set<std::string> pending_;
  std::set<std::string> found_;
  const detail::Program& program_;
};

void UndeclaredNames::expr(const Expr* e) {
  if (e == nullptr) return;
  switch (e->kind) {
    case ExprKind::kName:
      return name(static_cast<const NameExpr*>(e)->id, true);
    case ExprKind::kList:
      for (const auto& item : static_cast<const ListExpr*>(e)->items) expr(item.get());
      return;
    case ExprKind::kDict:
      for (const auto& [key, value] : static_cast<const DictExpr*>(e)->items) {
        expr(key.get());
        expr(value.get());
      }
      return;
    case ExprKind::kUnary:
      return expr(static_cast<const UnaryExpr*>(e)->operand.get());
    case ExprKind::kBinary:
      expr(static_cast<const BinaryExpr*>(e)->left.get());
      return expr(static_cast<const BinaryExpr*>(e)->right.get());
    case ExprKind::kLogical:
      expr(static_cast<const LogicalExpr*>(e)->left.get());
      return expr(static_cast<const LogicalExpr*>(e)->right.get());
    case ExprKind::kCompare:
      expr(static_cast<const CompareExpr*>(e)->first.get());
      for (const auto& operand : static_cast<const CompareExpr*>(e)->rest) {
        expr(operand.expr.get());
      }
      return;
    case ExprKind::kConcat:
      for (const auto& part : static_cast<const ConcatExpr*>(e)->parts) expr(part.get());
      return;
    case ExprKind::kCondExpr:
      expr(static_cast<const CondExpr*>(e)->test.get());
      expr(static_cast<const CondExpr*>(e)->then_expr.get());
      return expr(static_cast<const CondExpr*>(e)->else_expr.get());
    case ExprKind::kGetAttr:
      return expr(static_cast<const GetAttrExpr*>(e)->object.get());
    case ExprKind::kGetItem:
      expr(static_cast<const GetItemExpr*>(e)->object.get());
      return expr(static_cast<const GetItemExpr*>(e)->key.get());
    case ExprKind::kSlice:
      expr(static_cast<const SliceExpr*>(e)->start.get());
      expr(static_cast<const SliceExpr*>(e)->stop.get());
      return expr(static_cast<const SliceExpr*>(e)->step.get());
    case ExprKind::kCall:
      expr(static_cast<const CallExpr*>(e)->callee.get());
      return args(static_cast<const CallExpr*>(e)->args);
    case ExprKind::kFilter:
      expr(static_cast<const FilterExpr*>(e)->input.get());
      return args(static_cast<const FilterExpr*>(e)->args);
    case ExprKind::kTest:
      expr(static_cast<const TestExpr*>(e)->input.get());
      return args(static_cast<const TestExpr*>(e)->args);
    case ExprKind::kConst:
      return;
  }
}

void UndeclaredNames::statement(const Stmt& stmt) {
  switch (stmt.kind) {
    case StmtKind::kOutput:
      return expr(static_cast<const OutputStmt&>(stmt).expr.get());
    case StmtKind::kIf: {
      const auto& node = static_cast<const IfStmt&>(stmt);
      expr(node.test.get());
      body(node.body);
      for (const auto& elif : node.elifs) statement(*elif);
      return body(node.else_body);
    }
    case StmtKind::kFor: {
      const auto& node = static_cast<const ForStmt&>(stmt);
      target(node.target);
      expr(node.iter.get());
      body(node.body);
      body(node.else_body);
      return expr(node.filter.get());
    }
    case StmtKind::kSet:
      target(static_cast<const SetStmt&>(stmt).target);
      return expr(static_cast<const SetStmt&>(stmt).value.get());
    case StmtKind::kSetNamespaceAttr:
      return expr(static_cast<const SetNamespaceAttrStmt&>(stmt).value.get());
    case StmtKind::kSetBlock: {
      const auto& node = static_cast<const SetBlockStmt&>(stmt);
      if (!node.is_namespace_attr) target(node.target);
      expr(node.filter.get());
      return body(node.body);
    }
    case StmtKind::kMacro:
      return macro(*static_cast<const MacroStmt&>(stmt).def);
    case StmtKind::kCallBlock:
      expr(static_cast<const CallBlockStmt&>(stmt).call.get());
      return macro(*static_cast<const CallBlockStmt&>(stmt).caller);
    case StmtKind::kFilterBlock:
      body(static_cast<const FilterBlockStmt&>(stmt).body);
      return expr(static_cast<const FilterBlockStmt&>(stmt).filter.get());
    case StmtKind::kWith: {
      const auto& node = static_cast<const WithStmt&>(stmt);
      for (const Target& t : node.targets) target(t);
      for (const auto& value : node.values) expr(value.get());
      return body(node.body);
    }
    case StmtKind::kGeneration:
      return body(static_cast<const GenerationStmt&>(stmt).body);
    default:
      return;
  }
}

class Checker {
 public:
  explicit Checker(detail::Program& program) : program_(program) {}

  Status body(const Body& statements, bool soft, bool in_loop) {
    for (const auto& stmt : statements) HEARTH_RETURN_IF_ERROR(statement(*stmt, soft, in_loop));
    return Status::ok();
  }

 private:
  Status fail(SourcePos pos, const std::string& reason) const {
    return Status(ErrorCode::kInvalidArgument, format_position(pos, reason));
  }
  Status expr(const Expr* e, bool soft);
  Status args(const CallArgsExpr& a, bool soft) {
    for (const auto& arg : a.positional) HEARTH_RETURN_IF_ERROR(expr(arg.get(), soft));
    for (const auto& [key, arg] : a.keyword) HEARTH_RETURN_IF_ERROR(expr(arg.get(), soft));
    HEARTH_RETURN_IF_ERROR(expr(a.star_args.get(), soft));
    return expr(a.star_kwargs.get(), soft);
  }
  Status macro(MacroDef& def);
  Status statement(const Stmt& stmt, bool soft, bool in_loop);
  Status loop_target(const Target& target) const {
    if (!target.is_tuple) {
      if (target.name == program_.loop_id) {
        return fail(target.pos, "Can't assign to special loop variable in for-loop target");
      }
      return Status::ok();
    }
    for (const Target& item : target.items) HEARTH_RETURN_IF_ERROR(loop_target(item));
    return Status::ok();
  }

  detail::Program& program_;
};

Status Checker::expr(const Expr* e, bool soft) {
  if (e == nullptr) return Status::ok();
  switch (e->kind) {
    case ExprKind::kConst:
    case ExprKind::kName:
      return Status::ok();
    case ExprKind::kList:
      for (const auto& item : static_cast<const ListExpr*>(e)->items) {
        HEARTH_RETURN_IF_ERROR(expr(item.get(), soft));
      }
      return Status::ok();
    case ExprKind::kDict:
      for (const auto& [key, value] : static_cast<const DictExpr*>(e)->items) {
        HEARTH_RETURN_IF_ERROR(expr(key.get(), soft));
        HEARTH_RETURN_IF_ERROR(expr(value.get(), soft));
      }
      return Status::ok();
    case ExprKind::kUnary:
      return expr(static_cast<const UnaryExpr*>(e)->operand.get(), soft);
    case ExprKind::kBinary:
      HEARTH_RETURN_IF_ERROR(expr(static_cast<const BinaryExpr*>(e)->left.get(), soft));
      return expr(static_cast<const BinaryExpr*>(e)->right.get(), soft);
    case ExprKind::kLogical:
      HEARTH_RETURN_IF_ERROR(expr(static_cast<const LogicalExpr*>(e)->left.get(), soft));
      return expr(static_cast<const LogicalExpr*>(e)->right.get(), soft);
    case ExprKind::kCompare:
      HEARTH_RETURN_IF_ERROR(expr(static_cast<const CompareExpr*>(e)->first.get(), soft));
      for (const auto& operand : static_cast<const CompareExpr*>(e)->rest) {
        HEARTH_RETURN_IF_ERROR(expr(operand.expr.get(), soft));
      }
      return Status::ok();
    case ExprKind::kConcat:
      for (const auto& part : static_cast<const ConcatExpr*>(e)->parts) {
        HEARTH_RETURN_IF_ERROR(expr(part.get(), soft));
      }
      return Status::ok();
    case ExprKind::kCondExpr: {  // Jinja2 compiles inline ifs in a "soft" frame
      const auto* node = static_cast<const CondExpr*>(e);
      HEARTH_RETURN_IF_ERROR(expr(node->then_expr.get(), true));
      HEARTH_RETURN_IF_ERROR(expr(node->test.get(), true));
      return expr(node->else_expr.get(), true);
    }
    case ExprKind::kGetAttr:
      return expr(static_cast<const GetAttrExpr*>(e)->object.get(), soft);
    case ExprKind::kGetItem:
      HEARTH_RETURN_IF_ERROR(expr(static_cast<const GetItemExpr*>(e)->object.get(), soft));
      return expr(static_cast<const GetItemExpr*>(e)->key.get(), soft);
    case ExprKind::kSlice: {
      const auto* node = static_cast<const SliceExpr*>(e);
      HEARTH_RETURN_IF_ERROR(expr(node->start.get(), soft));
      HEARTH_RETURN_IF_ERROR(expr(node->stop.get(), soft));
      return expr(node->step.get(), soft);
    }
    case ExprKind::kCall:
      HEARTH_RETURN_IF_ERROR(expr(static_cast<const CallExpr*>(e)->callee.get(), soft));
      return args(static_cast<const CallExpr*>(e)->args, soft);
    case ExprKind::kFilter: {
      const auto* node = static_cast<const FilterExpr*>(e);
      HEARTH_RETURN_IF_ERROR(expr(node->input.get(), soft));
      if (node->fn == nullptr && !soft)
        return fail(node->pos, "No filter named '" + node->name + "'.");
      return args(node->args, soft);
    }
    case ExprKind::kTest: {
      const auto* node = static_cast<const TestExpr*>(e);
      HEARTH_RETURN_IF_ERROR(expr(node->input.get(), soft));
      if (node->fn == nullptr && !soft)
        return fail(node->pos, "No test named '" + node->name + "'.");
      return args(node->args, soft);
    }
  }
  return Status::ok();
}

Status Checker::macro(MacroDef& def) {
  UndeclaredNames undeclared({"caller", "varargs", "kwargs"}, program_);
  undeclared.body(def.body);
  def.uses_caller = undeclared.found().count("caller") != 0;
  def.uses_varargs = undeclared.found().count("varargs") != 0;
  def.uses_kwargs = undeclared.found().count("kwargs") != 0;
  def.caller_id = program_.intern("caller");
  def.varargs_id = program_.intern("varargs");
  def.kwargs_id = program_.intern("kwargs");
  def.undefined_caller = Value::undefined("No caller defined");
  // Explicit varargs/kwargs parameters replace the implicit ones.
  for (const std::string& param : def.param_names) {
    if (param == "varargs") def.uses_varargs = false;
    if (param == "kwargs") def.uses_kwargs = false;
  }
  for (size_t i = 0; i < def.params.size(); ++i) {
    def.missing_params.push_back(
        Value::undefined("parameter '" + def.param_names[i] + "' was not provided"));
    if (def.param_names[i] != "caller") continue;
    def.explicit_caller = true;
    if (def.uses_caller && i < def.params.size() - def.defaults.size()) {
      return fail(def.pos,
                  "When defining macros or call blocks the special \"caller\" argument must be "
                  "omitted or be given a default.");
    }
  }
  for (const auto& value : def.defaults) HEARTH_RETURN_IF_ERROR(expr(value.get(), false));
  return body(def.body, false, false);
}

Status Checker::statement(const Stmt& stmt, bool soft, bool in_loop) {
  switch (stmt.kind) {
    case StmtKind::kOutput:
      return expr(static_cast<const OutputStmt&>(stmt).expr.get(), soft);
    case StmtKind::kIf: {
      const auto& node = static_cast<const IfStmt&>(stmt);
      HEARTH_RETURN_IF_ERROR(expr(node.test.get(), true));
      HEARTH_RETURN_IF_ERROR(body(node.body, true, in_loop));
      for (const auto& elif : node.elifs) HEARTH_RETURN_IF_ERROR(statement(*elif, true, in_loop));
      return body(node.else_body, true, in_loop);
    }
    case StmtKind::kFor: {
      const auto& node = static_cast<const ForStmt&>(stmt);
      HEARTH_RETURN_IF_ERROR(loop_target(node.target));
      HEARTH_RETURN_IF_ERROR(expr(node.filter.get(), false));
      HEARTH_RETURN_IF_ERROR(expr(node.iter.get(), soft));
      HEARTH_RETURN_IF_ERROR(body(node.body, false, true));
      // A recursive loop's else branch runs inside the loop function, outside any loop.
      return body(node.else_body, false, node.recursive ? false : in_loop);
    }
    case StmtKind::kSet:
      return expr(static_cast<const SetStmt&>(stmt).value.get(), soft);
    case StmtKind::kSetNamespaceAttr:
      return expr(static_cast<const SetNamespaceAttrStmt&>(stmt).value.get(), soft);
    case StmtKind::kSetBlock: {
      const auto& node = static_cast<const SetBlockStmt&>(stmt);
      HEARTH_RETURN_IF_ERROR(body(node.body, false, in_loop));
      return expr(node.filter.get(), false);
    }
    case StmtKind::kMacro:
      return macro(*static_cast<const MacroStmt&>(stmt).def);
    case StmtKind::kCallBlock: {
      const auto& node = static_cast<const CallBlockStmt&>(stmt);
      HEARTH_RETURN_IF_ERROR(macro(*node.caller));
      return expr(node.call.get(), soft);
    }
    case StmtKind::kFilterBlock: {
      const auto& node = static_cast<const FilterBlockStmt&>(stmt);
      HEARTH_RETURN_IF_ERROR(body(node.body, false, in_loop));
      return expr(node.filter.get(), false);
    }
    case StmtKind::kWith: {
      const auto& node = static_cast<const WithStmt&>(stmt);
      for (const auto& value : node.values) HEARTH_RETURN_IF_ERROR(expr(value.get(), soft));
      return body(node.body, false, in_loop);
    }
    case StmtKind::kBreak:
      if (!in_loop) return fail(stmt.pos, "'break' outside loop");
      return Status::ok();
    case StmtKind::kContinue:
      if (!in_loop) return fail(stmt.pos, "'continue' not properly in loop");
      return Status::ok();
    case StmtKind::kGeneration:
      return body(static_cast<const GenerationStmt&>(stmt).body, false, false);
    default:
      return Status::ok();
  }
}

}  // namespace

Status analyze_program(detail::Program& program) {
  HEARTH_RETURN_IF_ERROR(Checker(program).body(program.body, false, false));
  ScopeAnalyzer(program).analyze_template();
  for (NameId id = 0; id < program.names.size(); ++id) {
    Value global = builtin_global(program.names[id]);
    if (!global.is_undefined()) program.builtin_globals.emplace_back(id, std::move(global));
  }
  return Status::ok();
}

}  // namespace hearth::jinja

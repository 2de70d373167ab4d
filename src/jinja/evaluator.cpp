// Rendering: frames, output and limits, and the statements (if, for, set, macro, call, filter,
// with, generation blocks).
#include "jinja/evaluator.h"

#include <pthread.h>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "jinja/evaluator_ops.h"
#include "jinja/objects.h"

namespace hearth::jinja {

namespace {

// Stack kept free below the deepest evaluation frame for the builtins a step may call.
#if defined(__SANITIZE_ADDRESS__)
constexpr uintptr_t kStackReserve = 2u << 20;  // sanitizer frames are several times larger
#else
constexpr uintptr_t kStackReserve = 512u << 10;
#endif

// The lowest stack address evaluation may reach on this thread (0 when unknown). Deep macro
// recursion over deeply nested bodies is bounded by the limits, but their product could still
// exhaust a thread's stack; the evaluator stops with an error before that.
uintptr_t thread_stack_floor() {
  thread_local const uintptr_t floor = [] {
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) != 0) return uintptr_t{0};
    void* low = nullptr;
    size_t size = 0;
    const int rc = pthread_attr_getstack(&attr, &low, &size);
    pthread_attr_destroy(&attr);
    if (rc != 0) return uintptr_t{0};
    return reinterpret_cast<uintptr_t>(low) + std::min<uintptr_t>(kStackReserve, size / 4);
  }();
  return floor;
}

}  // namespace

Evaluator::Evaluator(const detail::Program& program, const RenderOptions& options)
    : program_(program), options_(options), stack_floor_(thread_stack_floor()) {}

Evaluator::~Evaluator() = default;

// --- Frames -----------------------------------------------------------------------------------

Frame* Evaluator::acquire_frame(Frame* parent, const ScopeInfo* scope) {
  Frame* frame;
  if (!free_frames_.empty()) {
    frame = free_frames_.back();
    free_frames_.pop_back();
  } else {
    frames_.push_back(std::make_unique<Frame>());
    frame = frames_.back().get();
  }
  frame->parent = parent;
  frame->captured = false;
  frame->vars.clear();
  if (scope != nullptr) {
    frame->vars.insert(frame->vars.end(), scope->undefined_names.begin(),
                       scope->undefined_names.end());
  }
  return frame;
}

void Evaluator::release_frame(Frame* frame) {
  if (frame->captured) return;
  frame->vars.clear();
  free_frames_.push_back(frame);
}

void Evaluator::capture(Frame* frame) {
  for (; frame != nullptr && !frame->captured; frame = frame->parent) frame->captured = true;
}

const Value* Evaluator::lookup(NameId id) const {
  for (Frame* frame = frame_; frame != nullptr; frame = frame->parent) {
    if (const Value* value = frame->find(id)) return value;
  }
  if (has_global_[id] != 0) return &globals_[id];
  return nullptr;
}

// --- Output, limits, positions ----------------------------------------------------------------

Status Evaluator::charge(size_t bytes) {
  output_bytes_ += bytes;
  if (output_bytes_ <= options_.limits.max_output_bytes) return Status::ok();
  return Status(
      ErrorCode::kResourceExhausted,
      "output exceeds the limit of " + std::to_string(options_.limits.max_output_bytes) + " bytes");
}

Status Evaluator::append(std::string_view text) {
  HEARTH_RETURN_IF_ERROR(charge(text.size()));
  out_->append(text);
  return Status::ok();
}

Status Evaluator::emit_value(const Value& value) {
  if (value.is_string()) return append(value.as_string());
  return append(to_str(value));
}

Status Evaluator::step_error(SourcePos pos) {
  if (steps_ > options_.limits.max_steps) {
    return positioned(pos, Status(ErrorCode::kResourceExhausted,
                                  "template evaluation exceeded the limit of " +
                                      std::to_string(options_.limits.max_steps) + " steps"));
  }
  return positioned(pos, Status(ErrorCode::kResourceExhausted,
                                "template recursion too deep for the thread's stack"));
}

Status Evaluator::count_step() {
  if (++steps_ <= options_.limits.max_steps) return Status::ok();
  return Status(ErrorCode::kResourceExhausted, "template evaluation exceeded the limit of " +
                                                   std::to_string(options_.limits.max_steps) +
                                                   " steps");
}

// Gives an error the template position where it happened, unless it already has one (an error
// raised inside a macro the expression called).
Status Evaluator::positioned(SourcePos pos, const Status& status) {
  if (status.is_ok() || status.message() == last_positioned_) return status;
  last_positioned_ = format_position(pos, status.message());
  return Status(status.code(), last_positioned_);
}

std::time_t Evaluator::now() const {
  if (options_.now) return options_.now();
  return std::time(nullptr);
}

// --- Render -----------------------------------------------------------------------------------

namespace {

// JSON nested deeper than this is refused: converting and printing it recurses (Python's json
// gives up near 1000 levels as well).
constexpr size_t kMaxContextDepth = 1000;

bool nested_deeper_than(const nlohmann::ordered_json& root, size_t limit) {
  std::vector<std::pair<const nlohmann::ordered_json*, size_t>> pending = {{&root, 1}};
  while (!pending.empty()) {
    const auto [node, depth] = pending.back();
    pending.pop_back();
    if (depth > limit) return true;
    if (node->is_structured()) {
      for (const auto& child : *node) pending.emplace_back(&child, depth + 1);
    }
  }
  return false;
}

}  // namespace

Result<std::string> Evaluator::render(const nlohmann::ordered_json& context) {
  if (!context.is_object() && !context.is_null()) {
    return Status(ErrorCode::kInvalidArgument, "the render context must be a JSON object");
  }
  if (nested_deeper_than(context, kMaxContextDepth)) {
    return Status(ErrorCode::kInvalidArgument, "the render context is nested more than " +
                                                   std::to_string(kMaxContextDepth) +
                                                   " levels deep");
  }
  globals_.assign(program_.names.size(), Value());
  has_global_.assign(program_.names.size(), 0);
  for (const auto& [id, value] : program_.builtin_globals) {
    globals_[id] = value;
    has_global_[id] = 1;
  }
  if (context.is_object()) {
    for (const auto& [key, value] : context.items()) {
      const auto it = program_.name_ids.find(key);
      if (it == program_.name_ids.end()) continue;  // the template never mentions it
      globals_[it->second] = from_json(value);
      has_global_[it->second] = 1;
    }
  }
  std::string output;
  out_ = &output;
  FrameScope root(*this, nullptr, &program_.scope);
  HEARTH_RETURN_IF_ERROR(exec_body(program_.body).status());
  return output;
}

// --- Statements -------------------------------------------------------------------------------

Result<Evaluator::Flow> Evaluator::exec_body(const Body& body) {
  for (const auto& stmt : body) {
    HEARTH_ASSIGN_OR_RETURN(Flow flow, exec(*stmt));
    if (flow != Flow::kNormal) return flow;
  }
  return Flow::kNormal;
}

Result<Evaluator::Flow> Evaluator::exec(const Stmt& stmt) {
  if (!step_allowed()) return step_error(stmt.pos);
  switch (stmt.kind) {
    case StmtKind::kText:
      HEARTH_RETURN_IF_ERROR(positioned(stmt.pos, append(static_cast<const TextStmt&>(stmt).text)));
      return Flow::kNormal;
    case StmtKind::kOutput:
      HEARTH_RETURN_IF_ERROR(exec_output(static_cast<const OutputStmt&>(stmt)));
      return Flow::kNormal;
    case StmtKind::kIf:
      return exec_if(static_cast<const IfStmt&>(stmt));
    case StmtKind::kFor:
      return exec_for(static_cast<const ForStmt&>(stmt));
    case StmtKind::kSet: {
      const auto& node = static_cast<const SetStmt&>(stmt);
      HEARTH_ASSIGN_OR_RETURN(Value value, eval(*node.value));
      HEARTH_RETURN_IF_ERROR(assign(node.target, value, *frame_));
      return Flow::kNormal;
    }
    case StmtKind::kSetNamespaceAttr: {
      const auto& node = static_cast<const SetNamespaceAttrStmt&>(stmt);
      HEARTH_RETURN_IF_ERROR(
          exec_set_namespace_attr(node.target, nullptr, node.value.get(), node.pos));
      return Flow::kNormal;
    }
    case StmtKind::kSetBlock:
      return exec_set_block(static_cast<const SetBlockStmt&>(stmt));
    case StmtKind::kMacro: {
      const auto& node = static_cast<const MacroStmt&>(stmt);
      frame_->set(node.name, make_macro(*node.def, frame_));
      return Flow::kNormal;
    }
    case StmtKind::kCallBlock:
      HEARTH_RETURN_IF_ERROR(exec_call_block(static_cast<const CallBlockStmt&>(stmt)));
      return Flow::kNormal;
    case StmtKind::kFilterBlock:
      return exec_filter_block(static_cast<const FilterBlockStmt&>(stmt));
    case StmtKind::kWith:
      return exec_with(static_cast<const WithStmt&>(stmt));
    case StmtKind::kBreak:
      return Flow::kBreak;
    case StmtKind::kContinue:
      return Flow::kContinue;
    case StmtKind::kGeneration: {
      const auto& node = static_cast<const GenerationStmt&>(stmt);
      FrameScope scope(*this, frame_, &node.scope);
      return exec_body(node.body);
    }
  }
  return Flow::kNormal;
}

Status Evaluator::exec_output(const OutputStmt& stmt) {
  HEARTH_ASSIGN_OR_RETURN(Value value, eval(*stmt.expr));
  return positioned(stmt.pos, emit_value(value));
}

Result<Evaluator::Flow> Evaluator::exec_if(const IfStmt& stmt) {
  HEARTH_ASSIGN_OR_RETURN(Value test, eval(*stmt.test));
  if (truthy(test)) return exec_body(stmt.body);
  for (const auto& elif : stmt.elifs) {
    HEARTH_ASSIGN_OR_RETURN(Value elif_test, eval(*elif->test));
    if (truthy(elif_test)) return exec_body(elif->body);
  }
  return exec_body(stmt.else_body);
}

Status Evaluator::assign(const Target& target, const Value& value, Frame& frame) {
  if (!target.is_tuple) {
    frame.set(target.name, value);
    return Status::ok();
  }
  if (!value.is_list() && !value.is_dict() && !value.is_string() && !value.is_undefined()) {
    return positioned(target.pos,
                      render_error("cannot unpack non-iterable " + type_name(value) + " object"));
  }
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, at(target.pos, iterate(value)));
  const size_t expected = target.items.size();
  if (items.size() > expected) {
    return positioned(target.pos, render_error("too many values to unpack (expected " +
                                               std::to_string(expected) + ")"));
  }
  if (items.size() < expected) {
    return positioned(target.pos, render_error("not enough values to unpack (expected " +
                                               std::to_string(expected) + ", got " +
                                               std::to_string(items.size()) + ")"));
  }
  for (size_t i = 0; i < expected; ++i) {
    HEARTH_RETURN_IF_ERROR(assign(target.items[i], items[i], frame));
  }
  return Status::ok();
}

Result<Evaluator::Flow> Evaluator::exec_for(const ForStmt& stmt) {
  HEARTH_ASSIGN_OR_RETURN(Value iterable, eval(*stmt.iter));
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, at(stmt.iter->pos, iterate(iterable)));
  return run_loop(stmt, std::move(items), 0, frame_);
}

Result<Evaluator::Flow> Evaluator::run_loop(const ForStmt& stmt, std::vector<Value> items,
                                            int depth0, Frame* parent) {
  LoopContext::ItemFilter filter;
  if (stmt.filter != nullptr) {
    // The `if` clause sees the loop variables and the enclosing scope, not the loop body's.
    filter = [this, &stmt, parent](const Value& item) -> Result<bool> {
      FrameScope scope(*this, parent, nullptr);
      HEARTH_RETURN_IF_ERROR(assign(stmt.target, item, *scope.frame()));
      HEARTH_ASSIGN_OR_RETURN(Value keep, eval(*stmt.filter));
      return truthy(keep);
    };
  }
  auto loop = std::make_shared<LoopContext>(std::move(items), std::move(filter), depth0);
  loop->statement = &stmt;
  loop->parent_frame = parent;
  const Value loop_value = Value::object(loop);
  Frame* const saved = frame_;
  Frame* frame = nullptr;
  Status status;
  // Jinja2 clears its "no iteration" flag at the end of the loop body, so the else branch
  // also runs when every iteration left the body through break or continue.
  bool body_completed = false;
  while (true) {
    Result<std::optional<Value>> item = loop->next();
    if (!item.is_ok()) {
      status = item.status();
      break;
    }
    if (!item->has_value()) break;
    if (++loop_iterations_ > options_.limits.max_loop_iterations) {
      status = positioned(stmt.pos, Status(ErrorCode::kResourceExhausted,
                                           "loops exceeded the limit of " +
                                               std::to_string(options_.limits.max_loop_iterations) +
                                               " iterations"));
      break;
    }
    // Each iteration starts afresh from the enclosing scope, as in Jinja2.
    if (frame != nullptr) release_frame(frame);
    frame = acquire_frame(parent, &stmt.body_scope);
    frame->set(program_.loop_id, loop_value);
    status = assign(stmt.target, **item, *frame);
    if (!status.is_ok()) break;
    frame_ = frame;
    Result<Flow> flow = exec_body(stmt.body);
    frame_ = saved;
    if (!flow.is_ok()) {
      status = flow.status();
      break;
    }
    if (*flow == Flow::kBreak) break;
    if (*flow == Flow::kNormal) body_completed = true;
  }
  frame_ = saved;
  if (frame != nullptr) release_frame(frame);
  loop->finish();
  HEARTH_RETURN_IF_ERROR(status);
  if (body_completed || stmt.else_body.empty()) return Flow::kNormal;
  FrameScope scope(*this, parent, &stmt.else_scope);
  return exec_body(stmt.else_body);
}

Status Evaluator::exec_set_namespace_attr(const NamespaceRef& target, const Value* value,
                                          const Expr* value_expr, SourcePos pos) {
  const Value* found = lookup(target.name);
  const Value object = found != nullptr ? *found : Value();
  // Jinja2 checks the target before evaluating the value.
  if (!object.is_object() || object.object_ref().type_name() != "Namespace") {
    return positioned(pos, render_error("cannot assign attribute on non-namespace object"));
  }
  if (value_expr != nullptr) {
    HEARTH_ASSIGN_OR_RETURN(Value computed, eval(*value_expr));
    return positioned(pos, object.object_ref().set_attr(target.attr, std::move(computed)));
  }
  return positioned(pos, object.object_ref().set_attr(target.attr, *value));
}

// Renders a block body in its own frame into a string, then applies the block's filter
// (evaluated in that frame, as Jinja2 does).
Result<Value> Evaluator::capture_body(const Body& body, const ScopeInfo& scope, const Expr* filter,
                                      Flow* flow) {
  FrameScope frame(*this, frame_, &scope);
  std::string buffer;
  {
    OutputCapture capture(*this, &buffer);
    HEARTH_ASSIGN_OR_RETURN(*flow, exec_body(body));
  }
  if (*flow != Flow::kNormal) return Value();
  Value text(std::move(buffer));
  if (filter == nullptr) return text;
  Value saved = std::move(block_input_);
  block_input_ = std::move(text);
  Result<Value> filtered = eval(*filter);
  block_input_ = std::move(saved);
  return filtered;
}

Result<Evaluator::Flow> Evaluator::exec_set_block(const SetBlockStmt& stmt) {
  Flow flow = Flow::kNormal;
  HEARTH_ASSIGN_OR_RETURN(Value value,
                          capture_body(stmt.body, stmt.scope, stmt.filter.get(), &flow));
  if (flow != Flow::kNormal) return flow;  // break/continue inside: nothing is assigned
  if (stmt.is_namespace_attr) {
    HEARTH_RETURN_IF_ERROR(
        exec_set_namespace_attr(stmt.namespace_target, &value, nullptr, stmt.pos));
  } else {
    HEARTH_RETURN_IF_ERROR(assign(stmt.target, value, *frame_));
  }
  return Flow::kNormal;
}

Result<Evaluator::Flow> Evaluator::exec_filter_block(const FilterBlockStmt& stmt) {
  Flow flow = Flow::kNormal;
  HEARTH_ASSIGN_OR_RETURN(Value value,
                          capture_body(stmt.body, stmt.scope, stmt.filter.get(), &flow));
  if (flow != Flow::kNormal) return flow;
  HEARTH_RETURN_IF_ERROR(positioned(stmt.pos, emit_value(value)));
  return Flow::kNormal;
}

Status Evaluator::exec_call_block(const CallBlockStmt& stmt) {
  const Value caller = make_macro(*stmt.caller, frame_);
  HEARTH_ASSIGN_OR_RETURN(Value callee, eval(*stmt.call->callee));
  CallArgs args;
  HEARTH_RETURN_IF_ERROR(eval_call_args(stmt.call->args, args));
  args.keyword.emplace_back("caller", caller);
  HEARTH_ASSIGN_OR_RETURN(Value result, at(stmt.call->pos, call_value(callee, args)));
  return positioned(stmt.pos, emit_value(result));
}

Result<Evaluator::Flow> Evaluator::exec_with(const WithStmt& stmt) {
  // The values are computed in the enclosing scope before any target is bound.
  std::vector<Value> values;
  values.reserve(stmt.values.size());
  for (const auto& expr : stmt.values) {
    HEARTH_ASSIGN_OR_RETURN(Value value, eval(*expr));
    values.push_back(std::move(value));
  }
  FrameScope scope(*this, frame_, &stmt.scope);
  for (size_t i = 0; i < values.size(); ++i) {
    HEARTH_RETURN_IF_ERROR(assign(stmt.targets[i], values[i], *scope.frame()));
  }
  return exec_body(stmt.body);
}

}  // namespace hearth::jinja

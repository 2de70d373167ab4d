// The tree-walking evaluator: renders a parsed Program over a JSON context with Jinja2's
// runtime semantics and the render Limits.
//
// Scoping follows Jinja2's compiled code: the template, each loop iteration, each macro and
// caller call, and each with/filter/set/generation block body get a Frame; `if` does not.
// Reads walk the frames outwards (a frame's parent is its lexical parent, so macros see the
// names of the scope they were defined in), then the context and builtin globals; writes go
// to the current frame. A frame a macro or caller closes over is kept alive ("captured") for
// the rest of the render, as Python's closures keep theirs.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "jinja/ast.h"
#include "jinja/builtins.h"
#include "jinja/parser.h"
#include "jinja/template.h"

namespace hearth::jinja {

class LoopContext;

struct Frame {
  Frame* parent = nullptr;
  std::vector<std::pair<NameId, Value>> vars;
  bool captured = false;

  Value* find(NameId id) {
    for (auto& [key, value] : vars) {
      if (key == id) return &value;
    }
    return nullptr;
  }
  void set(NameId id, Value value) {
    if (Value* existing = find(id)) {
      *existing = std::move(value);
    } else {
      vars.emplace_back(id, std::move(value));
    }
  }
};

class Evaluator final : public Interp {
 public:
  Evaluator(const detail::Program& program, const RenderOptions& options);
  ~Evaluator() override;
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;

  Result<std::string> render(const nlohmann::ordered_json& context);

  // Interp.
  Result<Value> call(const Value& callee, CallArgs args) override;
  Result<Value> apply_filter(std::string_view name, const Value& input, CallArgs args) override;
  Result<bool> apply_test(std::string_view name, const Value& input, CallArgs args) override;
  Status charge(size_t bytes) override;
  std::time_t now() const override;

  // Runs a macro or caller body (the callables made by make_macro call this).
  Result<Value> invoke_macro(const MacroDef& def, Frame* closure, CallArgs& args);

 private:
  enum class Flow : uint8_t { kNormal, kBreak, kContinue };
  class FrameScope;
  class OutputCapture;

  // Statements (evaluator.cpp).
  Result<Flow> exec_body(const Body& body);
  Result<Flow> exec(const Stmt& stmt);
  Status exec_output(const OutputStmt& stmt);
  Result<Flow> exec_if(const IfStmt& stmt);
  Result<Flow> exec_for(const ForStmt& stmt);
  Result<Flow> run_loop(const ForStmt& stmt, std::vector<Value> items, int depth0, Frame* parent);
  Status exec_set_namespace_attr(const NamespaceRef& target, const Value* value,
                                 const Expr* value_expr, SourcePos pos);
  Result<Flow> exec_set_block(const SetBlockStmt& stmt);
  Status exec_call_block(const CallBlockStmt& stmt);
  Result<Flow> exec_filter_block(const FilterBlockStmt& stmt);
  Result<Flow> exec_with(const WithStmt& stmt);
  Status assign(const Target& target, const Value& value, Frame& frame);
  Result<Value> capture_body(const Body& body, const ScopeInfo& scope, const Expr* filter,
                             Flow* flow);

  // Expressions (evaluator_expr.cpp).
  Result<Value> eval(const Expr& expr);
  Result<Value> eval_list(const ListExpr& expr);
  Result<Value> eval_dict(const DictExpr& expr);
  Result<Value> eval_compare(const CompareExpr& expr);
  Result<Value> eval_concat(const ConcatExpr& expr);
  Result<Value> eval_get_attr(const GetAttrExpr& expr);
  Result<Value> attribute_of(const Value& object, const std::string& name, SourcePos pos);
  Result<Value> eval_get_item(const GetItemExpr& expr);
  Result<Value> eval_slice(const Value& object, const SliceExpr& slice);
  Result<Value> eval_filter(const FilterExpr& expr);
  Result<Value> eval_test(const TestExpr& expr);

  // Calls (evaluator_call.cpp).
  Result<Value> eval_call(const CallExpr& expr);
  Status eval_call_args(const CallArgsExpr& args, CallArgs& out);
  Result<Value> call_value(const Value& callee, CallArgs& args);
  Result<Value> call_loop(LoopContext& loop, CallArgs& args);
  Value make_macro(const MacroDef& def, Frame* closure);
  Status bind_macro_args(const MacroDef& def, CallArgs& args, Frame& frame);

  // Frames.
  Frame* acquire_frame(Frame* parent, const ScopeInfo* scope);
  void release_frame(Frame* frame);
  void capture(Frame* frame);
  const Value* lookup(NameId id) const;

  // Output, limits, error positions.
  Status append(std::string_view text);
  Status emit_value(const Value& value);
  Status count_step();
  // The per-node check of exec() and eval(): one step more, and stack left. Inline and
  // branch-only on the common path; the Status is built only when a limit is hit.
  bool step_allowed() {
    return ++steps_ <= options_.limits.max_steps &&
           reinterpret_cast<uintptr_t>(__builtin_frame_address(0)) >= stack_floor_;
  }
  Status step_error(SourcePos pos);
  Status positioned(SourcePos pos, const Status& status);
  template <typename T>
  Result<T> at(SourcePos pos, Result<T> result) {
    if (result.is_ok()) return result;
    return positioned(pos, result.status());
  }

  const detail::Program& program_;
  const RenderOptions& options_;
  std::vector<Value> globals_;  // by NameId: context values and builtin globals
  std::vector<uint8_t> has_global_;
  std::vector<std::unique_ptr<Frame>> frames_;  // every frame of this render
  std::vector<Frame*> free_frames_;
  Frame* frame_ = nullptr;
  std::string* out_ = nullptr;
  Value block_input_;  // the rendered body a filter block's or set block's filter receives
  size_t output_bytes_ = 0;
  uint64_t steps_ = 0;
  uint64_t loop_iterations_ = 0;
  int call_depth_ = 0;
  uintptr_t stack_floor_ = 0;    // lowest frame address evaluation may reach
  std::string last_positioned_;  // message of the last error given a position
};

// Enters a new frame for a block body and leaves it (recycling it unless captured).
class Evaluator::FrameScope {
 public:
  FrameScope(Evaluator& evaluator, Frame* parent, const ScopeInfo* scope)
      : evaluator_(evaluator), saved_(evaluator.frame_) {
    frame_ = evaluator.acquire_frame(parent, scope);
    evaluator.frame_ = frame_;
  }
  ~FrameScope() {
    evaluator_.frame_ = saved_;
    evaluator_.release_frame(frame_);
  }
  FrameScope(const FrameScope&) = delete;
  FrameScope& operator=(const FrameScope&) = delete;
  Frame* frame() const { return frame_; }

 private:
  Evaluator& evaluator_;
  Frame* saved_;
  Frame* frame_;
};

// Redirects output into a buffer (macro bodies, set and filter blocks).
class Evaluator::OutputCapture {
 public:
  OutputCapture(Evaluator& evaluator, std::string* buffer)
      : evaluator_(evaluator), saved_(evaluator.out_) {
    evaluator.out_ = buffer;
  }
  ~OutputCapture() { evaluator_.out_ = saved_; }
  OutputCapture(const OutputCapture&) = delete;
  OutputCapture& operator=(const OutputCapture&) = delete;

 private:
  Evaluator& evaluator_;
  std::string* saved_;
};

}  // namespace hearth::jinja

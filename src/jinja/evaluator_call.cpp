// Calls: argument evaluation (*args, **kwargs), macros with Jinja2's Macro.__call__ binding
// rules, callers, recursive loops, and the Interp entry points builtins use.
#include "jinja/evaluator.h"
#include "jinja/evaluator_ops.h"
#include "jinja/objects.h"

namespace hearth::jinja {

namespace {

// Counts nesting of macro, caller and recursive-loop calls against Limits::max_call_depth.
class CallDepth {
 public:
  explicit CallDepth(int& depth) : depth_(depth) { ++depth_; }
  ~CallDepth() { --depth_; }
  CallDepth(const CallDepth&) = delete;
  CallDepth& operator=(const CallDepth&) = delete;
  Status check(int limit) const {
    if (depth_ <= limit) return Status::ok();
    return Status(ErrorCode::kResourceExhausted, "calls nested deeper than the limit of " +
                                                     std::to_string(limit) +
                                                     " (macro, caller or recursive loop)");
  }

 private:
  int& depth_;
};

}  // namespace

Status Evaluator::eval_call_args(const CallArgsExpr& args, CallArgs& out) {
  out.positional.reserve(args.positional.size());
  for (const auto& arg : args.positional) {
    HEARTH_ASSIGN_OR_RETURN(Value value, eval(*arg));
    out.positional.push_back(std::move(value));
  }
  if (args.star_args != nullptr) {
    HEARTH_ASSIGN_OR_RETURN(Value value, eval(*args.star_args));
    if (!value.is_list() && !value.is_dict() && !value.is_string() && !value.is_undefined()) {
      return positioned(args.star_args->pos,
                        render_error("Value after * must be an iterable, not " + type_name(value)));
    }
    HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, at(args.star_args->pos, iterate(value)));
    for (Value& item : items) out.positional.push_back(std::move(item));
  }
  for (const auto& [name, arg] : args.keyword) {
    HEARTH_ASSIGN_OR_RETURN(Value value, eval(*arg));
    out.keyword.emplace_back(name, std::move(value));
  }
  if (args.star_kwargs != nullptr) {
    HEARTH_ASSIGN_OR_RETURN(Value value, eval(*args.star_kwargs));
    if (!value.is_dict()) {
      return positioned(args.star_kwargs->pos,
                        render_error("jinja2.sandbox.SandboxedEnvironment.call() argument "
                                     "after ** must be a mapping, not " +
                                     type_name(value)));
    }
    for (const auto& [key, item] : value.dict_data().entries) {
      if (!key.is_string()) {
        return positioned(args.star_kwargs->pos, render_error("keywords must be strings"));
      }
      for (const auto& existing : out.keyword) {
        if (existing.first == key.as_string()) {
          return positioned(
              args.star_kwargs->pos,
              render_error("got multiple values for keyword argument '" + key.as_string() + "'"));
        }
      }
      out.keyword.emplace_back(key.as_string(), item);
    }
  }
  return Status::ok();
}

Result<Value> Evaluator::eval_call(const CallExpr& expr) {
  Value callee;
  if (expr.callee->kind == ExprKind::kGetAttr) {
    const auto& attr = static_cast<const GetAttrExpr&>(*expr.callee);
    HEARTH_ASSIGN_OR_RETURN(Value object, eval(*attr.object));
    // obj.method(...) on str/list/dict: call the method directly instead of binding it first
    // (the same lookup order as get_attr: methods come before dict keys).
    const bool has_methods = !object.is_undefined() && !object.is_object() && !object.is_callable();
    if (has_methods && !attr.name.empty() && attr.name[0] != '_') {
      if (const MethodFn method = find_method(object.kind(), attr.name)) {
        CallArgs args;
        HEARTH_RETURN_IF_ERROR(eval_call_args(expr.args, args));
        return at(expr.pos, method(object, args, *this));
      }
    }
    HEARTH_ASSIGN_OR_RETURN(callee, attribute_of(object, attr.name, attr.pos));
  } else {
    HEARTH_ASSIGN_OR_RETURN(callee, eval(*expr.callee));
  }
  CallArgs args;
  HEARTH_RETURN_IF_ERROR(eval_call_args(expr.args, args));
  return at(expr.pos, call_value(callee, args));
}

Result<Value> Evaluator::call_value(const Value& callee, CallArgs& args) {
  switch (callee.kind()) {
    case Kind::kCallable:
      return callee.callable_ref().fn(args, *this);
    case Kind::kUndefined:
      return undefined_error(callee);
    case Kind::kObject:
      if (auto* loop = dynamic_cast<LoopContext*>(&callee.object_ref())) {
        return call_loop(*loop, args);
      }
      [[fallthrough]];
    default:
      return render_error("'" + type_name(callee) + "' object is not callable");
  }
}

// loop(children) inside a `recursive` loop: renders the loop body over the children, one
// level deeper, and returns the output.
Result<Value> Evaluator::call_loop(LoopContext& loop, CallArgs& args) {
  if (loop.statement == nullptr || !loop.statement->recursive) {
    return render_error("The loop must have the 'recursive' marker to be called recursively.");
  }
  if (args.positional.size() != 1 || !args.keyword.empty()) {
    return render_error("loop() takes exactly one argument, the items to loop over");
  }
  CallDepth depth(call_depth_);
  HEARTH_RETURN_IF_ERROR(depth.check(options_.limits.max_call_depth));
  HEARTH_ASSIGN_OR_RETURN(std::vector<Value> items, iterate(args.positional.front()));
  std::string buffer;
  {
    OutputCapture capture(*this, &buffer);
    HEARTH_RETURN_IF_ERROR(
        run_loop(*loop.statement, std::move(items), loop.depth0() + 1, loop.parent_frame).status());
  }
  return Value(std::move(buffer));
}

Value Evaluator::make_macro(const MacroDef& def, Frame* closure) {
  capture(closure);
  const MacroDef* definition = &def;
  return Value::callable(
      def.name,
      [definition, closure](CallArgs& args, Interp& interp) -> Result<Value> {
        auto* evaluator = dynamic_cast<Evaluator*>(&interp);
        if (evaluator == nullptr) {
          return Status(ErrorCode::kInternal, "a macro was called outside of its render");
        }
        return evaluator->invoke_macro(*definition, closure, args);
      },
      /*is_macro=*/true);
}

// Jinja2's Macro.__call__: positional arguments first, then keywords for the remaining
// parameters; caller/varargs/kwargs only when the body uses them; defaults are evaluated in the
// macro's scope, in order, when the argument is missing.
Status Evaluator::bind_macro_args(const MacroDef& def, CallArgs& args, Frame& frame) {
  const size_t count = def.params.size();
  std::vector<std::optional<Value>> values(count);
  for (size_t i = 0; i < count && i < args.positional.size(); ++i) values[i] = args.positional[i];
  bool found_caller = def.explicit_caller;
  if (args.positional.size() < count) {
    found_caller = false;
    for (size_t i = args.positional.size(); i < count; ++i) {
      for (auto it = args.keyword.begin(); it != args.keyword.end(); ++it) {
        if (it->first != def.param_names[i]) continue;
        values[i] = std::move(it->second);
        args.keyword.erase(it);
        break;
      }
      if (def.param_names[i] == "caller") found_caller = true;
    }
  }
  if (def.uses_caller && !found_caller) {
    Value caller = def.undefined_caller;
    for (auto it = args.keyword.begin(); it != args.keyword.end(); ++it) {
      if (it->first != "caller") continue;
      if (!it->second.is_none()) caller = std::move(it->second);
      args.keyword.erase(it);
      break;
    }
    frame.set(def.caller_id, std::move(caller));
  }
  const std::string macro_name = "macro '" + def.name + "'";
  if (def.uses_kwargs) {
    Value kwargs = Value::dict();
    for (auto& [key, value] : args.keyword) kwargs.dict_data().set(Value(key), std::move(value));
    frame.set(def.kwargs_id, std::move(kwargs));
  } else if (!args.keyword.empty()) {
    for (const auto& keyword : args.keyword) {
      if (keyword.first == "caller") {
        return render_error(macro_name +
                            " was invoked with two values for the special caller argument. This "
                            "is most likely a bug.");
      }
    }
    return render_error(macro_name + " takes no keyword argument '" + args.keyword.front().first +
                        "'");
  }
  if (def.uses_varargs) {
    std::vector<Value> extra;
    for (size_t i = count; i < args.positional.size(); ++i) extra.push_back(args.positional[i]);
    frame.set(def.varargs_id, Value::tuple(std::move(extra)));
  } else if (args.positional.size() > count) {
    return render_error(macro_name + " takes not more than " + std::to_string(count) +
                        " argument(s)");
  }
  for (size_t i = 0; i < count; ++i) {
    frame.set(def.params[i], values[i] ? *values[i] : def.missing_params[i]);
  }
  const size_t first_default = count - def.defaults.size();
  for (size_t i = first_default; i < count; ++i) {
    if (values[i]) continue;
    HEARTH_ASSIGN_OR_RETURN(Value value, eval(*def.defaults[i - first_default]));
    frame.set(def.params[i], std::move(value));
  }
  return Status::ok();
}

Result<Value> Evaluator::invoke_macro(const MacroDef& def, Frame* closure, CallArgs& args) {
  CallDepth depth(call_depth_);
  HEARTH_RETURN_IF_ERROR(depth.check(options_.limits.max_call_depth));
  FrameScope scope(*this, closure, &def.scope);
  HEARTH_RETURN_IF_ERROR(bind_macro_args(def, args, *scope.frame()));
  std::string buffer;
  {
    OutputCapture capture(*this, &buffer);
    HEARTH_RETURN_IF_ERROR(exec_body(def.body).status());
  }
  return Value(std::move(buffer));
}

// --- Interp -----------------------------------------------------------------------------------

Result<Value> Evaluator::call(const Value& callee, CallArgs args) {
  HEARTH_RETURN_IF_ERROR(count_step());
  return call_value(callee, args);
}

Result<Value> Evaluator::apply_filter(std::string_view name, const Value& input, CallArgs args) {
  HEARTH_RETURN_IF_ERROR(count_step());
  const FilterFn fn = find_filter(name);
  if (fn == nullptr) return render_error("No filter named '" + std::string(name) + "'.");
  return fn(input, args, *this);
}

Result<bool> Evaluator::apply_test(std::string_view name, const Value& input, CallArgs args) {
  HEARTH_RETURN_IF_ERROR(count_step());
  const TestFn fn = find_test(name);
  if (fn == nullptr) return render_error("No test named '" + std::string(name) + "'.");
  return fn(input, args, *this);
}

}  // namespace hearth::jinja

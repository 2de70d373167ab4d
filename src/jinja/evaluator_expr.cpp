// Expressions: names, literals, operators, attribute and item access, slices, filters, tests.
#include <optional>

#include "jinja/evaluator.h"
#include "jinja/evaluator_ops.h"
#include "jinja/objects.h"
#include "jinja/pystr.h"

namespace hearth::jinja {

Result<Value> Evaluator::eval(const Expr& expr) {
  if (!step_allowed()) return step_error(expr.pos);
  switch (expr.kind) {
    case ExprKind::kConst:
      return static_cast<const ConstExpr&>(expr).value;
    case ExprKind::kName: {
      const auto& node = static_cast<const NameExpr&>(expr);
      if (const Value* value = lookup(node.id)) return *value;
      return node.undefined;
    }
    case ExprKind::kList:
      return eval_list(static_cast<const ListExpr&>(expr));
    case ExprKind::kDict:
      return eval_dict(static_cast<const DictExpr&>(expr));
    case ExprKind::kUnary: {
      const auto& node = static_cast<const UnaryExpr&>(expr);
      HEARTH_ASSIGN_OR_RETURN(Value operand, eval(*node.operand));
      if (node.op == UnaryOp::kNot) return Value(!truthy(operand));
      return at(node.pos, unary_op(node.op, operand));
    }
    case ExprKind::kBinary: {
      const auto& node = static_cast<const BinaryExpr&>(expr);
      HEARTH_ASSIGN_OR_RETURN(Value left, eval(*node.left));
      HEARTH_ASSIGN_OR_RETURN(Value right, eval(*node.right));
      return at(node.pos, binary_op(node.op, left, right, *this));
    }
    case ExprKind::kLogical: {  // Python returns the operand that decided
      const auto& node = static_cast<const LogicalExpr&>(expr);
      HEARTH_ASSIGN_OR_RETURN(Value left, eval(*node.left));
      if (truthy(left) != node.is_and) return left;
      return eval(*node.right);
    }
    case ExprKind::kCompare:
      return eval_compare(static_cast<const CompareExpr&>(expr));
    case ExprKind::kConcat:
      return eval_concat(static_cast<const ConcatExpr&>(expr));
    case ExprKind::kCondExpr: {
      const auto& node = static_cast<const CondExpr&>(expr);
      HEARTH_ASSIGN_OR_RETURN(Value test, eval(*node.test));
      if (truthy(test)) return eval(*node.then_expr);
      if (node.else_expr == nullptr) return node.missing_else;
      return eval(*node.else_expr);
    }
    case ExprKind::kGetAttr:
      return eval_get_attr(static_cast<const GetAttrExpr&>(expr));
    case ExprKind::kGetItem:
      return eval_get_item(static_cast<const GetItemExpr&>(expr));
    case ExprKind::kSlice:
      // Only `x[a:b, c]` gets here: Python refuses a tuple holding a slice as an index.
      return positioned(expr.pos, render_error("indices must be integers or slices, not tuple"));
    case ExprKind::kCall:
      return eval_call(static_cast<const CallExpr&>(expr));
    case ExprKind::kFilter:
      return eval_filter(static_cast<const FilterExpr&>(expr));
    case ExprKind::kTest:
      return eval_test(static_cast<const TestExpr&>(expr));
  }
  return Value();
}

Result<Value> Evaluator::eval_list(const ListExpr& expr) {
  std::vector<Value> items;
  items.reserve(expr.items.size());
  for (const auto& item : expr.items) {
    HEARTH_ASSIGN_OR_RETURN(Value value, eval(*item));
    items.push_back(std::move(value));
  }
  return expr.is_tuple ? Value::tuple(std::move(items)) : Value::list(std::move(items));
}

Result<Value> Evaluator::eval_dict(const DictExpr& expr) {
  Value dict = Value::dict();
  for (const auto& [key_expr, value_expr] : expr.items) {
    HEARTH_ASSIGN_OR_RETURN(Value key, eval(*key_expr));
    HEARTH_ASSIGN_OR_RETURN(Value value, eval(*value_expr));
    if (!is_hashable(key)) {
      return positioned(key_expr->pos, render_error("unhashable type: '" + type_name(key) + "'"));
    }
    dict.dict_data().set(std::move(key), std::move(value));
  }
  return dict;
}

Result<Value> Evaluator::eval_compare(const CompareExpr& expr) {
  HEARTH_ASSIGN_OR_RETURN(Value left, eval(*expr.first));
  for (const auto& operand : expr.rest) {
    HEARTH_ASSIGN_OR_RETURN(Value right, eval(*operand.expr));
    HEARTH_ASSIGN_OR_RETURN(bool holds, at(operand.pos, compare_values(left, right, operand.op)));
    if (!holds) return Value(false);
    left = std::move(right);
  }
  return Value(true);
}

Result<Value> Evaluator::eval_concat(const ConcatExpr& expr) {
  std::string out;
  for (const auto& part : expr.parts) {
    HEARTH_ASSIGN_OR_RETURN(Value value, eval(*part));
    if (value.is_string()) {
      out += value.as_string();
    } else {
      out += to_str(value);
    }
  }
  HEARTH_RETURN_IF_ERROR(positioned(expr.pos, charge(out.size())));
  return Value(std::move(out));
}

Result<Value> Evaluator::attribute_of(const Value& object, const std::string& name, SourcePos pos) {
  if (object.is_object() && !name.empty() && name[0] != '_') {
    if (const auto* loop = dynamic_cast<const LoopContext*>(&object.object_ref())) {
      return at(pos, loop->attribute(name));
    }
  }
  return at(pos, get_attr(object, name));
}

Result<Value> Evaluator::eval_get_attr(const GetAttrExpr& expr) {
  HEARTH_ASSIGN_OR_RETURN(Value object, eval(*expr.object));
  return attribute_of(object, expr.name, expr.pos);
}

Result<Value> Evaluator::eval_get_item(const GetItemExpr& expr) {
  HEARTH_ASSIGN_OR_RETURN(Value object, eval(*expr.object));
  if (expr.key->kind == ExprKind::kSlice) {
    return eval_slice(object, static_cast<const SliceExpr&>(*expr.key));
  }
  HEARTH_ASSIGN_OR_RETURN(Value key, eval(*expr.key));
  return at(expr.pos, get_item(object, key));
}

namespace {

// Python's slice.indices() followed by the walk over the selected positions.
std::vector<size_t> slice_positions(size_t size, std::optional<int64_t> start_arg,
                                    std::optional<int64_t> stop_arg, int64_t step) {
  const auto length = static_cast<int64_t>(size);
  auto clamp = [&](std::optional<int64_t> value, int64_t fallback) {
    if (!value) return fallback;
    int64_t v = *value;
    if (v < 0) {
      v += length;
      if (v < 0) v = step < 0 ? -1 : 0;
    } else if (v >= length) {
      v = step < 0 ? length - 1 : length;
    }
    return v;
  };
  const int64_t start = clamp(start_arg, step < 0 ? length - 1 : 0);
  const int64_t stop = clamp(stop_arg, step < 0 ? -1 : length);
  std::vector<size_t> positions;
  for (int64_t i = start; step > 0 ? i < stop : i > stop; i += step) {
    positions.push_back(static_cast<size_t>(i));
  }
  return positions;
}

}  // namespace

Result<Value> Evaluator::eval_slice(const Value& object, const SliceExpr& slice) {
  std::optional<int64_t> bounds[3];
  const Expr* parts[3] = {slice.start.get(), slice.stop.get(), slice.step.get()};
  for (int i = 0; i < 3; ++i) {
    if (parts[i] == nullptr) continue;
    HEARTH_ASSIGN_OR_RETURN(Value bound, eval(*parts[i]));
    if (bound.is_none()) continue;
    if (!bound.is_int() && !bound.is_bool()) {
      return positioned(parts[i]->pos,
                        render_error("slice indices must be integers or None or have an "
                                     "__index__ method"));
    }
    bounds[i] = bound.as_int();
  }
  const int64_t step = bounds[2].value_or(1);
  if (object.is_undefined()) return positioned(slice.pos, undefined_error(object));
  if (object.is_dict()) return positioned(slice.pos, render_error("unhashable type: 'slice'"));
  if (!object.is_list() && !object.is_string()) {
    return positioned(slice.pos,
                      render_error("'" + type_name(object) + "' object is not subscriptable"));
  }
  if (step == 0) return positioned(slice.pos, render_error("slice step cannot be zero"));
  if (object.is_list()) {
    const auto& items = object.list_data().items;
    std::vector<Value> out;
    for (size_t i : slice_positions(items.size(), bounds[0], bounds[1], step)) {
      out.push_back(items[i]);
    }
    return object.is_tuple() ? Value::tuple(std::move(out)) : Value::list(std::move(out));
  }
  const std::string& text = object.as_string();
  std::string out;
  if (pystr::is_ascii(text)) {
    for (size_t i : slice_positions(text.size(), bounds[0], bounds[1], step)) out += text[i];
  } else {
    const std::u32string code_points = pystr::decode(text);
    std::u32string selected;
    for (size_t i : slice_positions(code_points.size(), bounds[0], bounds[1], step)) {
      selected += code_points[i];
    }
    out = pystr::encode(selected);
  }
  return Value(std::move(out));
}

Result<Value> Evaluator::eval_filter(const FilterExpr& expr) {
  Value input;
  if (expr.input != nullptr) {
    HEARTH_ASSIGN_OR_RETURN(input, eval(*expr.input));
  } else {
    input = block_input_;  // the innermost filter of a filter or set block
  }
  CallArgs args;
  HEARTH_RETURN_IF_ERROR(eval_call_args(expr.args, args));
  if (expr.fn == nullptr) {
    return positioned(expr.pos, render_error("No filter named '" + expr.name + "' found."));
  }
  return at(expr.pos, expr.fn(input, args, *this));
}

Result<Value> Evaluator::eval_test(const TestExpr& expr) {
  HEARTH_ASSIGN_OR_RETURN(Value input, eval(*expr.input));
  CallArgs args;
  HEARTH_RETURN_IF_ERROR(eval_call_args(expr.args, args));
  if (expr.fn == nullptr) {
    return positioned(expr.pos, render_error("No test named '" + expr.name + "' found."));
  }
  HEARTH_ASSIGN_OR_RETURN(bool result, at(expr.pos, expr.fn(input, args, *this)));
  return Value(result);
}

}  // namespace hearth::jinja

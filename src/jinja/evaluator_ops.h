// Python's operators over values: arithmetic with Python's numeric rules (true division,
// floor division and modulo signs, bool as int), sequence concatenation and repetition,
// comparisons, and the errors Python raises for unsupported operand types.
#pragma once

#include <compare>

#include "jinja/ast.h"
#include "jinja/builtins.h"
#include "jinja/value.h"

namespace hearth::jinja {

// Exact comparison of two numbers (bool, int, float), as Python compares int with float.
std::partial_ordering compare_numbers(const Value& a, const Value& b);

// a <op> b for every CompareOp; ordering of incompatible types raises Python's TypeError,
// ordering with an undefined operand raises its UndefinedError.
Result<bool> compare_values(const Value& a, const Value& b, CompareOp op);

// a <op> b. `interp` is charged for strings and lists the operation builds.
Result<Value> binary_op(BinaryOp op, const Value& a, const Value& b, Interp& interp);

// -v, +v (not is handled by the evaluator).
Result<Value> unary_op(UnaryOp op, const Value& v);

// The UndefinedError an undefined value raises when used.
Status undefined_error(const Value& v);

}  // namespace hearth::jinja

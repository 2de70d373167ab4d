// Compares a Hearth response with a reference capture: same keys in the same order, same
// value types, equal deterministic values. Timing milliseconds, model paths and other
// per-run values are normalized away; probabilities compare within a tolerance (the two
// engines' float sums differ in order).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace hearth::test {

using OJson = nlohmann::ordered_json;

struct CompareOptions {
  bool values = true;  // false: keys and types only
  double prob_tolerance = 0.02;
};

// Differences found, one line each ("path: what"); empty when they match.
std::vector<std::string> compare_json(const OJson& expected, const OJson& actual,
                                      const CompareOptions& options = {});

}  // namespace hearth::test

#include "json_schema/int_range.h"

#include <algorithm>
#include <limits>
#include <vector>

namespace hearth::json_schema::detail {
namespace {

// Digits of magnitudes are handled as strings: bounds reach 2^63 and caps 10^19 - 1.
using Digits = std::string;

std::string digit_class(char lo, char hi) {
  if (lo == hi) return std::string("[") + lo + "]";
  return std::string("[") + lo + "-" + hi + "]";
}

std::string any_digits(size_t n) {
  if (n == 0) return "";
  if (n == 1) return "[0-9]";
  return "[0-9]{" + std::to_string(n) + "}";
}

bool all_of(const Digits& s, size_t from, char c) {
  return std::all_of(s.begin() + static_cast<ptrdiff_t>(from), s.end(),
                     [c](char x) { return x == c; });
}

void join_seq(std::string& out, const std::string& part) {
  if (part.empty()) return;
  if (!out.empty()) out += ' ';
  out += part;
}

// Strings of digits of a's length between a and b inclusive (same length, a <= b; leading
// zeros allowed here: callers make sure the first digit is nonzero where it must be).
std::string same_length_range(const Digits& a, const Digits& b) {
  size_t i = 0;
  while (i < a.size() && a[i] == b[i]) ++i;
  std::string prefix = i > 0 ? "\"" + a.substr(0, i) + "\"" : "";
  if (i == a.size()) return prefix;
  const size_t rest = a.size() - i - 1;
  const bool low_full = all_of(a, i + 1, '0');
  const bool high_full = all_of(b, i + 1, '9');
  std::vector<std::string> alts;
  char mid_lo = static_cast<char>(a[i] + 1), mid_hi = static_cast<char>(b[i] - 1);
  if (low_full) mid_lo = a[i];
  if (high_full) mid_hi = b[i];
  if (!low_full) {
    std::string alt = std::string("\"") + a[i] + "\"";
    join_seq(alt, same_length_range(a.substr(i + 1), Digits(rest, '9')));
    alts.push_back(alt);
  }
  if (mid_lo <= mid_hi) {
    std::string alt = digit_class(mid_lo, mid_hi);
    join_seq(alt, any_digits(rest));
    alts.push_back(alt);
  }
  if (!high_full) {
    std::string alt = std::string("\"") + b[i] + "\"";
    join_seq(alt, same_length_range(Digits(rest, '0'), b.substr(i + 1)));
    alts.push_back(alt);
  }
  std::string body = alts.size() == 1 ? alts[0] : "(";
  if (alts.size() > 1) {
    for (size_t k = 0; k < alts.size(); ++k) body += (k ? " | " : "") + alts[k];
    body += ")";
  }
  std::string out = prefix;
  join_seq(out, body);
  return out;
}

// Alternatives for the canonical decimal forms of [lo, hi] (lo <= hi, no sign).
std::vector<std::string> magnitude_range(const Digits& lo, const Digits& hi) {
  std::vector<std::string> alts;
  for (size_t len = lo.size(); len <= hi.size(); ++len) {
    Digits a = len == lo.size() ? lo : "1" + Digits(len - 1, '0');
    Digits b = len == hi.size() ? hi : Digits(len, '9');
    alts.push_back(same_length_range(a, b));
  }
  return alts;
}

Digits magnitude(int64_t v) {
  const uint64_t m = v < 0 ? uint64_t{0} - static_cast<uint64_t>(v) : static_cast<uint64_t>(v);
  return std::to_string(m);
}

// The cap on an unbounded side: 16 digits, or the other bound's length when longer.
Digits cap_for(const Digits& other) {
  return Digits(std::max<size_t>(16, other.size()), '9');
}

std::string alternation(const std::vector<std::string>& alts) {
  std::string out;
  for (size_t i = 0; i < alts.size(); ++i) out += (i ? " | " : "") + alts[i];
  return out;
}

}  // namespace

std::optional<std::string> integer_range_body(std::optional<int64_t> min_opt,
                                              std::optional<int64_t> max_opt) {
  // Plain values: GCC's maybe-uninitialized analysis trips over optionals here.
  const bool has_min = min_opt.has_value() && *min_opt != std::numeric_limits<int64_t>::min();
  const bool has_max = max_opt.has_value() && *max_opt != std::numeric_limits<int64_t>::max();
  const int64_t min = has_min ? *min_opt : 0;
  const int64_t max = has_max ? *max_opt : 0;
  if (!has_min && !has_max) return std::string("\"-\"? ([0] | [1-9] [0-9]{0,15})");
  if (has_min && has_max && min > max) return std::nullopt;

  std::vector<std::string> parts;
  // Negative values, as magnitudes after a '-'.
  if (!has_min || min < 0) {
    Digits lo, hi;
    if (has_max && max < 0) {
      lo = magnitude(max);
      hi = has_min ? magnitude(min) : cap_for(lo);
    } else {
      // The reference's '-' branch for a range crossing zero starts at 0, hence "-0".
      lo = has_min ? "0" : "1";
      hi = has_min ? magnitude(min) : Digits(16, '9');
    }
    parts.push_back("\"-\" (" + alternation(magnitude_range(lo, hi)) + ")");
  }
  // Non-negative values.
  if (!has_max || max >= 0) {
    const Digits lo = has_min && min > 0 ? magnitude(min) : "0";
    const Digits hi = has_max ? magnitude(max) : cap_for(lo);
    for (auto& alt : magnitude_range(lo, hi)) parts.push_back(std::move(alt));
  }
  return alternation(parts);
}

}  // namespace hearth::json_schema::detail

#include "support/text_match.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <gtest/gtest.h>
#include <pcre2.h>

#include <memory>
#include <string>

namespace hearth::test {

namespace {

bool matches(std::string_view text, std::string_view pattern, uint32_t options) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  std::unique_ptr<pcre2_code, decltype(&pcre2_code_free)> code(
      pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), options, &error,
                    &offset, nullptr),
      &pcre2_code_free);
  if (code == nullptr) {
    ADD_FAILURE() << "bad pattern " << pattern << " at " << offset;
    return false;
  }
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
      pcre2_match_data_create_from_pattern(code.get(), nullptr), &pcre2_match_data_free);
  return pcre2_match(code.get(), reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(), 0, 0,
                     data.get(), nullptr) >= 0;
}

}  // namespace

bool full_match(std::string_view text, std::string_view pattern) {
  return matches(text, pattern, PCRE2_ANCHORED | PCRE2_ENDANCHORED | PCRE2_DOTALL);
}

bool partial_match(std::string_view text, std::string_view pattern) {
  return matches(text, pattern, 0);
}

}  // namespace hearth::test

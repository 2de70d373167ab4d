// Regular-expression checks for tests, with PCRE2 (the project's regex library). The tests
// use it instead of std::regex, whose inlined compiler GCC 12 flags as reading an
// uninitialised std::function under the sanitizer build's -O1 (a false positive that
// -Werror turns into a build failure).
#pragma once

#include <string_view>

namespace hearth::test {

// Whether the whole of `text` matches `pattern`; a pattern that does not compile fails
// the calling test and matches nothing.
bool full_match(std::string_view text, std::string_view pattern);
// Whether `pattern` matches somewhere in `text` ('^' anchors at its start).
bool partial_match(std::string_view text, std::string_view pattern);

}  // namespace hearth::test

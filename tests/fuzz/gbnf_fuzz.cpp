// libFuzzer target for the GBNF parser and matcher: parse arbitrary bytes as a grammar; a
// failure must be a clean kInvalidArgument, and a grammar that loads is run over fixed
// strings, over the input's own bytes, and token by token over a small vocabulary, where
// allowed() and allows() must agree and every allowed token must be accepted.
//
//   build-fuzz/bin/gbnf_fuzz -dict=tests/fuzz/gbnf.dict NEW_CORPUS tests/fuzz/corpus/gbnf
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "../unit/grammar/gbnf_exercise.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const std::string problem = hearth::grammar::fuzz::exercise(text);
  if (!problem.empty()) {
    std::fprintf(stderr, "gbnf_fuzz: %s\n", problem.c_str());
    std::abort();
  }
  return 0;
}

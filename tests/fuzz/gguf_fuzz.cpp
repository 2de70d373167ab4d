// libFuzzer target for the GGUF reader: parse arbitrary bytes; a failure must be a clean
// kCorruptFile, and a success must read back consistently through the whole public API
// and survive a round trip through gguf::Writer.
//
//   build-fuzz/bin/gguf_fuzz -dict=tests/fuzz/gguf.dict NEW_CORPUS tests/fuzz/corpus/gguf
#include <cstdio>
#include <cstdlib>
#include <span>

#include "gguf_exercise.h"

namespace {

volatile uint64_t g_sink = 0;

[[noreturn]] void fail(const std::string& problem) {
  std::fprintf(stderr, "gguf_fuzz: %s\n", problem.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using hearth::ErrorCode;
  using hearth::gguf::File;
  auto file = File::parse(std::span<const uint8_t>(data, size), "fuzz");
  if (!file.is_ok()) {
    const hearth::Status status = file.status();
    if (status.code() != ErrorCode::kCorruptFile || status.message().empty())
      fail("unexpected error: " + status.to_string());
    return 0;
  }
  uint64_t checksum = 0;
  std::string problem = hearth::gguf::fuzz::exercise(*file, checksum);
  if (problem.empty()) problem = hearth::gguf::fuzz::check_rewrite(*file);
  if (!problem.empty()) fail(problem);
  g_sink = g_sink + checksum;
  return 0;
}

// libFuzzer target for request bodies and the field table: any input is parsed as a body
// (depth limit, invalid JSON, non-finite numbers) and, when it is JSON, read with the
// completion field table for /completion and for /infill; what parses is echoed as
// generation_settings. Every failure must be a 400 invalid_request_error whose message does
// not start with the JSON library's prefix; anything else (a crash, a throw, a 5xx) is a bug.
//
//   build-fuzz/bin/completion_fields_fuzz -dict=tests/fuzz/http.dict -max_total_time=600 \
//     /tmp/fields-corpus tests/fuzz/corpus/fields
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/fields/completion_fields.h"
#include "server/request_body.h"
#include "support/fake_scheduler.h"

namespace {

using namespace hearth;

std::shared_ptr<const tokenizer::Tokenizer> g_tok;

[[noreturn]] void fail(const std::string& problem) {
  std::fprintf(stderr, "completion_fields_fuzz: %s\n", problem.c_str());
  std::abort();
}

// The library's words are its "[json.exception.<kind>.<n>] " prefixes (a parse error may
// quote the input, so the words alone can appear in a message).
void check_error(const server::ApiError& e) {
  if (e.type != server::ErrorType::kInvalidRequest) fail("not a 400: " + e.message);
  const std::string json_prefix = "Invalid JSON in request body: ";
  std::string_view rest = e.message;
  if (rest.rfind(json_prefix, 0) == 0) rest.remove_prefix(json_prefix.size());
  if (rest.rfind("[json.exception.", 0) == 0) fail("library words: " + e.message);
}

std::string shared_dir() {
  if (const char* dir = std::getenv("HEARTH_SHARED_DIR")) return dir;
  return HEARTH_DEFAULT_SHARED_DIR;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_tok = test::load_tokenizer(shared_dir() + "/models/stories260K.gguf");
  if (!g_tok) std::abort();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  server::Json body;
  if (auto err = server::parse_json_body(
          std::string_view(reinterpret_cast<const char*>(data), size), body)) {
    check_error(*err);
    return 0;
  }
  server::RequestDefaults defaults;
  for (uint32_t route : {server::fields::kCompletion, server::fields::kInfill}) {
    server::CompletionSettings settings;
    if (auto err = server::parse_completion_settings(body, defaults, *g_tok, settings, route)) {
      check_error(*err);
      continue;
    }
    (void)server::dump_json(server::generation_settings_json(settings, true));
  }
  return 0;
}

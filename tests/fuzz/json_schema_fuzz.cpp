// libFuzzer target for the JSON Schema converter: any input that parses as JSON is
// converted; a failure must be a clean kInvalidArgument with the standard prefix, and a
// success must be a grammar the GBNF parser loads (anything else is a converter bug).
//
//   build-fuzz/bin/json_schema_fuzz NEW_CORPUS tests/fuzz/corpus/json_schema
#include <cstdio>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>

#include "grammar/grammar.h"
#include "json_schema/json_schema.h"

namespace {

[[noreturn]] void fail(const std::string& problem) {
  std::fprintf(stderr, "json_schema_fuzz: %s\n", problem.c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto schema = nlohmann::ordered_json::parse(data, data + size, nullptr, false);
  if (schema.is_discarded()) return 0;
  auto converted = hearth::json_schema::convert(schema);
  if (!converted.is_ok()) {
    const hearth::Status status = converted.status();
    if (status.code() != hearth::ErrorCode::kInvalidArgument ||
        status.message().rfind("JSON schema conversion failed:\n", 0) != 0) {
      fail("unexpected error: " + status.to_string());
    }
    return 0;
  }
  auto parsed = hearth::grammar::parse(converted->gbnf);
  if (!parsed.is_ok()) {
    fail("converter output does not parse: " + parsed.status().message() +
         "\nschema: " + schema.dump() + "\ngrammar:\n" + converted->gbnf);
  }
  return 0;
}

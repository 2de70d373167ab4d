// JSON Schema -> GBNF conversion as llama-server does it (spec: llama-server/grammar.md
// section 5). The accepted language of the produced grammar matches the reference; rule text
// and names are close to it but not byte-identical.
//
// Key order matters (properties are emitted in schema order, const/enum objects are
// serialized in source order), so callers that still have the schema text should parse it
// into nlohmann::ordered_json. The nlohmann::json overload works on a std::map-sorted copy.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json_fwd.hpp>
#include <string>
#include <vector>

#include "base/status.h"

namespace hearth::json_schema {

// Hard bounds against hostile schemas. The last five mirror grammar::Limits' defaults: a
// schema whose grammar the GBNF parser would refuse is a conversion error here (with a
// message that names the cause) rather than a grammar that fails to load.
struct Limits {
  int max_depth = 128;              // nested subschema visits, $ref hops included
  int max_document_depth = 512;     // JSON nesting anywhere in the document
  size_t max_errors = 64;           // error lines kept in the message
  int64_t max_rules = 20000;        // grammar::Limits::max_rules
  int64_t max_elements = 1 << 22;   // grammar::Limits::max_elements
  int max_nesting = 128;            // grammar::Limits::max_nesting
  int max_repetitions = 2000;       // grammar::Limits::max_repetitions
  size_t max_text_bytes = 1 << 20;  // grammar::Limits::max_text_bytes
};

struct Conversion {
  std::string gbnf;                   // rules sorted by name, one per line, start rule `root`
  std::vector<std::string> warnings;  // e.g. unsupported regex patterns (not logged)
};

// Errors are kInvalidArgument with the message
// "JSON schema conversion failed:\n<one message per line>", e.g.
// "JSON schema conversion failed:\nUnrecognized schema: {\"type\":\"foo\"}".
Result<Conversion> convert(const nlohmann::ordered_json& schema, const Limits& limits = {});

// The GBNF text; warnings go to the project log.
Result<std::string> to_gbnf(const nlohmann::ordered_json& schema);
Result<std::string> to_gbnf(const nlohmann::json& schema);

}  // namespace hearth::json_schema

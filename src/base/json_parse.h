// The one entry point for JSON that comes from outside the process: request bodies and
// every JSON text found inside them (tool-call arguments, tool parameters, schemas given
// as strings, Responses items), JSON a model writes, and JSON files. The limits are
// checked while parsing, so nothing deeper or larger than allowed is ever built, and the
// value is built in linear time: nlohmann's ordered_json looks for a duplicate key by
// scanning the object (quadratic for an object of many keys), this parser keeps a hash of
// the keys of large objects instead. Duplicate keys behave as nlohmann's parser makes
// them: the key keeps its first position and takes the last value.
//
// A value nested past max_depth cannot be copied, compared or printed safely (all three
// recurse), so the depth limit is what keeps a hostile string from exhausting the stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "base/status.h"

namespace hearth {

struct JsonLimits {
  // Arrays and objects inside each other (a chat request with tool schemas reaches a few
  // dozen).
  int32_t max_depth = 512;
  // Keys in one object (OpenAI caps logit_bias at 300; schemas and kwargs hold dozens).
  // Code that reads an object looks keys up by scanning it, so this also bounds that.
  size_t max_object_keys = 4096;
  // Values of any kind in the whole text: bounds the memory a text can make the parser
  // build (a node takes 16 bytes or more) whatever its size.
  size_t max_values = size_t{4} << 20;
};

// Parses `text` as one JSON value. Errors are kInvalidArgument with a message a client
// can act on: the library's syntax message without its tags, "nested deeper than N
// levels", "an object holds more than N keys", "more than N values"; a number a double
// cannot hold (1e400) is refused, never turned into infinity.
Result<nlohmann::ordered_json> parse_json(std::string_view text, const JsonLimits& limits = {});

// `message` without the JSON library's "[json.exception.<kind>.<n>] " tags, which mean
// nothing to a client, and at most `max_bytes` long (a message may quote the input).
std::string without_json_library_tags(std::string message, size_t max_bytes = 1024);

}  // namespace hearth

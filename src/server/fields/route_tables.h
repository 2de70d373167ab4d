// Every request body's field table by route, as the compatibility manifest (fields.json)
// records them: the native completion table is "completion"; the others are the chat,
// embeddings, rerank and /lora-adapters bodies.
#pragma once

#include <string_view>
#include <vector>

#include "server/fields/field.h"

namespace hearth::server::fields {

struct RouteFields {
  std::string_view route;  // fields.json's "route" of the entries
  std::vector<FieldInfo> rows;
};

// The tables of the routes other than the native completion ones, in manifest order.
std::vector<RouteFields> body_field_tables();

}  // namespace hearth::server::fields

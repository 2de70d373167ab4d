// What the native-field tests share: fields.json's native entries and the small greedy
// completion each field is added to.
#pragma once

#include <fstream>
#include <string>

#include "server/json_client.h"

namespace hearth::test {

// fields.json with only the native completion fields (entries with a "route" belong to the
// other bodies' tables, which their own tests check).
inline Json native_fields_manifest() {
  std::ifstream in(std::string(HEARTH_SOURCE_DIR) + "/compat/llama-server/b10621/fields.json");
  Json doc = Json::parse(in);
  Json native = Json::array();
  for (const Json& e : doc["entries"]) {
    if (!e.contains("route")) native.push_back(e);
  }
  doc["entries"] = std::move(native);
  return doc;
}

inline Json base_request() {
  return Json{{"prompt", "Once upon a time"}, {"n_predict", 6}, {"temperature", 0}};
}

}  // namespace hearth::test

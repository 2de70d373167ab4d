#include "server/golden_compare.h"
#include "support/text_match.h"

#include <cmath>
#include <set>

namespace hearth::test {

namespace {

// Keys whose values change from run to run or name machine-specific things.
bool normalized_key(const std::string& key) {
  static const std::set<std::string> kKeys = {"prompt_ms",
                                              "prompt_per_token_ms",
                                              "prompt_per_second",
                                              "predicted_ms",
                                              "predicted_per_token_ms",
                                              "predicted_per_second",
                                              "time_ms",
                                              "media_marker",
                                              "created",
                                              "id_task",
                                              "item_id",
                                              "call_id",
                                              "created_at",
                                              "completed_at"};
  return kKeys.count(key) > 0;
}

// The build's version string, "b<build number>-<commit>": the captures hold the reference
// binary's ("b0-unknown"), a Hearth build its own; only the shape is compared.
bool version_key(const std::string& key) {
  return key == "build_info" || key == "system_fingerprint";
}
bool version_shaped(const OJson& v) {
  return v.is_string() && hearth::test::full_match(v.get<std::string>(), "b[0-9]+-[0-9a-z]+");
}

// Ids of answers, items and tool calls are random (token ids, numbers, are compared).
bool random_id(const std::string& key, const OJson& value) {
  return key == "id" && value.is_string();
}

bool probability_key(const std::string& key) {
  return key == "logprob" || key == "prob";
}

const char* kind(const OJson& v) {
  if (v.is_number()) return "number";  // ints and floats: types compared separately below
  return v.type_name();
}

struct Walker {
  const CompareOptions& options;
  std::vector<std::string> diffs;

  void walk(const OJson& e, const OJson& a, const std::string& path, const std::string& key) {
    if (std::string(kind(e)) != kind(a)) {
      diffs.push_back(path + ": type " + kind(e) + " expected, got " + kind(a) + " " + a.dump());
      return;
    }
    if (e.is_number() && e.is_number_float() != a.is_number_float()) {
      diffs.push_back(path + ": " + e.dump() + " expected, got " + a.dump() + " (int/float)");
      return;
    }
    if (e.is_object()) return walk_object(e, a, path);
    if (e.is_array()) return walk_array(e, a, path, key);
    if (version_key(key)) {
      if (!version_shaped(e) || !version_shaped(a)) {
        diffs.push_back(path + ": " + e.dump() + " expected, got " + a.dump() + " (version shape)");
      }
      return;
    }
    if (!options.values || normalized_key(key) || random_id(key, e)) return;
    if (probability_key(key)) {
      const double de = e.get<double>(), da = a.get<double>();
      const bool both_floor = de < -1e30 && da < -1e30;
      if (!both_floor && std::fabs(de - da) > options.prob_tolerance) {
        diffs.push_back(path + ": " + e.dump() + " expected, got " + a.dump());
      }
      return;
    }
    if (e != a) diffs.push_back(path + ": " + e.dump() + " expected, got " + a.dump());
  }

  void walk_object(const OJson& e, const OJson& a, const std::string& path) {
    std::vector<std::string> ek, ak;
    for (auto it = e.begin(); it != e.end(); ++it) ek.push_back(it.key());
    for (auto it = a.begin(); it != a.end(); ++it) ak.push_back(it.key());
    if (ek != ak) {
      std::string es, as;
      for (auto& k : ek) es += k + ",";
      for (auto& k : ak) as += k + ",";
      diffs.push_back(path + ": keys [" + es + "] expected, got [" + as + "]");
      return;
    }
    for (const std::string& k : ek) walk(e.at(k), a.at(k), path + "/" + k, k);
  }

  void walk_array(const OJson& e, const OJson& a, const std::string& path, const std::string& key) {
    if (normalized_key(key) && !options.values) return;
    if (e.size() != a.size()) {
      diffs.push_back(path + ": " + std::to_string(e.size()) + " elements expected, got " +
                      std::to_string(a.size()));
      return;
    }
    for (size_t i = 0; i < e.size(); ++i) walk(e[i], a[i], path + "/" + std::to_string(i), key);
  }
};

}  // namespace

std::vector<std::string> compare_json(const OJson& expected, const OJson& actual,
                                      const CompareOptions& options) {
  Walker w{options, {}};
  w.walk(expected, actual, "", "");
  return w.diffs;
}

}  // namespace hearth::test

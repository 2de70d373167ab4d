#include "base/json_parse.h"

#include <cmath>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

namespace hearth {

namespace {

using Json = nlohmann::ordered_json;
// ordered_map is a vector of pairs; appending to it directly skips its linear key search.
using ObjectVector = Json::object_t::Container;

// An object's keys by position, kept once the object is large enough that scanning it
// for a duplicate would cost more than hashing.
constexpr size_t kHashFromKeys = 16;

// Builds the value from the parser's events, refusing whatever passes a limit. Returning
// false from an event stops the parse at once.
class BoundedBuilder {
 public:
  BoundedBuilder(Json& root, const JsonLimits& limits) : root_(root), limits_(limits) {}

  bool null() { return scalar(Json(nullptr)); }
  bool boolean(bool v) { return scalar(Json(v)); }
  bool number_integer(Json::number_integer_t v) { return scalar(Json(v)); }
  bool number_unsigned(Json::number_unsigned_t v) { return scalar(Json(v)); }
  bool number_float(Json::number_float_t v, const Json::string_t& /*text*/) {
    if (!std::isfinite(v)) return refuse("a number is too large for a double");
    return scalar(Json(v));
  }
  bool string(Json::string_t& v) { return scalar(Json(std::move(v))); }
  bool binary(Json::binary_t& /*v*/) { return refuse("binary values are not JSON"); }

  bool start_object(size_t /*elements*/) { return open(Json::object()); }
  bool key(Json::string_t& name) {
    Level& level = levels_.back();
    ObjectVector& members = *level.value->get_ptr<Json::object_t*>();
    if (const size_t at = find_key(level, members, name); at != kNone) {
      pending_ = &members[at].second;  // a duplicate: first position, last value
      return true;
    }
    if (members.size() >= limits_.max_object_keys) {
      return refuse("an object holds more than " + std::to_string(limits_.max_object_keys) +
                    " keys");
    }
    members.emplace_back(name, nullptr);
    if (level.keys) {
      level.keys->emplace(std::move(name), members.size() - 1);
    } else if (members.size() >= kHashFromKeys) {
      level.keys = std::make_unique<std::unordered_map<std::string, size_t>>();
      for (size_t i = 0; i < members.size(); ++i) level.keys->emplace(members[i].first, i);
    }
    pending_ = &members.back().second;
    return true;
  }
  bool end_object() { return close(); }
  bool start_array(size_t /*elements*/) { return open(Json::array()); }
  bool end_array() { return close(); }

  bool parse_error(size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& e) {
    if (error_.empty()) error_ = without_json_library_tags(e.what());
    return false;
  }

  const std::string& error() const { return error_; }

 private:
  static constexpr size_t kNone = static_cast<size_t>(-1);

  struct Level {
    Json* value;
    std::unique_ptr<std::unordered_map<std::string, size_t>> keys;
  };

  static size_t find_key(const Level& level, const ObjectVector& members, const std::string& name) {
    if (level.keys) {
      const auto it = level.keys->find(name);
      return it == level.keys->end() ? kNone : it->second;
    }
    for (size_t i = 0; i < members.size(); ++i) {
      if (members[i].first == name) return i;
    }
    return kNone;
  }

  bool refuse(std::string message) {
    if (error_.empty()) error_ = std::move(message);
    return false;
  }

  bool count_value() {
    if (++n_values_ > limits_.max_values) {
      return refuse("the text holds more than " + std::to_string(limits_.max_values) + " values");
    }
    return true;
  }

  // Where the next value goes: the root, the pending key's slot, or the end of an array.
  Json* place(Json&& value) {
    if (levels_.empty()) {
      root_ = std::move(value);
      return &root_;
    }
    Json* parent = levels_.back().value;
    if (parent->is_array()) {
      auto& items = *parent->get_ptr<Json::array_t*>();
      items.push_back(std::move(value));
      return &items.back();
    }
    *pending_ = std::move(value);
    return pending_;
  }

  bool scalar(Json&& value) {
    if (!count_value()) return false;
    place(std::move(value));
    return true;
  }

  bool open(Json&& empty) {
    if (!count_value()) return false;
    if (static_cast<int32_t>(levels_.size()) >= limits_.max_depth) {
      return refuse("nested deeper than " + std::to_string(limits_.max_depth) + " levels");
    }
    // The parent's storage does not move while this child is open: only the innermost
    // open container grows.
    levels_.push_back({place(std::move(empty)), nullptr});
    return true;
  }

  bool close() {
    levels_.pop_back();
    return true;
  }

  Json& root_;
  const JsonLimits& limits_;
  std::vector<Level> levels_;
  Json* pending_ = nullptr;
  size_t n_values_ = 0;
  std::string error_;
};

}  // namespace

Result<nlohmann::ordered_json> parse_json(std::string_view text, const JsonLimits& limits) {
  Json root;
  BoundedBuilder builder(root, limits);
  bool ok = false;
  try {
    ok = Json::sax_parse(text.begin(), text.end(), &builder);
  } catch (const std::exception& e) {
    // The lexer reports through parse_error; anything else (allocation) lands here.
    return error(ErrorCode::kInvalidArgument, without_json_library_tags(e.what()));
  }
  if (!ok) {
    return error(ErrorCode::kInvalidArgument,
                 builder.error().empty() ? "invalid JSON" : builder.error());
  }
  return root;
}

std::string without_json_library_tags(std::string message, size_t max_bytes) {
  static constexpr std::string_view kTag = "[json.exception.";
  for (size_t at; (at = message.find(kTag)) != std::string::npos;) {
    const size_t end = message.find("] ", at);
    if (end == std::string::npos) break;
    message.erase(at, end + 2 - at);
  }
  if (message.size() > max_bytes) message = message.substr(0, max_bytes) + "...";
  return message;
}

}  // namespace hearth

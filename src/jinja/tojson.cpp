// json.dumps with Python's exact output: separators, indentation, string escapes, float
// reprs, key conversion and sort_keys. Runs on every chat request (tool lists), so it writes
// straight into one output string.
#include "jinja/tojson.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <vector>

#include "jinja/builtins.h"
#include "jinja/pystr.h"

namespace hearth::jinja {

namespace {

// Python's default recursion limit stops json.dumps near this depth too.
constexpr int kMaxDepth = 990;

class JsonWriter {
 public:
  explicit JsonWriter(const JsonDumpOptions& options) : options_(options) {
    item_separator_ = options.item_separator.value_or(options.indent ? "," : ", ");
    key_separator_ = options.key_separator.value_or(": ");
  }

  Status write(const Value& value, int depth);
  std::string take() { return std::move(out_); }

 private:
  void write_string(std::string_view text);
  void write_float(double value);
  void write_int(int64_t value);
  void newline_and_indent(int depth);
  Status write_list(const Value& value, int depth);
  Status write_dict(const Value& value, int depth);
  Status write_key(const Value& key);
  Status enter(const Value& container);

  const JsonDumpOptions& options_;
  std::string item_separator_;
  std::string key_separator_;
  std::vector<const void*> open_containers_;  // for "Circular reference detected"
  std::string out_;
};

void JsonWriter::write_string(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto append_u = [this](uint32_t unit) {
    out_ += "\\u";
    for (int shift = 12; shift >= 0; shift -= 4) out_.push_back(kHex[(unit >> shift) & 0xF]);
  };
  out_.push_back('"');
  size_t run_start = 0;  // bytes copied verbatim in runs
  size_t pos = 0;
  while (pos < text.size()) {
    const auto byte = static_cast<unsigned char>(text[pos]);
    const bool plain =
        byte >= 0x20 && byte != '"' && byte != '\\' && (byte < 0x80 || !options_.ensure_ascii);
    if (plain) {
      ++pos;
      continue;
    }
    out_.append(text.substr(run_start, pos - run_start));
    if (byte >= 0x80) {
      const char32_t cp = pystr::decode_one(text, pos);
      if (cp >= 0x10000) {
        const uint32_t offset = cp - 0x10000;
        append_u(0xD800 | (offset >> 10));
        append_u(0xDC00 | (offset & 0x3FF));
      } else {
        append_u(cp);
      }
      run_start = pos;
      continue;
    }
    switch (byte) {
      case '"':
        out_ += "\\\"";
        break;
      case '\\':
        out_ += "\\\\";
        break;
      case '\n':
        out_ += "\\n";
        break;
      case '\r':
        out_ += "\\r";
        break;
      case '\t':
        out_ += "\\t";
        break;
      case '\b':
        out_ += "\\b";
        break;
      case '\f':
        out_ += "\\f";
        break;
      default:
        append_u(byte);
        break;
    }
    run_start = ++pos;
  }
  out_.append(text.substr(run_start));
  out_.push_back('"');
}

void JsonWriter::write_float(double value) {
  if (std::isnan(value)) {
    out_ += "NaN";
  } else if (std::isinf(value)) {
    out_ += value < 0 ? "-Infinity" : "Infinity";
  } else {
    out_ += pystr::repr_float(value);
  }
}

void JsonWriter::write_int(int64_t value) {
  char buffer[24];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  out_.append(buffer, result.ptr);
}

void JsonWriter::newline_and_indent(int depth) {
  out_.push_back('\n');
  for (int i = 0; i < depth; ++i) out_ += *options_.indent;
}

Status JsonWriter::enter(const Value& container) {
  const void* identity = container.identity();
  if (std::find(open_containers_.begin(), open_containers_.end(), identity) !=
      open_containers_.end()) {
    return render_error("Circular reference detected");
  }
  if (static_cast<int>(open_containers_.size()) >= kMaxDepth) {
    return render_error("maximum recursion depth exceeded while encoding a JSON object");
  }
  open_containers_.push_back(identity);
  return Status::ok();
}

Status JsonWriter::write_list(const Value& value, int depth) {
  const auto& items = value.list_data().items;
  if (items.empty()) {
    out_ += "[]";
    return Status::ok();
  }
  HEARTH_RETURN_IF_ERROR(enter(value));
  out_.push_back('[');
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out_ += item_separator_;
    if (options_.indent) newline_and_indent(depth + 1);
    HEARTH_RETURN_IF_ERROR(write(items[i], depth + 1));
  }
  if (options_.indent) newline_and_indent(depth);
  out_.push_back(']');
  open_containers_.pop_back();
  return Status::ok();
}

// Keys become strings as json.dumps converts them: True → "true", 1.5 → "1.5", None → "null".
Status JsonWriter::write_key(const Value& key) {
  switch (key.kind()) {
    case Kind::kString:
      write_string(key.as_string());
      return Status::ok();
    case Kind::kBool:
      out_ += key.as_bool() ? "\"true\"" : "\"false\"";
      return Status::ok();
    case Kind::kInt:
      out_.push_back('"');
      write_int(key.as_int());
      out_.push_back('"');
      return Status::ok();
    case Kind::kFloat:
      out_.push_back('"');
      write_float(key.as_float());
      out_.push_back('"');
      return Status::ok();
    case Kind::kNone:
      out_ += "\"null\"";
      return Status::ok();
    default:
      return render_error("keys must be str, int, float, bool or None, not " + type_name(key));
  }
}

Status JsonWriter::write_dict(const Value& value, int depth) {
  const auto& entries = value.dict_data().entries;
  if (entries.empty()) {
    out_ += "{}";
    return Status::ok();
  }
  HEARTH_RETURN_IF_ERROR(enter(value));
  std::vector<const std::pair<Value, Value>*> order;
  order.reserve(entries.size());
  for (const auto& entry : entries) order.push_back(&entry);
  if (options_.sort_keys) {
    // Python sorts the keys themselves; keys it cannot compare raise TypeError.
    Status failure;
    std::stable_sort(order.begin(), order.end(), [&](const auto* a, const auto* b) {
      if (!failure.is_ok()) return false;
      auto less = less_than(a->first, b->first);
      if (!less.is_ok()) {
        failure = less.status();
        return false;
      }
      return *less;
    });
    HEARTH_RETURN_IF_ERROR(failure);
  }
  out_.push_back('{');
  for (size_t i = 0; i < order.size(); ++i) {
    if (i > 0) out_ += item_separator_;
    if (options_.indent) newline_and_indent(depth + 1);
    HEARTH_RETURN_IF_ERROR(write_key(order[i]->first));
    out_ += key_separator_;
    HEARTH_RETURN_IF_ERROR(write(order[i]->second, depth + 1));
  }
  if (options_.indent) newline_and_indent(depth);
  out_.push_back('}');
  open_containers_.pop_back();
  return Status::ok();
}

Status JsonWriter::write(const Value& value, int depth) {
  switch (value.kind()) {
    case Kind::kNone:
      out_ += "null";
      return Status::ok();
    case Kind::kBool:
      out_ += value.as_bool() ? "true" : "false";
      return Status::ok();
    case Kind::kInt:
      write_int(value.as_int());
      return Status::ok();
    case Kind::kFloat:
      write_float(value.as_float());
      return Status::ok();
    case Kind::kString:
      write_string(value.as_string());
      return Status::ok();
    case Kind::kList:
      if (!value.list_data().python_type.empty()) {
        // A generator or dict view, which json.dumps cannot serialize.
        return render_error("Object of type " + std::string(value.list_data().python_type) +
                            " is not JSON serializable");
      }
      return write_list(value, depth);
    case Kind::kDict:
      return write_dict(value, depth);
    default:
      return render_error("Object of type " + type_name(value) + " is not JSON serializable");
  }
}

}  // namespace

Result<std::string> json_dumps(const Value& value, const JsonDumpOptions& options) {
  JsonWriter writer(options);
  HEARTH_RETURN_IF_ERROR(writer.write(value, 0));
  return writer.take();
}

}  // namespace hearth::jinja

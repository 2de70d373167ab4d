#include "server/options/value_parse.h"

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdlib>

namespace hearth::server::options {

namespace {

Status conversion_error(std::string_view what, std::string_view text) {
  return error(ErrorCode::kInvalidArgument,
               std::string(what) + ": invalid value '" + std::string(text) + "'");
}

Status range_error(std::string_view what, std::string_view text) {
  return error(ErrorCode::kOutOfRange,
               std::string(what) + ": value out of range '" + std::string(text) + "'");
}

int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

Result<int32_t> parse_int(std::string_view text) {
  std::string copy(text);
  char* end = nullptr;
  errno = 0;
  long value = std::strtol(copy.c_str(), &end, 10);
  if (end == copy.c_str()) return conversion_error("stoi", text);
  if (errno == ERANGE || value < INT_MIN || value > INT_MAX) return range_error("stoi", text);
  return static_cast<int32_t>(value);
}

Result<float> parse_float(std::string_view text) {
  std::string copy(text);
  char* end = nullptr;
  errno = 0;
  float value = std::strtof(copy.c_str(), &end);
  if (end == copy.c_str()) return conversion_error("stof", text);
  if (errno == ERANGE) return range_error("stof", text);
  return value;
}

Result<unsigned long> parse_ulong(std::string_view text) {
  std::string copy(text);
  char* end = nullptr;
  errno = 0;
  unsigned long value = std::strtoul(copy.c_str(), &end, 10);
  if (end == copy.c_str()) return conversion_error("stoul", text);
  if (errno == ERANGE) return range_error("stoul", text);
  return value;
}

bool is_truthy(std::string_view text) {
  return text == "on" || text == "enabled" || text == "true" || text == "1";
}

bool is_falsey(std::string_view text) {
  return text == "off" || text == "disabled" || text == "false" || text == "0";
}

Result<TriState> parse_tristate(std::string_view text) {
  if (is_truthy(text)) return TriState::kOn;
  if (is_falsey(text)) return TriState::kOff;
  if (text == "auto" || text == "-1") return TriState::kAuto;
  return error(ErrorCode::kInvalidArgument,
               "unknown value '" + std::string(text) + "' (expected on, off or auto)");
}

Result<std::vector<std::string>> split_csv(std::string_view text) {
  std::vector<std::string> fields;
  std::string field;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (quoted) {
      if (c != '"') {
        field += c;
      } else if (i + 1 < text.size() && text[i + 1] == '"') {
        field += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      fields.push_back(std::move(field));
      field.clear();
    } else {
      field += c;
    }
  }
  if (quoted) return error(ErrorCode::kInvalidArgument, "unterminated quote in list");
  fields.push_back(std::move(field));
  return fields;
}

std::vector<std::string> split_trimmed(std::string_view text) {
  std::vector<std::string> out;
  for (const std::string& raw : split_any(text, ",")) {
    size_t begin = raw.find_first_not_of(" \t\n\r\f\v");
    if (begin == std::string::npos) continue;
    size_t end = raw.find_last_not_of(" \t\n\r\f\v");
    out.push_back(raw.substr(begin, end - begin + 1));
  }
  return out;
}

std::vector<std::string> split_any(std::string_view text, std::string_view separators) {
  std::vector<std::string> out;
  size_t start = 0;
  while (true) {
    size_t pos = text.find_first_of(separators, start);
    out.emplace_back(text.substr(start, pos == std::string_view::npos ? pos : pos - start));
    if (pos == std::string_view::npos) break;
    start = pos + 1;
  }
  return out;
}

std::string process_escapes(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 >= text.size()) {
      out += text[i];
      continue;
    }
    char next = text[i + 1];
    switch (next) {
      case 'n':
        out += '\n';
        ++i;
        continue;
      case 'r':
        out += '\r';
        ++i;
        continue;
      case 't':
        out += '\t';
        ++i;
        continue;
      case '\'':
        out += '\'';
        ++i;
        continue;
      case '"':
        out += '"';
        ++i;
        continue;
      case '\\':
        out += '\\';
        ++i;
        continue;
      case 'x':
        if (i + 3 < text.size() && hex_digit(text[i + 2]) >= 0 && hex_digit(text[i + 3]) >= 0) {
          out += static_cast<char>(hex_digit(text[i + 2]) * 16 + hex_digit(text[i + 3]));
          i += 3;
          continue;
        }
        break;
      default:
        break;
    }
    out += text[i];
  }
  return out;
}

}  // namespace hearth::server::options

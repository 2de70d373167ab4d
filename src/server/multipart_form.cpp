// multipart/form-data parsing (multipart_form.h). Every search is bounded by the body: the
// delimiter is found with string_view::find over at most body × 72 comparisons (a boundary
// is at most 70 characters), and nothing is allocated beyond copies of the body's parts.
#include "server/multipart_form.h"

#include <algorithm>
#include <cctype>

namespace hearth::server {

namespace {

constexpr size_t kMaxBoundary = 70;  // RFC 2046 §5.1.1

ApiError form_error(const std::string& what) {
  return invalid_request("Invalid multipart/form-data body: " + what);
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) ==
                  std::tolower(static_cast<unsigned char>(y));
         });
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// One `key=value` parameter of a header value after its first `;`. A quoted value may hold
// `;` and backslash escapes. Returns false when a quoted value is not closed.
struct HeaderParam {
  std::string key;
  std::string value;
};

bool next_param(std::string_view& rest, HeaderParam& out) {
  const size_t eq = rest.find('=');
  const size_t semi = rest.find(';');
  if (eq == std::string_view::npos || (semi != std::string_view::npos && semi < eq)) {
    // A bare token (no value): kept with an empty value.
    out.key = std::string(trim(rest.substr(0, semi)));
    out.value.clear();
    rest = semi == std::string_view::npos ? std::string_view() : rest.substr(semi + 1);
    return true;
  }
  out.key = std::string(trim(rest.substr(0, eq)));
  rest = trim(rest.substr(eq + 1));
  out.value.clear();
  if (!rest.empty() && rest.front() == '"') {
    size_t i = 1;
    for (; i < rest.size() && rest[i] != '"'; ++i) {
      if (rest[i] == '\\' && i + 1 < rest.size()) ++i;
      out.value.push_back(rest[i]);
    }
    if (i >= rest.size()) return false;
    rest = rest.substr(i + 1);
    const size_t after = rest.find(';');
    rest = after == std::string_view::npos ? std::string_view() : rest.substr(after + 1);
    return true;
  }
  const size_t end = rest.find(';');
  out.value = std::string(trim(rest.substr(0, end)));
  rest = end == std::string_view::npos ? std::string_view() : rest.substr(end + 1);
  return true;
}

// The parameters of a header value (`type; a=b; c="d"`), keys lower-cased; false when a
// quoted value is not closed.
bool header_params(std::string_view value, std::string& head, std::vector<HeaderParam>& params) {
  const size_t semi = value.find(';');
  head = std::string(trim(value.substr(0, semi)));
  std::string_view rest =
      semi == std::string_view::npos ? std::string_view() : value.substr(semi + 1);
  while (!trim(rest).empty()) {
    HeaderParam p;
    if (!next_param(rest, p)) return false;
    std::transform(p.key.begin(), p.key.end(), p.key.begin(),
                   [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    params.push_back(std::move(p));
  }
  return true;
}

const HeaderParam* find_param(const std::vector<HeaderParam>& params, std::string_view key) {
  for (const HeaderParam& p : params) {
    if (p.key == key) return &p;
  }
  return nullptr;
}

// Content-Disposition: form-data; name="..."; filename="..."
std::optional<ApiError> read_disposition(std::string_view value, size_t index, FormPart& part) {
  std::string head;
  std::vector<HeaderParam> params;
  const std::string where = "part " + std::to_string(index + 1);
  if (!header_params(value, head, params)) {
    return form_error(where + " has an unterminated quoted string in Content-Disposition");
  }
  if (!iequals(head, "form-data")) {
    return form_error(where + " has Content-Disposition '" + head + "', not form-data");
  }
  const HeaderParam* name = find_param(params, "name");
  if (name == nullptr || name->value.empty()) {
    return form_error(where + " has no name in its Content-Disposition");
  }
  part.name = name->value;
  if (const HeaderParam* filename = find_param(params, "filename")) {
    part.filename = filename->value;
  } else if (const HeaderParam* extended = find_param(params, "filename*")) {
    // RFC 5987 `charset'lang'value`: kept as sent after the second quote (only whether a
    // filename was given matters here).
    const size_t quote = extended->value.find('\'', extended->value.find('\'') + 1);
    part.filename =
        quote == std::string::npos ? extended->value : extended->value.substr(quote + 1);
  }
  return std::nullopt;
}

// The header section of one part (`headers` without its final blank line).
std::optional<ApiError> read_part_headers(std::string_view headers, size_t index, FormPart& part) {
  bool has_disposition = false;
  while (!headers.empty()) {
    const size_t eol = headers.find("\r\n");
    const std::string_view line = headers.substr(0, eol);
    headers = eol == std::string_view::npos ? std::string_view() : headers.substr(eol + 2);
    const size_t colon = line.find(':');
    if (colon == std::string_view::npos || colon == 0) {
      return form_error("part " + std::to_string(index + 1) + " has a header line without a name");
    }
    const std::string_view name = trim(line.substr(0, colon));
    const std::string_view value = trim(line.substr(colon + 1));
    if (iequals(name, "Content-Disposition")) {
      if (auto err = read_disposition(value, index, part)) return err;
      has_disposition = true;
    } else if (iequals(name, "Content-Type")) {
      part.content_type = std::string(value);
    }
  }
  if (!has_disposition) {
    return form_error("part " + std::to_string(index + 1) + " has no Content-Disposition header");
  }
  return std::nullopt;
}

// After a delimiter's boundary: "--" closes the body; otherwise optional transport padding
// (spaces, tabs) and CRLF start the next part. `pos` is moved past what was read.
enum class AfterDelimiter { kNextPart, kClose, kMalformed };

AfterDelimiter read_after_delimiter(std::string_view body, size_t& pos) {
  if (body.compare(pos, 2, "--") == 0) {
    pos += 2;
    return AfterDelimiter::kClose;
  }
  while (pos < body.size() && (body[pos] == ' ' || body[pos] == '\t')) ++pos;
  if (body.compare(pos, 2, "\r\n") != 0) return AfterDelimiter::kMalformed;
  pos += 2;
  return AfterDelimiter::kNextPart;
}

// One part starting at `pos` (just after its delimiter line); `pos` ends after the next
// delimiter's boundary.
std::optional<ApiError> read_part(std::string_view body, const std::string& delimiter,
                                  const MultipartLimits& limits, size_t index, size_t& pos,
                                  FormPart& part) {
  const std::string where = "part " + std::to_string(index + 1);
  // Headers end at the first blank line; a part with no headers starts with CRLF at once.
  size_t headers_end;
  size_t content_begin;
  if (body.compare(pos, 2, "\r\n") == 0) {
    headers_end = pos;
    content_begin = pos + 2;
  } else {
    const size_t window = std::min(body.size() - pos, limits.max_header_bytes + 4);
    const size_t blank = body.substr(pos, window).find("\r\n\r\n");
    if (blank == std::string_view::npos) {
      return form_error(window > limits.max_header_bytes
                            ? where + "'s headers exceed " +
                                  std::to_string(limits.max_header_bytes) + " bytes"
                            : where + "'s headers do not end with a blank line");
    }
    headers_end = pos + blank;
    content_begin = headers_end + 4;
  }
  if (auto err = read_part_headers(body.substr(pos, headers_end - pos), index, part)) return err;
  // The content ends at CRLF + "--" + boundary.
  const size_t end = body.find(delimiter, content_begin - 2);
  if (end == std::string_view::npos || end < content_begin - 2) {
    return form_error(where + " is not followed by a delimiter (no closing boundary)");
  }
  part.data = end < content_begin ? std::string()
                                  : std::string(body.substr(content_begin, end - content_begin));
  pos = end + delimiter.size();
  return std::nullopt;
}

}  // namespace

bool is_multipart_form(std::string_view content_type) {
  const size_t semi = content_type.find(';');
  return iequals(trim(content_type.substr(0, semi)), "multipart/form-data");
}

std::optional<ApiError> multipart_boundary(std::string_view content_type, std::string& boundary) {
  std::string head;
  std::vector<HeaderParam> params;
  if (!header_params(content_type, head, params)) {
    return form_error("the Content-Type has an unterminated quoted string");
  }
  const HeaderParam* b = find_param(params, "boundary");
  if (b == nullptr || b->value.empty()) {
    return form_error("the Content-Type has no boundary");
  }
  if (b->value.size() > kMaxBoundary) {
    return form_error("the boundary is longer than 70 characters");
  }
  const bool printable =
      std::all_of(b->value.begin(), b->value.end(), [](char c) { return c >= 0x20 && c < 0x7f; });
  if (!printable) return form_error("the boundary holds characters other than printable ASCII");
  boundary = b->value;
  return std::nullopt;
}

std::optional<ApiError> parse_multipart_form(std::string_view body, std::string_view boundary,
                                             std::vector<FormPart>& parts,
                                             const MultipartLimits& limits) {
  parts.clear();
  if (boundary.empty()) return form_error("the boundary is empty");
  // The first delimiter may start the body or follow a preamble line.
  const std::string dash_boundary = "--" + std::string(boundary);
  size_t pos;
  if (body.compare(0, dash_boundary.size(), dash_boundary) == 0) {
    pos = dash_boundary.size();
  } else {
    const size_t first = body.find("\r\n" + dash_boundary);
    if (first == std::string_view::npos) return form_error("the boundary is never found");
    pos = first + 2 + dash_boundary.size();
  }
  const std::string delimiter = "\r\n" + dash_boundary;
  for (;;) {
    const AfterDelimiter after = read_after_delimiter(body, pos);
    if (after == AfterDelimiter::kClose) return std::nullopt;
    if (after == AfterDelimiter::kMalformed) {
      return form_error("a delimiter line does not end with CRLF or '--'");
    }
    if (parts.size() >= limits.max_parts) {
      return form_error("more than " + std::to_string(limits.max_parts) + " parts");
    }
    FormPart part;
    if (auto err = read_part(body, delimiter, limits, parts.size(), pos, part)) return err;
    parts.push_back(std::move(part));
  }
}

MultipartForm to_form(std::vector<FormPart> parts) {
  MultipartForm form;
  for (FormPart& part : parts) {
    if (!part.filename.empty()) {
      std::string name = part.name;
      form.files[name] = std::move(part);
      continue;
    }
    auto it = form.fields.find(part.name);
    if (it == form.fields.end()) {
      form.fields[part.name] = std::move(part.data);
    } else {
      if (!it->is_array()) *it = Json::array({*it});
      it->push_back(std::move(part.data));
    }
  }
  return form;
}

}  // namespace hearth::server

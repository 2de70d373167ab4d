// multipart/form-data bodies (RFC 7578 over RFC 2046 §5.1), as the reference's HTTP layer
// (cpp-httplib) hands them to /v1/audio/transcriptions: a part with a non-empty filename is
// a file, every other part a text field. The parser is a pure function over the whole body
// (the HTTP layer already bounds its size); it bounds the part count and each part's header
// section, and refuses a malformed body with a 400 that says what is wrong.
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "server/api_error.h"
#include "server/json_util.h"

namespace hearth::server {

struct MultipartLimits {
  size_t max_parts = 1024;         // cpp-httplib's CPPHTTPLIB_MULTIPART_FORM_DATA_FILE_MAX_COUNT
  size_t max_header_bytes = 8192;  // one part's header section (cpp-httplib's header limit)
};

struct FormPart {
  std::string name;          // Content-Disposition's name (never empty)
  std::string filename;      // Content-Disposition's filename; empty: a text field
  std::string content_type;  // the part's Content-Type, "" when absent
  std::string data;          // the part's bytes, as sent
};

// True when `content_type` (a Content-Type header value) is multipart/form-data.
bool is_multipart_form(std::string_view content_type);

// The boundary parameter of a multipart/form-data Content-Type (quoted or a token, 1 to 70
// characters); an error when it is missing or invalid.
std::optional<ApiError> multipart_boundary(std::string_view content_type, std::string& boundary);

// Splits `body` into its parts in order. A preamble before the first delimiter and an
// epilogue after the closing one are ignored; line breaks must be CRLF.
std::optional<ApiError> parse_multipart_form(std::string_view body, std::string_view boundary,
                                             std::vector<FormPart>& parts,
                                             const MultipartLimits& limits = {});

// The reference's view of a parsed form: the text fields as a JSON object (a name sent more
// than once becomes an array of its values, in order) and the files by field name (the
// last one of a repeated name wins).
struct MultipartForm {
  Json fields = Json::object();
  std::map<std::string, FormPart> files;
};
MultipartForm to_form(std::vector<FormPart> parts);

}  // namespace hearth::server

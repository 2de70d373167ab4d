// A small HTTP client over libcurl for the hub: JSON GETs and file downloads that resume.
// Only http and https are spoken (also after redirects, which are followed: the hub answers
// /resolve/ with a redirect to its file store). A transfer that moves fewer than 1 byte/s for
// `stall_seconds` is abandoned, so a server that stops sending does not hang startup.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/status.h"

namespace hearth::hub {

inline constexpr std::string_view kUserAgent = "hearth-server";
// The most a JSON (non-streamed) reply may hold.
inline constexpr size_t kMaxReplyBytes = size_t{64} << 20;

using HttpHeaders = std::vector<std::pair<std::string, std::string>>;

struct HttpReply {
  long status = 0;
  std::string body;
  HttpHeaders headers;  // names lower-cased, of the last response after redirects

  // The first header named `name` (lower case), or "".
  std::string header(std::string_view name) const;
};

struct HttpOptions {
  HttpHeaders headers;
  long connect_timeout_seconds = 30;
  long stall_seconds = 30;
  // When set and true, the transfer stops within about a second (also while connecting or
  // waiting for a stalled server).
  const std::atomic<bool>* cancel = nullptr;
};

// Starts libcurl; call once before other threads start (also done lazily otherwise).
void init_http();

// A URL as logs may show it: without user name, password, query or fragment.
std::string display_url(std::string_view url);
// The "scheme://host[:port]" part of a URL, lower-cased ("" when it has none).
std::string url_origin(std::string_view url);

// GET or HEAD `url`; any HTTP status is a reply, only transport failures are errors. A body
// over kMaxReplyBytes is an error.
Result<HttpReply> http_request(const std::string& method, const std::string& url,
                               const HttpOptions& options);

// Called with each piece of the body and the response so far (its status, 200 or 206 when a
// range was honoured, and its headers); returning false cancels the transfer.
using ChunkSink = std::function<bool(const HttpReply& head, const char* data, size_t size)>;

// GET `url` from byte `offset` (a Range request when offset > 0) and hand the body to `sink`.
// The reply's body stays empty; its status tells whether the range was honoured (206).
// A 4xx/5xx answer's body is not passed to the sink.
Result<HttpReply> http_stream(const std::string& url, uint64_t offset, const HttpOptions& options,
                              const ChunkSink& sink);

}  // namespace hearth::hub

#include "hub/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

#include <fmt/format.h>

namespace hearth::hub {

namespace {

bool init_curl_once() {
  static std::once_flag once;
  static bool ok = false;
  std::call_once(once, [] { ok = curl_global_init(CURL_GLOBAL_DEFAULT) == CURLE_OK; });
  return ok;
}

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct ListDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

// What the callbacks write into; one per transfer.
struct Transfer {
  HttpReply reply;
  const ChunkSink* sink = nullptr;
  CURL* curl = nullptr;
  bool sink_refused = false;
  bool too_large = false;
};

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

std::string trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return std::string(s);
}

size_t on_header(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const std::string_view line(data, size * count);
  // A status line starts a new response (a redirect's headers are forgotten).
  if (line.starts_with("HTTP/")) {
    t->reply.headers.clear();
  } else if (const size_t colon = line.find(':'); colon != std::string_view::npos) {
    t->reply.headers.emplace_back(lower(std::string(line.substr(0, colon))),
                                  trim(line.substr(colon + 1)));
  }
  return size * count;
}

// libcurl calls this about once a second even when no bytes move.
int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* cancel = static_cast<const std::atomic<bool>*>(user);
  return cancel->load() ? 1 : 0;
}

size_t on_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<Transfer*>(user);
  const size_t n = size * count;
  if (t->sink == nullptr) {
    if (t->reply.body.size() + n > kMaxReplyBytes) {
      t->too_large = true;
      return 0;
    }
    t->reply.body.append(data, n);
    return n;
  }
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &t->reply.status);
  if (!(*t->sink)(t->reply, data, n)) {
    t->sink_refused = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  return n;
}

Result<HttpReply> perform(const std::string& method, const std::string& url, uint64_t offset,
                          const HttpOptions& options, const ChunkSink* sink) {
  std::unique_ptr<CURL, CurlDeleter> curl(init_curl_once() ? curl_easy_init() : nullptr);
  if (!curl) return error(ErrorCode::kInternal, "could not start an HTTP transfer");
  std::unique_ptr<curl_slist, ListDeleter> list;
  for (const auto& [name, value] : options.headers) {
    const std::string line = name + ": " + value;
    curl_slist* longer = curl_slist_append(list.get(), line.c_str());
    if (longer == nullptr) return error(ErrorCode::kResourceExhausted, "out of memory");
    list.release();
    list.reset(longer);
  }
  Transfer t;
  t.sink = sink;
  CURL* c = curl.get();
  t.curl = c;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT, options.connect_timeout_seconds);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_LIMIT, 1L);
  curl_easy_setopt(c, CURLOPT_LOW_SPEED_TIME, options.stall_seconds);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, list.get());
  curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(c, CURLOPT_HEADERDATA, &t);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  // Error bodies of a download go to the reply, not into the file.
  curl_easy_setopt(c, CURLOPT_FAILONERROR, sink != nullptr ? 1L : 0L);
  if (method == "HEAD") curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
  if (options.cancel != nullptr) {
    curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
    curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, on_progress);
    curl_easy_setopt(c, CURLOPT_XFERINFODATA, options.cancel);
  }
  if (offset > 0) {
    const std::string range = fmt::format("{}-", offset);
    curl_easy_setopt(c, CURLOPT_RANGE, range.c_str());
  }
  const CURLcode code = curl_easy_perform(c);
  curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &t.reply.status);
  if (code == CURLE_HTTP_RETURNED_ERROR) return std::move(t.reply);
  if (code == CURLE_ABORTED_BY_CALLBACK || (options.cancel != nullptr && options.cancel->load())) {
    return error(ErrorCode::kIo, "download cancelled");
  }
  if (code == CURLE_WRITE_ERROR && t.sink_refused) {
    return error(ErrorCode::kIo, fmt::format("the transfer from {} was stopped", display_url(url)));
  }
  if (code == CURLE_WRITE_ERROR && t.too_large) {
    return error(
        ErrorCode::kResourceExhausted,
        fmt::format("{}: the reply is larger than {} MiB", display_url(url), kMaxReplyBytes >> 20));
  }
  if (code != CURLE_OK) {
    return error(ErrorCode::kIo, fmt::format("{}: {}", display_url(url), curl_easy_strerror(code)));
  }
  return std::move(t.reply);
}

}  // namespace

void init_http() {
  init_curl_once();
}

std::string display_url(std::string_view url) {
  url = url.substr(0, url.find_first_of("?#"));
  const size_t scheme = url.find("://");
  const size_t host = scheme == std::string_view::npos ? 0 : scheme + 3;
  const size_t path = url.find('/', host);
  const size_t at = url.substr(0, path).rfind('@');
  if (at == std::string_view::npos || at < host) return std::string(url);
  return std::string(url.substr(0, host)) + std::string(url.substr(at + 1));
}

std::string url_origin(std::string_view url) {
  const std::string shown = display_url(url);
  const size_t scheme = shown.find("://");
  if (scheme == std::string::npos) return {};
  return lower(shown.substr(0, shown.find('/', scheme + 3)));
}

std::string HttpReply::header(std::string_view name) const {
  for (const auto& [k, v] : headers)
    if (k == name) return v;
  return {};
}

Result<HttpReply> http_request(const std::string& method, const std::string& url,
                               const HttpOptions& options) {
  return perform(method, url, 0, options, nullptr);
}

Result<HttpReply> http_stream(const std::string& url, uint64_t offset, const HttpOptions& options,
                              const ChunkSink& sink) {
  return perform("GET", url, offset, options, &sink);
}

}  // namespace hearth::hub

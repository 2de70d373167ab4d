#include "hub/http_client.h"

#include <curl/curl.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <mutex>

#include <fmt/format.h>

namespace hearth::hub {

namespace {

void init_curl_once() {
  static std::once_flag once;
  std::call_once(once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
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
    t->reply.body.append(data, n);
    return n;
  }
  long status = 0;
  curl_easy_getinfo(t->curl, CURLINFO_RESPONSE_CODE, &status);
  if (!(*t->sink)(status, data, n)) {
    t->sink_refused = true;
    return 0;  // makes curl stop with CURLE_WRITE_ERROR
  }
  return n;
}

Result<HttpReply> perform(const std::string& method, const std::string& url, uint64_t offset,
                          const HttpOptions& options, const ChunkSink* sink) {
  init_curl_once();
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return error(ErrorCode::kInternal, "could not start an HTTP transfer");
  std::unique_ptr<curl_slist, ListDeleter> list;
  for (const auto& [name, value] : options.headers) {
    const std::string line = name + ": " + value;
    list.reset(curl_slist_append(list.release(), line.c_str()));
  }
  Transfer t;
  t.sink = sink;
  CURL* c = curl.get();
  t.curl = c;
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
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
    return error(ErrorCode::kIo, fmt::format("the transfer from {} was stopped", url));
  }
  if (code != CURLE_OK) {
    return error(ErrorCode::kIo, fmt::format("{}: {}", url, curl_easy_strerror(code)));
  }
  return std::move(t.reply);
}

}  // namespace

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

// The http(s) part of media_fetch.h. libcurl follows redirects itself; every socket it opens,
// for the first host or a redirect's, goes through open_checked_socket, which sees the address
// libcurl resolved and is about to connect to, so the check and the connection cannot disagree
// (no DNS-rebinding window) and a refused address never gets a single packet.
#include "hub/media_fetch.h"

#include <curl/curl.h>
#include <sys/socket.h>

#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "base/log.h"
#include "hub/http_client.h"

namespace hearth::hub {

namespace {

// llama-server follows at most this many redirects (cpp-httplib's default).
constexpr long kMaxRedirects = 20;

constexpr std::string_view kDownloadFailed = "Failed to download image";
constexpr std::string_view kCannotGet = "error: cannot make GET request";

struct CurlDeleter {
  void operator()(CURL* c) const { curl_easy_cleanup(c); }
};
struct UrlDeleter {
  void operator()(CURLU* u) const { curl_url_cleanup(u); }
};
struct CurlFree {
  void operator()(char* s) const { curl_free(s); }
};

// What the callbacks share; one per fetch.
struct MediaTransfer {
  CURL* curl = nullptr;
  const AddressPolicy* policy = nullptr;
  size_t max_bytes = 0;
  std::vector<uint8_t> body;
  bool too_large = false;
  std::string refusal;  // why an address was refused; once set, every later socket is too
};

// The host of the URL libcurl works on now (after redirects), for messages.
std::string current_host(CURL* curl) {
  char* effective = nullptr;
  if (curl_easy_getinfo(curl, CURLINFO_EFFECTIVE_URL, &effective) != CURLE_OK || !effective)
    return "?";
  std::unique_ptr<CURLU, UrlDeleter> url(curl_url());
  char* host = nullptr;
  if (!url || curl_url_set(url.get(), CURLUPART_URL, effective, 0) != CURLUE_OK ||
      curl_url_get(url.get(), CURLUPART_HOST, &host, 0) != CURLUE_OK) {
    return "?";
  }
  std::unique_ptr<char, CurlFree> owned(host);
  return host;
}

curl_socket_t open_checked_socket(void* user, curlsocktype, curl_sockaddr* address) {
  auto* t = static_cast<MediaTransfer*>(user);
  if (!t->refusal.empty()) return CURL_SOCKET_BAD;
  if (t->policy != nullptr && *t->policy) {
    const auto ip = IpAddress::from_sockaddr(&address->addr, address->addrlen);
    const std::string kind = ip ? (*t->policy)(*ip) : std::string("non-IP");
    if (!kind.empty()) {
      t->refusal = fmt::format(
          "media URL host '{}' resolves to a non-public address, {} ({}); the server does not "
          "fetch from its own network",
          current_host(t->curl), ip ? ip->to_string() : std::string("?"), kind);
      return CURL_SOCKET_BAD;
    }
  }
  return ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
}

size_t on_media_body(char* data, size_t size, size_t count, void* user) {
  auto* t = static_cast<MediaTransfer*>(user);
  const size_t n = size * count;
  if (n > t->max_bytes - t->body.size()) {
    t->too_large = true;
    return CURL_WRITEFUNC_ERROR;  // libcurl stops at once with CURLE_WRITE_ERROR
  }
  if (t->body.empty()) {
    // Room for the announced length when it is within the limit (libcurl has refused a
    // larger announced one already).
    curl_off_t announced = -1;
    curl_easy_getinfo(t->curl, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &announced);
    if (announced > 0 && static_cast<uint64_t>(announced) <= t->max_bytes)
      t->body.reserve(static_cast<size_t>(announced));
  }
  t->body.insert(t->body.end(), data, data + n);
  return n;
}

// llama-server parses the URL itself before connecting; its refusals, with its texts.
Status check_url_shape(std::string_view url) {
  const size_t scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return error(ErrorCode::kIo, "invalid URL: no scheme");
  const std::string_view scheme = url.substr(0, scheme_end);
  if (scheme != "http" && scheme != "https")
    return error(ErrorCode::kIo, fmt::format("unsupported URL scheme: {}", scheme));
  std::string_view authority = url.substr(scheme_end + 3);
  authority = authority.substr(0, authority.find_first_of("/?#"));
  if (const size_t at = authority.rfind('@'); at != std::string_view::npos)
    authority.remove_prefix(at + 1);
  const bool bracketed = !authority.empty() && authority.front() == '[';
  if (bracketed && authority.find(']') == std::string_view::npos)
    return error(ErrorCode::kIo, fmt::format("invalid IPv6 URL authority: {}", authority));
  const std::string_view host = bracketed ? authority.substr(1, authority.find(']') - 1)
                                          : authority.substr(0, authority.find(':'));
  if (host.empty()) return error(ErrorCode::kIo, "error: invalid URL format");
  return Status::ok();
}

void set_transfer_options(CURL* c, const std::string& url, const MediaFetchSettings& settings,
                          MediaTransfer& t, curl_slist* headers) {
  const long timeout_ms = std::max<long>(1, static_cast<long>(settings.timeout.count()));
  curl_easy_setopt(c, CURLOPT_URL, url.c_str());
  curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_REDIR_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(c, CURLOPT_MAXREDIRS, kMaxRedirects);
  // No proxy, whatever http_proxy/https_proxy/all_proxy say: the address checked is the one
  // connected to, and a client's URL is not sent to a proxy the operator set for other things.
  curl_easy_setopt(c, CURLOPT_PROXY, "");
  curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
  curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, timeout_ms);
  // Announced sizes over the limit stop before the body; the body callback stops the rest.
  curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, static_cast<curl_off_t>(settings.max_bytes));
  // 4xx/5xx end the transfer before their body is read.
  curl_easy_setopt(c, CURLOPT_FAILONERROR, 1L);
  curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
  curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, on_media_body);
  curl_easy_setopt(c, CURLOPT_WRITEDATA, &t);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETFUNCTION, open_checked_socket);
  curl_easy_setopt(c, CURLOPT_OPENSOCKETDATA, &t);
  // No Accept-Encoding is sent, so the bytes counted are the bytes kept (no decompression).
}

Result<std::vector<uint8_t>> fetch_http(std::string_view url_view,
                                        const MediaFetchSettings& settings,
                                        const AddressPolicy& policy) {
  HEARTH_RETURN_IF_ERROR(check_url_shape(url_view));
  const std::string url(url_view);
  init_http();
  std::unique_ptr<CURL, CurlDeleter> curl(curl_easy_init());
  if (!curl) return error(ErrorCode::kInternal, "could not start an HTTP transfer");
  const std::string agent = fmt::format("User-Agent: {}", kUserAgent);
  std::unique_ptr<curl_slist, decltype(&curl_slist_free_all)> headers(
      curl_slist_append(nullptr, agent.c_str()), &curl_slist_free_all);
  if (!headers) return error(ErrorCode::kResourceExhausted, "out of memory");
  MediaTransfer t;
  t.curl = curl.get();
  t.policy = &policy;
  t.max_bytes = settings.max_bytes;
  set_transfer_options(curl.get(), url, settings, t, headers.get());

  log_info("downloading media from '{}'", display_url(url));
  const CURLcode code = curl_easy_perform(curl.get());
  long status = 0;
  curl_easy_getinfo(curl.get(), CURLINFO_RESPONSE_CODE, &status);
  if (!t.refusal.empty()) {
    log_warn("refused media URL '{}': {}", display_url(url), t.refusal);
    return error(ErrorCode::kInvalidArgument, t.refusal);
  }
  if (code == CURLE_HTTP_RETURNED_ERROR || (code == CURLE_OK && (status < 200 || status > 299))) {
    log_warn("media URL '{}' answered HTTP {}", display_url(url), status);
    return error(ErrorCode::kIo, std::string(kDownloadFailed));
  }
  if (code != CURLE_OK) {
    const bool too_large = t.too_large || code == CURLE_FILESIZE_EXCEEDED;
    log_warn("media URL '{}': {}", display_url(url),
             too_large ? fmt::format("larger than {} bytes", settings.max_bytes)
                       : std::string(curl_easy_strerror(code)));
    return error(ErrorCode::kIo, std::string(kCannotGet));
  }
  log_info("downloaded {} bytes", t.body.size());
  return std::move(t.body);
}

}  // namespace

bool is_fetched_media_url(std::string_view url) {
  return url.starts_with("http") || url.starts_with("file://");
}

Result<std::vector<uint8_t>> fetch_media_url(std::string_view url,
                                             const MediaFetchSettings& settings,
                                             const AddressPolicy& policy) {
  // llama-server's order: anything starting with "http" is a download.
  if (url.starts_with("http")) return fetch_http(url, settings, policy);
  if (url.starts_with("file://")) return read_media_file(url.substr(7), settings);
  return error(ErrorCode::kInvalidArgument,
               "a media URL to fetch starts with http:// , https:// or file://");
}

Result<std::vector<uint8_t>> fetch_media_url(std::string_view url,
                                             const MediaFetchSettings& settings) {
  static const AddressPolicy kPublicOnly = [](const IpAddress& address) {
    return non_public_address_kind(address);
  };
  static const AddressPolicy kAnyAddress;
  return fetch_media_url(url, settings, settings.allow_private_urls ? kAnyAddress : kPublicOnly);
}

}  // namespace hearth::hub

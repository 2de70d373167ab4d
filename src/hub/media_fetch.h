// Media (images, audio) that a chat request names by URL instead of inlining it, read as
// llama-server reads it: `http(s)://` downloaded (at most 10 MiB, 10 s), `file://<path>` read
// from under `--media-path` only. The `data:` and raw base64 forms are the server's.
//
// Unlike llama-server, an http(s) fetch never connects to the server's own network: each
// address libcurl is about to connect to (the first host's and every redirect's, after its own
// DNS lookup, so a name cannot resolve to a public address when checked and a private one when
// used) must be public (address_policy.h) unless `allow_private_urls` is set. And a file://
// path is opened so that it cannot leave the media directory through a symbolic link either.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "hub/address_policy.h"

namespace hearth::hub {

inline constexpr size_t kMediaMaxDownloadBytes = size_t{10} << 20;  // llama-server's limit
// A file under --media-path larger than this is refused, so that one request cannot make the
// server allocate an arbitrary amount (llama-server reads any size).
inline constexpr size_t kMediaMaxFileBytes = size_t{512} << 20;

struct MediaFetchSettings {
  // "" (file:// refused) or a directory as validate_media_path returns it, ending in '/'.
  std::string media_path;
  // Lets http(s) URLs reach loopback, private, link-local and other non-public addresses.
  bool allow_private_urls = false;
  // The most a download may hold; more is an error, detected while receiving.
  size_t max_bytes = kMediaMaxDownloadBytes;
  // The whole download's limit: resolving, connecting, redirects and the body together.
  std::chrono::milliseconds timeout{10000};
  size_t max_file_bytes = kMediaMaxFileBytes;
};

// Whether llama-server hands `url` to a fetch rather than decoding it as base64: it starts with
// "http" (so also "httpx://...", which then fails as an unsupported scheme) or "file://".
bool is_fetched_media_url(std::string_view url);

// The bytes `url` names. Errors, with llama-server's texts where it has one:
// - kIo (llama-server answers 500): "Failed to download image" (any final status outside
//   2xx, whatever the media), "error: cannot make GET request" (DNS, connection, TLS, timeout,
//   a body over max_bytes, too many redirects or one to another protocol), "invalid URL: no
//   scheme", "unsupported URL scheme: <scheme>", "error: invalid URL format" (no host), "invalid
//   IPv6 URL authority: <authority>".
// - kInvalidArgument (400): "file:// URLs are not allowed unless --media-path is specified",
//   "file path is not allowed: <path>", "file does not exist or cannot be opened: <path>",
//   and Hearth's own refusals: a non-public address ("media URL host '<host>' resolves to a
//   non-public address, <address> (<kind>); the server does not fetch from its own
//   network") and a file over max_file_bytes.
Result<std::vector<uint8_t>> fetch_media_url(std::string_view url,
                                             const MediaFetchSettings& settings);

// Decides for each address a download is about to connect to: "" lets it connect, anything
// else is the kind of address refused. fetch_media_url uses non_public_address_kind (or
// nothing with allow_private_urls); tests pass their own to refuse one local address only.
using AddressPolicy = std::function<std::string(const IpAddress&)>;
Result<std::vector<uint8_t>> fetch_media_url(std::string_view url,
                                             const MediaFetchSettings& settings,
                                             const AddressPolicy& policy);

// `--media-path`'s value as llama-server's parser takes it: it must name an existing directory
// (kInvalidArgument "not a directory: <value>"); a '/' is appended when it does not end in one.
Result<std::string> validate_media_path(std::string_view value);

// How the file:// part opens a path under the media directory. kBeneath asks the kernel
// (openat2 with RESOLVE_BENEATH) and falls back to kResolved where the kernel lacks it;
// kResolved resolves the path (realpath) and checks it stays under the directory before
// opening it without following a final link. Tests run both.
enum class MediaOpenMode { kBeneath, kResolved };

// The file:// part on its own: `file_path` is the URL without "file://".
Result<std::vector<uint8_t>> read_media_file(std::string_view file_path,
                                             const MediaFetchSettings& settings,
                                             MediaOpenMode mode = MediaOpenMode::kBeneath);

// llama-server's check of a file:// path (its fs_validate_filename with subdirectories
// allowed): non-empty, at most 255 bytes, valid shortest-form UTF-8 without control, surrogate,
// replacement or byte-order-mark code points nor look-alikes of '.', '/' and '\', none of
// : * ? " < > |, no leading or trailing space, no trailing '.', no "..", not ".".
bool is_allowed_media_file_path(std::string_view file_path);

}  // namespace hearth::hub

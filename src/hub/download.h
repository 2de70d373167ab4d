// Downloads into the cache: each file is written to "<destination>.downloadInProgress" (the
// reference's name, so either program resumes the other's partial file), resumed with a
// Range request after a broken transfer or a killed process, checked against its size and
// oid (sha256 for LFS files, git's blob sha1 for the others), and only then renamed into
// place. A file that looks complete is therefore always whole.
#pragma once

#include <atomic>
#include <chrono>
#include <string>
#include <vector>

#include "base/status.h"
#include "hub/hf_repo.h"
#include "hub/http_client.h"
#include "hub/progress.h"

namespace hearth::hub {

struct DownloadItem {
  std::string url;
  std::string destination;
  std::string oid;        // checked when not empty
  uint64_t size = 0;      // checked when not 0
  bool use_etag = false;  // URL downloads: keep "<destination>.etag" and re-download on change
};

struct DownloadOptions {
  HttpHeaders headers;
  int parallel = 4;
  int attempts = 3;
  std::chrono::milliseconds retry_delay{1000};
  long stall_seconds = 30;
  DownloadProgress* progress = nullptr;
  const std::atomic<bool>* cancel = nullptr;
};

// The HTTP options a transfer under `options` uses (headers, stall limit, cancellation).
HttpOptions http_options(const DownloadOptions& options);

// Downloads the items in parallel (up to `parallel` at once); the first failure is returned
// after the others finish. Items whose destination exists are not fetched again.
Status download_files(const std::vector<DownloadItem>& items, const DownloadOptions& options);

// The oid of a file's content: sha256 when `oid_like` has 64 digits, else git's blob sha1
// (sha1 of "blob <size>\0" + content). Lower-case hex.
Result<std::string> file_oid(const std::string& path, std::string_view oid_like);

// Puts `files` (from list_repo_files) in place: missing blobs are downloaded, and each
// snapshot path becomes a relative link to its blob (a copy where links are refused).
Status fetch_repo_files(const std::vector<RepoFile>& files, const std::string& token,
                        const DownloadOptions& options);

}  // namespace hearth::hub

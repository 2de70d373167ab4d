#include "hub/download.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "base/log.h"

namespace hearth::hub {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kPartialSuffix = ".downloadInProgress";

struct MdDeleter {
  void operator()(EVP_MD_CTX* c) const { EVP_MD_CTX_free(c); }
};

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line;
}

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream(path, std::ios::trunc) << text << "\n";
}

bool cancelled(const DownloadOptions& o) {
  return o.cancel != nullptr && o.cancel->load();
}

// A file's size; 0 when it is missing or cannot be read.
uint64_t size_or_zero(const fs::path& path) {
  std::error_code ec;
  const uintmax_t size = fs::file_size(path, ec);
  return ec ? 0 : static_cast<uint64_t>(size);
}

// Waits `delay`, waking every 100 ms to see whether the download was cancelled.
void wait_unless_cancelled(std::chrono::milliseconds delay, const DownloadOptions& options) {
  const auto until = std::chrono::steady_clock::now() + delay;
  while (!cancelled(options) && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

struct Attempt {
  long status = 0;  // 200 or 206 when bytes came, else the refused status
  bool resumed = false;
  uint64_t received = 0;
  std::string etag;  // of the reply
};

// One transfer into `partial`, appending from its current size with a Range request (and,
// for URL downloads, an If-Range naming the ETag the partial file was started with, so a
// changed file starts over). `counted` is what it added to the progress, which the caller
// takes back before another attempt.
Result<Attempt> transfer(const DownloadItem& item, const fs::path& partial,
                         const DownloadOptions& options, uint64_t& counted) {
  const fs::path partial_etag = partial.string() + ".etag";
  uint64_t offset = size_or_zero(partial);
  HttpOptions http = http_options(options);
  if (offset > 0 && item.use_etag) {
    const std::string etag = read_text(partial_etag);
    if (etag.empty()) offset = 0;  // no way to know the bytes are of the same file
    if (!etag.empty()) http.headers.emplace_back("If-Range", etag);
  }
  if (item.size > 0 && offset > item.size) offset = 0;
  Attempt attempt;
  attempt.resumed = offset > 0;
  if (options.progress != nullptr) options.progress->add_done(offset);
  counted = offset;
  if (item.size > 0 && offset == item.size) {  // already whole: only the checks remain
    attempt.status = 200;
    return attempt;
  }
  std::ofstream out(partial, std::ios::binary | (offset > 0 ? std::ios::app : std::ios::trunc));
  if (!out) return error(ErrorCode::kIo, "cannot write " + partial.string());
  bool first = true;
  const ChunkSink sink = [&](const HttpReply& head, const char* data, size_t n) {
    if (first) {
      first = false;
      attempt.status = head.status;
      if (head.status != 200 && head.status != 206) return false;
      if (offset > 0 && head.status != 206) {  // the range was not honoured: start again
        out.close();
        out.open(partial, std::ios::binary | std::ios::trunc);
        if (options.progress != nullptr) options.progress->remove_done(counted);
        counted = 0;
        offset = 0;
      }
      if (item.use_etag) write_text(partial_etag, head.header("etag"));
    }
    out.write(data, static_cast<std::streamsize>(n));
    counted += n;
    attempt.received += n;
    if (options.progress != nullptr) {
      options.progress->add_done(n);
      options.progress->add_received(n);
    }
    return static_cast<bool>(out) && !cancelled(options);
  };
  auto reply = http_stream(item.url, offset, http, sink);
  out.close();
  if (!out) return error(ErrorCode::kIo, "cannot write " + partial.string());
  if (!reply.is_ok() && !(attempt.status != 0 && attempt.status != 200 && attempt.status != 206))
    return reply.status();
  attempt.status = reply.is_ok() ? reply->status : attempt.status;
  if (reply.is_ok()) attempt.etag = reply->header("etag");
  if (attempt.status == 416) fs::remove(partial);  // a range past the end: start over
  return attempt;
}

Status verify(const DownloadItem& item, const fs::path& partial) {
  const uint64_t size = size_or_zero(partial);
  if (item.size > 0 && size != item.size)
    return error(ErrorCode::kIo, fmt::format("{}: received {} of {} bytes", display_url(item.url),
                                             size, item.size));
  if (item.oid.empty()) return Status::ok();
  HEARTH_ASSIGN_OR_RETURN(const std::string oid, file_oid(partial.string(), item.oid));
  if (oid == item.oid) return Status::ok();
  std::error_code ec;
  fs::remove(partial, ec);
  return error(ErrorCode::kCorruptFile,
               fmt::format("{}: checksum mismatch (expected {}, got {}); the file was removed",
                           display_url(item.url), item.oid, oid));
}

// The partial file's bytes reach the disk before its name says it is whole.
Status sync_and_rename(const fs::path& partial, const std::string& destination) {
  const int fd = ::open(partial.c_str(), O_RDONLY);
  if (fd < 0 || ::fsync(fd) != 0) {
    if (fd >= 0) ::close(fd);
    return error(ErrorCode::kIo, "cannot sync " + partial.string());
  }
  ::close(fd);
  std::error_code ec;
  fs::rename(partial, destination, ec);
  if (ec) return error(ErrorCode::kIo, "cannot rename into " + destination + ": " + ec.message());
  return Status::ok();
}

// URL downloads: the cached file is kept when the server cannot be asked, sends no ETag, or
// sends the one saved beside it.
bool cached_copy_is_current(const DownloadItem& item, const DownloadOptions& options) {
  auto head = http_request("HEAD", item.url, http_options(options));
  if (!head.is_ok() || head->status < 200 || head->status >= 300) return true;
  const std::string etag = head->header("etag");
  return etag.empty() || etag == read_text(item.destination + ".etag");
}

// Whether a failed attempt is worth repeating: transport errors, server errors, timeouts,
// rate limits and a range past the end; not the client errors that will not change.
bool worth_retrying(long status) {
  return status == 0 || status >= 500 || status == 408 || status == 429 || status == 416;
}

Status download_one(const DownloadItem& item, const DownloadOptions& options) {
  std::error_code ec;
  if (fs::exists(item.destination, ec) && (!item.use_etag || cached_copy_is_current(item, options)))
    return Status::ok();
  fs::create_directories(fs::path(item.destination).parent_path(), ec);
  const fs::path partial = item.destination + std::string(kPartialSuffix);
  Status last = error(ErrorCode::kIo, display_url(item.url) + ": not attempted");
  auto delay = options.retry_delay;
  uint64_t counted = 0;
  bool restarted_after_mismatch = false;
  // Failures in a row: an attempt that received bytes starts the count again.
  for (int failures = 0; failures < options.attempts && !cancelled(options);) {
    if (failures > 0) {
      log_warn("download: {}; retrying in {} ms", last.message(), delay.count());
      wait_unless_cancelled(delay, options);
      delay *= 2;
    }
    if (options.progress != nullptr) options.progress->remove_done(counted);
    counted = 0;
    auto attempt = transfer(item, partial, options, counted);
    const long status = attempt.is_ok() ? attempt->status : 0;
    if (attempt.is_ok() && attempt->received > 0) {
      failures = 0;
      delay = options.retry_delay;
    }
    if (!attempt.is_ok() || (status != 200 && status != 206)) {
      last = attempt.is_ok()
                 ? error(status == 404 || status == 401 || status == 403 ? ErrorCode::kNotFound
                                                                         : ErrorCode::kIo,
                         fmt::format("GET {} failed with HTTP status {}", display_url(item.url),
                                     status))
                 : attempt.status();
      if (!worth_retrying(status)) return last;
      ++failures;
      continue;
    }
    last = verify(item, partial);
    if (last.code() == ErrorCode::kCorruptFile) {
      // Bytes resumed from an earlier run may be what is wrong: one fresh try.
      if (!attempt->resumed || restarted_after_mismatch) return last;
      restarted_after_mismatch = true;
      log_warn("download: {}; downloading it again from the start", last.message());
      continue;
    }
    if (!last.is_ok()) {
      ++failures;
      continue;
    }
    HEARTH_RETURN_IF_ERROR(sync_and_rename(partial, item.destination));
    const fs::path partial_etag = partial.string() + ".etag";
    if (item.use_etag) fs::rename(partial_etag, item.destination + ".etag", ec);
    if (options.progress != nullptr) options.progress->file_finished();
    return Status::ok();
  }
  return cancelled(options) ? error(ErrorCode::kIo, "download cancelled") : last;
}

// A relative link from the snapshot path to the blob, as Hugging Face's tools make; where
// links are refused, a copy made under a temporary name and renamed, so a killed copy never
// leaves a short file at the snapshot path.
Status place_in_snapshot(const RepoFile& f) {
  std::error_code ec;
  if (fs::exists(f.final_path, ec) || f.blob_path.empty()) return Status::ok();
  const fs::path final_path(f.final_path);
  fs::create_directories(final_path.parent_path(), ec);
  const fs::path target = fs::relative(f.blob_path, final_path.parent_path(), ec);
  if (!ec) fs::create_symlink(target, final_path, ec);
  if (!ec) return Status::ok();
  log_warn("hub: cannot link {} ({}); copying the file", f.final_path, ec.message());
  const fs::path copying = f.final_path + std::string(kPartialSuffix);
  fs::copy_file(f.blob_path, copying, fs::copy_options::overwrite_existing, ec);
  if (ec) return error(ErrorCode::kIo, "cannot place " + f.final_path + ": " + ec.message());
  return sync_and_rename(copying, f.final_path);
}

}  // namespace

HttpOptions http_options(const DownloadOptions& o) {
  HttpOptions http;
  http.headers = o.headers;
  http.stall_seconds = o.stall_seconds;
  http.cancel = o.cancel;
  return http;
}

Result<std::string> file_oid(const std::string& path, std::string_view oid_like) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(ErrorCode::kIo, "cannot read " + path);
  const bool sha256 = oid_like.size() == 64;
  std::unique_ptr<EVP_MD_CTX, MdDeleter> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), sha256 ? EVP_sha256() : EVP_sha1(), nullptr) != 1)
    return error(ErrorCode::kInternal, "cannot start a digest");
  bool ok = true;
  if (!sha256) {
    const std::string header = fmt::format("blob {}", size_or_zero(path));
    ok = EVP_DigestUpdate(ctx.get(), header.data(), header.size() + 1) == 1;  // with its '\0'
  }
  std::vector<char> buffer(1 << 20);
  while (ok && in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    ok = EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(in.gcount())) == 1;
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (!ok || in.bad() || EVP_DigestFinal_ex(ctx.get(), digest, &length) != 1)
    return error(ErrorCode::kIo, "cannot compute the digest of " + path);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

Status download_files(const std::vector<DownloadItem>& items, const DownloadOptions& options) {
  // Two items with one destination (the same blob under two names) are fetched once.
  std::vector<const DownloadItem*> unique;
  std::set<std::string> destinations;
  for (const DownloadItem& item : items)
    if (destinations.insert(item.destination).second) unique.push_back(&item);
  std::atomic<size_t> next{0};
  std::mutex mutex;
  Status first_error;
  auto worker = [&] {
    for (size_t i = next++; i < unique.size(); i = next++) {
      Status st = download_one(*unique[i], options);
      std::lock_guard<std::mutex> lock(mutex);
      if (!st.is_ok() && first_error.is_ok()) first_error = std::move(st);
    }
  };
  std::vector<std::thread> threads;
  const size_t n = std::min<size_t>(unique.size(), std::max(1, options.parallel));
  for (size_t t = 0; t < n; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  return first_error;
}

Status fetch_repo_files(const std::vector<RepoFile>& files, const std::string& token,
                        const DownloadOptions& options) {
  DownloadOptions o = options;
  o.headers.emplace_back("User-Agent", std::string(kUserAgent));
  // As the reference, the token goes with the downloads even when it does not look like one
  // (only the API calls leave such a token out).
  if (!token.empty()) o.headers.emplace_back("Authorization", "Bearer " + token);
  std::vector<DownloadItem> items;
  std::set<std::string> counted;
  std::error_code ec;
  for (const RepoFile& f : files) {
    if (fs::exists(f.final_path, ec)) continue;
    if (f.url.empty()) return error(ErrorCode::kNotFound, f.final_path + " is missing");
    const std::string destination = f.blob_path.empty() ? f.final_path : f.blob_path;
    if (fs::exists(destination, ec)) continue;
    items.push_back({f.url, destination, f.oid, f.size, false});
    if (o.progress != nullptr && counted.insert(destination).second) {
      o.progress->add_total(f.size);
      o.progress->add_file();
    }
  }
  HEARTH_RETURN_IF_ERROR(download_files(items, o));
  for (const RepoFile& f : files) HEARTH_RETURN_IF_ERROR(place_in_snapshot(f));
  return Status::ok();
}

}  // namespace hearth::hub

#include "hub/download.h"

#include <openssl/evp.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
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

bool cancelled(const DownloadOptions& o) {
  return o.cancel != nullptr && o.cancel->load();
}

// One transfer attempt into `partial`, appending from its current size. Returns the HTTP
// status (206/200 on success) or a transport error; `counted` is what it added to the
// progress (the partial file's size), which the caller takes back before another attempt.
Result<long> transfer(const DownloadItem& item, const fs::path& partial,
                      const DownloadOptions& options, uint64_t& counted) {
  std::error_code ec;
  uint64_t offset = fs::exists(partial, ec) ? fs::file_size(partial, ec) : 0;
  if (item.size > 0 && offset > item.size) offset = 0;
  if (options.progress != nullptr) options.progress->add_done(offset);
  counted = offset;
  if (item.size > 0 && offset == item.size) return 200L;  // already whole: only checks remain
  std::ofstream out(partial, std::ios::binary | (offset > 0 ? std::ios::app : std::ios::trunc));
  if (!out) return error(ErrorCode::kIo, "cannot write " + partial.string());
  bool first = true;
  const ChunkSink sink = [&](long status, const char* data, size_t n) {
    if (first && offset > 0 && status != 206) {
      // The server ignored the range: start the file again.
      out.close();
      out.open(partial, std::ios::binary | std::ios::trunc);
      if (options.progress != nullptr) options.progress->remove_done(counted);
      counted = 0;
      offset = 0;
    }
    first = false;
    out.write(data, static_cast<std::streamsize>(n));
    counted += n;
    if (options.progress != nullptr) options.progress->add_done(n);
    return static_cast<bool>(out) && !cancelled(options);
  };
  HttpOptions http;
  http.headers = options.headers;
  http.stall_seconds = options.stall_seconds;
  http.cancel = options.cancel;
  auto reply = http_stream(item.url, offset, http, sink);
  out.close();
  if (!reply.is_ok()) return reply.status();
  if (reply->status == 416) fs::remove(partial, ec);  // a range past the end: start over
  return reply->status;
}

Status verify(const DownloadItem& item, const fs::path& partial) {
  std::error_code ec;
  const uint64_t size = fs::file_size(partial, ec);
  if (item.size > 0 && size != item.size)
    return error(ErrorCode::kIo,
                 fmt::format("{}: received {} of {} bytes", item.url, size, item.size));
  if (item.oid.empty()) return Status::ok();
  HEARTH_ASSIGN_OR_RETURN(const std::string oid, file_oid(partial.string(), item.oid));
  if (oid != item.oid) {
    fs::remove(partial, ec);
    return error(ErrorCode::kCorruptFile,
                 fmt::format("{}: checksum mismatch (expected {}, got {}); the file was removed",
                             item.url, item.oid, oid));
  }
  return Status::ok();
}

// HEAD for URL downloads: the cached file is kept when the server cannot be asked, sends no
// ETag, or sends the one saved beside it.
bool cached_copy_is_current(const DownloadItem& item, const DownloadOptions& options) {
  HttpOptions http;
  http.headers = options.headers;
  http.cancel = options.cancel;
  auto head = http_request("HEAD", item.url, http);
  if (!head.is_ok() || head->status < 200 || head->status >= 300) return true;
  const std::string etag = head->header("etag");
  return etag.empty() || etag == read_text(item.destination + ".etag");
}

void save_etag(const DownloadItem& item, const DownloadOptions& options) {
  HttpOptions http;
  http.headers = options.headers;
  http.cancel = options.cancel;
  auto head = http_request("HEAD", item.url, http);
  if (!head.is_ok()) return;
  if (const std::string etag = head->header("etag"); !etag.empty()) {
    std::ofstream(item.destination + ".etag") << etag << "\n";
  }
}

Status download_one(const DownloadItem& item, const DownloadOptions& options) {
  std::error_code ec;
  if (fs::exists(item.destination, ec)) {
    if (!item.use_etag || cached_copy_is_current(item, options)) return Status::ok();
    fs::remove(item.destination, ec);
  }
  fs::create_directories(fs::path(item.destination).parent_path(), ec);
  const fs::path partial = item.destination + std::string(kPartialSuffix);
  Status last = error(ErrorCode::kIo, item.url + ": not attempted");
  auto delay = options.retry_delay;
  uint64_t counted = 0;
  for (int attempt = 0; attempt < options.attempts && !cancelled(options); ++attempt) {
    if (attempt > 0) {
      log_warn("download: {}; retrying in {} ms", last.message(), delay.count());
      std::this_thread::sleep_for(delay);
      delay *= 2;
    }
    // The attempt counts the partial file again from its size.
    if (options.progress != nullptr) options.progress->remove_done(counted);
    counted = 0;
    auto status = transfer(item, partial, options, counted);
    if (!status.is_ok()) {
      last = status.status();
      continue;
    }
    if (*status >= 400) {
      last = error(*status == 404 || *status == 401 || *status == 403 ? ErrorCode::kNotFound
                                                                      : ErrorCode::kIo,
                   fmt::format("GET {} failed with HTTP status {}", item.url, *status));
      if (*status < 500 && *status != 416) return last;  // the client's request will not change
      continue;
    }
    last = verify(item, partial);
    if (last.code() == ErrorCode::kCorruptFile) return last;
    if (!last.is_ok()) continue;
    fs::rename(partial, item.destination, ec);
    if (ec) return error(ErrorCode::kIo, "cannot rename into " + item.destination);
    if (item.use_etag) save_etag(item, options);
    if (options.progress != nullptr) options.progress->file_finished();
    return Status::ok();
  }
  return cancelled(options) ? error(ErrorCode::kIo, "download cancelled") : last;
}

// A relative link from the snapshot path to the blob, as Hugging Face's tools make; a copy
// when the file system refuses links.
Status place_in_snapshot(const RepoFile& f) {
  std::error_code ec;
  if (fs::exists(f.final_path, ec) || f.blob_path.empty()) return Status::ok();
  const fs::path final_path(f.final_path);
  fs::create_directories(final_path.parent_path(), ec);
  const fs::path target = fs::relative(f.blob_path, final_path.parent_path(), ec);
  if (!ec) fs::create_symlink(target, final_path, ec);
  if (!ec) return Status::ok();
  log_warn("hub: cannot link {} ({}); copying the file", f.final_path, ec.message());
  fs::copy_file(f.blob_path, final_path, fs::copy_options::overwrite_existing, ec);
  if (ec) return error(ErrorCode::kIo, "cannot place " + f.final_path + ": " + ec.message());
  return Status::ok();
}

}  // namespace

Result<std::string> file_oid(const std::string& path, std::string_view oid_like) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return error(ErrorCode::kIo, "cannot read " + path);
  const bool sha256 = oid_like.size() == 64;
  std::unique_ptr<EVP_MD_CTX, MdDeleter> ctx(EVP_MD_CTX_new());
  if (!ctx || EVP_DigestInit_ex(ctx.get(), sha256 ? EVP_sha256() : EVP_sha1(), nullptr) != 1)
    return error(ErrorCode::kInternal, "cannot start a digest");
  if (!sha256) {
    std::error_code ec;
    const std::string header = fmt::format("blob {}", fs::file_size(path, ec));
    EVP_DigestUpdate(ctx.get(), header.data(), header.size() + 1);  // with its '\0'
  }
  std::vector<char> buffer(1 << 20);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    EVP_DigestUpdate(ctx.get(), buffer.data(), static_cast<size_t>(in.gcount()));
  }
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx.get(), digest, &length);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) hex += fmt::format("{:02x}", digest[i]);
  return hex;
}

Status download_files(const std::vector<DownloadItem>& items, const DownloadOptions& options) {
  std::atomic<size_t> next{0};
  std::mutex mutex;
  Status first_error;
  auto worker = [&] {
    for (size_t i = next++; i < items.size(); i = next++) {
      Status st = download_one(items[i], options);
      std::lock_guard<std::mutex> lock(mutex);
      if (!st.is_ok() && first_error.is_ok()) first_error = std::move(st);
    }
  };
  std::vector<std::thread> threads;
  const size_t n = std::min<size_t>(items.size(), std::max(1, options.parallel));
  for (size_t t = 0; t < n; ++t) threads.emplace_back(worker);
  for (std::thread& t : threads) t.join();
  return first_error;
}

Status fetch_repo_files(const std::vector<RepoFile>& files, const std::string& token,
                        const DownloadOptions& options) {
  DownloadOptions o = options;
  o.headers.emplace_back("User-Agent", "hearth-server");
  if (is_valid_token(token)) o.headers.emplace_back("Authorization", "Bearer " + token);
  std::vector<DownloadItem> items;
  std::error_code ec;
  for (const RepoFile& f : files) {
    if (fs::exists(f.final_path, ec)) continue;
    if (f.url.empty()) return error(ErrorCode::kNotFound, f.final_path + " is missing");
    const std::string destination = f.blob_path.empty() ? f.final_path : f.blob_path;
    if (fs::exists(destination, ec)) continue;
    items.push_back({f.url, destination, f.oid, f.size, false});
    if (o.progress != nullptr) {
      o.progress->add_total(f.size);
      o.progress->add_file();
    }
  }
  HEARTH_RETURN_IF_ERROR(download_files(items, o));
  for (const RepoFile& f : files) HEARTH_RETURN_IF_ERROR(place_in_snapshot(f));
  return Status::ok();
}

}  // namespace hearth::hub

#include "hub/model_source.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "base/log.h"
#include "hub/hf_cache.h"
#include "hub/hf_repo.h"
#include "hub/http_client.h"

namespace hearth::hub {

namespace fs = std::filesystem;

namespace {

// The URL's last path component, without query or fragment.
std::string url_file_name(const std::string& url) {
  std::string f = url.substr(0, url.find_first_of("?#"));
  return f.substr(f.rfind('/') + 1);
}

Result<ResolvedModel> resolve_repo(const ModelRequest& request, const DownloadOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(const RepoTag rt, split_repo_tag(request.hf_repo));
  if (!request.token.empty() && !is_valid_token(request.token))
    log_warn(
        "the Hugging Face token does not look like one (hf_ and 34 or more letters or "
        "digits): the hub's API is asked without it, as llama-server does; downloads still "
        "send it");
  HEARTH_ASSIGN_OR_RETURN(const std::vector<RepoFile> files,
                          list_repo_files(rt.repo, request.token, request.offline, options.cancel));
  HEARTH_ASSIGN_OR_RETURN(std::vector<RepoFile> wanted,
                          select_model_files(files, rt.repo, rt.tag, request.hf_file));
  ResolvedModel resolved{.model_path = wanted.front().final_path, .projector_path = ""};
  if (request.with_projector) {
    if (auto projector = select_projector_file(files, wanted.front().path)) {
      resolved.projector_path = projector->final_path;
      log_info("projector: {} from {}", projector->path, rt.repo);
      wanted.push_back(std::move(*projector));
    }
  }
  if (request.offline) {
    std::error_code ec;
    for (const RepoFile& f : wanted)
      if (!fs::exists(f.final_path, ec))
        return error(ErrorCode::kNotFound, f.final_path + " is not in the cache (--offline)");
  } else {
    // One call: the files download in parallel and the progress counts all of them.
    HEARTH_RETURN_IF_ERROR(fetch_repo_files(wanted, request.token, options));
  }
  log_info("model: {} from {}", wanted.front().path, rt.repo);
  return resolved;
}

// The size a HEAD request announces for `url` (followed through redirects), checked after
// the download; 0 when the server does not answer 2xx with a length.
uint64_t announced_size(const std::string& url, const DownloadOptions& options) {
  auto head = http_request("HEAD", url, http_options(options));
  if (!head.is_ok() || head->status < 200 || head->status >= 300) return 0;
  const std::string length = head->header("content-length");
  return length.empty() ? 0 : std::strtoull(length.c_str(), nullptr, 10);
}

Result<std::string> resolve_url(const ModelRequest& request, const DownloadOptions& options) {
  const std::vector<std::string> parts =
      request.url_may_be_split ? url_parts(request.url) : std::vector<std::string>{request.url};
  std::string dir;
  if (!request.path.empty()) {
    dir = fs::path(request.path).parent_path().string();
  } else {
    HEARTH_ASSIGN_OR_RETURN(dir, llama_cache_directory());
  }
  std::vector<DownloadItem> items;
  for (const std::string& part : parts) {
    const std::string name = url_file_name(part);
    if (name.empty() || name == "." || name == "..")
      return error(ErrorCode::kInvalidArgument, "the URL names no file: " + display_url(part));
    const bool single_to_path = parts.size() == 1 && !request.path.empty();
    items.push_back(
        {part, single_to_path ? request.path : (fs::path(dir) / name).string(), "", 0, true});
  }
  std::error_code ec;
  if (request.offline) {
    for (const DownloadItem& item : items)
      if (!fs::exists(item.destination, ec))
        return error(ErrorCode::kNotFound, item.destination + " is missing (--offline)");
    return items.front().destination;
  }
  DownloadOptions o = options;
  o.headers.emplace_back("User-Agent", std::string(kUserAgent));
  // The token goes only to the hub's own host (the reference sends it anywhere).
  if (!request.token.empty() && url_origin(request.url) == url_origin(model_endpoint()))
    o.headers.emplace_back("Authorization", "Bearer " + request.token);
  for (DownloadItem& item : items) {
    if (fs::exists(item.destination, ec)) continue;
    item.size = announced_size(item.url, o);
    if (o.progress != nullptr) {
      o.progress->add_total(item.size);
      o.progress->add_file();
    }
  }
  HEARTH_RETURN_IF_ERROR(download_files(items, o));
  return items.front().destination;
}

}  // namespace

bool is_remote(const ModelRequest& request) {
  return !request.hf_repo.empty() || !request.url.empty();
}

Result<std::string> llama_cache_directory() {
  fs::path dir;
  if (const char* v = std::getenv("LLAMA_CACHE"); v != nullptr && *v != '\0') {
    dir = v;
  } else if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    dir = fs::path(x) / "llama.cpp";
  } else if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    dir = fs::path(h) / ".cache" / "llama.cpp";
  } else {
    return error(ErrorCode::kNotFound, "cannot determine the llama.cpp cache directory");
  }
  std::error_code ec;
  fs::create_directories(dir, ec);
  if (ec)
    return error(ErrorCode::kIo, fmt::format("cannot create {}: {}", dir.string(), ec.message()));
  return dir.string();
}

std::vector<std::string> url_parts(const std::string& url) {
  const size_t path_end = std::min(url.find_first_of("?#"), url.size());
  const GgufName name = split_gguf_name(url.substr(0, path_end));
  if (name.count <= 1) return {url};
  // Each part keeps the query (a signed URL's signature, say).
  std::vector<std::string> parts;
  for (int i = 1; i <= name.count; ++i)
    parts.push_back(
        fmt::format("{}-{:05}-of-{:05}.gguf{}", name.prefix, i, name.count, url.substr(path_end)));
  return parts;
}

Result<ResolvedModel> resolve_model_files(const ModelRequest& request,
                                          const DownloadOptions& options) {
  if (!request.hf_repo.empty()) return resolve_repo(request, options);
  if (!request.url.empty()) {
    HEARTH_ASSIGN_OR_RETURN(std::string path, resolve_url(request, options));
    return ResolvedModel{.model_path = std::move(path), .projector_path = ""};
  }
  return ResolvedModel{.model_path = request.path, .projector_path = ""};
}

Result<std::string> resolve_model(const ModelRequest& request, const DownloadOptions& options) {
  HEARTH_ASSIGN_OR_RETURN(ResolvedModel resolved, resolve_model_files(request, options));
  return std::move(resolved.model_path);
}

}  // namespace hearth::hub

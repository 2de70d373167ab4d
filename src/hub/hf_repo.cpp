#include "hub/hf_repo.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "base/log.h"
#include "hub/hf_cache.h"
#include "hub/http_client.h"

namespace hearth::hub {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

namespace {

bool is_valid_oid(std::string_view oid) {
  return is_hex_string(oid, 40) || is_hex_string(oid, 64);
}

// A path from the hub stays inside its folder: relative, no "..", no empty or "." parts.
bool is_safe_relative_path(std::string_view path) {
  if (path.empty() || path.front() == '/' || path.size() > 4096) return false;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t end = std::min(path.find('/', start), path.size());
    const std::string_view part = path.substr(start, end - start);
    if (part.empty() || part == "." || part == "..") return false;
    if (part.find('\0') != std::string_view::npos || part.find('\\') != std::string_view::npos)
      return false;
    start = end + 1;
  }
  return true;
}

std::string upper(std::string s) {
  for (char& c : s) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return s;
}

Result<Json> api_get(const std::string& url, const std::string& token,
                     const std::atomic<bool>* cancel) {
  HttpOptions options;
  options.cancel = cancel;
  options.headers = {{"User-Agent", std::string(kUserAgent)}, {"Accept", "application/json"}};
  if (is_valid_token(token)) options.headers.emplace_back("Authorization", "Bearer " + token);
  HEARTH_ASSIGN_OR_RETURN(HttpReply reply, http_request("GET", url, options));
  auto parsed = parse_json(reply.body);
  Json body = parsed.is_ok() ? std::move(parsed.value()) : Json();
  if (reply.status != 200) {
    std::string message = reply.body.substr(0, 200);
    if (body.is_object() && body.contains("error") && body["error"].is_string())
      message = body["error"].get<std::string>();
    return error(reply.status == 404 || reply.status == 401 ? ErrorCode::kNotFound : ErrorCode::kIo,
                 fmt::format("GET {} failed ({}): {}", display_url(url), reply.status, message));
  }
  if (!parsed.is_ok()) {
    return error(ErrorCode::kCorruptFile,
                 "GET " + display_url(url) + ": not JSON (" + parsed.status().message() + ")");
  }
  return body;
}

// A ref the cache could not record only costs --offline its shortcut: warned, not fatal.
void write_file_atomically(const fs::path& path, const std::string& text) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  const fs::path tmp = path.string() + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.close();
    if (!out) ec = std::make_error_code(std::errc::io_error);
  }
  if (!ec) fs::rename(tmp, path, ec);
  if (ec) log_warn("hub: cannot write {}: {}", path.string(), ec.message());
}

// Each '/'-separated segment percent-encoded (all but unreserved characters), as a URL path.
std::string url_path(std::string_view path) {
  std::string out;
  for (const char c : path) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '-' || c == '.' || c == '_' || c == '~' || c == '/') {
      out.push_back(c);
    } else {
      out += fmt::format("%{:02X}", u);
    }
  }
  return out;
}

// The commit of branch "main", else of the first valid branch; written to refs/<branch>.
Result<std::string> fetch_commit(const std::string& endpoint, const std::string& repo_id,
                                 const fs::path& repo_dir, const std::string& token,
                                 const std::atomic<bool>* cancel) {
  HEARTH_ASSIGN_OR_RETURN(Json refs,
                          api_get(endpoint + "api/models/" + repo_id + "/refs", token, cancel));
  if (!refs.is_object() || !refs.contains("branches") || !refs["branches"].is_array())
    return error(ErrorCode::kCorruptFile, "the hub listed no branches for " + repo_id);
  std::string name, commit;
  for (const Json& b : refs["branches"]) {
    if (!b.is_object() || !b.contains("name") || !b["name"].is_string() ||
        !b.contains("targetCommit") || !b["targetCommit"].is_string())
      continue;
    const std::string n = b["name"].get<std::string>(), c = b["targetCommit"].get<std::string>();
    if (!is_safe_relative_path(n) || !is_valid_commit(c)) continue;
    if (n == "main" || name.empty()) name = n, commit = c;
    if (n == "main") break;
  }
  if (commit.empty()) return error(ErrorCode::kNotFound, "no valid branch in " + repo_id);
  write_file_atomically(repo_dir / "refs" / name, commit);
  return commit;
}

RepoFile file_from_tree_item(const Json& item, const std::string& endpoint,
                             const std::string& repo_id, const std::string& commit,
                             const fs::path& repo_dir) {
  RepoFile f;
  f.repo_id = repo_id;
  f.path = item["path"].get<std::string>();
  const Json* sized = &item;
  if (item.contains("lfs") && item["lfs"].is_object()) {
    sized = &item["lfs"];
    if (item["lfs"].contains("oid") && item["lfs"]["oid"].is_string())
      f.oid = item["lfs"]["oid"].get<std::string>();
  } else if (item.contains("oid") && item["oid"].is_string()) {
    f.oid = item["oid"].get<std::string>();
  }
  if (sized->contains("size") && (*sized)["size"].is_number_unsigned())
    f.size = (*sized)["size"].get<uint64_t>();
  for (char& c : f.oid) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  f.url = endpoint + repo_id + "/resolve/" + commit + "/" + url_path(f.path);
  f.final_path = (repo_dir / "snapshots" / commit / f.path).string();
  if (!f.oid.empty()) f.blob_path = (repo_dir / "blobs" / f.oid).string();
  return f;
}

Result<std::vector<RepoFile>> fetch_listing(const std::string& repo_id, const std::string& token,
                                            const std::atomic<bool>* cancel) {
  const std::string endpoint = model_endpoint();
  HEARTH_ASSIGN_OR_RETURN(const std::string dir, repo_directory(repo_id));
  HEARTH_ASSIGN_OR_RETURN(const std::string commit,
                          fetch_commit(endpoint, repo_id, dir, token, cancel));
  HEARTH_ASSIGN_OR_RETURN(
      Json tree, api_get(endpoint + "api/models/" + repo_id + "/tree/" + commit + "?recursive=true",
                         token, cancel));
  if (!tree.is_array()) return error(ErrorCode::kCorruptFile, "the hub's file list is not a list");
  std::vector<RepoFile> files;
  for (const Json& item : tree) {
    if (!item.is_object() || item.value("type", Json()) != "file" || !item.contains("path") ||
        !item["path"].is_string())
      continue;
    RepoFile f = file_from_tree_item(item, endpoint, repo_id, commit, dir);
    if (!is_safe_relative_path(f.path)) {
      log_warn("hub: skipping the unsafe path '{}' in {}", f.path, repo_id);
      continue;
    }
    if (!f.oid.empty() && !is_valid_oid(f.oid)) {
      log_warn("hub: skipping '{}' in {}: invalid oid", f.path, repo_id);
      continue;
    }
    files.push_back(std::move(f));
  }
  return files;
}

std::vector<RepoFile> cached_repo_files(const std::string& repo_id) {
  std::vector<RepoFile> files;
  for (const CachedFile& c : cached_files(repo_id)) {
    RepoFile f;
    f.repo_id = c.repo_id;
    f.path = c.path;
    f.final_path = c.local_path;
    files.push_back(std::move(f));
  }
  return files;
}

bool is_model_gguf(std::string_view path) {
  if (!path.ends_with(".gguf")) return false;
  const std::string_view name = path.substr(path.rfind('/') + 1);
  return name.find("imatrix") == std::string_view::npos && !is_sidecar_name(name);
}

bool is_first_part(std::string_view path) {
  return split_gguf_name(path).index == 1;
}

// The tag followed by '.' or '-' anywhere in the path, case-insensitive.
bool has_tag(std::string_view path, const std::string& tag) {
  const std::string p = upper(std::string(path)), t = upper(tag);
  for (size_t at = p.find(t); at != std::string::npos; at = p.find(t, at + 1)) {
    const size_t after = at + t.size();
    if (after < p.size() && (p[after] == '.' || p[after] == '-')) return true;
  }
  return false;
}

const RepoFile* find_model(const std::vector<RepoFile>& files, const std::string& tag) {
  const std::vector<std::string> tags =
      tag.empty() ? std::vector<std::string>{"Q4_K_M", "Q8_0"} : std::vector<std::string>{tag};
  for (const std::string& t : tags)
    for (const RepoFile& f : files)
      if (is_model_gguf(f.path) && is_first_part(f.path) && has_tag(f.path, t)) return &f;
  if (tag.empty())
    for (const RepoFile& f : files)
      if (is_model_gguf(f.path) && is_first_part(f.path)) return &f;
  return nullptr;
}

// The first number of a GGUF name's tag ("Q4_K_M" 4, "BF16" 16), 0 without one; capped so
// that a hostile name cannot overflow.
int quant_bits(std::string_view path) {
  const std::string tag = split_gguf_name(path).tag;
  const size_t at = tag.find_first_of("0123456789");
  if (at == std::string::npos) return 0;
  int bits = 0;
  for (size_t i = at; i < tag.size() && std::isdigit(static_cast<unsigned char>(tag[i])); ++i)
    bits = std::min(bits * 10 + (tag[i] - '0'), 1000000);
  return bits;
}

// The '/'-separated folders of a path, its file name left out.
std::vector<std::string_view> folders_of(std::string_view path) {
  std::vector<std::string_view> folders;
  for (size_t slash = path.find('/'); slash != std::string_view::npos; slash = path.find('/')) {
    folders.push_back(path.substr(0, slash));
    path.remove_prefix(slash + 1);
  }
  return folders;
}

std::string gguf_list(const std::vector<RepoFile>& files) {
  std::string list;
  for (const RepoFile& f : files)
    if (f.path.ends_with(".gguf")) list += (list.empty() ? "" : ", ") + f.path;
  return list.empty() ? "none" : list;
}

}  // namespace

std::string model_endpoint() {
  std::string endpoint;
  for (const char* var : {"MODEL_ENDPOINT", "HF_ENDPOINT"}) {
    const char* v = std::getenv(var);
    if (v != nullptr && *v != '\0') {
      endpoint = v;
      break;
    }
  }
  if (endpoint.empty()) return "https://huggingface.co/";
  if (endpoint.back() != '/') endpoint += '/';
  return endpoint;
}

bool is_valid_token(std::string_view token) {
  if (token.size() < 37 || token.size() > 256 || !token.starts_with("hf_")) return false;
  return std::all_of(token.begin() + 3, token.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) != 0; });
}

Result<RepoTag> split_repo_tag(std::string_view text) {
  // As the reference splits at every ':': the first piece is the repository, the last the tag.
  RepoTag rt;
  const size_t first = text.find(':'), last = text.rfind(':');
  rt.repo = std::string(text.substr(0, first));
  if (last != std::string_view::npos) rt.tag = std::string(text.substr(last + 1));
  if (std::count(rt.repo.begin(), rt.repo.end(), '/') != 1 || !is_valid_repo_id(rt.repo))
    return error(ErrorCode::kInvalidArgument,
                 "invalid HF repo format, expected <user>/<model>[:quant]");
  return rt;
}

Result<std::string> repo_directory(std::string_view repo_id) {
  if (!is_valid_repo_id(repo_id))
    return error(ErrorCode::kInvalidArgument, fmt::format("invalid repository '{}'", repo_id));
  HEARTH_ASSIGN_OR_RETURN(const std::string root, cache_directory());
  std::string folder = "models--";
  for (const char c : repo_id) folder += c == '/' ? std::string("--") : std::string(1, c);
  return (fs::path(root) / folder).string();
}

Result<std::vector<RepoFile>> list_repo_files(const std::string& repo_id, const std::string& token,
                                              bool offline, const std::atomic<bool>* cancel) {
  if (!offline) {
    auto online = fetch_listing(repo_id, token, cancel);
    if (online.is_ok()) return online;
    if (cancel != nullptr && cancel->load()) return online.status();
    log_warn("hub: {}; looking in the cache instead", online.status().message());
  }
  std::vector<RepoFile> cached = cached_repo_files(repo_id);
  if (cached.empty())
    return error(ErrorCode::kNotFound,
                 fmt::format("{} is not in the cache{}", repo_id,
                             offline ? " (--offline: nothing is downloaded)" : ""));
  return cached;
}

std::optional<RepoFile> select_projector_file(const std::vector<RepoFile>& files,
                                              std::string_view model_path) {
  const std::vector<std::string_view> model_folders = folders_of(model_path);
  const int model_bits = quant_bits(model_path);
  const RepoFile* best = nullptr;
  size_t best_depth = 0;
  int best_diff = 0;
  for (const RepoFile& f : files) {
    if (!f.path.ends_with(".gguf") || f.path.find("mmproj") == std::string::npos) continue;
    // Its folders must be the model's first folders: the same folder, or one above it.
    const std::vector<std::string_view> folders = folders_of(f.path);
    if (folders.size() > model_folders.size() ||
        !std::equal(folders.begin(), folders.end(), model_folders.begin()))
      continue;
    const int diff = std::abs(quant_bits(f.path) - model_bits);
    if (best == nullptr || folders.size() > best_depth ||
        (folders.size() == best_depth && diff < best_diff)) {
      best = &f;
      best_depth = folders.size();
      best_diff = diff;
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

Result<std::vector<RepoFile>> select_model_files(const std::vector<RepoFile>& files,
                                                 const std::string& repo_id, const std::string& tag,
                                                 const std::string& hf_file) {
  const RepoFile* primary = nullptr;
  if (!hf_file.empty()) {
    auto it = std::find_if(files.begin(), files.end(),
                           [&](const RepoFile& f) { return f.path == hf_file; });
    if (it == files.end())
      return error(ErrorCode::kNotFound,
                   fmt::format("file '{}' not found in repository {}; GGUF files: {}", hf_file,
                               repo_id, gguf_list(files)));
    primary = &*it;
  } else {
    primary = find_model(files, tag);
    if (primary == nullptr)
      return error(
          ErrorCode::kNotFound,
          fmt::format("no GGUF file{} found in repository {}; GGUF files: {}",
                      tag.empty() ? "" : " with tag '" + tag + "'", repo_id, gguf_list(files)));
  }
  const GgufName name = split_gguf_name(primary->path);
  if (name.count <= 1) return std::vector<RepoFile>{*primary};
  std::vector<RepoFile> parts;
  for (const RepoFile& f : files) {
    const GgufName n = split_gguf_name(f.path);
    if (n.count == name.count && n.prefix == name.prefix) parts.push_back(f);
  }
  std::sort(parts.begin(), parts.end(), [](const RepoFile& a, const RepoFile& b) {
    return split_gguf_name(a.path).index < split_gguf_name(b.path).index;
  });
  if (static_cast<int>(parts.size()) != name.count || split_gguf_name(parts[0].path).index != 1)
    return error(ErrorCode::kNotFound,
                 fmt::format("{} is split into {} parts but repository {} has {} of them",
                             primary->path, name.count, repo_id, parts.size()));
  return parts;
}

}  // namespace hearth::hub

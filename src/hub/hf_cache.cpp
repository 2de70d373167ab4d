#include "hub/hf_cache.h"

#include <pwd.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

namespace hearth::hub {

namespace fs = std::filesystem;

namespace {

constexpr std::string_view kRepoPrefix = "models--";

std::string repo_from_folder(const std::string& folder) {
  if (!folder.starts_with(kRepoPrefix)) return {};
  // Each "--" stands for a '/'.
  std::string id;
  for (size_t i = kRepoPrefix.size(); i < folder.size(); ++i) {
    const bool separator = folder.compare(i, 2, "--") == 0;
    id.push_back(separator ? '/' : folder[i]);
    i += separator ? 1 : 0;
  }
  return id;
}

// refs/main's commit, else the first valid one by file name.
std::string cached_ref(const fs::path& repo) {
  std::error_code ec;
  std::vector<fs::path> refs;
  for (const auto& e : fs::directory_iterator(repo / "refs", ec))
    if (e.is_regular_file()) refs.push_back(e.path());
  std::sort(refs.begin(), refs.end());
  std::string fallback;
  for (const fs::path& ref : refs) {
    std::ifstream in(ref);
    std::string commit;
    if (!std::getline(in, commit) || !is_valid_commit(commit)) continue;
    if (ref.filename() == "main") return commit;
    if (fallback.empty()) fallback = commit;
  }
  return fallback;
}

void add_snapshot_files(const std::string& repo_id, const fs::path& snapshot,
                        std::vector<CachedFile>& out) {
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(snapshot, ec);
       !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (!it->is_regular_file() && !it->is_symlink()) continue;
    const fs::path relative = it->path().lexically_relative(snapshot);
    if (!relative.empty()) out.push_back({repo_id, relative.generic_string(), it->path().string()});
  }
}

}  // namespace

Result<std::string> cache_directory() {
  struct Source {
    const char* var;
    const char* under;
  };
  constexpr Source kSources[] = {{"LLAMA_CACHE", ""},
                                 {"HF_HUB_CACHE", ""},
                                 {"HUGGINGFACE_HUB_CACHE", ""},
                                 {"HF_HOME", "hub"},
                                 {"XDG_CACHE_HOME", "huggingface/hub"},
                                 {"HOME", ".cache/huggingface/hub"}};
  for (const Source& s : kSources) {
    const char* value = std::getenv(s.var);
    if (value == nullptr || *value == '\0') continue;
    return *s.under == '\0' ? std::string(value) : (fs::path(value) / s.under).string();
  }
  if (const passwd* pw = getpwuid(getuid()); pw && pw->pw_dir && *pw->pw_dir)
    return (fs::path(pw->pw_dir) / ".cache/huggingface/hub").string();
  return error(ErrorCode::kNotFound, "cannot determine the Hugging Face cache directory");
}

bool is_valid_repo_id(std::string_view repo_id) {
  if (repo_id.empty() || repo_id.size() > 256) return false;
  int slashes = 0;
  bool after_separator = true;  // the first character cannot be a separator
  for (const char c : repo_id) {
    if (std::isalnum(static_cast<unsigned char>(c)) || c == '_') {
      after_separator = false;
    } else if (c == '/' || c == '.' || c == '-') {
      if (after_separator) return false;
      slashes += c == '/';
      after_separator = true;
    } else {
      return false;
    }
  }
  return !after_separator && slashes == 1;
}

bool is_hex_string(std::string_view text, size_t digits) {
  return text.size() == digits && std::all_of(text.begin(), text.end(), [](char c) {
           return std::isxdigit(static_cast<unsigned char>(c)) != 0;
         });
}

bool is_valid_commit(std::string_view commit) {
  return is_hex_string(commit, 40);
}

namespace {

bool all_digits(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; });
}

bool is_word_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '_';
}

}  // namespace

// "<prefix>-NNNNN-of-NNNNN" (any case) marks a split part; the tag is the trailing run of
// [A-Za-z0-9_] after the last '-' or '.'.
GgufName split_gguf_name(std::string_view path) {
  GgufName name;
  if (!path.ends_with(".gguf")) return name;
  std::string_view prefix = path.substr(0, path.size() - 5);
  constexpr size_t kSplitSuffix = 15;  // "-00001-of-00003"
  if (prefix.size() > kSplitSuffix) {
    const std::string_view tail = prefix.substr(prefix.size() - kSplitSuffix + 1);
    const std::string_view of = tail.substr(5, 4);
    if (prefix[prefix.size() - kSplitSuffix] == '-' && all_digits(tail.substr(0, 5)) &&
        (of == "-of-" || of == "-OF-" || of == "-Of-" || of == "-oF-") &&
        all_digits(tail.substr(9))) {
      name.index = std::stoi(std::string(tail.substr(0, 5)));
      name.count = std::stoi(std::string(tail.substr(9)));
      prefix = prefix.substr(0, prefix.size() - kSplitSuffix);
    }
  }
  name.prefix = std::string(prefix);
  size_t start = prefix.size();
  while (start > 0 && is_word_char(prefix[start - 1])) --start;
  if (start > 0 && start < prefix.size() &&
      (prefix[start - 1] == '-' || prefix[start - 1] == '.')) {
    name.tag = std::string(prefix.substr(start));
    for (char& c : name.tag) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  return name;
}

std::vector<CachedFile> cached_files(std::string_view repo_id) {
  std::vector<CachedFile> files;
  const Result<std::string> root = cache_directory();
  if (!root.is_ok() || (!repo_id.empty() && !is_valid_repo_id(repo_id))) return files;
  std::error_code ec;
  std::vector<fs::path> repos;
  for (const auto& e : fs::directory_iterator(*root, ec))
    if (e.is_directory()) repos.push_back(e.path());
  std::sort(repos.begin(), repos.end());
  for (const fs::path& repo : repos) {
    const std::string id = repo_from_folder(repo.filename().string());
    if (!is_valid_repo_id(id) || (!repo_id.empty() && id != repo_id)) continue;
    const std::string commit = cached_ref(repo);
    const fs::path snapshot = repo / "snapshots" / commit;
    if (commit.empty() || !fs::is_directory(snapshot, ec)) continue;
    add_snapshot_files(id, snapshot, files);
  }
  std::sort(files.begin(), files.end(), [](const CachedFile& a, const CachedFile& b) {
    return std::tie(a.repo_id, a.path) < std::tie(b.repo_id, b.path);
  });
  return files;
}

bool is_sidecar_name(std::string_view name) {
  for (std::string_view s : {"mmproj", "mtp-", "eagle3-", "dflash-", "dspark-"})
    if (name.find(s) != std::string_view::npos) return true;
  return false;
}

std::vector<std::string> cached_models() {
  std::vector<std::string> models;
  std::set<std::string> seen;
  for (const CachedFile& f : cached_files()) {
    const GgufName name = split_gguf_name(f.path);
    if (name.index != 1 || name.tag.empty()) continue;
    if (is_sidecar_name(name.prefix)) continue;
    std::string model = f.repo_id + ":" + name.tag;
    if (seen.insert(model).second) models.push_back(std::move(model));
  }
  return models;
}

std::string cache_list_text() {
  const std::vector<std::string> models = cached_models();
  std::string text = fmt::format("number of models in cache: {}\n", models.size());
  for (size_t i = 0; i < models.size(); ++i) text += fmt::format("{:4}. {}\n", i + 1, models[i]);
  return text;
}

}  // namespace hearth::hub

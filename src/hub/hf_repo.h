// A Hugging Face repository's files, as llama-server resolves them for -hf (cli.md 6.1):
//   GET {endpoint}api/models/<repo>/refs                          -> the commit of "main"
//   GET {endpoint}api/models/<repo>/tree/<commit>?recursive=true  -> paths, oids and sizes
//   GET {endpoint}<repo>/resolve/<commit>/<path>                  -> a file's bytes
// and which of them a model tag selects.
#pragma once

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace hearth::hub {

// MODEL_ENDPOINT, else HF_ENDPOINT, else https://huggingface.co/; always ending in '/'.
std::string model_endpoint();

// A token is sent only when it looks like one ("hf_" and 34-253 letters or digits), as the
// reference does; other values are warned about and not sent.
bool is_valid_token(std::string_view token);

struct RepoTag {
  std::string repo;  // user/model
  std::string tag;   // "Q4_K_M", or "" for the default choice
};
// "user/model[:tag]"; anything else is the reference's "invalid HF repo format" error.
Result<RepoTag> split_repo_tag(std::string_view text);

struct RepoFile {
  std::string repo_id;
  std::string path;        // inside the repository, '/'-separated
  std::string oid;         // LFS sha256 (64 hex) or git blob sha1 (40 hex); "" when unknown
  uint64_t size = 0;       // bytes; 0 when unknown
  std::string url;         // where its bytes are; "" for a file only in the cache
  std::string blob_path;   // <repo dir>/blobs/<oid>; "" without an oid
  std::string final_path;  // <repo dir>/snapshots/<commit>/<path>: what the model loader opens
};

// The repository's files. Online: from the hub, writing refs/<branch>; a hub that cannot be
// reached falls back to the cache with a warning. Offline: from the cache only.
Result<std::vector<RepoFile>> list_repo_files(const std::string& repo_id, const std::string& token,
                                              bool offline,
                                              const std::atomic<bool>* cancel = nullptr);

// The files of the model to load, part 1 first: `hf_file` exactly when given; else the first
// model GGUF whose path contains `tag` followed by '.' or '-' (any case); with no tag Q4_K_M,
// then Q8_0, then the first model GGUF. All parts of a split model are included.
Result<std::vector<RepoFile>> select_model_files(const std::vector<RepoFile>& files,
                                                 const std::string& repo_id, const std::string& tag,
                                                 const std::string& hf_file);

// The projector (a GGUF with "mmproj" in its path) that goes with the model file `model_path`
// of the same listing, as llama-server picks it: only files in the model's folder or a folder
// above it count; the deepest such folder wins, then the quantization whose bits (the first
// number of the name's tag: Q4_K_M 4, F16 16, none 0) are closest to the model's, then the
// listing's order. None when the repository has no projector there.
std::optional<RepoFile> select_projector_file(const std::vector<RepoFile>& files,
                                              std::string_view model_path);

// The directory of `repo_id` in the cache: <cache>/models--user--model.
Result<std::string> repo_directory(std::string_view repo_id);

}  // namespace hearth::hub

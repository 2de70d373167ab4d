// The Hugging Face hub cache, as llama-server and Hugging Face's own tools lay it out
// (cli.md section 6.2):
//   <root>/models--<user>--<model>/refs/<branch>                     a commit id (40 hex)
//   <root>/models--<user>--<model>/snapshots/<commit>/<path in repo>  the files (or links)
//   <root>/models--<user>--<model>/blobs/<oid>                        their contents
// <root> is the first set of $LLAMA_CACHE, $HF_HUB_CACHE, $HUGGINGFACE_HUB_CACHE,
// $HF_HOME/hub, $XDG_CACHE_HOME/huggingface/hub, $HOME/.cache/huggingface/hub, and finally
// the passwd home directory's .cache/huggingface/hub.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace hearth::hub {

// The cache's root directory, read from the environment on every call.
Result<std::string> cache_directory();

// "user/model": [A-Za-z0-9_] with '/', '.' and '-' only between them, exactly one '/',
// at most 256 characters.
bool is_valid_repo_id(std::string_view repo_id);
// Exactly `digits` hexadecimal digits.
bool is_hex_string(std::string_view text, size_t digits);
// A commit id: 40 hexadecimal digits.
bool is_valid_commit(std::string_view commit);

// A GGUF file's name parts: "dir/model-Q4_K_M-00001-of-00003.gguf" has the prefix
// "dir/model-Q4_K_M", the tag "Q4_K_M" (the last [-.]-separated run of letters, digits and
// '_', upper-cased), part 1 of 3. A name without ".gguf" has an empty prefix.
struct GgufName {
  std::string prefix;
  std::string tag;
  int index = 1;
  int count = 1;
};
GgufName split_gguf_name(std::string_view path);

// Whether a file name is a projector (mmproj) or a draft sidecar (mtp-, eagle3-, dflash-,
// dspark-) rather than a model.
bool is_sidecar_name(std::string_view name);

struct CachedFile {
  std::string repo_id;     // user/model
  std::string path;        // inside the repository, '/'-separated
  std::string local_path;  // in the snapshot
};

// The files of the snapshot each cached repository's ref points at (refs/main, else the
// first valid ref by name); only `repo_id`'s when it is not empty. Sorted by repository and
// path. Folders that are not repositories, invalid ids and refs are skipped.
std::vector<CachedFile> cached_files(std::string_view repo_id = {});

// "user/model:TAG" for each cached model: first parts of GGUFs with a tag, leaving out
// projectors (mmproj) and draft sidecars (mtp-, eagle3-, dflash-, dspark-); each once.
std::vector<std::string> cached_models();

// What -cl prints: "number of models in cache: N" and one "%4zu. user/model:TAG" line each.
std::string cache_list_text();

}  // namespace hearth::hub

// Where the model file comes from: a local path (-m), a Hugging Face repository (-hf, -hff),
// or a URL (-mu). Downloads what is missing and returns the path to load (part 1 of a split
// model), and with -hf the repository's projector (mmproj) when asked. A projector from a URL
// (-mmu) is a request of its own, one file, fetched the way -mu fetches a model.
#pragma once

#include <string>
#include <vector>

#include "base/status.h"
#include "hub/download.h"

namespace hearth::hub {

struct ModelRequest {
  std::string path;     // -m: the file, or where a -mu download goes
  std::string hf_repo;  // -hf user/model[:tag]
  std::string hf_file;  // -hff
  std::string url;      // -mu
  std::string token;    // -hft / HF_TOKEN
  bool offline = false;
  // -hf: also fetch the repository's projector, if it has one (llama-server does unless
  // --no-mmproj, -mm or -mmu is given).
  bool with_projector = false;
  // A URL named like part 1 of a split GGUF brings all its parts (-mu); -mmu's URL is one file.
  bool url_may_be_split = true;
};

struct ResolvedModel {
  std::string model_path;      // what the model loader opens
  std::string projector_path;  // -hf with_projector: the projector; "" when there is none
};

// Whether the request needs resolve_model() (a repository or URL); a plain -m does not.
bool is_remote(const ModelRequest& request);

// The llama.cpp cache directory for URL downloads: $LLAMA_CACHE, else
// $XDG_CACHE_HOME/llama.cpp, else $HOME/.cache/llama.cpp (created when missing).
Result<std::string> llama_cache_directory();

// The URLs of all parts when `url` names part 1 of a split GGUF ("-00001-of-00003.gguf"),
// else just `url`.
std::vector<std::string> url_parts(const std::string& url);

// The local paths of the model (and projector) to load, after downloading what the cache lacks
// (model and projector together, both counted in `options.progress`). Offline, only the cache
// is read: a missing model file is an error, and a projector counts only when it is cached (an
// uncached one is not there to choose, as with llama-server).
Result<ResolvedModel> resolve_model_files(const ModelRequest& request,
                                          const DownloadOptions& options);

// resolve_model_files()'s model path.
Result<std::string> resolve_model(const ModelRequest& request, const DownloadOptions& options);

}  // namespace hearth::hub

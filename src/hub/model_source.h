// Where the model file comes from: a local path (-m), a Hugging Face repository (-hf, -hff),
// or a URL (-mu). Downloads what is missing and returns the path to load (part 1 of a split
// model).
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
};

// Whether the request needs resolve_model() (a repository or URL); a plain -m does not.
bool is_remote(const ModelRequest& request);

// The llama.cpp cache directory for URL downloads: $LLAMA_CACHE, else
// $XDG_CACHE_HOME/llama.cpp, else $HOME/.cache/llama.cpp (created when missing).
Result<std::string> llama_cache_directory();

// The URLs of all parts when `url` names part 1 of a split GGUF ("-00001-of-00003.gguf"),
// else just `url`.
std::vector<std::string> url_parts(const std::string& url);

// The local path of the model to load, after downloading what the cache lacks. Offline, only
// the cache is read and a missing file is an error.
Result<std::string> resolve_model(const ModelRequest& request, const DownloadOptions& options);

}  // namespace hearth::hub

// The server's settings that command-line options set as they are. ServerConfig
// (server/server.h) extends this struct; the option parser fills one in ServerArgs, so each
// option row names its member here (or in a struct held here) and the member's initializer
// is the option's default, written once. Members set by no option are marked.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/config/chat_settings.h"
#include "server/config/request_defaults.h"
#include "server/config/ui_config.h"
#include "server/http/http.h"

namespace hearth::server {

struct ServerSettings {
  std::string model_path;             // -m as given, or where -hf / -mu put the model
  std::string hf_repo;                // -hf as given (with its tag): the name without an alias
  std::vector<std::string> aliases;   // -a, trimmed (sorted when the config is made)
  std::vector<std::string> tags;      // --tags, trimmed (sorted when the config is made)
  std::string api_prefix;             // --api-prefix
  std::vector<std::string> api_keys;  // --api-key, LLAMA_API_KEY and --api-key-file, all kept
  std::string cors_origins = "*";
  std::string cors_methods = "GET, POST, DELETE, OPTIONS";
  std::string cors_headers = "*";
  bool cors_credentials = true;
  bool endpoint_metrics = false;  // --metrics
  bool endpoint_slots = true;     // --slots / --no-slots
  bool endpoint_props = false;    // --props (POST /props)
  std::string slot_save_path;     // an existing directory with a trailing '/'; empty: disabled
  // --media-path: file:// media URLs are read below this directory (an existing directory
  // with a trailing '/'); empty: file:// URLs are refused.
  std::string media_path;
  bool special = false;     // -sp: render special tokens as text
  bool spm_infill = false;  // --spm-infill
  // --log-prompts-dir: every generation's prompt is written here (created at parse time).
  std::string prompts_log_dir;
  // --embedding: the embedding routes run (the scheduler's config holds the pooling).
  bool embeddings = false;
  int32_t embd_normalize = 2;  // --embd-normalize: the requests' default
  RequestDefaults defaults;
  ChatSettings chat;
  // --host, --port, --timeout, --reuse-port (io_threads is --threads-http resolved).
  http::ServerOptions http;
  UiConfig ui;
  Json ui_settings = Json::object();  // --ui-config: /props ui_settings

  bool operator==(const ServerSettings&) const = default;
};

}  // namespace hearth::server

// hearth-server's HTTP front: the route table, llama-server's request pipeline (CORS,
// OPTIONS, loading gate, API key, 404) and the handlers, over one Scheduler.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "base/serving_defaults.h"
#include "base/status.h"
#include "chat/chat_templates.h"
#include "scheduler/scheduler.h"
#include "server/chat_request.h"
#include "server/fields/completion_fields.h"
#include "server/http/http.h"
#include "server/ui/static_files.h"

namespace hearth::server {

// What /props and /models report about the loaded model.
struct ModelInfo {
  int vocab_type = 0;  // 0 none, 1 SPM, 2 BPE, 3 WPM, 4 UGM, 5 RWKV, 6 PLaMo-2
  int32_t n_vocab = 0;
  int32_t n_ctx_train = 0;
  int32_t n_embd = 0;
  uint64_t n_params = 0;
  uint64_t size = 0;            // bytes of weights
  std::string ftype;            // e.g. "Q4_0", "(guessed) all F32"
  std::string rerank_template;  // tokenizer.chat_template.rerank; "" when absent
  // The chat templates selected at load (/props, /apply-template); never null once ready.
  std::shared_ptr<const chat::ChatTemplates> chat_templates;
};

struct ServerConfig {
  std::string model_path;            // -m as given, or where -hf / -mu put the model
  std::string hf_repo;               // -hf as given (with its tag): the name without an alias
  std::vector<std::string> aliases;  // -a, sorted
  std::vector<std::string> tags;     // --tags, sorted
  std::string api_prefix;
  std::vector<std::string> api_keys;
  std::string cors_origins = "*";
  std::string cors_methods = "GET, POST, DELETE, OPTIONS";
  std::string cors_headers = "*";
  bool cors_credentials = true;
  bool endpoint_metrics = false;
  bool endpoint_slots = true;
  bool endpoint_props = false;
  std::string slot_save_path;
  bool special = false;
  int32_t n_batch = kDefaultBatchSize;
  bool spm_infill = false;
  // --embedding: the embedding routes run (the scheduler's config holds the pooling);
  // --rerank (pooling rank given on the command line): the rerank routes run too.
  bool embeddings = false;
  bool reranking = false;
  int32_t embd_normalize = 2;  // --embd-normalize: the requests' default
  std::string build_info = "b0-unknown";
  std::string media_marker;  // chosen once per process
  RequestDefaults defaults;
  ChatSettings chat;  // `templates` is taken from ModelInfo when the model is ready
  http::ServerOptions http;
  UiConfig ui;
  Json ui_settings = Json::object();  // --ui-config: /props ui_settings
  // While the model loads: what to add to the 503 "Loading model" error (download progress);
  // null or returning null: nothing. Called from I/O threads.
  std::function<Json()> loading_progress;

  // Served model name: the first alias, else the -hf repository, else the model path.
  std::string model_name() const {
    if (!aliases.empty()) return aliases.front();
    return hf_repo.empty() ? model_path : hf_repo;
  }
};

class Server {
 public:
  explicit Server(ServerConfig config);
  ~Server();

  // Binds the listener; until set_ready() every route answers 503 "Loading model".
  Status listen();
  int port() const;
  void set_ready(std::shared_ptr<scheduler::Scheduler> scheduler, ModelInfo info);
  // Request defaults; replaced only before set_ready() (the model can change them).
  const RequestDefaults& defaults() const;
  void set_defaults(RequestDefaults defaults);
  // The model file, once a download has placed it; only before set_ready().
  void set_model_path(std::string path);
  // Serves until stop(); blocks.
  void run();
  // The HTTP layer's threads and connections.
  http::ServerStats http_stats() const;
  void stop();

  // The request pipeline (exposed for tests that skip the socket).
  http::Response dispatch(const http::Request& request);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hearth::server

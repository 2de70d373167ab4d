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
#include "server/config/server_settings.h"
#include "server/fields/completion_fields.h"
#include "server/http/http.h"
#include "server/streams/stream_store.h"
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

// The server's configuration: the settings options set as they are (ServerSettings, filled
// by the option parser and handed over whole), and what is derived from several options or
// chosen at start-up.
// True when `path` (without the API prefix) is a route of the table, for any method.
bool has_route(const std::string& path);

struct ServerConfig : ServerSettings {
  int32_t n_batch = kDefaultBatchSize;  // -b (lowered to -ub with --embedding)
  // --rerank (pooling rank given on the command line): the rerank routes run too.
  bool reranking = false;
  std::string build_info = "b0-unknown";
  std::string media_marker;  // chosen once per process
  // Reads http(s):// and file:// media URLs (hearth-server: the hub's checked fetcher);
  // null: such URLs are refused.
  MediaUrlFetcher fetch_media_url;
  // While the model loads: what to add to the 503 "Loading model" error (download progress);
  // null or returning null: nothing. Called from I/O threads.
  std::function<Json()> loading_progress;
  // Resumable streams' bounds (defaults: the reference's buffer size and retention).
  streams::StreamLimits stream_limits;
  // Google Vertex AI (AIP_MODE=PREDICTION, other-native-routes.md §18): the predict route
  // and an extra health route; empty: not in that mode (predict) or no alias (health).
  std::string vertex_predict_route;
  std::string vertex_health_route;

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

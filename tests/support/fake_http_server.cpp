#include "support/fake_http_server.h"

#include <algorithm>

#include "server/options/parse_args.h"
#include "webui/embedded_assets.h"

namespace hearth::test {
namespace {

using server::options::ServerArgs;

// What hearth-server's make_config derives (tools/server/main.cpp), less what needs a model
// file or a process: the media marker is fixed, the listener is 127.0.0.1 on a free port.
server::ServerConfig config_of(const ServerArgs& args) {
  server::ServerConfig c;
  static_cast<server::ServerSettings&>(c) = args;
  std::sort(c.aliases.begin(), c.aliases.end());
  c.n_batch = args.embeddings ? std::min(args.n_batch, args.n_ubatch) : args.n_batch;
  c.reranking =
      args.embeddings && args.pooling == static_cast<int32_t>(scheduler::PoolingType::kRank);
  c.media_marker = "<__media_fake__>";
  c.defaults.spec_types = server::options::spec_type_names(args);
  c.defaults.reasoning_format =
      args.chat.reasoning_format == "auto" ? "deepseek" : args.chat.reasoning_format;
  c.defaults.n_slots = server::options::resolved_n_slots(args);
  c.ui.assets = webui::embedded_assets();
  if (c.model_path.empty() && c.hf_repo.empty()) c.model_path = "synthetic.gguf";
  c.http.host = "127.0.0.1";
  c.http.port = 0;
  return c;
}

// hearth-server's slot_context: -c / slots rounded up to 256 (all of -c with a unified
// cache), -c 0 meaning the training context, capped at the training context.
int32_t slot_context(const ServerArgs& args, int32_t n_ctx_train) {
  const int32_t n_ctx = args.n_ctx > 0 ? args.n_ctx : n_ctx_train;
  int32_t per_slot = n_ctx;
  if (!server::options::resolved_kv_unified(args)) {
    per_slot = (n_ctx / server::options::resolved_n_slots(args) + 255) / 256 * 256;
  }
  return n_ctx_train > 0 ? std::min(per_slot, n_ctx_train) : per_slot;
}

}  // namespace

InProcessServer::~InProcessServer() {
  stop();
}

bool InProcessServer::start(const std::vector<std::string>& args, FakeModel model) {
  auto parsed = server::options::parse_args(args, [](std::string_view) {
    return std::optional<std::string>();  // the environment is not read
  });
  if (parsed.action != server::options::ParseAction::kRun) {
    error_ = "arguments refused: " + parsed.text;
    return false;
  }
  const ServerArgs& a = parsed.args;
  if (!a.chat_template.empty()) model.chat_template = a.chat_template;
  model.n_ctx_slot = slot_context(a, model.n_ctx_train);
  if (a.pooling >= 0) model.pooling = static_cast<scheduler::PoolingType>(a.pooling);
  fake_ = make_fake_server(config_of(a), std::move(model));
  if (!fake_.server) {
    error_ = "the chat template does not load";
    return false;
  }
  if (Status st = fake_.server->listen(); !st.is_ok()) {
    error_ = "listen: " + st.message();
    return false;
  }
  port_ = fake_.server->port();
  thread_ = std::thread([this] { fake_.server->run(); });
  return true;
}

void InProcessServer::stop() {
  if (fake_.server) fake_.server->stop();
  if (thread_.joinable()) thread_.join();
}

}  // namespace hearth::test

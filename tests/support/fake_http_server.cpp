#include "support/fake_http_server.h"

#include "server/options/parse_args.h"
#include "tools/server/server_config.h"

namespace hearth::test {
namespace {

using server::options::ServerArgs;

// hearth-server's configuration, less what needs a model file or a process: the media
// marker is fixed, the listener is 127.0.0.1 on a free port.
server::ServerConfig config_of(const ServerArgs& args) {
  server::ServerConfig c = server_tool::make_config(args);
  c.media_marker = "<__media_fake__>";
  if (c.model_path.empty() && c.hf_repo.empty()) c.model_path = "synthetic.gguf";
  c.http.host = "127.0.0.1";
  c.http.port = 0;
  return c;
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
  model.n_ctx_slot = server_tool::slot_context(a, model.n_ctx_train);
  // -mm: a fake projector taking images and audio (FakeScheduler::encode_media).
  if (!a.mmproj.empty() && a.mmproj_auto) model.media = {.vision = true, .audio = true};
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

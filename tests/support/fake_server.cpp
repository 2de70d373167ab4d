#include "support/fake_server.h"

#include "chat/chat_templates.h"

namespace hearth::test {

FakeServer make_fake_server(server::ServerConfig config,
                            std::shared_ptr<const tokenizer::Tokenizer> tok,
                            const std::string& chat_template, int32_t n_ctx_slot) {
  FakeServer out;
  if (!tok) return out;
  scheduler::SchedulerConfig sc;
  sc.n_slots = config.defaults.n_slots;
  sc.n_ctx_slot = n_ctx_slot;
  out.scheduler = std::make_shared<FakeScheduler>(tok, sc);
  out.scheduler->start();
  chat::TemplateOrigin origin;
  origin.override_text = chat_template;
  auto templates =
      chat::load_chat_templates(origin, config.chat.use_jinja,
                                chat::VocabText{"<s>", "</s>", true, false}, chat::Json::object());
  if (!templates.is_ok()) return out;
  server::ModelInfo info;
  info.vocab_type = 1;
  info.n_vocab = tok->n_vocab();
  info.chat_templates = std::move(*templates);
  out.server = std::make_unique<server::Server>(std::move(config));
  out.server->set_ready(out.scheduler, std::move(info));
  return out;
}

}  // namespace hearth::test

#include "support/fake_server.h"

#include "chat/chat_templates.h"
#include "support/synthetic_vocab.h"

namespace hearth::test {

FakeServer make_fake_server(server::ServerConfig config, FakeModel model) {
  FakeServer out;
  std::shared_ptr<const tokenizer::Tokenizer> tok =
      model.tok ? std::move(model.tok) : synthetic_tokenizer();
  scheduler::SchedulerConfig sc;
  sc.n_slots = config.defaults.n_slots;
  sc.n_ctx_slot = model.n_ctx_slot;
  sc.n_batch = config.n_batch;
  sc.embeddings = config.embeddings;
  sc.pooling = model.pooling;
  out.scheduler = std::make_shared<FakeScheduler>(tok, sc);
  out.scheduler->set_media_support(model.media);
  out.scheduler->start();
  chat::TemplateOrigin origin;
  origin.override_text = model.chat_template;
  auto templates = chat::load_chat_templates(origin, config.chat.use_jinja,
                                             chat::VocabText{"<s>", "</s>", true, false},
                                             config.chat.template_kwargs);
  if (!templates.is_ok()) return out;
  server::ModelInfo info;
  info.vocab_type = 1;
  info.n_vocab = tok->n_vocab();
  info.n_ctx_train = model.n_ctx_train;
  info.n_embd = FakeScheduler::kEmbeddingWidth;
  info.n_params = 1;
  info.size = 1;
  info.ftype = "(fake) no weights";
  info.rerank_template = model.rerank_template;
  info.chat_templates = std::move(*templates);
  out.server = std::make_unique<server::Server>(std::move(config));
  out.server->set_ready(out.scheduler, std::move(info));
  return out;
}

FakeServer make_fake_server(server::ServerConfig config,
                            std::shared_ptr<const tokenizer::Tokenizer> tok,
                            const std::string& chat_template, int32_t n_ctx_slot) {
  FakeModel model;
  model.tok = std::move(tok);
  model.chat_template = chat_template;
  model.n_ctx_slot = n_ctx_slot;
  return make_fake_server(std::move(config), std::move(model));
}

}  // namespace hearth::test

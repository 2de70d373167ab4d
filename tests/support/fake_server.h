// A hearth-server front (server::Server: route table, pipeline, handlers) over the
// FakeScheduler, ready to dispatch requests without a socket or a model: for route and
// pipeline tests and the request-path fuzz target.
#pragma once

#include <memory>
#include <string>

#include "server/server.h"
#include "support/fake_scheduler.h"

namespace hearth::test {

struct FakeServer {
  std::shared_ptr<FakeScheduler> scheduler;
  std::unique_ptr<server::Server> server;
};

// What the fake's "model" is, beyond the command line's config.
struct FakeModel {
  std::shared_ptr<const tokenizer::Tokenizer> tok;  // null: synthetic_tokenizer()
  // The chat template (as --chat-template-file gives it); "": ChatML.
  std::string chat_template;
  int32_t n_ctx_slot = 512;
  int32_t n_ctx_train = 512;
  // Embedding tasks' pooling (--pooling resolved); the embedding routes run with
  // config.embeddings.
  scheduler::PoolingType pooling = scheduler::PoolingType::kNone;
  std::string rerank_template;  // tokenizer.chat_template.rerank; "" when absent
  // A fake projector (the command line's -mm): FakeScheduler::encode_media's media.
  scheduler::MediaSupport media;
};

// `config` as the command line would make it (slots come from its defaults.n_slots). Null
// server when the chat template cannot be loaded.
FakeServer make_fake_server(server::ServerConfig config, FakeModel model);

// The same with `tok` (null: the synthetic vocabulary) and a template.
FakeServer make_fake_server(server::ServerConfig config,
                            std::shared_ptr<const tokenizer::Tokenizer> tok,
                            const std::string& chat_template = "", int32_t n_ctx_slot = 512);

}  // namespace hearth::test

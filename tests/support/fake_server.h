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

// `config` as the command line would make it (slots come from its defaults.n_slots); the
// chat template is `chat_template` (as --chat-template-file gives it), else ChatML. Null
// server when the tokenizer is missing or the template cannot be loaded.
FakeServer make_fake_server(server::ServerConfig config,
                            std::shared_ptr<const tokenizer::Tokenizer> tok,
                            const std::string& chat_template = "", int32_t n_ctx_slot = 512);

}  // namespace hearth::test

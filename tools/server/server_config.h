// hearth-server's configuration derived from its parsed command line: what the server and
// the per-slot context are given. Shared with the tests' in-process server.
#pragma once

#include <cstdint>

#include "server/options/server_args.h"
#include "server/server.h"

namespace hearth::server_tool {

// -b: with --embedding an input is evaluated in one physical batch, so the logical batch is
// lowered to -ub, as the reference does.
int32_t logical_batch(const server::options::ServerArgs& args);

// Per-slot context: -c / slots rounded up to 256 (each slot gets all of -c with a unified
// cache), -c 0 meaning the training context, capped at the training context.
int32_t slot_context(const server::options::ServerArgs& args, int32_t n_ctx_train);

// The options the server takes as given are its settings, handed over whole; the rest of its
// configuration (logical batch, reranking, request defaults, a random media marker, the
// embedded page) is derived.
server::ServerConfig make_config(const server::options::ServerArgs& args);

}  // namespace hearth::server_tool

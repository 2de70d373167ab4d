// What /props and /models report about a loaded model, derived from its GGUF file.
#pragma once

#include "engine/model.h"
#include "server/server.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server_tool {

server::ModelInfo describe_model(const engine::Model& model, const tokenizer::Tokenizer& tok);

}  // namespace hearth::server_tool

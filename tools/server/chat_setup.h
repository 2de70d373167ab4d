// The server's chat templates: chosen from the command line and the model (chat library),
// checked at start-up as llama-server checks them.
#pragma once

#include <memory>

#include "base/status.h"
#include "chat/chat_templates.h"
#include "engine/model.h"
#include "server/options/server_args.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server_tool {

// Renders the --chat-template / --chat-template-file text once, before the model loads.
// On failure prints the reference's "error: the supplied chat template is not supported"
// to stderr and returns false.
bool verify_chat_template_option(const server::options::ServerArgs& args);

// Selects, parses and probes the templates for the loaded model.
Result<std::shared_ptr<const chat::ChatTemplates>> load_model_chat_templates(
    const server::options::ServerArgs& args, const engine::Model& model,
    const tokenizer::Tokenizer& tok);

}  // namespace hearth::server_tool

#include "chat_setup.h"

#include <cstdio>
#include <optional>
#include <string>

#include "base/log.h"

namespace hearth::server_tool {

namespace {

std::optional<std::string> metadata_string(const engine::Model& model, std::string_view key) {
  Result<std::string_view> value = model.metadata().get_string(key);
  if (!value.is_ok()) return std::nullopt;
  return std::string(*value);
}

// The text of a special token, "" when the vocabulary has none. Templates that use the
// missing token will not work as intended: say so, as the reference does.
std::string special_text(const tokenizer::Tokenizer& tok, int32_t id, const char* name,
                         const char* variable, const chat::TemplateOrigin& origin) {
  if (id >= 0) return tok.token_to_piece(id, true);
  const auto uses = [&](const std::optional<std::string>& text) {
    return text && text->find(variable) != std::string::npos;
  };
  if (origin.override_text.find(variable) != std::string::npos || uses(origin.model_default) ||
      uses(origin.model_tool_use)) {
    log_warn("vocab does not have a {} token, jinja template won't work as intended", name);
  }
  return "";
}

}  // namespace

bool verify_chat_template_option(const server::options::ServerArgs& args) {
  if (args.chat_template.empty()) return true;
  Status st = chat::verify_chat_template(args.chat_template, args.chat.use_jinja);
  if (st.is_ok()) return true;
  log_error("failed to apply template: {}", st.message());
  std::fprintf(stderr, "error: the supplied chat template is not supported: %s%s\n\n",
               args.chat_template.c_str(),
               args.chat.use_jinja
                   ? ""
                   : "\nnote: llama.cpp was started without --jinja, we only support "
                     "commonly used templates");
  return false;
}

Result<std::shared_ptr<const chat::ChatTemplates>> load_model_chat_templates(
    const server::options::ServerArgs& args, const engine::Model& model,
    const tokenizer::Tokenizer& tok) {
  chat::TemplateOrigin origin;
  origin.override_text = args.chat_template;
  origin.model_default = metadata_string(model, "tokenizer.chat_template");
  origin.model_tool_use = metadata_string(model, "tokenizer.chat_template.tool_use");
  origin.vocab_pre = std::string(tok.pre());
  origin.n_layer = model.hparams().n_layer;
  chat::VocabText vocab;
  vocab.bos = special_text(tok, tok.bos(), "BOS", "bos_token", origin);
  vocab.eos = special_text(tok, tok.eos(), "EOS", "eos_token", origin);
  vocab.add_bos = tok.add_bos();
  vocab.add_eos = tok.add_eos();
  return chat::load_chat_templates(origin, args.chat.use_jinja, vocab, args.chat.template_kwargs);
}

}  // namespace hearth::server_tool

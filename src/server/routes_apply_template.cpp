// POST /apply-template (other-native-routes.md §10): the prompt the chat route would feed
// the model, without generating.
#include "server/api_error.h"
#include "server/chat_request.h"
#include "server/openai/openai_routes.h"
#include "server/request_body.h"
#include "server/server_state.h"

namespace hearth::server {

http::Response handle_apply_template(ServerState& s, const http::Request& r) {
  Json body;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  ChatSettings settings = s.config.chat;
  settings.templates = s.model.chat_templates;
  ChatRequest request;
  if (auto err = parse_chat_request(body, request)) return error_response(*err);
  ChatPromptRequest prompt;
  // As the reference: media parts are read (and refused without a projector) and stand as
  // the marker in the prompt.
  const ChatMediaContext media = openai::media_context(s);
  prompt.media = &media;
  if (auto err = build_chat_prompt(request, settings, prompt)) return error_response(*err);
  return json_response(Json{{"prompt", prompt.prompt.prompt}});
}

}  // namespace hearth::server

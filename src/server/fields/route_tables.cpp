#include "server/fields/route_tables.h"

#include "server/chat_request.h"
#include "server/embeddings/embedding_routes.h"
#include "server/openai/anthropic_request.h"
#include "server/openai/responses_request.h"
#include "server/server_state.h"

namespace hearth::server::fields {

std::vector<RouteFields> body_field_tables() {
  return {
      {"chat", field_info(chat_fields())},
      {"messages", openai::anthropic_field_info()},
      {"responses", openai::responses_field_info()},
      {"embeddings", field_info(embedding_fields())},
      {"rerank", rerank_field_info()},
      {"lora-adapters", lora_entry_field_info()},
      {"streams-lookup", streams_lookup_field_info()},
      {"vertex-predict", predict_field_info()},
  };
}

}  // namespace hearth::server::fields

// State shared by the route handlers (internal to the server library).
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "server/fields/field.h"
#include "server/http/http.h"
#include "server/server.h"
#include "server/streams/stream_store.h"

namespace hearth::server {

struct ServerState {
  ServerConfig config;
  ModelInfo model;
  std::shared_ptr<scheduler::Scheduler> scheduler;
  std::atomic<bool> ready{false};
  std::atomic<bool> stopping{false};
  int64_t start_time_us = 0;  // monotonic clock at start (Process-Start-Time-Unix)
  // Resumable streams (X-Conversation-Id); never null.
  std::unique_ptr<streams::StreamStore> streams;
};

using Handler = std::function<http::Response(ServerState&, const http::Request&)>;

struct Route {
  const char* method;
  const char* path;  // a ":name" segment matches one path segment
  Handler handler;
};

// The one route table.
const std::vector<Route>& route_table();

// Handlers, by file.
http::Response handle_health(ServerState& s, const http::Request& r);
http::Response handle_props(ServerState& s, const http::Request& r);
http::Response handle_props_post(ServerState& s, const http::Request& r);
http::Response handle_models(ServerState& s, const http::Request& r);
http::Response handle_slots(ServerState& s, const http::Request& r);
http::Response handle_slot_action(ServerState& s, const http::Request& r);
http::Response handle_metrics(ServerState& s, const http::Request& r);
http::Response handle_lora_list(ServerState& s, const http::Request& r);
http::Response handle_lora_set(ServerState& s, const http::Request& r);
// The rows of one POST /lora-adapters entry, as fields.json records them.
std::vector<fields::FieldInfo> lora_entry_field_info();
std::vector<fields::FieldInfo> streams_lookup_field_info();
std::vector<fields::FieldInfo> predict_field_info();
http::Response handle_tokenize(ServerState& s, const http::Request& r);
http::Response handle_detokenize(ServerState& s, const http::Request& r);
http::Response handle_completion(ServerState& s, const http::Request& r);
http::Response handle_infill(ServerState& s, const http::Request& r);
http::Response handle_apply_template(ServerState& s, const http::Request& r);
http::Response handle_embeddings(ServerState& s, const http::Request& r);
http::Response handle_rerank(ServerState& s, const http::Request& r);
http::Response handle_not_supported(const char* message);
http::Response handle_stream_get(ServerState& s, const http::Request& r);
http::Response handle_stream_delete(ServerState& s, const http::Request& r);
http::Response handle_streams_lookup(ServerState& s, const http::Request& r);
// POST <AIP_PREDICT_ROUTE> (routes_vertex.cpp), and the camelCase name it knows a path by.
http::Response handle_vertex_predict(ServerState& s, const http::Request& r);
std::string vertex_format_name(const std::string& path);
// A handler run with exceptions mapped to the error envelope, as the router runs it.
http::Response run_route_handler(const Handler& handler, ServerState& state,
                                 const http::Request& request);
// `handler` with X-Conversation-Id honoured: its streaming answer becomes resumable.
Handler resumable(Handler handler);

// The whole pipeline: CORS, OPTIONS, loading gate, API key, routing.
http::Response dispatch_request(ServerState& state, const http::Request& request);

// A JSON 200 response.
http::Response json_response(const Json& body, int status = 200);
// A body already written as JSON text (a large answer streamed into a string instead of
// being built as a value first).
http::Response json_text_response(std::string body, int status = 200);

}  // namespace hearth::server

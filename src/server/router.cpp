// The route table and llama-server's request pipeline (README.md §2.2): CORS header,
// OPTIONS preflight, loading gate, API key, dispatch, exceptions mapped to the envelope.
#include <algorithm>
#include <stdexcept>

#include "server/api_error.h"
#include "server/openai/openai_routes.h"
#include "server/server_state.h"

namespace hearth::server {

namespace {

http::Response feature_disabled(ServerState&, const http::Request&) {
  return feature_disabled_response();
}

std::vector<Route> build_routes() {
  return {
      {"GET", "/health", handle_health},
      {"GET", "/v1/health", handle_health},
      {"GET", "/props", handle_props},
      {"POST", "/props", handle_props_post},
      {"GET", "/models", handle_models},
      {"GET", "/v1/models", handle_models},
      {"GET", "/metrics", handle_metrics},
      {"GET", "/slots", handle_slots},
      {"POST", "/slots/:id_slot", handle_slot_action},
      {"GET", "/lora-adapters", handle_lora_list},
      {"POST", "/lora-adapters", handle_lora_set},
      {"POST", "/completion", resumable(handle_completion)},
      {"POST", "/completions", resumable(handle_completion)},
      {"POST", "/infill", resumable(handle_infill)},
      {"POST", "/tokenize", handle_tokenize},
      {"POST", "/detokenize", handle_detokenize},
      {"POST", "/apply-template", handle_apply_template},
      // The OpenAI- and Anthropic-compatible routes (src/server/openai/).
      {"POST", "/v1/completions", resumable(openai::handle_text_completions)},
      {"POST", "/v1/chat/completions", resumable(openai::handle_chat_completions)},
      {"POST", "/chat/completions", resumable(openai::handle_chat_completions)},
      {"POST", "/v1/chat/completions/input_tokens", openai::handle_chat_input_tokens},
      {"POST", "/chat/completions/input_tokens", openai::handle_chat_input_tokens},
      {"POST", "/v1/chat/completions/control", openai::handle_chat_control},
      {"POST", "/v1/responses", resumable(openai::handle_responses)},
      {"POST", "/responses", resumable(openai::handle_responses)},
      {"POST", "/v1/responses/input_tokens", openai::handle_responses_input_tokens},
      {"POST", "/responses/input_tokens", openai::handle_responses_input_tokens},
      {"POST", "/v1/messages", resumable(openai::handle_messages)},
      {"POST", "/v1/messages/count_tokens", openai::handle_count_tokens},
      {"POST", "/v1/embeddings", openai::handle_embeddings},
      {"POST", "/v1/audio/transcriptions", resumable(openai::handle_transcriptions)},
      {"POST", "/audio/transcriptions", resumable(openai::handle_transcriptions)},
      // Resumable streams (routes_streams.cpp): generations started with X-Conversation-Id.
      {"GET", "/v1/stream", handle_stream_get},
      {"DELETE", "/v1/stream", handle_stream_delete},
      {"POST", "/v1/streams/lookup", handle_streams_lookup},
      // Embeddings and reranking (src/server/embeddings/): 501 unless started for them.
      {"POST", "/embedding", handle_embeddings},
      {"POST", "/embeddings", handle_embeddings},
      {"POST", "/rerank", handle_rerank},
      {"POST", "/reranking", handle_rerank},
      {"POST", "/v1/rerank", handle_rerank},
      {"POST", "/v1/reranking", handle_rerank},
      // Refused as the reference refuses them when their feature is off.
      {"GET", "/tools", feature_disabled},
      {"POST", "/tools", feature_disabled},
      {"GET", "/cors-proxy", feature_disabled},
      {"POST", "/cors-proxy", feature_disabled},
  };
}

bool path_matches(std::string_view pattern, std::string_view path) {
  while (!pattern.empty() && !path.empty()) {
    const size_t ps = pattern.find('/', 1), qs = path.find('/', 1);
    std::string_view pseg = pattern.substr(0, ps), qseg = path.substr(0, qs);
    if (!(pseg.size() > 1 && pseg[1] == ':' && qseg.size() > 1) && pseg != qseg) return false;
    pattern = ps == std::string_view::npos ? std::string_view() : pattern.substr(ps);
    path = qs == std::string_view::npos ? std::string_view() : path.substr(qs);
  }
  return pattern.empty() && path.empty();
}

bool is_public(const std::string& path) {
  return path == "/health" || path == "/v1/health" || path == "/";
}

bool key_accepted(const ServerConfig& config, const http::Request& request) {
  std::string key;
  if (auto auth = request.header("Authorization"); auth && !auth->empty()) {
    key = *auth;
    if (key.rfind("Bearer ", 0) == 0) key = key.substr(7);
  } else if (auto x = request.header("X-Api-Key")) {
    key = *x;
  } else {
    return false;
  }
  return std::find(config.api_keys.begin(), config.api_keys.end(), key) != config.api_keys.end();
}

bool is_local_origin(const std::string& origin) {
  const size_t scheme = origin.find("://");
  std::string host = scheme == std::string::npos ? origin : origin.substr(scheme + 3);
  if (host.rfind("[::1]", 0) == 0) return true;
  host = host.substr(0, host.find_first_of(":/"));
  return host == "localhost" || host == "127.0.0.1";
}

void add_cors(const ServerConfig& config, const http::Request& request, http::Response& response) {
  const std::string origin = request.header("Origin").value_or("");
  if (config.cors_credentials && config.cors_origins == "*") {
    response.headers.emplace_back("Access-Control-Allow-Origin", origin);
  } else if (config.cors_origins == "localhost") {
    if (is_local_origin(origin))
      response.headers.emplace_back("Access-Control-Allow-Origin", origin);
  } else {
    response.headers.emplace_back("Access-Control-Allow-Origin", config.cors_origins);
  }
}

http::Response preflight(const ServerConfig& config) {
  http::Response response;
  response.content_type = "text/html";
  response.headers.emplace_back("Access-Control-Allow-Credentials",
                                config.cors_credentials ? "true" : "false");
  response.headers.emplace_back("Access-Control-Allow-Methods", config.cors_methods);
  response.headers.emplace_back("Access-Control-Allow-Headers", config.cors_headers);
  return response;
}

}  // namespace

http::Response run_route_handler(const Handler& handler, ServerState& state,
                                 const http::Request& request) {
  try {
    return handler(state, request);
  } catch (const nlohmann::json::exception& e) {
    // A client body read with a type it does not have: the client's mistake.
    return error_response(invalid_request(without_json_library_tags(e.what())));
  } catch (const std::invalid_argument& e) {
    return error_response(invalid_request(e.what()));
  } catch (const std::exception& e) {
    return error_response(server_error(e.what()));
  }
}

namespace {

// The Vertex AI routes (AIP_MODE=PREDICTION): set at start-up, outside the table.
std::optional<http::Response> vertex_route(ServerState& state, const http::Request& request,
                                           const std::string& method, const std::string& path) {
  const ServerConfig& config = state.config;
  if (!config.vertex_health_route.empty() && method == "GET" &&
      path == config.vertex_health_route) {
    return run_route_handler(handle_health, state, request);
  }
  if (!config.vertex_predict_route.empty() && method == "POST" &&
      path == config.vertex_predict_route) {
    return run_route_handler(handle_vertex_predict, state, request);
  }
  return std::nullopt;
}

http::Response route(ServerState& state, const http::Request& request) {
  if (request.method == "OPTIONS") return preflight(state.config);
  const std::string& prefix = state.config.api_prefix;
  const bool prefixed = request.path.compare(0, prefix.size(), prefix) == 0;
  const std::string path = prefixed ? request.path.substr(prefix.size()) : std::string();
  // The web page is public and answers while the model loads.
  if (prefixed) {
    if (auto page = serve_ui(state.config.ui, request, path, UiAccess::kPublic)) return *page;
  }
  if (!state.ready.load()) return loading_response(state.config.loading_progress);
  if (!state.config.api_keys.empty() && !is_public(request.path) &&
      !key_accepted(state.config, request)) {
    return invalid_api_key_response();
  }
  if (!prefixed) return not_found_response();
  if (auto file = serve_ui(state.config.ui, request, path, UiAccess::kChecked)) return *file;
  // HEAD is served wherever GET is (the HTTP layer drops the body).
  const std::string method = request.method == "HEAD" ? "GET" : request.method;
  for (const Route& r : route_table()) {
    if (method == r.method && path_matches(r.path, path)) {
      http::Response response = run_route_handler(r.handler, state, request);
      // The reference's HTTP layer rewrites every 404 body to its generic one.
      return response.status == 404 ? not_found_response() : response;
    }
  }
  if (auto answer = vertex_route(state, request, method, path)) return *answer;
  return not_found_response();
}

}  // namespace

const std::vector<Route>& route_table() {
  static const std::vector<Route> routes = build_routes();
  return routes;
}

bool has_route(const std::string& path) {
  return std::any_of(route_table().begin(), route_table().end(),
                     [&](const Route& r) { return path == r.path; });
}

http::Response json_response(const Json& body, int status) {
  return json_text_response(dump_json(body), status);
}

http::Response json_text_response(std::string body, int status) {
  http::Response response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

http::Response handle_not_supported(const char* message) {
  return error_response({ErrorType::kNotSupported, message});
}

http::Response dispatch_request(ServerState& state, const http::Request& request) {
  http::Response response = route(state, request);
  add_cors(state.config, request, response);
  return response;
}

}  // namespace hearth::server

// Google Vertex AI prediction (other-native-routes.md §18): POST <AIP_PREDICT_ROUTE> runs each
// instance of {"instances": [...]} through the route its `@requestFormat` names and answers
// {"predictions": [...]}, one element per instance, in order. The instances are submitted
// together, so the scheduler runs their generations side by side.
#include <atomic>
#include <cctype>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "server/api_error.h"
#include "server/fields/field.h"
#include "server/request_body.h"
#include "server/server_state.h"

namespace hearth::server {

namespace {

constexpr size_t kMaxInstances = 128;

// A predict body: {"instances": [...]}, each instance read by the route it names.
struct PredictRequest {
  Json instances;  // an array, or null when the body has none
};

std::optional<ApiError> read_instances(const Json& v, const std::string&, PredictRequest& out,
                                       const fields::FieldContext&) {
  if (!v.is_array()) {
    return invalid_request("request body must include an array field named instances");
  }
  if (v.size() > kMaxInstances) {
    return invalid_request("instances array exceeds maximum size of " +
                           std::to_string(kMaxInstances));
  }
  out.instances = v;
  return std::nullopt;
}

const std::vector<fields::Field<PredictRequest>>& predict_fields() {
  static const std::vector<fields::Field<PredictRequest>> table = {
      {.name = "instances", .target = read_instances, .keeps_null = true},
  };
  return table;
}

Json error_json(const ApiError& error) {
  return Json::parse(error_body(error));
}

// A target's answer as a prediction: its body as JSON, as text when it is not JSON, null when
// empty; error envelopes included (their status is not carried over).
Json prediction_of(const http::Response& answer) {
  if (answer.stream) {
    return error_json(invalid_request("predict route does not support streaming responses"));
  }
  if (answer.body.empty()) return nullptr;
  Json parsed = Json::parse(answer.body, nullptr, false);
  return parsed.is_discarded() ? Json(answer.body) : parsed;
}

// The instances' answers, gathered: the outer answer resolves once the last one is in.
struct Gather : std::enable_shared_from_this<Gather> {
  std::mutex mutex;
  std::vector<Json> ready;  // an instance answered at once, or its error
  std::vector<http::PendingResponse::Render> renders;
  std::vector<std::shared_ptr<http::PendingResponse>> pending;
  size_t waiting = 0;
  std::shared_ptr<http::PendingResponse> outer = std::make_shared<http::PendingResponse>();

  // Connection thread: each waiting instance's answer is rendered here, not on the producer's.
  http::Response render() {
    std::vector<Json> predictions;
    {
      std::lock_guard lock(mutex);
      predictions = ready;
      for (size_t i = 0; i < renders.size(); ++i) {
        if (renders[i]) predictions[i] = prediction_of(renders[i]());
      }
    }
    Json body = Json::object();
    body["predictions"] = Json::array();
    for (Json& p : predictions) body["predictions"].push_back(std::move(p));
    return json_response(body);
  }

  void arrived(size_t index, http::PendingResponse::Render render) {
    bool last = false;
    {
      std::lock_guard lock(mutex);
      renders[index] = std::move(render);
      last = --waiting == 0;
    }
    if (last) outer->resolve([self = shared_from_this()] { return self->render(); });
  }
};

}  // namespace

// The camelCase name of a route path: "/v1/chat/completions" -> "chatCompletions".
std::string vertex_format_name(const std::string& path) {
  std::string rest = path;
  if (rest.size() > 3 && rest.compare(0, 3, "/v1") == 0) rest = rest.substr(3);
  if (!rest.empty() && rest[0] == '/') rest = rest.substr(1);
  std::string name;
  bool upper = false;
  for (char c : rest) {
    if (c == ':') break;  // a path parameter
    if (c == '/' || c == '-' || c == '_') {
      upper = true;
      continue;
    }
    name += upper ? static_cast<char>(std::toupper(static_cast<unsigned char>(c))) : c;
    upper = false;
  }
  return name;
}

namespace {

// The route a `@requestFormat` names: a camelCase name (the first path giving it wins) or a
// path; a POST route is preferred where a path has several methods.
const Route* vertex_target(const std::string& format) {
  static const std::map<std::string, std::string> by_name = [] {
    std::map<std::string, std::string> names;
    for (const Route& r : route_table()) names.emplace(vertex_format_name(r.path), r.path);
    return names;
  }();
  auto it = by_name.find(format);
  const std::string path = it != by_name.end() ? it->second : format;
  const Route* found = nullptr;
  for (const Route& r : route_table()) {
    if (path != r.path) continue;
    if (std::string_view(r.method) == "POST") return &r;
    if (!found) found = &r;
  }
  return found;
}

// One instance through its route; an answer given at once, or a pending one.
http::Response run_instance(ServerState& s, const http::Request& outer, const Json& instance) {
  if (!instance.is_object()) {
    return error_response(invalid_request("each instance must be a JSON object"));
  }
  auto format = instance.find("@requestFormat");
  if (format == instance.end() || !format->is_string()) {
    return error_response(invalid_request("each instance must include a string @requestFormat"));
  }
  const Route* target = vertex_target(format->get<std::string>());
  if (!target) {
    return error_response(
        invalid_request("no handler registered for @requestFormat: " + format->get<std::string>()));
  }
  Json payload = instance;
  payload.erase("@requestFormat");
  if (payload.contains("stream")) payload["stream"] = false;  // one JSON answer per instance
  http::Request request = outer;
  request.method = target->method;
  request.path = s.config.api_prefix + target->path;
  request.body = dump_json(payload);
  return run_route_handler(target->handler, s, request);
}

}  // namespace

std::vector<fields::FieldInfo> predict_field_info() {
  return fields::field_info(predict_fields());
}

http::Response handle_vertex_predict(ServerState& s, const http::Request& r) {
  Json body;
  if (auto err = parse_json_body(r.body, body)) return error_response(*err);
  if (!body.is_object())
    return error_response(invalid_request("request body must be a JSON object"));
  PredictRequest request;
  if (auto err = fields::parse_fields(predict_fields(), body, request, {})) {
    return error_response(*err);
  }
  if (!request.instances.is_array()) {
    return error_response(
        invalid_request("request body must include an array field named instances"));
  }
  const Json* instances = &request.instances;
  auto gather = std::make_shared<Gather>();
  const size_t n = instances->size();
  gather->ready.resize(n);
  gather->renders.resize(n);
  std::vector<std::shared_ptr<http::PendingResponse>> waiting(n);
  for (size_t i = 0; i < n; ++i) {
    http::Response answer = run_instance(s, r, (*instances)[i]);
    if (answer.pending) {
      waiting[i] = answer.pending;
      ++gather->waiting;
    } else {
      gather->ready[i] = prediction_of(answer);
    }
  }
  if (gather->waiting == 0) return gather->render();
  gather->pending = waiting;
  // The client leaving stops every instance still running.
  gather->outer->set_on_cancel([weak = std::weak_ptr<Gather>(gather)] {
    if (auto g = weak.lock()) {
      for (auto& p : g->pending) {
        if (p) p->cancel();
      }
    }
  });
  for (size_t i = 0; i < n; ++i) {
    if (!waiting[i]) continue;
    waiting[i]->on_ready([gather, i](http::PendingResponse::Render render) {
      gather->arrived(i, std::move(render));
    });
  }
  http::Response response;
  response.pending = gather->outer;
  return response;
}

}  // namespace hearth::server

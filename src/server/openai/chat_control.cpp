// POST /v1/chat/completions/control (openai-compat.md §6): ends the reasoning of a running
// completion that asked for reasoning_control. Running chat completions register their
// id here for as long as their answer is being produced.
#include <mutex>
#include <unordered_map>

#include "server/fields/store.h"
#include "server/openai/openai_routes.h"
#include "server/request_body.h"
#include "server/server_state.h"

namespace hearth::server::openai {

namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<std::string, std::weak_ptr<ControlEntry>> entries;
};

Registry& registry() {
  static Registry r;
  return r;
}

// The body: {"id", "action", "model"?} (model names the router's model: not read here).
struct ControlRequest {
  std::string id;
  std::string action;
};

const std::vector<fields::Field<ControlRequest>>& control_fields() {
  using C = ControlRequest;
  static const std::vector<fields::Field<ControlRequest>> table = {
      {.name = "id", .target = fields::store_string<C, &C::id>},
      {.name = "action", .target = fields::store_string<C, &C::action>},
  };
  return table;
}

Json result(bool success, const char* message = nullptr) {
  Json j = {{"success", success}};
  if (message != nullptr) j["message"] = message;
  return j;
}

}  // namespace

std::shared_ptr<ControlEntry> register_completion(const std::string& id,
                                                  std::shared_ptr<std::atomic<bool>> end_now) {
  auto entry = std::make_shared<ControlEntry>();
  entry->end_reasoning = std::move(end_now);
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  // Finished completions leave expired entries; they are dropped as new ones come.
  if (r.entries.size() >= 64) {
    for (auto it = r.entries.begin(); it != r.entries.end();) {
      it = it->second.expired() ? r.entries.erase(it) : std::next(it);
    }
  }
  r.entries[id] = entry;
  return entry;
}

http::Response handle_chat_control(ServerState&, const http::Request& req) {
  Json body;
  ControlRequest request;
  if (auto err = parse_json_object(req.body, body)) return error_response(*err);
  if (auto err = fields::parse_fields(control_fields(), body, request, {})) {
    return error_response(*err);
  }
  const std::string& id = request.id;
  if (id.empty()) return error_response(invalid_request("missing completion id"));
  if (request.action != "reasoning_end") {
    return error_response(invalid_request("unknown control action"));
  }
  std::shared_ptr<ControlEntry> entry;
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    auto it = r.entries.find(id);
    if (it != r.entries.end()) entry = it->second.lock();
  }
  if (!entry) return json_response(result(false, "no active completion for this id"));
  if (!entry->end_reasoning) {
    return json_response(result(false, "reasoning control not enabled for this completion"));
  }
  entry->end_reasoning->store(true);
  return json_response(result(true));
}

}  // namespace hearth::server::openai

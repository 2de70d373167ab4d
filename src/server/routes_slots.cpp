// POST /slots/:id_slot?action=save|restore|erase (other-native-routes.md §5), with the
// reference's order of checks.
#include <cctype>
#include <string>

#include "server/api_error.h"
#include "server/fields/field.h"
#include "server/request_body.h"
#include "server/server_state.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server {

namespace {

// The id in the path: a leading integer is enough ("2x" -> 2), as std::stoi reads it.
bool parse_slot_id(const std::string& text, int64_t& id) {
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  if (i >= text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return false;
  id = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])) && id < (1LL << 40);
       ++i) {
    id = id * 10 + (text[i] - '0');
  }
  if (negative) id = -id;
  return true;
}

// A plain file name: no directories, no special names, no control characters.
bool valid_filename(const std::string& name) {
  if (name.empty() || name.size() > 255 || name == "." || name == "..") return false;
  if (name.front() == ' ' || name.back() == ' ' || name.back() == '.') return false;
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f || c == '/' || c == '\\' || c == ':') return false;
  }
  return tokenizer::is_valid_utf8(name);
}

// Answers once the scheduler ran the action (between engine steps, when the slot is idle).
http::Response after_action(ServerState& s, scheduler::SlotActionKind kind, int32_t slot,
                            std::string path,
                            std::function<http::Response(scheduler::SlotFileResult)> ok) {
  auto pending = std::make_shared<http::PendingResponse>();
  s.scheduler->slot_action(
      kind, slot, std::move(path),
      [pending, kind, ok = std::move(ok)](Result<scheduler::SlotFileResult> result) {
        pending->resolve([kind, ok, result = std::move(result)]() -> http::Response {
          if (result.is_ok()) return ok(*result);
          if (kind == scheduler::SlotActionKind::kSave) {
            return error_response(server_error("Unable to save slot"));
          }
          if (kind == scheduler::SlotActionKind::kRestore &&
              result.status().code() != ErrorCode::kResourceExhausted) {
            return error_response(
                invalid_request("Unable to restore slot: " + result.status().message()));
          }
          return error_response(from_status(result.status()));
        });
      });
  http::Response response;
  response.pending = std::move(pending);
  return response;
}

// The reference takes ids past the last slot modulo the slot count; Hearth refuses them (a
// recorded difference), as both refuse negative ids.
std::optional<ApiError> check_slot_id(const ServerState& s, int64_t id) {
  const int32_t n_slots = s.scheduler->config().n_slots;
  if (id < 0) return invalid_request("Invalid slot ID");
  if (id >= n_slots) {
    return invalid_request("Invalid slot ID: " + std::to_string(id) + " is outside 0.." +
                           std::to_string(n_slots - 1));
  }
  return std::nullopt;
}

struct SlotFileRequest {
  std::string filename;
};

const std::vector<fields::Field<SlotFileRequest>>& slot_file_fields() {
  static const std::vector<fields::Field<SlotFileRequest>> table = {
      {.name = "filename",
       .target =
           [](const Json& v, const std::string& used, SlotFileRequest& out,
              const fields::FieldContext&) { return fields::to_string(v, used, out.filename); },
       .limits = {0, 255},
       // The reference answers 500 with its JSON library's "key 'filename' not found".
       .required_on = ~0u},
  };
  return table;
}

http::Response save_or_restore(ServerState& s, const http::Request& r, int64_t path_id, bool save) {
  Json body;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  SlotFileRequest request;
  if (auto err = fields::parse_fields(slot_file_fields(), body, request, {})) {
    return error_response(*err);
  }
  const std::string& filename = request.filename;
  if (!valid_filename(filename)) return error_response(invalid_request("Invalid filename"));
  if (auto err = check_slot_id(s, path_id)) return error_response(*err);
  const auto kind = save ? scheduler::SlotActionKind::kSave : scheduler::SlotActionKind::kRestore;
  return after_action(s, kind, static_cast<int32_t>(path_id), s.config.slot_save_path + filename,
                      [path_id, filename, save](scheduler::SlotFileResult result) {
                        Json j = Json::object();
                        j["id_slot"] = path_id;
                        j["filename"] = filename;
                        j[save ? "n_saved" : "n_restored"] = result.n_tokens;
                        j[save ? "n_written" : "n_read"] = result.n_bytes;
                        j["timings"] = Json{{save ? "save_ms" : "restore_ms", result.ms}};
                        return json_response(j);
                      });
}

}  // namespace

http::Response handle_slot_action(ServerState& s, const http::Request& r) {
  if (s.config.slot_save_path.empty()) {
    return handle_not_supported(
        "This server does not support slots action. Start it with `--slot-save-path`");
  }
  int64_t path_id = 0;
  const std::string id_text = r.path.substr(r.path.rfind('/') + 1);
  if (!parse_slot_id(id_text, path_id)) return error_response(invalid_request("Invalid slot ID"));
  const std::string action = r.query_param("action").value_or("");
  if (action != "save" && action != "restore" && action != "erase") {
    return error_response(invalid_request("Invalid action"));
  }
  if (action != "erase") return save_or_restore(s, r, path_id, action == "save");
  if (auto err = check_slot_id(s, path_id)) return error_response(*err);
  return after_action(s, scheduler::SlotActionKind::kErase, static_cast<int32_t>(path_id), {},
                      [path_id](scheduler::SlotFileResult result) {
                        Json j = Json::object();
                        j["id_slot"] = path_id;
                        j["n_erased"] = result.n_tokens;
                        return json_response(j);
                      });
}

}  // namespace hearth::server

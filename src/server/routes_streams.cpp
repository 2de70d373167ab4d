// Resumable streams (other-native-routes.md §15): the X-Conversation-Id header on the
// generating routes, GET and DELETE /v1/stream, POST /v1/streams/lookup. The buffers are the
// stream store's (src/server/streams/); this file is their HTTP face.
#include <string>
#include <vector>

#include "server/api_error.h"
#include "server/fields/field.h"
#include "server/request_body.h"
#include "server/server_state.h"
#include "server/streams/stream_store.h"

namespace hearth::server {

namespace {

std::optional<std::string> conversation_id(const http::Request& r) {
  auto id = r.query_param("conv_id");
  if (!id || id->empty()) return std::nullopt;
  return id;
}

// A POST /v1/streams/lookup body: {"conversation_ids": [...]}. As the reference reads it,
// items that are not non-empty strings, and a member that is not an array, name nothing.
struct StreamsLookupRequest {
  std::vector<std::string> conversation_ids;
};

std::optional<ApiError> read_conversation_ids(const Json& v, const std::string&,
                                              StreamsLookupRequest& out,
                                              const fields::FieldContext&) {
  if (!v.is_array()) return std::nullopt;
  for (const Json& id : v) {
    if (id.is_string() && !id.get<std::string>().empty()) {
      out.conversation_ids.push_back(id.get<std::string>());
    }
  }
  return std::nullopt;
}

const std::vector<fields::Field<StreamsLookupRequest>>& streams_lookup_fields() {
  static const std::vector<fields::Field<StreamsLookupRequest>> table = {
      {.name = "conversation_ids", .target = read_conversation_ids},
  };
  return table;
}

http::Response missing_id() {
  return error_response(invalid_request("Missing conversation id in path"));
}

// `from` as the absolute byte offset it names: digits only (a sign or trailing text is not
// an offset).
std::optional<uint64_t> parse_offset(const std::string& text) {
  if (text.empty() || text.size() > 19) return std::nullopt;
  uint64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + static_cast<uint64_t>(c - '0');
  }
  return value;
}

}  // namespace

Handler resumable(Handler handler) {
  return [handler = std::move(handler)](ServerState& s, const http::Request& r) {
    const auto id = r.header("X-Conversation-Id");
    if (!id || id->empty()) return handler(s, r);
    http::Response out;
    if (!s.streams->adopt(*id, handler(s, r), out)) {
      return error_response(
          {ErrorType::kUnavailable,
           "too many resumable streams are running (at most " +
               std::to_string(s.streams->limits().max_sessions) +
               "): stop one with DELETE /v1/stream or retry when one has finished"});
    }
    return out;
  };
}

http::Response handle_stream_get(ServerState& s, const http::Request& r) {
  const auto id = conversation_id(r);
  if (!id) return missing_id();
  uint64_t from = 0;
  if (auto text = r.query_param("from"); text && !text->empty()) {
    auto parsed = parse_offset(*text);
    // Checked after the session, as the reference does: an unknown id is a 404 first.
    if (!parsed) {
      std::shared_ptr<http::StreamSource> probe;
      if (s.streams->open(*id, 0, probe) == streams::OpenResult::kNotFound) {
        return not_found_response();
      }
      return error_response(invalid_request("Invalid 'from' offset"));
    }
    from = *parsed;
  }
  std::shared_ptr<http::StreamSource> reader;
  switch (s.streams->open(*id, from, reader)) {
    case streams::OpenResult::kNotFound:
      return not_found_response();
    case streams::OpenResult::kOffsetLost:
      return error_response(invalid_request("Stream offset lost, please restart"));
    case streams::OpenResult::kOk:
      break;
  }
  http::Response response;
  response.content_type = "text/event-stream";
  response.headers.emplace_back("X-Accel-Buffering", "no");
  response.stream = std::move(reader);
  return response;
}

http::Response handle_stream_delete(ServerState& s, const http::Request& r) {
  const auto id = conversation_id(r);
  if (!id) return missing_id();
  s.streams->cancel(*id);
  http::Response response;
  response.status = 204;
  response.content_type = "application/json";
  return response;
}

std::vector<fields::FieldInfo> streams_lookup_field_info() {
  return fields::field_info(streams_lookup_fields());
}

http::Response handle_streams_lookup(ServerState& s, const http::Request& r) {
  Json body;
  if (auto err = parse_json_body(r.body, body)) {
    // The reference's own shape here: no `code` member.
    Json error = {
        {"error",
         {{"message", "invalid body: " + err->message}, {"type", "invalid_request_error"}}}};
    return json_response(error, 400);
  }
  StreamsLookupRequest request;
  if (body.is_object()) {
    if (auto err = fields::parse_fields(streams_lookup_fields(), body, request, {})) {
      return error_response(*err);
    }
  }
  Json out = Json::array();
  for (const streams::SessionStatus& status : s.streams->lookup(request.conversation_ids)) {
    out.push_back({{"conversation_id", status.conversation_id},
                   {"is_done", status.is_done},
                   {"total_bytes", status.total_bytes},
                   {"started_at", status.started_at},
                   {"completed_at", status.completed_at}});
  }
  return json_response(out);
}

}  // namespace hearth::server

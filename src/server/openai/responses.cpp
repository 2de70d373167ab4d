// POST /v1/responses and /v1/responses/input_tokens (openai-compat.md §7, §9): a Responses
// request (responses_request.cpp) mapped to a chat request, run through the chat pipeline,
// answered as a `response` object or as its typed events.
#include <memory>

#include "server/completion_run.h"
#include "server/openai/openai_routes.h"
#include "server/openai/responses_request.h"
#include "server/request_body.h"
#include "server/server_state.h"

namespace hearth::server::openai {

namespace {

Json chat_part(const ResponsesPart& part) {
  switch (part.kind) {
    case ResponsesPart::Kind::kImage:
      return Json{{"type", "image_url"}, {"image_url", Json{{"url", part.text}}}};
    case ResponsesPart::Kind::kRefusal:
      return Json{{"type", "refusal"}, {"refusal", part.text}};
    case ResponsesPart::Kind::kText:
      break;
  }
  return Json{{"type", "text"}, {"text", part.text}};
}

Json chat_parts(const std::vector<ResponsesPart>& parts) {
  Json out = Json::array();
  for (const ResponsesPart& p : parts) out.push_back(chat_part(p));
  return out;
}

bool ends_with_assistant(const Json& messages) {
  return !messages.empty() && messages.back().value("role", std::string()) == "assistant";
}

// The assistant message new items attach to: the last one, or a new one.
Json& assistant_for(Json& messages) {
  if (!ends_with_assistant(messages)) {
    messages.push_back(Json{{"role", "assistant"}, {"content", ""}});
  }
  return messages.back();
}

void convert_item(const ResponsesItem& item, Json& messages) {
  switch (item.kind) {
    case ItemKind::kMessage:
      messages.push_back(Json{{"role", item.role}, {"content", chat_parts(*item.content)}});
      break;
    case ItemKind::kAssistantMessage:
      // Merged into a previous assistant message that holds parts.
      if (ends_with_assistant(messages) && messages.back()["content"].is_array()) {
        for (const ResponsesPart& p : *item.content) {
          messages.back()["content"].push_back(chat_part(p));
        }
      } else {
        messages.push_back(Json{{"role", "assistant"}, {"content", chat_parts(*item.content)}});
      }
      break;
    case ItemKind::kFunctionCall: {
      Json& msg = assistant_for(messages);
      Json call = {{"id", *item.call_id},
                   {"type", "function"},
                   {"function", Json{{"name", *item.name}, {"arguments", *item.arguments}}}};
      if (!msg.contains("tool_calls")) msg["tool_calls"] = Json::array();
      msg["tool_calls"].push_back(std::move(call));
      break;
    }
    case ItemKind::kFunctionCallOutput: {
      Json output = item.output ? Json(*item.output) : chat_parts(*item.output_parts);
      messages.push_back(
          Json{{"role", "tool"}, {"tool_call_id", *item.call_id}, {"content", std::move(output)}});
      break;
    }
    case ItemKind::kReasoning:
      assistant_for(messages)["reasoning_content"] = *item.reasoning;
      break;
    case ItemKind::kNone:
      break;
  }
}

}  // namespace

ChatRequest to_chat_request(const ResponsesRequest& r) {
  ChatRequest chat = r.chat;
  Json messages = Json::array();
  if (r.instructions) messages.push_back(Json{{"role", "system"}, {"content", *r.instructions}});
  if (r.input_text) messages.push_back(Json{{"role", "user"}, {"content", *r.input_text}});
  for (const ResponsesItem& item : r.items) convert_item(item, messages);
  chat.messages = std::move(messages);
  chat.tools = Json();
  if (!r.tools.empty()) {
    chat.tools = Json::array();
    for (const ResponsesTool& t : r.tools) {
      chat.tools.push_back(Json{{"type", "function"}, {"function", t.function}});
    }
  }
  if (r.max_output_tokens) chat.native["max_tokens"] = *r.max_output_tokens;
  if (r.reasoning_effort) chat.reasoning_effort = r.reasoning_effort;
  return chat;
}

namespace {

Json responses_usage(const scheduler::FinalResult& r) {
  const int32_t prompt = r.timings.cache_n + r.timings.prompt_n;
  return Json{{"input_tokens", prompt},
              {"output_tokens", r.n_predicted},
              {"total_tokens", prompt + r.n_predicted},
              {"input_tokens_details", Json{{"cached_tokens", r.timings.cache_n}}}};
}

Json output_text(const std::string& text) {
  return Json{{"type", "output_text"},
              {"annotations", Json::array()},
              {"logprobs", Json::array()},
              {"text", text}};
}

Json call_item(const AnsweredCall& c, const char* status) {
  return Json{{"id", "fc_" + c.id},       {"type", "function_call"},   {"status", status},
              {"arguments", c.arguments}, {"call_id", "call_" + c.id}, {"name", c.name}};
}

class ResponsesFormat final : public ResultFormat {
 public:
  explicit ResponsesFormat(ChatRun& run)
      : settings_(run.settings),
        output_(run.output),
        meta_(run.meta),
        response_id_("resp_" + random_id()),
        reasoning_id_("rs_" + random_id()),
        message_id_("msg_" + random_id()) {}

  Json final_body(const std::vector<scheduler::FinalResult>& finals) override {
    output_->finished();
    const scheduler::FinalResult& r = finals.front();
    chat::ParsedMessage m = output_->parse_final(r.content);
    Json output = Json::array();
    if (!m.reasoning.empty()) {
      output.push_back(Json{{"id", reasoning_id_},
                            {"summary", Json::array()},
                            {"type", "reasoning"},
                            {"content", reasoning_content(m.reasoning)},
                            {"encrypted_content", ""},
                            {"status", "completed"}});
    }
    if (!m.content.empty()) {
      output.push_back(Json{{"content", Json::array({output_text(m.content)})},
                            {"id", message_id_},
                            {"role", "assistant"},
                            {"status", "completed"},
                            {"type", "message"}});
    }
    for (const AnsweredCall& c : output_->answered_calls(r.index, m)) {
      output.push_back(call_item(c, "completed"));
    }
    const int64_t now = unix_seconds();
    Json j = Json::object();
    j["completed_at"] = now;
    j["created_at"] = now;
    j["id"] = response_id_;
    j["model"] = meta_.model;
    j["object"] = "response";
    j["output"] = std::move(output);
    j["status"] = "completed";
    j["usage"] = responses_usage(r);
    return j;
  }

  // As the reference: the first update opens the response (created, in_progress), later ones
  // are response.in_progress events; the last event carries the progress (and the timings).
  std::string progress_frames(int32_t index, const scheduler::ProgressInfo& progress) override {
    start(index);
    const Json response = {{"id", response_id_}, {"object", "response"}, {"status", "in_progress"}};
    if (events_.empty()) event("response.in_progress", Json{{"response", response}});
    Json extra = Json::object();
    if (settings_->timings_per_token) extra["timings"] = timings_json(progress.timings);
    extra["prompt_progress"] = prompt_progress_json(progress);
    return flush(extra);
  }

  std::string partial_frames(const scheduler::PartialResult& p) override {
    start(p.index);
    deltas(p.index, output_->step(p.index, p.content));
    Json extra = Json::object();
    if (settings_->timings_per_token) extra["timings"] = timings_json(p.timings);
    return flush(extra);
  }

  std::string final_frames(const scheduler::FinalResult& r) override {
    start(r.index);
    output_->finish(r.index);  // held-back text shows only in the done events
    const chat::ParsedMessage& m = output_->parsed(r.index);
    Json items = Json::array();
    if (!m.reasoning.empty()) {
      Json item = {{"id", reasoning_id_},
                   {"summary", Json::array()},
                   {"type", "reasoning"},
                   {"content", reasoning_content(m.reasoning)},
                   {"encrypted_content", ""}};
      event("response.output_item.done", Json{{"item", item}});
      items.push_back(std::move(item));
    }
    if (!m.content.empty()) {
      event("response.output_text.done", Json{{"item_id", message_id_}, {"text", m.content}});
      event("response.content_part.done",
            Json{{"item_id", message_id_}, {"part", output_text(m.content)}});
      Json item = {{"type", "message"},
                   {"status", "completed"},
                   {"id", message_id_},
                   {"content", Json::array({output_text(m.content)})},
                   {"role", "assistant"}};
      event("response.output_item.done", Json{{"item", item}});
      items.push_back(std::move(item));
    }
    for (const AnsweredCall& c : output_->answered_calls(r.index, m)) {
      Json item = call_item(c, "completed");
      event("response.output_item.done", Json{{"item", item}});
      items.push_back(std::move(item));
    }
    Json response = {{"id", response_id_},           {"object", "response"},
                     {"created_at", unix_seconds()}, {"status", "completed"},
                     {"model", meta_.model},         {"output", std::move(items)},
                     {"usage", responses_usage(r)}};
    Json completed = {{"type", "response.completed"},
                      {"response", std::move(response)},
                      {"timings", timings_json(r.timings)}};
    return flush(Json::object()) + sse_event("response.completed", completed);
  }

  std::string next_prompt_frames() override { return ""; }
  std::string end_frames() override {
    output_->finished();
    return "";
  }

 private:
  static Json reasoning_content(const std::string& text) {
    return Json::array({Json{{"text", text}, {"type", "reasoning_text"}}});
  }

  // Queues an event whose data starts with its type.
  void event(const std::string& type, const Json& members) {
    Json j = {{"type", type}};
    for (const auto& [k, v] : members.items()) j[k] = v;
    events_.emplace_back(type, std::move(j));
  }

  // The queued events as SSE frames, `extra`'s members added to the last one.
  std::string flush(const Json& extra) {
    if (!events_.empty()) {
      for (const auto& [k, v] : extra.items()) events_.back().second[k] = v;
    }
    std::string out;
    for (const auto& [type, data] : events_) out += sse_event(type, data);
    events_.clear();
    return out;
  }

  void start(int32_t index) {
    if (!output_->begin(index)) return;
    const Json response = {{"id", response_id_}, {"object", "response"}, {"status", "in_progress"}};
    event("response.created", Json{{"response", response}});
    event("response.in_progress", Json{{"response", response}});
  }

  void deltas(int32_t index, const chat::MessageDelta& d) {
    if (!d.reasoning.empty()) {
      if (!reasoning_started_) {
        reasoning_started_ = true;
        event("response.output_item.added", Json{{"item", Json{{"id", reasoning_id_},
                                                               {"summary", Json::array()},
                                                               {"type", "reasoning"},
                                                               {"content", Json::array()},
                                                               {"encrypted_content", ""},
                                                               {"status", "in_progress"}}}});
      }
      event("response.reasoning_text.delta",
            Json{{"delta", d.reasoning}, {"item_id", reasoning_id_}});
    }
    if (!d.content.empty()) {
      if (!message_started_) {
        message_started_ = true;
        event("response.output_item.added", Json{{"item", Json{{"content", Json::array()},
                                                               {"id", message_id_},
                                                               {"role", "assistant"},
                                                               {"status", "in_progress"},
                                                               {"type", "message"}}}});
        event(
            "response.content_part.added",
            Json{{"item_id", message_id_}, {"part", Json{{"type", "output_text"}, {"text", ""}}}});
      }
      event("response.output_text.delta", Json{{"item_id", message_id_}, {"delta", d.content}});
    }
    for (const chat::ToolCallDelta& t : d.tool_calls) {
      const std::string id = output_->call_id(index, t.index, t.id);
      if (t.is_new) {
        event("response.output_item.added", Json{{"item", Json{{"id", "fc_" + id},
                                                               {"arguments", ""},
                                                               {"call_id", "call_" + id},
                                                               {"name", t.name},
                                                               {"type", "function_call"},
                                                               {"status", "in_progress"}}}});
      }
      if (!t.arguments.empty()) {
        event("response.function_call_arguments.delta",
              Json{{"delta", t.arguments}, {"item_id", "fc_" + id}});
      }
    }
  }

  std::shared_ptr<CompletionSettings> settings_;
  std::shared_ptr<ChatOutput> output_;
  ResponseMeta meta_;
  std::vector<std::pair<std::string, Json>> events_;  // queued for the next flush()
  std::string response_id_, reasoning_id_, message_id_;
  bool reasoning_started_ = false;
  bool message_started_ = false;
};

}  // namespace

http::Response handle_responses(ServerState& s, const http::Request& r) {
  Json body;
  ResponsesRequest request;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  if (auto err = parse_responses_request(body, request)) return error_response(*err);
  ChatRun run;
  if (auto err = prepare_chat(s, to_chat_request(request), run)) return error_response(*err);
  auto format = std::make_shared<ResponsesFormat>(run);
  return start_chat(s, std::move(run), std::move(format));
}

http::Response handle_responses_input_tokens(ServerState& s, const http::Request& r) {
  Json body;
  ResponsesRequest request;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  if (auto err = parse_responses_request(body, request)) return error_response(*err);
  return count_chat_tokens(s, to_chat_request(request), true);
}

}  // namespace hearth::server::openai

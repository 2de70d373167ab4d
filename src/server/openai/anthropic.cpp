// POST /v1/messages and /v1/messages/count_tokens (openai-compat.md §8, §9): an Anthropic
// request (anthropic_request.cpp) mapped to a chat request, run through the chat pipeline,
// answered as a `message` or as Anthropic's typed events.
#include <memory>

#include "server/completion_run.h"
#include "server/openai/anthropic_request.h"
#include "server/openai/openai_routes.h"
#include "server/request_body.h"
#include "server/server_state.h"

namespace hearth::server::openai {

namespace {

// A billing header's per-request hash is blanked so the prefix cache keeps working.
std::string stable_system(std::string system) {
  if (system.rfind("x-anthropic-billing-header:", 0) != 0) return system;
  const size_t at = system.find("cch=");
  if (at != std::string::npos && at + 9 < system.size() && system[at + 9] == ';') {
    system.replace(at + 4, 5, "fffff");
  }
  return system;
}

Json text_part(const std::string& text) {
  return Json{{"type", "text"}, {"text", text}};
}

// An image block as an image_url part (answered 400 by the chat layer: no projector).
Json image_part(const AnthropicBlock& block) {
  std::string url = block.url;
  if (block.source_type == "base64") {
    url = "data:" + (block.media_type.empty() ? std::string("image/jpeg") : block.media_type) +
          ";base64," + block.data;
  }
  return Json{{"type", "image_url"}, {"image_url", Json{{"url", url}}}};
}

// A tool result's content: a string stays one; blocks become their joined text, or, when
// they hold an image, text and image_url parts.
Json tool_result_content(const AnthropicBlock& result) {
  if (!result.content_is_blocks) return result.content_text;
  bool images = false;
  for (const AnthropicBlock& b : result.content) images = images || b.kind == BlockKind::kImage;
  std::string text;
  Json parts = Json::array();
  for (const AnthropicBlock& b : result.content) {
    if (b.kind == BlockKind::kText) {
      text += *b.text;
      parts.push_back(text_part(*b.text));
    } else if (b.kind == BlockKind::kImage) {
      parts.push_back(image_part(b));
    }
  }
  return images ? parts : Json(text);
}

// One Anthropic message: the chat message, then the tool results it carries.
void convert_message(const AnthropicMessage& msg, Json& out) {
  if (!msg.content_is_blocks) {
    if (msg.has_content || msg.role != "assistant") out.push_back(msg.as_sent);
    return;
  }
  Json parts = Json::array(), calls = Json::array(), results = Json::array();
  std::string reasoning;
  for (const AnthropicBlock& b : msg.blocks) {
    if (b.kind == BlockKind::kText) {
      parts.push_back(text_part(*b.text));
    } else if (b.kind == BlockKind::kThinking) {
      reasoning += b.text.value_or("");
    } else if (b.kind == BlockKind::kImage) {
      parts.push_back(image_part(b));
    } else if (b.kind == BlockKind::kToolUse) {
      Json function = {{"name", b.name}, {"arguments", b.input.dump()}};
      calls.push_back(Json{{"id", b.id}, {"type", "function"}, {"function", function}});
    } else if (b.kind == BlockKind::kToolResult) {
      results.push_back(Json{
          {"role", "tool"}, {"tool_call_id", b.tool_use_id}, {"content", tool_result_content(b)}});
    }
  }
  if (!parts.empty() || !calls.empty() || !reasoning.empty()) {
    Json m = Json::object();
    m["role"] = msg.role ? Json(*msg.role) : Json();
    m["content"] = parts.empty() ? Json("") : parts;
    if (!calls.empty()) m["tool_calls"] = calls;
    if (!reasoning.empty()) m["reasoning_content"] = reasoning;
    out.push_back(std::move(m));
  }
  for (Json& r : results) out.push_back(std::move(r));
}

Json convert_tools(const std::vector<AnthropicTool>& tools) {
  Json out = Json::array();
  for (const AnthropicTool& t : tools) {
    Json function = {
        {"name", t.name}, {"description", t.description}, {"parameters", t.input_schema}};
    out.push_back(Json{{"type", "function"}, {"function", function}});
  }
  return out;
}

void set_tool_choice(const AnthropicRequest& a, ChatRequest& chat) {
  if (a.tool_choice_type == "auto") chat.tool_choice = "auto";
  if (a.tool_choice_type == "any") chat.tool_choice = "required";
  // A named tool is enforced (the reference only requires some call; differences.json).
  if (a.tool_choice_type == "tool") chat.tool_choice_function = a.tool_choice_name;
  // The reference drops this member; Hearth honours it (differences.json).
  if (a.disable_parallel_tool_use) chat.parallel_tool_calls = !*a.disable_parallel_tool_use;
}

}  // namespace

ChatRequest to_chat_request(const AnthropicRequest& a, bool need_max_tokens) {
  ChatRequest chat;
  Json messages = Json::array();
  if (a.system) messages.push_back(Json{{"role", "system"}, {"content", stable_system(*a.system)}});
  for (const AnthropicMessage& m : a.messages) convert_message(m, messages);
  chat.messages = std::move(messages);
  if (a.tools) chat.tools = convert_tools(*a.tools);
  set_tool_choice(a, chat);
  if (a.thinking_type == "enabled") chat.thinking_budget_tokens = a.thinking_budget_tokens;
  chat.stream = a.stream;
  chat.chat_template_kwargs = a.chat_template_kwargs;
  // The native table's members: what it reads of the chat body this translates to.
  chat.native = a.sampling;
  if (need_max_tokens) chat.native["max_tokens"] = a.max_tokens;
  if (a.stop_sequences) chat.native["stop"] = *a.stop_sequences;
  if (a.stream) chat.native["stream"] = true;
  return chat;
}

namespace {

const char* stop_reason(const scheduler::FinalResult& r, bool calls) {
  if (!stopped_naturally(r)) return "max_tokens";
  return calls ? "tool_use" : "end_turn";
}

Json stop_sequence(const scheduler::FinalResult& r) {
  return r.stop_type == scheduler::StopType::kWord ? Json(r.stopping_word) : Json(nullptr);
}

Json anthropic_usage(const scheduler::FinalResult& r) {
  return Json{{"cache_read_input_tokens", r.timings.cache_n},
              {"input_tokens", r.timings.prompt_n},
              {"output_tokens", r.n_predicted}};
}

// The arguments as a JSON value; invalid UTF-8 a model may write inside a string becomes
// U+FFFD first (as every response does), so the call keeps its arguments. Unreadable: {}.
Json parsed_input(const std::string& arguments) {
  auto input = parse_json(arguments);
  if (!input.is_ok()) {
    const std::string clean = Json::parse(dump_json(Json(arguments))).get<std::string>();
    input = parse_json(clean);
  }
  return input.is_ok() ? std::move(input.value()) : Json::object();
}

class MessagesFormat final : public ResultFormat {
 public:
  explicit MessagesFormat(ChatRun& run) : output_(run.output), meta_(run.meta) {}

  Json final_body(const std::vector<scheduler::FinalResult>& finals) override {
    output_->finished();
    const scheduler::FinalResult& r = finals.front();
    chat::ParsedMessage m = output_->parse_final(r.content);
    std::vector<AnsweredCall> calls = output_->answered_calls(r.index, m);
    Json content = Json::array();
    if (!m.reasoning.empty()) {
      content.push_back(Json{{"type", "thinking"}, {"thinking", m.reasoning}, {"signature", ""}});
    }
    if (!m.content.empty()) content.push_back(Json{{"type", "text"}, {"text", m.content}});
    for (const AnsweredCall& c : calls) {
      content.push_back(Json{{"type", "tool_use"},
                             {"id", c.id},
                             {"name", c.name},
                             {"input", parsed_input(c.arguments)}});
    }
    Json j = Json::object();
    j["id"] = meta_.id;
    j["type"] = "message";
    j["role"] = "assistant";
    j["content"] = std::move(content);
    j["model"] = meta_.model;
    j["stop_reason"] = stop_reason(r, !calls.empty());
    j["stop_sequence"] = stop_sequence(r);
    j["usage"] = anthropic_usage(r);
    return j;
  }

  std::string progress_frames(int32_t, const scheduler::ProgressInfo&) override { return ""; }

  std::string partial_frames(const scheduler::PartialResult& p) override {
    std::string out = start(p.index, p.timings);
    return out + deltas(p.index, output_->step(p.index, p.content));
  }

  std::string final_frames(const scheduler::FinalResult& r) override {
    std::string out = start(r.index, r.timings);
    out += deltas(r.index, output_->finish(r.index));
    if (thinking_started_) {
      out += sse_event("content_block_delta",
                       Json{{"type", "content_block_delta"},
                            {"index", 0},
                            {"delta", Json{{"type", "signature_delta"}, {"signature", ""}}}});
      out += block_stop(0);
    }
    if (text_started_) out += block_stop(text_index());
    for (size_t i = 0; i < calls_started_; ++i) out += block_stop(tool_index(i));
    const bool calls = !output_->parsed(r.index).tool_calls.empty();
    out += sse_event("message_delta", Json{{"type", "message_delta"},
                                           {"delta", Json{{"stop_reason", stop_reason(r, calls)},
                                                          {"stop_sequence", stop_sequence(r)}}},
                                           {"usage", Json{{"output_tokens", r.n_predicted}}}});
    out += sse_event("message_stop", Json{{"type", "message_stop"}});
    return out;
  }

  std::string next_prompt_frames() override { return ""; }
  std::string end_frames() override {
    output_->finished();
    return "";
  }

  std::string error_frames(const ApiError& error) override {
    Json body = Json::parse(error_body(error), nullptr, false);
    return sse_event("error", body.is_object() && body.contains("error") ? body["error"] : body);
  }

 private:
  std::string start(int32_t index, const scheduler::Timings& t) {
    if (!output_->begin(index)) return "";
    Json message = {{"id", meta_.id},
                    {"type", "message"},
                    {"role", "assistant"},
                    {"content", Json::array()},
                    {"model", meta_.model},
                    {"stop_reason", nullptr},
                    {"stop_sequence", nullptr},
                    {"usage", Json{{"cache_read_input_tokens", t.cache_n},
                                   {"input_tokens", t.prompt_n},
                                   {"output_tokens", 0}}}};
    return sse_event("message_start", Json{{"type", "message_start"}, {"message", message}});
  }

  int text_index() const { return thinking_started_ ? 1 : 0; }
  int tool_index(size_t call) const {
    return (thinking_started_ ? 1 : 0) + (text_started_ ? 1 : 0) + static_cast<int>(call);
  }

  static std::string block_start(int index, Json block) {
    return sse_event("content_block_start", Json{{"type", "content_block_start"},
                                                 {"index", index},
                                                 {"content_block", std::move(block)}});
  }
  static std::string block_delta(int index, Json delta) {
    return sse_event(
        "content_block_delta",
        Json{{"type", "content_block_delta"}, {"index", index}, {"delta", std::move(delta)}});
  }
  static std::string block_stop(int index) {
    return sse_event("content_block_stop", Json{{"type", "content_block_stop"}, {"index", index}});
  }

  std::string deltas(int32_t index, const chat::MessageDelta& d) {
    std::string out;
    if (!d.reasoning.empty()) {
      if (!thinking_started_) {
        thinking_started_ = true;
        out += block_start(0, Json{{"type", "thinking"}, {"thinking", ""}});
      }
      out += block_delta(0, Json{{"type", "thinking_delta"}, {"thinking", d.reasoning}});
    }
    if (!d.content.empty()) {
      if (!text_started_) {
        text_started_ = true;
        out += block_start(text_index(), Json{{"type", "text"}, {"text", ""}});
      }
      out += block_delta(text_index(), Json{{"type", "text_delta"}, {"text", d.content}});
    }
    for (const chat::ToolCallDelta& t : d.tool_calls) {
      if (t.is_new) {
        calls_started_ = std::max(calls_started_, t.index + 1);
        out += block_start(tool_index(t.index), Json{{"type", "tool_use"},
                                                     {"id", output_->call_id(index, t.index, t.id)},
                                                     {"name", t.name}});
      }
      if (!t.arguments.empty()) {
        out += block_delta(tool_index(t.index),
                           Json{{"type", "input_json_delta"}, {"partial_json", t.arguments}});
      }
    }
    return out;
  }

  std::shared_ptr<ChatOutput> output_;
  ResponseMeta meta_;
  bool thinking_started_ = false;
  bool text_started_ = false;
  size_t calls_started_ = 0;
};

}  // namespace

http::Response handle_messages(ServerState& s, const http::Request& r) {
  Json body;
  AnthropicRequest request;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  if (auto err = parse_anthropic_request(body, request)) return error_response(*err);
  ChatRun run;
  if (auto err = prepare_chat(s, to_chat_request(request, true), run)) {
    return error_response(*err);
  }
  auto format = std::make_shared<MessagesFormat>(run);
  return start_chat(s, std::move(run), std::move(format));
}

http::Response handle_count_tokens(ServerState& s, const http::Request& r) {
  Json body;
  AnthropicRequest request;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  if (auto err = parse_anthropic_request(body, request)) return error_response(*err);
  return count_chat_tokens(s, to_chat_request(request, false), false);
}

}  // namespace hearth::server::openai

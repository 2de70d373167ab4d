// POST /v1/chat/completions (openai-compat.md §4, §5): chat.completion bodies and
// chat.completion.chunk streams.
#include <memory>

#include "server/completion_run.h"
#include "server/openai/openai_routes.h"
#include "server/request_body.h"
#include "server/server_state.h"

namespace hearth::server::openai {

namespace {

Json message_json(const chat::ParsedMessage& m, const std::vector<AnsweredCall>& calls) {
  Json msg = Json::object();
  msg["role"] = "assistant";
  msg["content"] = m.content;
  if (!m.reasoning.empty()) msg["reasoning_content"] = m.reasoning;
  if (!calls.empty()) {
    Json list = Json::array();
    for (const AnsweredCall& c : calls) {
      Json call = Json::object();
      call["type"] = "function";
      call["function"] = Json{{"name", c.name}, {"arguments", c.arguments}};
      call["id"] = c.id;
      list.push_back(std::move(call));
    }
    msg["tool_calls"] = std::move(list);
  }
  return msg;
}

class ChatCompletionFormat final : public ResultFormat {
 public:
  ChatCompletionFormat(ChatRun& run, ResultContext ctx)
      : settings_(run.settings),
        output_(run.output),
        meta_(run.meta),
        include_usage_(run.include_usage),
        ctx_(std::move(ctx)) {}

  Json final_body(const std::vector<scheduler::FinalResult>& finals) override {
    output_->finished();
    Json choices = Json::array();
    for (const scheduler::FinalResult& r : finals) {
      chat::ParsedMessage m = output_->parse_final(r.content);
      std::vector<AnsweredCall> calls = output_->answered_calls(r.index, m);
      Json c = Json::object();
      c["finish_reason"] = finish_reason(r, !calls.empty());
      c["index"] = r.index;
      c["message"] = message_json(m, calls);
      Json probs = logprobs_json(r.probs, *settings_, ctx_);
      if (!probs.is_null()) c["logprobs"] = std::move(probs);
      choices.push_back(std::move(c));
    }
    const scheduler::FinalResult& first = finals.front();
    Json j = Json::object();
    j["choices"] = std::move(choices);
    j["created"] = unix_seconds();
    j["model"] = meta_.model;
    j["system_fingerprint"] = meta_.fingerprint;
    j["object"] = "chat.completion";
    j["usage"] = usage_json(first);
    j["id"] = meta_.id;
    if (settings_->verbose) j["__verbose"] = final_json(first, *settings_, ctx_, false);
    j["timings"] = timings_json(first.timings);
    return j;
  }

  std::string progress_frames(int32_t index, const scheduler::ProgressInfo& progress) override {
    Json j = chunk(index, role_delta(), nullptr);
    if (settings_->timings_per_token) j["timings"] = timings_json(progress.timings);
    j["prompt_progress"] = prompt_progress_json(progress);
    return sse_frame(j);
  }

  std::string partial_frames(const scheduler::PartialResult& p) override {
    std::vector<Json> chunks;
    if (output_->begin(p.index)) chunks.push_back(chunk(p.index, role_delta(), nullptr));
    const size_t role_chunks = chunks.size();
    add_deltas(p.index, output_->step(p.index, p.content), chunks);
    // The token's probabilities and running timings go on its last chunk, if it made one.
    if (chunks.size() > role_chunks) {
      Json& last = chunks.back();
      if (settings_->task.n_probs > 0 && p.probs) {
        last["choices"][0]["logprobs"] = logprobs_json({*p.probs}, *settings_, ctx_);
      }
    }
    if (!chunks.empty() && settings_->timings_per_token) {
      chunks.back()["timings"] = timings_json(p.timings);
    }
    return frames(chunks);
  }

  std::string final_frames(const scheduler::FinalResult& r) override {
    std::vector<Json> chunks;
    if (output_->begin(r.index)) chunks.push_back(chunk(r.index, role_delta(), nullptr));
    const size_t from_final = chunks.size();
    add_deltas(r.index, output_->finish(r.index), chunks);
    const bool calls = !output_->parsed(r.index).tool_calls.empty();
    chunks.push_back(chunk(r.index, Json::object(), finish_reason(r, calls)));
    if (include_usage_) {
      Json usage = head(Json::array());
      usage["usage"] = usage_json(r);
      chunks.push_back(std::move(usage));
    }
    chunks.back()["timings"] = timings_json(r.timings);
    if (settings_->verbose) {
      chunks[from_final]["__verbose"] = final_json(r, *settings_, ctx_, true);
    }
    return frames(chunks);
  }

  std::string end_frames() override {
    output_->finished();
    return "data: [DONE]\n\n";
  }

 private:
  static Json role_delta() { return Json{{"role", "assistant"}, {"content", nullptr}}; }

  Json head(Json choices) const {
    Json j = Json::object();
    j["choices"] = std::move(choices);
    j["created"] = unix_seconds();
    j["id"] = meta_.id;
    j["model"] = meta_.model;
    j["system_fingerprint"] = meta_.fingerprint;
    j["object"] = "chat.completion.chunk";
    return j;
  }

  Json chunk(int32_t index, Json delta, Json finish) const {
    Json c = Json::object();
    c["finish_reason"] = std::move(finish);
    c["index"] = index;
    c["delta"] = std::move(delta);
    return head(Json::array({std::move(c)}));
  }

  // One chunk per change: reasoning, content, then each tool call.
  void add_deltas(int32_t index, const chat::MessageDelta& d, std::vector<Json>& out) {
    if (!d.reasoning.empty()) {
      out.push_back(chunk(index, Json{{"reasoning_content", d.reasoning}}, nullptr));
    }
    if (!d.content.empty()) out.push_back(chunk(index, Json{{"content", d.content}}, nullptr));
    for (const chat::ToolCallDelta& t : d.tool_calls) {
      Json call = Json::object();
      call["index"] = t.index;
      Json function = Json::object();
      if (t.is_new) {
        call["id"] = output_->call_id(index, t.index, t.id);
        call["type"] = "function";
        function["name"] = t.name;
      }
      if (!t.arguments.empty()) function["arguments"] = t.arguments;
      call["function"] = std::move(function);
      out.push_back(chunk(index, Json{{"tool_calls", Json::array({std::move(call)})}}, nullptr));
    }
  }

  static std::string frames(const std::vector<Json>& chunks) {
    std::string out;
    for (const Json& c : chunks) out += sse_frame(c);
    return out;
  }

  std::shared_ptr<const CompletionSettings> settings_;
  std::shared_ptr<ChatOutput> output_;
  ResponseMeta meta_;
  bool include_usage_;
  ResultContext ctx_;
};

}  // namespace

http::Response handle_chat_completions(ServerState& s, const http::Request& r) {
  Json body;
  ChatRequest request;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  if (auto err = parse_chat_request(body, request)) return error_response(*err);
  ChatRun run;
  if (auto err = prepare_chat(s, request, run)) return error_response(*err);
  auto format = std::make_shared<ChatCompletionFormat>(run, result_context(s));
  return start_chat(s, std::move(run), std::move(format));
}

}  // namespace hearth::server::openai

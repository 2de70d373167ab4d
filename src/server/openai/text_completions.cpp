// POST /v1/completions (openai-compat.md §12): the native fields, answered in OpenAI's
// text_completion shape.
#include <memory>

#include "server/api_error.h"
#include "server/completion_run.h"
#include "server/openai/oai_common.h"
#include "server/openai/openai_routes.h"
#include "server/request_body.h"
#include "server/server_state.h"

namespace hearth::server::openai {

namespace {

class TextCompletionFormat final : public ResultFormat {
 public:
  TextCompletionFormat(std::shared_ptr<const CompletionSettings> settings, ResultContext ctx,
                       ResponseMeta meta)
      : settings_(std::move(settings)), ctx_(std::move(ctx)), meta_(std::move(meta)) {}

  Json final_body(const std::vector<scheduler::FinalResult>& finals) override {
    Json choices = Json::array();
    for (const scheduler::FinalResult& r : finals) {
      choices.push_back(
          choice(r.content, r.index, logprobs_json(r.probs, *settings_, ctx_), finish_reason(r)));
    }
    Json j = head(std::move(choices));
    const scheduler::FinalResult& first = finals.front();
    j["usage"] = usage_json(first);
    j["id"] = meta_.id;
    if (settings_->verbose) j["__verbose"] = final_json(first, *settings_, ctx_, false);
    j["timings"] = timings_json(first.timings);
    return j;
  }

  std::string progress_frames(int32_t index, const scheduler::ProgressInfo& progress) override {
    Json j = head(Json::array({choice("", index, nullptr, nullptr)}));
    j["id"] = meta_.id;
    if (settings_->timings_per_token) j["timings"] = timings_json(progress.timings);
    j["prompt_progress"] = prompt_progress_json(progress);
    return sse_frame(j);
  }

  std::string partial_frames(const scheduler::PartialResult& p) override {
    Json probs = nullptr;
    if (settings_->task.n_probs > 0 && p.probs) probs = logprobs_json({*p.probs}, *settings_, ctx_);
    Json j = head(Json::array({choice(p.content, p.index, std::move(probs), nullptr)}));
    j["id"] = meta_.id;
    if (settings_->timings_per_token) j["timings"] = timings_json(p.timings);
    if (settings_->verbose) j["__verbose"] = partial_json(p, *settings_, ctx_);
    return sse_frame(j);
  }

  std::string final_frames(const scheduler::FinalResult& r) override {
    Json j = head(Json::array({choice("", r.index, nullptr, finish_reason(r))}));
    j["usage"] = usage_json(r);
    j["id"] = meta_.id;
    if (settings_->verbose) j["__verbose"] = final_json(r, *settings_, ctx_, true);
    j["timings"] = timings_json(r.timings);
    return sse_frame(j);
  }

  std::string end_frames() override { return "data: [DONE]\n\n"; }

 private:
  static Json choice(const std::string& text, int32_t index, Json logprobs, Json finish) {
    Json c = Json::object();
    c["text"] = text;
    c["index"] = index;
    c["logprobs"] = std::move(logprobs);
    c["finish_reason"] = std::move(finish);
    return c;
  }

  Json head(Json choices) const {
    Json j = Json::object();
    j["choices"] = std::move(choices);
    j["created"] = unix_seconds();
    j["model"] = meta_.model;
    j["system_fingerprint"] = meta_.fingerprint;
    j["object"] = "text_completion";
    return j;
  }

  std::shared_ptr<const CompletionSettings> settings_;
  ResultContext ctx_;
  ResponseMeta meta_;
};

}  // namespace

http::Response handle_text_completions(ServerState& s, const http::Request& r) {
  std::shared_ptr<CompletionSettings> settings;
  if (auto err = parse_native_request(s, r, settings)) return error_response(*err);
  auto format = std::make_shared<TextCompletionFormat>(settings, result_context(s), make_meta(s));
  return run_completion(s, std::move(settings), std::move(format));
}

}  // namespace hearth::server::openai

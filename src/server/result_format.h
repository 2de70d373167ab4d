// How one route shapes the results of its completion tasks: the native /completion shape
// (NativeFormat), or the OpenAI and Anthropic shapes (src/server/openai/). A CompletionSink
// owns one; the HTTP side calls it, one call at a time (a stream's frames are rendered in
// order on the connection's strand), so a format may keep per-stream state unlocked.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "scheduler/task.h"
#include "server/api_error.h"
#include "server/completion_json.h"

namespace hearth::server {

class ResultFormat {
 public:
  virtual ~ResultFormat() = default;

  // Non-streaming: the body from every final result, in index order.
  virtual Json final_body(const std::vector<scheduler::FinalResult>& finals) = 0;

  // Streaming: the SSE frames of one event ("" when it shows nothing).
  virtual std::string progress_frames(int32_t index, const scheduler::ProgressInfo& progress) = 0;
  virtual std::string partial_frames(const scheduler::PartialResult& partial) = 0;
  virtual std::string final_frames(const scheduler::FinalResult& result) = 0;
  // The begin marker of a further prompt of the same request.
  virtual std::string next_prompt_frames() { return "data: null\n\n"; }
  // A mid-stream error: the route's error frame; nothing follows it.
  virtual std::string error_frames(const ApiError& error) {
    return "data: " + error_body(error) + "\n\n";
  }
  // After every result of the request ("data: [DONE]" on the OpenAI routes).
  virtual std::string end_frames() { return ""; }
};

// The native shape (native-completion.md §5, §11).
class NativeFormat final : public ResultFormat {
 public:
  NativeFormat(std::shared_ptr<const CompletionSettings> settings, ResultContext ctx)
      : settings_(std::move(settings)), ctx_(std::move(ctx)) {}

  Json final_body(const std::vector<scheduler::FinalResult>& finals) override;
  std::string progress_frames(int32_t index, const scheduler::ProgressInfo& progress) override;
  std::string partial_frames(const scheduler::PartialResult& partial) override;
  std::string final_frames(const scheduler::FinalResult& result) override;

 private:
  std::shared_ptr<const CompletionSettings> settings_;
  ResultContext ctx_;
};

inline std::string sse_frame(const Json& j) {
  return "data: " + dump_json(j) + "\n\n";
}
// An SSE frame with an event line (Anthropic and Responses streams).
inline std::string sse_event(const std::string& name, const Json& j) {
  return "event: " + name + "\ndata: " + dump_json(j) + "\n\n";
}

}  // namespace hearth::server

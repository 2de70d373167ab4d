// POST /v1/audio/transcriptions (and /audio/transcriptions), as llama-server answers it: the
// multipart form (or a JSON body, which carries no file) becomes a chat request of one user
// message, the ASR prompt and the media marker, with the uploaded `file` as its one medium;
// the answer is one transcript.text.done event, or transcript.text.delta events then the
// done event in an SSE stream ended by "data: [DONE]".
//
// Differences from the reference, each for a clear answer instead of a 500 or a silent
// default: a max_tokens or temperature that is not a number (or a repeated one) is a 400
// naming the field (the reference's std::stoul / std::stof throw); a negative max_tokens is
// refused (std::stoul wraps it); the other form fields go through the chat field table,
// which answers a field of the wrong type (every form value is a string) with a 400 naming
// it, as on the chat routes. prompt, language and response_format are consumed here and
// not handed on (the reference leaves them in the chat body, where nothing reads them).
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <memory>

#include "server/completion_run.h"
#include "server/multipart_form.h"
#include "server/openai/openai_routes.h"
#include "server/request_body.h"
#include "server/server_state.h"

namespace hearth::server::openai {

namespace {

class TranscriptionFormat final : public ResultFormat {
 public:
  explicit TranscriptionFormat(const ChatRun& run) : output_(run.output) {}

  Json final_body(const std::vector<scheduler::FinalResult>& finals) override {
    output_->finished();
    if (finals.size() == 1) return done_event(finals.front());
    // Several results (n > 1): the reference answers a list of its events.
    Json list = Json::array();
    for (const scheduler::FinalResult& r : finals) list.push_back(done_event(r));
    return list;
  }

  std::string progress_frames(int32_t, const scheduler::ProgressInfo&) override {
    return sse_frame(delta_event(""));
  }
  std::string partial_frames(const scheduler::PartialResult& p) override {
    return sse_frame(delta_event(p.content));
  }
  std::string final_frames(const scheduler::FinalResult& r) override {
    return sse_frame(done_event(r));
  }
  std::string end_frames() override {
    output_->finished();
    return "data: [DONE]\n\n";
  }

 private:
  static Json delta_event(const std::string& text) {
    Json j = Json::object();
    j["type"] = "transcript.text.delta";
    j["delta"] = text;
    return j;
  }

  // The whole transcript (the chat parser's content: any reasoning is left out) and usage
  // counted as on the chat routes (input: every prompt position, cached ones included).
  Json done_event(const scheduler::FinalResult& r) const {
    const int32_t input = r.timings.cache_n + r.timings.prompt_n;
    Json usage = Json::object();
    usage["type"] = "tokens";
    usage["input_tokens"] = input;
    usage["output_tokens"] = r.n_predicted;
    usage["total_tokens"] = input + r.n_predicted;
    usage["input_tokens_details"] = Json{{"cached_tokens", r.timings.cache_n}};
    Json j = Json::object();
    j["type"] = "transcript.text.done";
    j["text"] = output_->parse_final(r.content).content;
    j["usage"] = std::move(usage);
    return j;
  }

  std::shared_ptr<ChatOutput> output_;
};

// A multipart form's text fields as a JSON object and its files by name, as the
// reference's HTTP layer hands them to the handler (nothing when the body is not a form).
std::optional<ApiError> read_form(const http::Request& r, bool& is_form, Json& fields,
                                  std::map<std::string, FormPart>& files) {
  const std::string content_type = r.header("Content-Type").value_or("");
  is_form = is_multipart_form(content_type);
  if (!is_form) return std::nullopt;
  std::string boundary;
  if (auto err = multipart_boundary(content_type, boundary)) return err;
  std::vector<FormPart> parts;
  if (auto err = parse_multipart_form(r.body, boundary, parts)) return err;
  MultipartForm form = to_form(std::move(parts));
  fields = std::move(form.fields);
  files = std::move(form.files);
  return std::nullopt;
}

// A string member, or `fallback` when absent or not a string (the reference's json_value).
std::string string_field(const Json& body, const char* key, const std::string& fallback) {
  auto it = body.find(key);
  return it != body.end() && it->is_string() ? it->get<std::string>() : fallback;
}

// LFM2's templates (a tool list between these markers) expect their own ASR preset.
bool is_lfm2_template(const std::string& source) {
  return source.find("<|tool_list_start|>") != std::string::npos &&
         source.find("<|tool_list_end|>") != std::string::npos;
}

// The user message: the request's prompt or the preset's, the language, then the marker.
Json asr_messages(const Json& body, bool lfm2, const std::string& marker) {
  std::string prompt = string_field(body, "prompt", "");
  if (prompt.empty()) prompt = lfm2 ? "" : "Transcribe audio to text";
  const std::string language = string_field(body, "language", "");
  if (!language.empty()) prompt += " (language: " + language + ")";
  prompt += marker;
  Json messages = Json::array();
  if (lfm2) messages.push_back(Json{{"role", "system"}, {"content", "Perform ASR."}});
  messages.push_back(Json{{"role", "user"}, {"content", prompt}});
  return messages;
}

ApiError bad_number(const char* key, const std::string& kind) {
  return invalid_request("'" + std::string(key) + "' must be " + kind + " (a form field's text)");
}

// A form field holding a number as text: max_tokens as a non-negative integer, temperature
// as a finite float. Absent: left out of the chat body.
std::optional<ApiError> copy_number(const Json& body, const char* key, bool integer, Json& chat) {
  auto it = body.find(key);
  if (it == body.end()) return std::nullopt;
  const char* kind = integer ? "a non-negative integer" : "a number";
  if (!it->is_string()) return bad_number(key, kind);
  const std::string text = it->get<std::string>();
  const char* begin = text.c_str();
  char* end = nullptr;
  errno = 0;
  if (integer) {
    const unsigned long long v = std::strtoull(begin, &end, 10);
    if (end == begin || errno == ERANGE || text.find('-') != std::string::npos) {
      return bad_number(key, kind);
    }
    chat[key] = v;
  } else {
    const float v = std::strtof(begin, &end);
    if (end == begin || errno == ERANGE || !std::isfinite(v)) return bad_number(key, kind);
    chat[key] = v;
  }
  return std::nullopt;
}

// The reference's convert_transcriptions_to_chatcmpl: the chat body of a transcription.
std::optional<ApiError> to_chat_body(const Json& body, bool lfm2, const std::string& marker,
                                     Json& chat) {
  if (string_field(body, "response_format", "json") != "json") {
    return invalid_request("Only 'json' response_format is supported for transcription");
  }
  chat = body;
  for (const char* consumed : {"prompt", "language", "response_format"}) chat.erase(consumed);
  chat["messages"] = asr_messages(body, lfm2, marker);
  chat["stream"] = string_field(body, "stream", "false") == "true";
  if (auto err = copy_number(body, "max_tokens", true, chat)) return err;
  return copy_number(body, "temperature", false, chat);
}

}  // namespace

http::Response handle_transcriptions(ServerState& s, const http::Request& r) {
  // A malformed form is refused before the handler in the reference (its HTTP layer);
  // a JSON body is parsed after the audio check, and has no files.
  bool is_form = false;
  Json fields;
  std::map<std::string, FormPart> files;
  if (auto err = read_form(r, is_form, fields, files)) return error_response(*err);
  if (!s.scheduler->media_support().audio) {
    return handle_not_supported("The current model does not support audio input.");
  }
  if (!is_form) {
    if (auto err = parse_json_object(r.body, fields)) return error_response(*err);
  }
  auto file = files.find("file");
  if (file == files.end()) {
    return error_response(invalid_request("No input file found for transcription"));
  }
  const bool lfm2 = is_lfm2_template(s.model.chat_templates->default_source());
  Json chat_body;
  if (auto err = to_chat_body(fields, lfm2, s.config.media_marker, chat_body)) {
    return error_response(*err);
  }
  ChatRequest request;
  if (auto err = parse_chat_request(chat_body, request)) return error_response(*err);
  const std::string& data = file->second.data;
  request.files.emplace_back(data.begin(), data.end());
  ChatRun run;
  if (auto err = prepare_chat(s, request, run)) return error_response(*err);
  auto format = std::make_shared<TranscriptionFormat>(run);
  return start_chat(s, std::move(run), std::move(format));
}

}  // namespace hearth::server::openai

// POST /v1/audio/transcriptions over the fake server with a fake projector (-mm): multipart
// forms built here, the transcript.text.done body and its usage against a chat request of
// the same prompt, the stream's events and its end, the reference's 400s and 501.
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "base/base64.h"
#include "server/fake_fixture.h"

namespace hearth::test {
namespace {

const char kBoundary[] = "----hearthTestBoundary7MA4YWxkTrZu0gW";

// A WAV file as the fake projector takes it (a RIFF signature), `size` bytes.
std::string fake_wav(size_t size) {
  std::string bytes = "RIFF";
  bytes.resize(size, '\0');
  return bytes;
}

struct Field {
  Field(std::string n, std::string v, std::string f = "")
      : name(std::move(n)), value(std::move(v)), filename(std::move(f)) {}
  std::string name;
  std::string value;
  std::string filename;  // set: a file part
};

std::string form_body(const std::vector<Field>& fields) {
  std::string body;
  for (const Field& f : fields) {
    body += std::string("--") + kBoundary + "\r\nContent-Disposition: form-data; name=\"" + f.name +
            "\"";
    if (!f.filename.empty()) {
      body += "; filename=\"" + f.filename + "\"\r\nContent-Type: audio/wav";
    }
    body += "\r\n\r\n" + f.value + "\r\n";
  }
  return body + "--" + kBoundary + "--\r\n";
}

std::string form_type() {
  return std::string("multipart/form-data; boundary=") + kBoundary;
}

class Transcriptions : public FakeServerTest {
 protected:
  HttpReply post_form(const std::vector<Field>& fields,
                      const std::string& path = "/v1/audio/transcriptions") {
    return http_request(port(), "POST", path, form_body(fields), {{"Content-Type", form_type()}});
  }
  Json post_form_json(const std::vector<Field>& fields) {
    HttpReply reply = post_form(fields);
    status_ = reply.status;
    return parse_or_null(reply.body);
  }
  void expect_400(const std::vector<Field>& fields, const std::string& message) {
    Json r = post_form_json(fields);
    EXPECT_EQ(status_, 400) << r.dump();
    EXPECT_EQ(r["error"]["type"], "invalid_request_error") << r.dump();
    EXPECT_EQ(r["error"]["message"], message) << r.dump();
  }
  int status_ = 0;
};

Field audio_file() {
  return {"file", fake_wav(64), "speech.wav"};
}

TEST_F(Transcriptions, FinalBodyMatchesAChatOfTheSamePrompt) {
  start({"-mm", "fake-mmproj.gguf"});
  Json r = post_form_json(
      {audio_file(), {"model", "whisper-1"}, {"max_tokens", "3"}, {"temperature", "0"}});
  ASSERT_EQ(status_, 200) << r.dump();
  EXPECT_EQ(r["type"], "transcript.text.done") << r.dump();
  ASSERT_TRUE(r["text"].is_string()) << r.dump();
  const Json& usage = r["usage"];
  EXPECT_EQ(usage["type"], "tokens");
  // The same conversation as a chat request: the default ASR prompt, then the audio.
  const std::string wav64 = base64_encode(std::span<const unsigned char>(
      reinterpret_cast<const unsigned char*>(fake_wav(64).data()), 64));
  Json content = Json::array(
      {{{"type", "text"}, {"text", "Transcribe audio to text"}},
       {{"type", "input_audio"}, {"input_audio", {{"data", wav64}, {"format", "wav"}}}}});
  Json chat = post_json(port(), "/v1/chat/completions",
                        {{"messages", {{{"role", "user"}, {"content", content}}}},
                         {"max_tokens", 3},
                         {"temperature", 0}},
                        &status_);
  ASSERT_EQ(status_, 200) << chat.dump();
  EXPECT_EQ(usage["input_tokens"], chat["usage"]["prompt_tokens"]) << r.dump() << chat.dump();
  EXPECT_EQ(usage["output_tokens"], chat["usage"]["completion_tokens"]);
  EXPECT_EQ(usage["total_tokens"],
            usage["input_tokens"].get<int64_t>() + usage["output_tokens"].get<int64_t>());
  EXPECT_EQ(usage["input_tokens_details"]["cached_tokens"].is_number(), true) << r.dump();
  EXPECT_EQ(r["text"], chat["choices"][0]["message"]["content"]);
  EXPECT_LE(usage["output_tokens"].get<int64_t>(), 3);
}

TEST_F(Transcriptions, PromptAndLanguageChangeTheInput) {
  start({"-mm", "fake-mmproj.gguf"});
  Json plain = post_form_json({audio_file(), {"max_tokens", "1"}});
  ASSERT_EQ(status_, 200) << plain.dump();
  Json with_language = post_form_json({audio_file(), {"max_tokens", "1"}, {"language", "en"}});
  ASSERT_EQ(status_, 200) << with_language.dump();
  EXPECT_GT(with_language["usage"]["input_tokens"].get<int64_t>(),
            plain["usage"]["input_tokens"].get<int64_t>());
  Json short_prompt = post_form_json({audio_file(), {"max_tokens", "1"}, {"prompt", "Hi"}});
  ASSERT_EQ(status_, 200) << short_prompt.dump();
  EXPECT_LT(short_prompt["usage"]["input_tokens"].get<int64_t>(),
            plain["usage"]["input_tokens"].get<int64_t>());
}

TEST_F(Transcriptions, StreamSendsDeltasThenDoneThenDone) {
  start({"-mm", "fake-mmproj.gguf"});
  HttpReply reply = post_form({audio_file(), {"stream", "true"}, {"max_tokens", "4"}});
  ASSERT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(reply.headers["content-type"].rfind("text/event-stream", 0), 0u);
  std::vector<std::string> events = sse_payloads(reply.body);
  ASSERT_GE(events.size(), 3u) << reply.body;
  EXPECT_EQ(events.back(), "[DONE]");
  Json done = parse_or_null(events[events.size() - 2]);
  EXPECT_EQ(done["type"], "transcript.text.done") << reply.body;
  std::string joined;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    Json delta = parse_or_null(events[i]);
    EXPECT_EQ(delta["type"], "transcript.text.delta") << events[i];
    EXPECT_EQ(delta.size(), 2u) << events[i];
    joined += delta["delta"].get<std::string>();
  }
  EXPECT_EQ(done["text"], joined);
  EXPECT_EQ(done["usage"]["output_tokens"].get<int64_t>(), 4) << reply.body;
  EXPECT_EQ(events.size() - 2, 4u) << reply.body;
}

// A template with LFM2's tool-list markers gets the reference's LFM2 preset: a system
// message "Perform ASR." and an empty user prompt before the audio. The same conversation
// sent to the chat route counts the same input tokens; the default preset counts others.
TEST_F(Transcriptions, Lfm2TemplatesGetTheirOwnPreset) {
  const std::string dir = make_temp_dir("asr_lfm2");
  const std::string path = dir + "/lfm2.jinja";
  std::ofstream(path) << "{#- <|tool_list_start|> <|tool_list_end|> -#}"
                         "{%- for m in messages -%}[{{ m.role }}] {{ m.content }}|{%- endfor -%}";
  start({"-mm", "fake-mmproj.gguf", "--jinja", "--chat-template-file", path});
  Json asr = post_form_json({audio_file(), {"max_tokens", "1"}});
  ASSERT_EQ(status_, 200) << asr.dump();
  const std::string wav64 = base64_encode(std::span<const unsigned char>(
      reinterpret_cast<const unsigned char*>(fake_wav(64).data()), 64));
  const Json audio = {{"type", "input_audio"},
                      {"input_audio", {{"data", wav64}, {"format", "wav"}}}};
  auto chat_prompt_tokens = [&](const Json& messages) {
    Json r = post_json(port(), "/v1/chat/completions", {{"messages", messages}, {"max_tokens", 1}},
                       &status_);
    EXPECT_EQ(status_, 200) << r.dump();
    return r["usage"]["prompt_tokens"];
  };
  EXPECT_EQ(asr["usage"]["input_tokens"],
            chat_prompt_tokens({{{"role", "system"}, {"content", "Perform ASR."}},
                                {{"role", "user"}, {"content", Json::array({audio})}}}));
  EXPECT_NE(
      asr["usage"]["input_tokens"],
      chat_prompt_tokens(
          {{{"role", "user"},
            {"content", {{{"type", "text"}, {"text", "Transcribe audio to text"}}, audio}}}}));
  std::filesystem::remove_all(dir);
}

TEST_F(Transcriptions, BothPathsAnswer) {
  start({"-mm", "fake-mmproj.gguf"});
  HttpReply reply = post_form({audio_file(), {"max_tokens", "1"}}, "/audio/transcriptions");
  EXPECT_EQ(reply.status, 200) << reply.body;
  EXPECT_EQ(parse_or_null(reply.body)["type"], "transcript.text.done") << reply.body;
}

TEST_F(Transcriptions, TheReferencesRefusals) {
  start({"-mm", "fake-mmproj.gguf"});
  expect_400({{"model", "whisper-1"}}, "No input file found for transcription");
  // A part named otherwise, or a `file` field without a filename, is no input file.
  expect_400({{"audio", fake_wav(64), "a.wav"}}, "No input file found for transcription");
  expect_400({{"file", "RIFF...."}}, "No input file found for transcription");
  expect_400({audio_file(), {"response_format", "text"}},
             "Only 'json' response_format is supported for transcription");
  expect_400({audio_file(), {"max_tokens", "many"}},
             "'max_tokens' must be a non-negative integer (a form field's text)");
  expect_400({audio_file(), {"max_tokens", "-3"}},
             "'max_tokens' must be a non-negative integer (a form field's text)");
  expect_400({audio_file(), {"max_tokens", "1"}, {"max_tokens", "2"}},
             "'max_tokens' must be a non-negative integer (a form field's text)");
  expect_400({audio_file(), {"temperature", "warm"}},
             "'temperature' must be a number (a form field's text)");
  expect_400({audio_file(), {"temperature", "nan"}},
             "'temperature' must be a number (a form field's text)");
  // A JSON body carries no file (the reference parses it as JSON, with no files).
  Json json_body = post_json(port(), "/v1/audio/transcriptions", {{"file", "x"}}, &status_);
  EXPECT_EQ(status_, 400) << json_body.dump();
  EXPECT_EQ(json_body["error"]["message"], "No input file found for transcription");
}

TEST_F(Transcriptions, MalformedFormsAre400) {
  start({"-mm", "fake-mmproj.gguf"});
  HttpReply no_boundary =
      http_request(port(), "POST", "/v1/audio/transcriptions", form_body({audio_file()}),
                   {{"Content-Type", "multipart/form-data"}});
  EXPECT_EQ(no_boundary.status, 400) << no_boundary.body;
  EXPECT_EQ(parse_or_null(no_boundary.body)["error"]["message"],
            "Invalid multipart/form-data body: the Content-Type has no boundary");
  std::string unclosed = form_body({audio_file()});
  unclosed.resize(unclosed.size() - 10);
  HttpReply cut = http_request(port(), "POST", "/v1/audio/transcriptions", unclosed,
                               {{"Content-Type", form_type()}});
  EXPECT_EQ(cut.status, 400) << cut.body;
  EXPECT_NE(parse_or_null(cut.body)["error"]["message"].get<std::string>().find("delimiter"),
            std::string::npos)
      << cut.body;
}

TEST_F(Transcriptions, WithoutAudioSupportIs501) {
  start();
  HttpReply reply = post_form({audio_file()});
  EXPECT_EQ(reply.status, 501) << reply.body;
  Json r = parse_or_null(reply.body);
  EXPECT_EQ(r["error"]["type"], "not_supported_error") << reply.body;
  EXPECT_EQ(r["error"]["message"], "The current model does not support audio input.");
}

}  // namespace
}  // namespace hearth::test

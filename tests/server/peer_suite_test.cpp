// The differences llama-server's own test suite (tools/server/tests, run against
// hearth-server) found, each checked on the real server: --tags in the model list, __verbose
// from a --verbose server, a bare json_object constraining a chat answer, the timings of
// prompt-progress chunks, progress in the Responses stream, the idle-slot cache log lines,
// and media parts refused without a projector on every chat-like route.
#include <sstream>
#include <string>
#include <vector>

#include "server/server_fixture.h"

namespace hearth::test {
namespace {

class PeerSuiteFixes : public StoriesServer {
 protected:
  // The parsed data payloads of a streamed POST (frames with an `event:` line included).
  std::vector<Json> stream(const std::string& path, const Json& body) {
    HttpReply reply = http_request(port(), "POST", path, body.dump());
    EXPECT_EQ(reply.status, 200) << reply.body;
    std::vector<Json> out;
    std::istringstream lines(reply.body);
    std::string line;
    while (std::getline(lines, line)) {
      if (line.rfind("data: ", 0) != 0 || line == "data: [DONE]") continue;
      out.push_back(parse_or_null(line.substr(6)));
    }
    return out;
  }
};

const char* const kLongPrompt =
    "the quick brown fox jumps over the lazy dog the quick brown fox jumps over the lazy dog "
    "the quick brown fox jumps over the lazy dog the quick brown fox jumps over the lazy dog";

Json chat_body(const std::string& text) {
  return Json{{"max_tokens", 4},
              {"messages", Json::array({Json{{"role", "system"}, {"content", "Book"}},
                                        Json{{"role", "user"}, {"content", text}}})}};
}

TEST_F(PeerSuiteFixes, ModelsListTagsAndAliases) {
  start({"--alias", "tinyllama-2,fim,code", "--tags", "chat, fim,small"});
  HttpReply reply = http_request(port(), "GET", "/models");
  ASSERT_EQ(reply.status, 200);
  const Json model = parse_or_null(reply.body)["data"][0];
  EXPECT_EQ(model["id"], "code");  // the first alias in sorted order
  EXPECT_EQ(model["aliases"], Json::array({"code", "fim", "tinyllama-2"}));
  EXPECT_EQ(model["tags"], Json::array({"chat", "fim", "small"}));
}

TEST_F(PeerSuiteFixes, VerboseServerAnswersChatWithVerbose) {
  start({"--verbose", "--no-jinja", "--chat-template", "llama3"});
  int status = 0;
  Json answer =
      post_json(port(), "/v1/chat/completions", chat_body("What is the best book"), &status);
  ASSERT_EQ(status, 200) << answer.dump();
  ASSERT_TRUE(answer.contains("__verbose")) << answer.dump();
  EXPECT_NE(answer["__verbose"]["prompt"].get<std::string>().find("What is the best book"),
            std::string::npos);
  Json quiet = chat_body("x");
  quiet["verbose"] = false;  // a request may still turn it off
  EXPECT_FALSE(post_json(port(), "/v1/chat/completions", quiet, &status).contains("__verbose"));
}

TEST_F(PeerSuiteFixes, QuietServerAnswersVerboseOnlyWhenAsked) {
  start();
  int status = 0;
  EXPECT_FALSE(
      post_json(port(), "/v1/chat/completions", chat_body("x"), &status).contains("__verbose"));
  Json loud = chat_body("x");
  loud["verbose"] = true;
  EXPECT_TRUE(post_json(port(), "/v1/chat/completions", loud, &status).contains("__verbose"));
}

// Without Jinja a bare {"type":"json_object"} asks for any JSON object, as the reference
// (with Jinja its templates drop it: golden capture chat_qwen3_json_object).
TEST_F(PeerSuiteFixes, BareJsonObjectConstrainsTheChatAnswerWithoutJinja) {
  start({"--no-jinja"});
  Json body = chat_body("Write an example");
  body["max_tokens"] = 6;
  body["response_format"] = {{"type", "json_object"}};
  int status = 0;
  Json answer = post_json(port(), "/v1/chat/completions", body, &status);
  ASSERT_EQ(status, 200) << answer.dump();
  const std::string content = answer["choices"][0]["message"]["content"];
  ASSERT_FALSE(content.empty());
  EXPECT_EQ(content.front(), '{') << content;
}

TEST_F(PeerSuiteFixes, ProgressChunksCarryTimings) {
  start({"-b", "32", "-ub", "32"});
  const std::vector<Json> chunks = stream("/completion", Json{{"prompt", kLongPrompt},
                                                              {"n_predict", 4},
                                                              {"stream", true},
                                                              {"timings_per_token", true},
                                                              {"return_progress", true}});
  std::vector<Json> progress;
  for (const Json& c : chunks) {
    if (c.contains("prompt_progress")) progress.push_back(c);
  }
  ASSERT_GT(progress.size(), 1u);
  const Json& first = progress.front()["timings"];
  EXPECT_EQ(first["prompt_n"], 0);
  EXPECT_EQ(first["prompt_ms"], 0.0);
  EXPECT_EQ(first["predicted_n"], 0);
  double prompt_ms = 0.0;
  for (const Json& c : progress) {
    ASSERT_TRUE(c.contains("timings")) << c.dump();
    EXPECT_GE(c["timings"]["prompt_ms"].get<double>(), prompt_ms);
    prompt_ms = c["timings"]["prompt_ms"].get<double>();
  }
  EXPECT_GT(prompt_ms, 0.0);
  EXPECT_GT(progress.back()["timings"]["prompt_n"].get<int>(), 0);
}

TEST_F(PeerSuiteFixes, ResponsesStreamReportsProgressAndTimings) {
  start({"-b", "32", "-ub", "32", "-np", "1"});
  const std::vector<Json> events = stream("/v1/responses", Json{{"input", kLongPrompt},
                                                                {"max_output_tokens", 8},
                                                                {"stream", true},
                                                                {"timings_per_token", true},
                                                                {"return_progress", true}});
  int progress = 0;
  bool delta_timings = false;
  for (const Json& e : events) {
    if (e.contains("prompt_progress")) {
      ++progress;
      EXPECT_EQ(e["type"], "response.in_progress") << e.dump();
      EXPECT_GT(e["prompt_progress"]["total"].get<int>(), 0);
      EXPECT_TRUE(e.contains("timings"));
    }
    if (e["type"] == "response.output_text.delta" && e.contains("timings")) {
      delta_timings = e["timings"].contains("predicted_per_second");
    }
  }
  EXPECT_GT(progress, 1);
  EXPECT_TRUE(delta_timings);
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front()["type"], "response.created");
  EXPECT_EQ(events.back()["type"], "response.completed");
}

// The reference's debug lines that its suite waits for (test_kv_keep_only_active.py).
TEST_F(PeerSuiteFixes, IdleSlotCacheLogLines) {
  start({"-np", "2", "--kv-unified", "--cache-ram", "100", "--verbose", "-n", "4"});
  EXPECT_NE(server_.log().find("__TEST_TAG_CACHE_IDLE_SLOTS_ENABLED__"), std::string::npos);
  int status = 0;
  post_json(port(), "/completion", Json{{"prompt", kLongPrompt}, {"id_slot", 0}}, &status);
  ASSERT_EQ(status, 200);
  EXPECT_EQ(server_.log().find("__TEST_TAG_CACHE_IDLE_SLOT__"), std::string::npos);
  post_json(port(), "/completion", Json{{"prompt", "The quick brown fox"}, {"id_slot", 1}},
            &status);
  ASSERT_EQ(status, 200);
  EXPECT_NE(server_.log().find("__TEST_TAG_CACHE_IDLE_SLOT__"), std::string::npos);
  // The long prompt again, on whichever slot: restored from the host cache.
  const Json again = post_json(port(), "/completion",
                               Json{{"prompt", kLongPrompt}, {"cache_prompt", true}}, &status);
  ASSERT_EQ(status, 200);
  EXPECT_NE(server_.log().find("updating prompt cache"), std::string::npos);
  EXPECT_GT(again["timings"]["cache_n"].get<int>(), 0);
}

TEST_F(PeerSuiteFixes, NoIdleSlotCacheLinesWithoutTheFeature) {
  start({"-np", "2", "--kv-unified", "--cache-ram", "100", "--verbose", "--no-cache-idle-slots"});
  EXPECT_EQ(server_.log().find("__TEST_TAG_CACHE_IDLE_SLOTS_ENABLED__"), std::string::npos);
}

// Without a projector every chat-like route refuses an image with a 400 that says so; an
// image inside an Anthropic tool result included (the reference answers 500 there).
TEST_F(PeerSuiteFixes, MediaPartsAreRefusedWithoutAProjector) {
  start({"--jinja"});
  const Json image_url = {{"type", "image_url"},
                          {"image_url", {{"url", "data:image/png;base64,iVBORw0KGgo="}}}};
  const Json audio = {{"type", "input_audio"},
                      {"input_audio", {{"data", "UklGRg=="}, {"format", "wav"}}}};
  const Json anthropic_image = {
      {"type", "image"},
      {"source", {{"type", "base64"}, {"media_type", "image/png"}, {"data", "iVBORw0KGgo="}}}};
  struct Case {
    const char* path;
    Json body;
    const char* said;
  };
  const std::vector<Case> cases = {
      {"/v1/chat/completions",
       {{"messages", {{{"role", "user"}, {"content", {image_url}}}}}},
       "image input is not supported"},
      {"/v1/chat/completions",
       {{"messages", {{{"role", "user"}, {"content", {audio}}}}}},
       "audio input is not supported"},
      {"/v1/messages",
       {{"max_tokens", 4}, {"messages", {{{"role", "user"}, {"content", {anthropic_image}}}}}},
       "image input is not supported"},
      {"/v1/messages",
       {{"max_tokens", 4},
        {"messages",
         {{{"role", "user"}, {"content", "weather?"}},
          {{"role", "assistant"},
           {"content",
            {{{"type", "tool_use"}, {"id", "t1"}, {"name", "f"}, {"input", Json::object()}}}}},
          {{"role", "user"},
           {"content",
            {{{"type", "tool_result"},
              {"tool_use_id", "t1"},
              {"content", {{{"type", "text"}, {"text", "see"}}, anthropic_image}}}}}}}}},
       "image input is not supported"},
      {"/v1/responses",
       {{"input",
         {{{"role", "user"},
           {"content",
            {{{"type", "input_image"}, {"image_url", "data:image/png;base64,iVBORw0KGgo="}}}}}}}},
       "image input is not supported"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.path) + " " + c.body.dump());
    int status = 0;
    Json answer = post_json(port(), c.path, c.body, &status);
    EXPECT_EQ(status, 400) << answer.dump();
    EXPECT_NE(answer.dump().find(c.said), std::string::npos) << answer.dump();
    EXPECT_NE(answer.dump().find("mmproj"), std::string::npos) << answer.dump();
  }
}

}  // namespace
}  // namespace hearth::test

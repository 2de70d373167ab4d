// The chat surfaces as an attacker meets them (issue 32): JSON hidden inside strings,
// objects of many keys, and the composition of forced reasoning tokens with grammars. Each
// case failed on the code before its fix (a crash, a 500, or a wrong answer) and must now
// be a 200 or a clear 400, with the server alive for the next client.
#include <atomic>
#include <fstream>
#include <thread>

#include "server/server_fixture.h"

namespace hearth::test {
namespace {

// A /proc/<pid>/status field in KiB (VmRSS, VmHWM); -1 when unreadable.
long status_kib(pid_t pid, const std::string& field) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stol(line.substr(field.size() + 1));
  }
  return -1;
}

std::string story_text(size_t bytes) {
  std::string text;
  while (text.size() < bytes) {
    text +=
        "Once upon a time, there was a little girl named Lily. She loved to play \u00e9 outside. ";
  }
  text.resize(bytes);
  return text;
}

std::string nested_arrays(size_t depth) {
  return std::string(depth, '[') + std::string(depth, ']');
}

const Json kTool = {{"type", "function"},
                    {"function",
                     {{"name", "get_weather"},
                      {"parameters",
                       {{"type", "object"},
                        {"properties", {{"city", {{"type", "string"}}}}},
                        {"required", {"city"}}}}}}};

// A history whose assistant turn called a tool with `arguments` (a string the template
// parses into an object: Qwen3's template renders arguments as JSON).
Json history_with_arguments(const std::string& arguments) {
  return Json::array(
      {{{"role", "user"}, {"content", "hi"}},
       {{"role", "assistant"},
        {"content", ""},
        {"tool_calls",
         Json::array({{{"id", "c1"},
                       {"type", "function"},
                       {"function", {{"name", "get_weather"}, {"arguments", arguments}}}}})}},
       {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "sunny"}}});
}

class HostileChat : public StoriesServer {
 protected:
  void start_with(const std::string& template_name, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"-c", "8192", "--jinja", "--chat-template-file",
                                     shared_path("templates/" + template_name)};
    args.insert(args.end(), extra.begin(), extra.end());
    start(args);
  }
  // The server answers the next client: it did not crash on the last one.
  void expect_alive() {
    int status = 0;
    post_json(port(), "/completion", {{"prompt", "Once"}, {"n_predict", 2}}, &status);
    EXPECT_EQ(status, 200) << "the server did not survive";
  }
};

// 60,000 levels inside the arguments string crashed the server (a recursive copy of the
// parsed value); 30,000 were refused only after that copy. Every route that renders a
// history refuses it, at the parse, naming what was too deep.
TEST_F(HostileChat, DeeplyNestedToolCallArgumentsAreRefusedOnEveryRoute) {
  start_with("Qwen-Qwen3-0.6B.jinja");
  for (size_t depth : {513, 30000, 60000, 200000}) {
    const Json chat = {{"messages", history_with_arguments(nested_arrays(depth))},
                       {"tools", Json::array({kTool})},
                       {"max_tokens", 4}};
    for (const char* path :
         {"/v1/chat/completions", "/v1/chat/completions/input_tokens", "/apply-template"}) {
      int status = 0;
      Json r = post_json(port(), path, chat, &status);
      EXPECT_EQ(status, 400) << path << " at depth " << depth << ": " << r.dump().substr(0, 300);
      EXPECT_NE(r.dump().find("nested deeper than 512 levels"), std::string::npos) << r.dump();
    }
    const Json responses = {
        {"input",
         Json::array({{{"type", "message"}, {"role", "user"}, {"content", "hi"}},
                      {{"type", "function_call"},
                       {"call_id", "c1"},
                       {"name", "get_weather"},
                       {"arguments", nested_arrays(depth)}},
                      {{"type", "function_call_output"}, {"call_id", "c1"}, {"output", "ok"}}})},
        {"tools", Json::array({{{"type", "function"},
                                {"name", "get_weather"},
                                {"parameters", kTool["function"]["parameters"]}}})},
        {"max_output_tokens", 4}};
    for (const char* path : {"/v1/responses", "/v1/responses/input_tokens"}) {
      int status = 0;
      Json r = post_json(port(), path, responses, &status);
      EXPECT_EQ(status, 400) << path << " at depth " << depth << ": " << r.dump().substr(0, 300);
    }
  }
  expect_alive();
  // Arguments nested within the limit still render.
  int status = 0;
  Json r = post_json(
      port(), "/apply-template",
      {{"messages", history_with_arguments(nested_arrays(100))}, {"tools", Json::array({kTool})}},
      &status);
  EXPECT_EQ(status, 200) << r.dump().substr(0, 300);
  EXPECT_NE(r.value("prompt", "").find(nested_arrays(100)), std::string::npos);
}

// A 100,000-key object took 8.9 s to parse (ordered_json looks for a duplicate by
// scanning); now objects are built in linear time and more than 4,096 keys are refused.
TEST_F(HostileChat, ObjectsOfManyKeysAreRefusedNamingTheLimit) {
  start_with("Qwen-Qwen3-0.6B.jinja");
  // Written as text: building it as an ordered_json would be the quadratic step itself.
  auto body_with_keys = [](size_t n, const std::string& where) {
    std::string keys;
    for (size_t i = 0; i < n; ++i) {
      keys += (i ? ",\"k" : "\"k") + std::to_string(i) + "\":" + std::to_string(i);
    }
    const std::string head = R"({"prompt": "Once", "n_predict": 2, )";
    if (where.empty()) return head + keys + "}";
    return head + "\"" + where + "\": {" + keys + "}}";
  };
  for (const std::string where : {"", "chat_template_kwargs", "logit_bias"}) {
    HttpReply reply = http_request(port(), "POST", "/completion", body_with_keys(100000, where));
    Json r = parse_or_null(reply.body);
    EXPECT_EQ(reply.status, 400) << where;
    EXPECT_NE(r.dump().find("more than 4096 keys"), std::string::npos) << r.dump();
  }
  HttpReply reply = http_request(port(), "POST", "/completion", body_with_keys(4000, ""));
  EXPECT_EQ(reply.status, 200) << reply.body.substr(0, 300);
  expect_alive();
}

// 64 trigger patterns with nested quantifiers took the scheduler thread for seconds per
// token (every other client's 0.01 s request took 6-7 s). The shape is refused when the
// request is read; a pattern that backtracks without that shape fails its request at the
// first token whose search passes the step budget.
TEST_F(HostileChat, CostlyTriggerPatternsAreRefusedOrStopped) {
  start_with("Qwen-Qwen3-0.6B.jinja");
  // The token " a" (the last token of "a a").
  Json tokens = post_json(port(), "/tokenize", {{"content", "a a"}})["tokens"];
  ASSERT_TRUE(tokens.is_array() && !tokens.empty());
  const int32_t space_a = tokens.back();
  auto attack = [&](const std::string& pattern, size_t copies, bool stream) {
    Json triggers = Json::array();
    for (size_t i = 0; i < copies; ++i) triggers.push_back({{"type", 2}, {"value", pattern}});
    return Json{{"prompt", "Once upon a time"},
                {"n_predict", 48},
                {"ignore_eos", true},
                {"stream", stream},
                {"grammar", "root ::= [0-9]+"},
                {"grammar_lazy", true},
                {"grammar_triggers", triggers},
                // Greedy " a" after " a": the text the patterns backtrack on.
                {"temperature", 0},
                {"logit_bias", Json::array({Json::array({space_a, 30.0})})}};
  };
  int status = 0;
  Json nested = post_json(port(), "/completion", attack("(( ?a| a)+)+[0-9]", 64, false), &status);
  EXPECT_EQ(status, 400) << nested.dump();
  EXPECT_NE(nested.dump().find("(( ?a| a)+)+[0-9]"), std::string::npos) << nested.dump();
  Json many = post_json(port(), "/completion", attack("x", 65, false), &status);
  EXPECT_EQ(status, 400) << many.dump();
  EXPECT_NE(many.dump().find("at most 64"), std::string::npos) << many.dump();
  for (size_t copies : {1, 64}) {
    Json stopped =
        post_json(port(), "/completion", attack("( a| a)*[0-9]", copies, false), &status);
    EXPECT_EQ(status, 400) << stopped.dump();
    EXPECT_NE(stopped.dump().find("match steps for one token"), std::string::npos)
        << stopped.dump();
  }
  HttpReply stream =
      http_request(port(), "POST", "/completion", attack("( a| a)*[0-9]", 8, true).dump());
  EXPECT_EQ(stream.status, 200);
  const std::vector<std::string> frames = sse_payloads(stream.body);
  ASSERT_FALSE(frames.empty());
  EXPECT_NE(frames.back().find("match steps for one token"), std::string::npos) << frames.back();
  expect_alive();
}

// A schema whose grammar starts with more alternatives than the matcher follows was
// refused as "No token can be sampled: the request's logit_bias, ignore_eos and grammar
// exclude every token", blaming fields the request did not set. The refusal names the
// grammar and the matcher's limit.
TEST_F(HostileChat, ASchemaTooLargeForTheMatcherIsRefusedNamingTheLimit) {
  start_with("Qwen-Qwen3-0.6B.jinja");
  Json any_of = Json::array();
  for (int i = 0; i < 2000; ++i) {
    const std::string key = "k" + std::to_string(i);
    any_of.push_back(
        {{"type", "object"}, {"properties", {{key, {{"type", "integer"}}}}}, {"required", {key}}});
  }
  const Json schema = {{"anyOf", any_of}};
  int status = 0;
  Json native = post_json(port(), "/completion",
                          {{"prompt", "x"}, {"n_predict", 4}, {"json_schema", schema}}, &status);
  EXPECT_EQ(status, 400) << native.dump().substr(0, 300);
  const std::string message = native["error"].value("message", "");
  EXPECT_NE(message.find("too large for the matcher"), std::string::npos) << message;
  EXPECT_NE(message.find("4096"), std::string::npos) << message;
  EXPECT_EQ(message.find("logit_bias"), std::string::npos) << message;
  Json chat = post_json(
      port(), "/v1/chat/completions",
      {{"messages", Json::array({{{"role", "user"}, {"content", "x"}}})},
       {"max_tokens", 4},
       {"response_format", {{"type", "json_schema"}, {"json_schema", {{"schema", schema}}}}}},
      &status);
  EXPECT_EQ(status, 400);
  EXPECT_NE(chat.dump().find("too large for the matcher"), std::string::npos) << chat.dump();
  expect_alive();
}

// ignore_eos with a grammar that completes (a single forced call, a fixed answer): nothing
// but an end of generation could follow, which ignore_eos bans, so the answer used to end
// in a 400 (an error frame without [DONE] when streaming; the reference answers 500). It
// ends as an end of generation ends it.
TEST_F(HostileChat, ACompleteGrammarEndsTheAnswerUnderIgnoreEos) {
  start_with("Qwen-Qwen3-0.6B.jinja");
  const Json tools =
      Json::array({{{"type", "function"},
                    {"function",
                     {{"name", "get_weather"},
                      {"parameters",
                       {{"type", "object"},
                        {"properties", {{"city", {{"type", "string"}, {"maxLength", 6}}}}},
                        {"required", {"city"}}}}}}}});
  for (int seed = 0; seed < 12; ++seed) {
    Json body = {{"messages", Json::array({{{"role", "user"}, {"content", "hi"}}})},
                 {"tools", tools},
                 {"tool_choice", "required"},
                 {"parallel_tool_calls", false},
                 {"ignore_eos", true},
                 {"max_tokens", 256},
                 {"temperature", 1.0},
                 {"seed", seed}};
    int status = 0;
    Json whole = post_json(port(), "/v1/chat/completions", body, &status);
    ASSERT_EQ(status, 200) << whole.dump();
    EXPECT_EQ(whole["choices"][0]["finish_reason"], "tool_calls") << whole.dump();
    body["stream"] = true;
    HttpReply stream = http_request(port(), "POST", "/v1/chat/completions", body.dump());
    const std::vector<std::string> frames = sse_payloads(stream.body);
    ASSERT_GE(frames.size(), 2u);
    EXPECT_EQ(frames.back(), "[DONE]") << "seed " << seed << ": " << frames.back();
    EXPECT_NE(frames[frames.size() - 2].find("\"finish_reason\":\"tool_calls\""), std::string::npos)
        << frames[frames.size() - 2];
  }
  int status = 0;
  Json fixed = post_json(
      port(), "/completion",
      {{"prompt", "x"}, {"n_predict", 16}, {"grammar", "root ::= \"yes\""}, {"ignore_eos", true}},
      &status);
  EXPECT_EQ(status, 200) << fixed.dump();
  EXPECT_EQ(fixed["content"], "yes");
  EXPECT_EQ(fixed["stop_type"], "eos");
}

// /tokenize with_pieces on 1.3 MB of text built each token as a JSON object (300 bytes
// apiece, copied once more into the envelope): a 21.8 MB answer with a 640 MB peak that the
// process kept. The answer is written as text, and the freed pages go back to the system.
TEST_F(HostileChat, ALargeTokenizeWithPiecesStaysSmallAndGivesItsMemoryBack) {
  start_with("Qwen-Qwen3-0.6B.jinja");
  const std::string text = story_text(1300000);
  [[maybe_unused]] const long rss_before = status_kib(server_.pid(), "VmRSS");
  HttpReply ids = http_request(port(), "POST", "/tokenize", Json{{"content", text}}.dump());
  HttpReply pieces = http_request(port(), "POST", "/tokenize",
                                  Json{{"content", text}, {"with_pieces", true}}.dump());
  ASSERT_EQ(ids.status, 200);
  ASSERT_EQ(pieces.status, 200);
  const Json plain = parse_or_null(ids.body)["tokens"];
  const Json with = parse_or_null(pieces.body)["tokens"];
  ASSERT_TRUE(plain.is_array() && with.is_array());
  ASSERT_EQ(plain.size(), with.size());
  ASSERT_GT(plain.size(), 100000u);
  std::string joined;
  for (size_t i = 0; i < with.size(); ++i) {
    ASSERT_EQ(with[i]["id"], plain[i]) << i;
    if (with[i]["piece"].is_string()) joined += with[i]["piece"].get<std::string>();
  }
  // Pieces are the text (stories260K's SPM adds a leading space).
  EXPECT_NE(joined.find(text.substr(0, 1000)), std::string::npos);
#if defined(__SANITIZE_ADDRESS__)
  RecordProperty("memory", "not checked: AddressSanitizer keeps freed memory in quarantine");
  std::printf("memory not checked: AddressSanitizer keeps freed memory in quarantine\n");
#else
  const long peak = status_kib(server_.pid(), "VmHWM");
  const long rss_after = status_kib(server_.pid(), "VmRSS");
  ASSERT_GT(rss_before, 0);
  // The text's tokenization takes about 60 MB at its peak; the old answer, 600 more.
  EXPECT_LT(peak - rss_before, 200 * 1024) << "peak " << peak << " KiB from " << rss_before;
  EXPECT_LT(rss_after - rss_before, 32 * 1024)
      << "RSS " << rss_after << " KiB after, " << rss_before << " before";
#endif
  expect_alive();
}

// Bodies over 256 KiB are handled on workers of their own: three multi-megabyte /tokenize
// bodies keep those busy while a small /completion is answered (before, two of them held
// both workers and every request with a body waited).
TEST_F(HostileChat, LargeBodiesDoNotHoldSmallRequests) {
  start_with("Qwen-Qwen3-0.6B.jinja", {"--threads-http", "2"});
  const std::string large = Json{{"content", story_text(3 << 20)}}.dump();
  std::atomic<int> large_done{0};
  std::vector<std::thread> senders;
  for (int i = 0; i < 3; ++i) {
    senders.emplace_back([&] {
      EXPECT_EQ(http_request(port(), "POST", "/tokenize", large).status, 200);
      ++large_done;
    });
  }
  // Wait until the server is reading or working on them.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  int status = 0;
  post_json(port(), "/completion", {{"prompt", "Once"}, {"n_predict", 4}}, &status);
  const int done_when_answered = large_done.load();
  for (std::thread& t : senders) t.join();
  EXPECT_EQ(status, 200);
  // Each large body takes the better part of a second to tokenize; the small request did
  // not wait for any of them.
  EXPECT_EQ(done_when_answered, 0) << "the small request waited for a large body";
}

}  // namespace
}  // namespace hearth::test

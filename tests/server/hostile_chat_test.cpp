// The chat surfaces as an attacker meets them (issue 32): JSON hidden inside strings,
// objects of many keys, and the composition of forced reasoning tokens with grammars. Each
// case failed on the code before its fix (a crash, a 500, or a wrong answer) and must now
// be a 200 or a clear 400, with the server alive for the next client.
#include "server/server_fixture.h"

namespace hearth::test {
namespace {

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

}  // namespace
}  // namespace hearth::test

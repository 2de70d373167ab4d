// The OpenAI- and Anthropic-compatible routes end to end on stories260K: streams that add
// up to the answers, tool calls and reasoning read back from the model's output, the
// Responses and Messages translations, token counters and their errors.
#include <fstream>

#include "server/server_fixture.h"

namespace hearth::test {
namespace {

Json user_turn(const std::string& text) {
  return Json::array({Json{{"role", "user"}, {"content", text}}});
}

std::vector<Json> sse_json(const std::string& body) {
  std::vector<Json> out;
  for (const std::string& payload : sse_payloads(body)) out.push_back(parse_or_null(payload));
  return out;
}

const Json kWeatherTool = Json::parse(R"({"type":"function","function":{
  "name":"get_weather","description":"Weather for a city",
  "parameters":{"type":"object","properties":{"city":{"type":"string"},
  "days":{"type":"integer"}},"required":["city","days"]}}})");

// A call the model "wrote": an assistant prefill in Qwen3's Hermes syntax. The output
// parser reads the continued message with the generated text, so the call comes back.
const char* const kPrefilledCall =
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\", \"days\": 2}}"
    "\n</tool_call>";

class OpenAIRoutes : public StoriesServer {
 protected:
  void start_qwen3() {
    start({"-c", "8192", "--jinja", "--chat-template-file",
           shared_path("templates/Qwen-Qwen3-0.6B.jinja")});
  }
  void start_qwq() {
    start({"--jinja", "--chat-template-file", shared_path("templates/Qwen-QwQ-32B.jinja")});
  }
};

TEST_F(OpenAIRoutes, ChatStreamAddsUpToTheAnswer) {
  start();
  Json body = {
      {"messages", user_turn("Once upon a time")}, {"max_tokens", 8}, {"temperature", 0}, {"n", 2}};
  int status = 0;
  Json whole = post_json(port(), "/v1/chat/completions", body, &status);
  ASSERT_EQ(status, 200) << whole.dump();
  ASSERT_EQ(whole["choices"].size(), 2u);
  const std::string answer = whole["choices"][0]["message"]["content"];
  EXPECT_FALSE(answer.empty());
  body["stream"] = true;
  body["stream_options"] = {{"include_usage", true}};
  HttpReply reply = http_request(port(), "POST", "/chat/completions", body.dump());
  ASSERT_EQ(reply.status, 200);
  EXPECT_EQ(reply.header("content-type"), "text/event-stream");
  std::vector<std::string> payloads = sse_payloads(reply.body);
  ASSERT_FALSE(payloads.empty());
  EXPECT_EQ(payloads.back(), "[DONE]");
  std::string text[2];
  int roles[2] = {0, 0}, finishes[2] = {0, 0}, usages = 0;
  for (size_t i = 0; i + 1 < payloads.size(); ++i) {
    Json chunk = parse_or_null(payloads[i]);
    ASSERT_EQ(chunk["object"], "chat.completion.chunk");
    EXPECT_EQ(chunk["id"], payloads.size() > 1 ? parse_or_null(payloads[0])["id"] : Json());
    if (chunk["choices"].empty()) {
      ++usages;
      EXPECT_EQ(chunk["usage"]["completion_tokens"], 8);
      continue;
    }
    const Json& choice = chunk["choices"][0];
    const int index = choice["index"];
    const Json& delta = choice["delta"];
    if (delta.contains("role")) ++roles[index];
    if (delta.contains("content") && delta["content"].is_string()) text[index] += delta["content"];
    if (!choice["finish_reason"].is_null()) {
      ++finishes[index];
      EXPECT_EQ(choice["finish_reason"], "length");
    }
  }
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(roles[i], 1);
    EXPECT_EQ(finishes[i], 1);
    EXPECT_EQ(text[i], answer);
  }
  EXPECT_EQ(usages, 2);
}

TEST_F(OpenAIRoutes, ToolCallsAreReadBackFromTheOutput) {
  start_qwen3();
  Json messages = user_turn("Weather in Paris?");
  messages.push_back({{"role", "assistant"}, {"content", kPrefilledCall}});
  Json body = {{"messages", messages},
               {"max_tokens", 1},
               {"temperature", 0},
               {"tools", Json::array({kWeatherTool})}};
  int status = 0;
  Json reply = post_json(port(), "/v1/chat/completions", body, &status);
  ASSERT_EQ(status, 200) << reply.dump();
  const Json& message = reply["choices"][0]["message"];
  ASSERT_TRUE(message.contains("tool_calls")) << reply.dump();
  const Json& call = message["tool_calls"][0];
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["function"]["name"], "get_weather");
  EXPECT_EQ(Json::parse(call["function"]["arguments"].get<std::string>()),
            Json::parse(R"({"city": "Paris", "days": 2})"));
  EXPECT_EQ(call["id"].get<std::string>().size(), 32u);
  EXPECT_EQ(message["content"], "");
  // tool_choice none: the same text is content.
  body["tool_choice"] = "none";
  reply = post_json(port(), "/v1/chat/completions", body, &status);
  EXPECT_FALSE(reply["choices"][0]["message"].contains("tool_calls"));
  EXPECT_EQ(reply["choices"][0]["message"]["content"].get<std::string>().rfind("<tool_call>", 0),
            0u);
  // Streamed: one call, its id, type and name first, the arguments adding up.
  body["tool_choice"] = "auto";
  body["stream"] = true;
  HttpReply streamed = http_request(port(), "POST", "/v1/chat/completions", body.dump());
  std::string arguments, name;
  int calls = 0;
  for (const Json& chunk : sse_json(streamed.body)) {
    if (!chunk.is_object() || chunk["choices"].empty()) continue;
    const Json& delta = chunk["choices"][0]["delta"];
    if (!delta.contains("tool_calls")) continue;
    const Json& c = delta["tool_calls"][0];
    if (c.contains("id")) {
      ++calls;
      name = c["function"]["name"];
    }
    if (c["function"].contains("arguments")) arguments += c["function"]["arguments"];
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(name, "get_weather");
  EXPECT_EQ(Json::parse(arguments), Json::parse(R"({"city": "Paris", "days": 2})"));
}

TEST_F(OpenAIRoutes, MessagesAnswerToolUseBlocks) {
  start_qwen3();
  Json body = {{"model", "m"},
               {"max_tokens", 1},
               {"temperature", 0},
               {"tools", Json::array({{{"name", "get_weather"},
                                       {"input_schema", kWeatherTool["function"]["parameters"]}}})},
               {"messages", Json::array({{{"role", "user"}, {"content", "Weather in Paris?"}},
                                         {{"role", "assistant"}, {"content", kPrefilledCall}}})}};
  int status = 0;
  Json reply = post_json(port(), "/v1/messages", body, &status);
  ASSERT_EQ(status, 200) << reply.dump();
  EXPECT_EQ(reply["type"], "message");
  const Json& block = reply["content"].back();
  EXPECT_EQ(block["type"], "tool_use");
  EXPECT_EQ(block["name"], "get_weather");
  EXPECT_EQ(block["input"], Json::parse(R"({"city": "Paris", "days": 2})"));
  EXPECT_EQ(reply["stop_reason"], "max_tokens");
  // Streamed: message_start first, message_stop last, the tool block opened and closed.
  body["stream"] = true;
  HttpReply streamed = http_request(port(), "POST", "/v1/messages", body.dump());
  ASSERT_EQ(streamed.status, 200);
  std::vector<std::string> events;
  for (size_t at = streamed.body.find("event: "); at != std::string::npos;
       at = streamed.body.find("event: ", at + 1)) {
    events.push_back(streamed.body.substr(at + 7, streamed.body.find('\n', at) - at - 7));
  }
  ASSERT_GE(events.size(), 4u);
  EXPECT_EQ(events.front(), "message_start");
  EXPECT_EQ(events.back(), "message_stop");
  EXPECT_NE(streamed.body.find("\"type\":\"tool_use\""), std::string::npos);
  EXPECT_NE(streamed.body.find("input_json_delta"), std::string::npos);
}

TEST_F(OpenAIRoutes, ResponsesAnswerFunctionCallItems) {
  start_qwen3();
  Json body = {
      {"model", "m"},
      {"max_output_tokens", 1},
      {"temperature", 0},
      {"tools", Json::array({{{"type", "function"},
                              {"name", "get_weather"},
                              {"parameters", kWeatherTool["function"]["parameters"]}}})},
      {"input",
       Json::array({{{"role", "user"}, {"content", "Weather in Paris?"}},
                    {{"role", "assistant"}, {"type", "message"}, {"content", kPrefilledCall}}})}};
  int status = 0;
  Json reply = post_json(port(), "/responses", body, &status);
  ASSERT_EQ(status, 200) << reply.dump();
  EXPECT_EQ(reply["object"], "response");
  const Json& item = reply["output"].back();
  EXPECT_EQ(item["type"], "function_call");
  EXPECT_EQ(item["name"], "get_weather");
  EXPECT_EQ(item["id"].get<std::string>().substr(3), item["call_id"].get<std::string>().substr(5));
}

TEST_F(OpenAIRoutes, ReasoningOfAForcedOpenTemplate) {
  start_qwq();
  Json body = {{"messages", user_turn("Once upon a time")}, {"max_tokens", 6}, {"temperature", 0}};
  int status = 0;
  Json reply = post_json(port(), "/chat/completions", body, &status);
  ASSERT_EQ(status, 200) << reply.dump();
  const Json& message = reply["choices"][0]["message"];
  EXPECT_EQ(message["content"], "");
  const std::string reasoning = message["reasoning_content"];
  EXPECT_FALSE(reasoning.empty());
  body["reasoning_format"] = "none";
  reply = post_json(port(), "/chat/completions", body, &status);
  EXPECT_EQ(reply["choices"][0]["message"]["content"], "<think>" + reasoning);
  body["reasoning_format"] = "bogus";
  reply = post_json(port(), "/chat/completions", body, &status);
  EXPECT_EQ(status, 400);
}

// thinking_budget_tokens: 0 ends the forced-open block at once, N allows at most N tokens
// of reasoning (the reference does neither on this vocabulary; differences.json).
TEST_F(OpenAIRoutes, ReasoningBudgetEndsTheThinkingBlock) {
  start_qwq();
  Json body = {{"messages", user_turn("Once upon a time")},
               {"max_tokens", 24},
               {"temperature", 0},
               {"logprobs", true},
               {"top_logprobs", 1},
               {"thinking_budget_tokens", 0}};
  int status = 0;
  Json reply = post_json(port(), "/v1/chat/completions", body, &status);
  ASSERT_EQ(status, 200) << reply.dump();
  EXPECT_FALSE(reply["choices"][0]["message"].contains("reasoning_content")) << reply.dump();
  EXPECT_FALSE(reply["choices"][0]["message"]["content"].get<std::string>().empty());
  for (int budget : {1, 4, 9}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    body["thinking_budget_tokens"] = budget;
    reply = post_json(port(), "/v1/chat/completions", body, &status);
    ASSERT_EQ(status, 200);
    const Json& choice = reply["choices"][0];
    // The reasoning is the prompt's "\n", then at most `budget` generated tokens (and the
    // space the tokenizer puts before the forced end tag).
    std::string reasoning = choice["message"].value("reasoning_content", "");
    std::string generated;
    int counted = 0;
    for (const Json& entry : choice["logprobs"]["content"]) {
      if (("\n" + generated).size() >= reasoning.size() - 1) break;
      generated += entry["token"].get<std::string>();
      ++counted;
    }
    EXPECT_LE(counted, budget) << reasoning;
    EXPECT_EQ(reasoning.rfind("\n" + generated, 0), 0u) << reasoning;
  }
  // The budget message goes before the forced end tag.
  body["thinking_budget_tokens"] = 2;
  body["reasoning_budget_message"] = " Enough.";
  reply = post_json(port(), "/v1/chat/completions", body, &status);
  const std::string reasoning = reply["choices"][0]["message"]["reasoning_content"];
  EXPECT_EQ(reasoning.substr(reasoning.size() - 7), "Enough.");
  body["thinking_budget_tokens"] = -2;
  reply = post_json(port(), "/v1/chat/completions", body, &status);
  EXPECT_EQ(status, 400) << reply.dump();
}

// reasoning_control: the control route ends the thinking block of a running completion.
TEST_F(OpenAIRoutes, ControlRouteEndsReasoning) {
  start_qwq();
  Json body = {{"messages", user_turn("Once upon a time")},
               {"max_tokens", 1500},
               {"temperature", 0},
               {"stream", true},
               {"reasoning_control", true}};
  RawConnection stream(port());
  ASSERT_TRUE(stream.send_request("POST", "/v1/chat/completions", body.dump()));
  const std::string head = stream.read_until("chatcmpl-", 10000);
  const size_t at = head.find("chatcmpl-");
  ASSERT_NE(at, std::string::npos) << head;
  const std::string id = head.substr(at, 9 + 32);
  int status = 0;
  Json control = post_json(port(), "/v1/chat/completions/control",
                           {{"id", id}, {"action", "reasoning_end"}}, &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(control, Json::parse(R"({"success":true})"));
  const std::string rest = stream.read_until("data: [DONE]", 60000);
  EXPECT_NE(rest.find("\"content\":"), std::string::npos) << "no content after the control";
  stream.close();
  // Unknown and finished ids, and completions without reasoning_control.
  control =
      post_json(port(), "/v1/chat/completions/control", {{"id", id}, {"action", "reasoning_end"}});
  EXPECT_EQ(control["success"], false);
  EXPECT_EQ(control["message"], "no active completion for this id");
  control =
      post_json(port(), "/v1/chat/completions/control", {{"action", "reasoning_end"}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(control["error"]["message"], "missing completion id");
  control =
      post_json(port(), "/v1/chat/completions/control", {{"id", id}, {"action", "x"}}, &status);
  EXPECT_EQ(control["error"]["message"], "unknown control action");
}

TEST_F(OpenAIRoutes, TokenCountersAgree) {
  start_qwen3();
  int status = 0;
  Json chat = post_json(port(), "/chat/completions/input_tokens",
                        {{"messages", user_turn("Once upon a time")}}, &status);
  ASSERT_EQ(status, 200) << chat.dump();
  EXPECT_EQ(chat["object"], "response.input_tokens");
  const int n = chat["input_tokens"];
  EXPECT_GT(n, 4);
  EXPECT_EQ(
      post_json(port(), "/responses/input_tokens", {{"input", "Once upon a time"}})["input_tokens"],
      n);
  EXPECT_EQ(
      post_json(port(), "/v1/messages/count_tokens",
                {{"model", "m"}, {"messages", user_turn("Once upon a time")}})["input_tokens"],
      n);
  Json v1 = post_json(port(), "/v1/chat/completions/input_tokens",
                      {{"messages", user_turn("Once upon a time")}});
  EXPECT_EQ(v1["input_tokens"], n);
  EXPECT_EQ(post_json(port(), "/v1/responses/input_tokens",
                      {{"input", "Once upon a time"}})["input_tokens"],
            n);
}

// A conversation with every kind of block and item renders as the chat body it translates
// to (openai-compat.md §7.1, §8.1): the token counters agree.
TEST_F(OpenAIRoutes, TranslatedConversationsCountAsTheirChatBodies) {
  start_qwen3();
  const Json tool = {{"name", "get_weather"},
                     {"description", "Weather for a city"},
                     {"input_schema", kWeatherTool["function"]["parameters"]}};
  const Json anthropic = Json::parse(R"({"model":"m","max_tokens":8,
    "system":[{"type":"text","text":"You are "},{"type":"text","text":"kind."}],
    "messages":[{"role":"user","content":"Weather in Paris?"},
      {"role":"assistant","content":[{"type":"thinking","thinking":"Look it up."},
        {"type":"text","text":"Checking."},
        {"type":"tool_use","id":"t1","name":"get_weather","input":{"city":"Paris","days":1}}]},
      {"role":"user","content":[{"type":"tool_result","tool_use_id":"t1",
        "content":[{"type":"text","text":"Sunny"}]},{"type":"text","text":"Thanks"}]}]})");
  Json with_tools = anthropic;
  with_tools["tools"] = Json::array({tool});
  const Json chat = Json::parse(R"({"messages":[{"role":"system","content":"You are kind."},
    {"role":"user","content":"Weather in Paris?"},
    {"role":"assistant","content":[{"type":"text","text":"Checking."}],
     "tool_calls":[{"id":"t1","type":"function","function":{"name":"get_weather",
       "arguments":"{\"city\":\"Paris\",\"days\":1}"}}],"reasoning_content":"Look it up."},
    {"role":"user","content":[{"type":"text","text":"Thanks"}]},
    {"role":"tool","tool_call_id":"t1","content":"Sunny"}]})");
  Json chat_with_tools = chat;
  chat_with_tools["tools"] = Json::array({kWeatherTool});
  int status = 0;
  Json counted = post_json(port(), "/v1/messages/count_tokens", with_tools, &status);
  ASSERT_EQ(status, 200) << counted.dump();
  Json want = post_json(port(), "/chat/completions/input_tokens", chat_with_tools, &status);
  ASSERT_EQ(status, 200) << want.dump();
  EXPECT_EQ(counted["input_tokens"], want["input_tokens"]);

  const Json responses = Json::parse(R"({"model":"m","instructions":"You are kind.",
    "input":[{"role":"user","content":"Weather in Paris?"},
      {"type":"function_call","call_id":"t1","name":"get_weather",
       "arguments":"{\"city\":\"Paris\",\"days\":1}"},
      {"type":"function_call_output","call_id":"t1","output":"Sunny"},
      {"role":"assistant","type":"message","content":[{"type":"output_text","text":"Sunny."}]},
      {"role":"user","content":[{"type":"input_text","text":"Thanks"}]}]})");
  Json responses_with_tools = responses;
  responses_with_tools["tools"] =
      Json::array({{{"type", "function"},
                    {"name", "get_weather"},
                    {"description", "Weather for a city"},
                    {"parameters", kWeatherTool["function"]["parameters"]}}});
  const Json responses_chat =
      Json::parse(R"({"messages":[{"role":"system","content":"You are kind."},
    {"role":"user","content":[{"type":"text","text":"Weather in Paris?"}]},
    {"role":"assistant","content":"","tool_calls":[{"id":"t1","type":"function",
      "function":{"name":"get_weather","arguments":"{\"city\":\"Paris\",\"days\":1}"}}]},
    {"role":"tool","tool_call_id":"t1","content":"Sunny"},
    {"role":"assistant","content":[{"type":"text","text":"Sunny."}]},
    {"role":"user","content":[{"type":"text","text":"Thanks"}]}]})");
  Json responses_chat_tools = responses_chat;
  Json function = kWeatherTool["function"];
  function["strict"] = true;
  responses_chat_tools["tools"] = Json::array({{{"type", "function"}, {"function", function}}});
  counted = post_json(port(), "/v1/responses/input_tokens", responses_with_tools, &status);
  ASSERT_EQ(status, 200) << counted.dump();
  want = post_json(port(), "/chat/completions/input_tokens", responses_chat_tools, &status);
  ASSERT_EQ(status, 200) << want.dump();
  EXPECT_EQ(counted["input_tokens"], want["input_tokens"]);
}

// A schema the converter cannot use is the client's error, worded as the reference words
// it for a template it reads with its autoparser (Qwen3's; openai-compat.md §4.12).
TEST_F(OpenAIRoutes, UnusableSchemasCarryTheAutoparsersLeadIn) {
  start_qwen3();
  const std::string expected =
      "Unable to generate parser for this template. Automatic parser generation failed: JSON "
      "schema conversion failed:\nUnrecognized schema: {\"type\":\"foo\"}";
  Json bad_tool = kWeatherTool;
  bad_tool["function"]["parameters"] = Json{{"type", "foo"}};
  const Json bodies[] = {
      {{"messages", user_turn("hi")},
       {"response_format",
        {{"type", "json_schema"}, {"json_schema", {{"schema", {{"type", "foo"}}}}}}}},
      {{"messages", user_turn("hi")}, {"json_schema", {{"type", "foo"}}}},
      {{"messages", user_turn("hi")},
       {"tools", Json::array({bad_tool})},
       {"tool_choice", "required"}},
  };
  for (const Json& body : bodies) {
    SCOPED_TRACE(body.dump());
    HttpReply reply = http_request(port(), "POST", "/v1/chat/completions", body.dump());
    EXPECT_EQ(reply.status, 400);
    EXPECT_EQ(parse_or_null(reply.body)["error"]["message"], expected);
  }
  // The native route keeps its field-named message.
  HttpReply native = http_request(port(), "POST", "/completion",
                                  R"({"prompt":"hi","json_schema":{"type":"foo"}})");
  EXPECT_EQ(native.status, 400);
  EXPECT_EQ(parse_or_null(native.body)["error"]["message"].get<std::string>().rfind(
                "Field 'json_schema': ", 0),
            0u);
}

// A template that renders tool calls in a form no family has and the derivation cannot
// read back: the tools are rendered, the answer is content (the reference's autoparser
// answers 400 "Unable to generate parser for this template"; differences.json).
TEST_F(OpenAIRoutes, ToolsOnATemplateWithUnreadableCallsAnswerContent) {
  const std::string path = make_temp_dir("unreadable-calls") + "/calls-as-prose.jinja";
  std::ofstream(path)
      << "{% if tools %}Tools:{% for t in tools %} {{ t.function.name }}{% endfor %}\n"
         "{% endif %}{% for m in messages %}{{ m.role }}: {% if m.tool_calls %}"
         "{% for c in m.tool_calls %}I will now use {{ c.function.name }}, giving it "
         "{{ c.function.arguments | length }} things. {% endfor %}{% else %}{{ m.content }}"
         "{% endif %}\n{% endfor %}{% if add_generation_prompt %}assistant:{% endif %}";
  start({"--jinja", "--chat-template-file", path});
  for (const char* choice : {"auto", "required"}) {
    SCOPED_TRACE(choice);
    int status = 0;
    Json reply = post_json(port(), "/v1/chat/completions",
                           {{"messages", user_turn("Once upon a time")},
                            {"tools", Json::array({kWeatherTool})},
                            {"tool_choice", choice},
                            {"max_tokens", 8}},
                           &status);
    ASSERT_EQ(status, 200) << reply.dump();
    const Json& message = reply["choices"][0]["message"];
    EXPECT_FALSE(message.contains("tool_calls")) << message.dump();
    EXPECT_FALSE(message["content"].get<std::string>().empty());
  }
}

TEST_F(OpenAIRoutes, TextCompletionsStreamEndsWithDone) {
  start();
  Json body = {{"prompt", Json::array({"Once upon a time", "The cat"})},
               {"max_tokens", 3},
               {"temperature", 0},
               {"stream", true}};
  HttpReply reply = http_request(port(), "POST", "/v1/completions", body.dump());
  ASSERT_EQ(reply.status, 200);
  std::vector<std::string> payloads = sse_payloads(reply.body);
  ASSERT_FALSE(payloads.empty());
  EXPECT_EQ(payloads.back(), "[DONE]");
  EXPECT_EQ(std::count(payloads.begin(), payloads.end(), "[DONE]"), 1);
  int finals = 0;
  for (const std::string& p : payloads) {
    Json chunk = parse_or_null(p);
    if (chunk.is_object() && !chunk["choices"][0]["finish_reason"].is_null()) {
      ++finals;
      EXPECT_TRUE(chunk.contains("usage"));
    }
  }
  EXPECT_EQ(finals, 2);
}

}  // namespace
}  // namespace hearth::test

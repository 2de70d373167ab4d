// Forced reasoning tokens never fight a grammar (issue 32): for every shared template whose
// generation prompt opens a thinking block, a reasoning budget of 0, 1 or 5 tokens with
// each kind of constraint on the answer (tool_choice "required", a named function, a
// json_schema, a json_object schema, Anthropic's tool_choice "any" with thinking, a
// client grammar) answers 200 with an answer that meets the constraint. Before, a budget
// shorter than the end tag in tokens answered 500 "grammar: token ... does not match": the
// budget's forced end tag was fed to a grammar that was not waiting for it. A continued
// assistant message is read by the answer's grammar before the first token.
#include <atomic>
#include <thread>

#include "server/server_fixture.h"

namespace hearth::test {
namespace {

// The shared templates whose generation prompt ends inside an opened thinking block.
const char* const kThinkingTemplates[] = {
    "Bielik-11B-v3.0-Instruct.jinja",
    "Cohere2MoE.jinja",
    "GLM-4.7-Flash.jinja",
    "Kimi-K3.jinja",
    "MiniMax-M2.jinja",
    "NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja",
    "NVIDIA-Nemotron-Nano-v2.jinja",
    "Qwen-QwQ-32B.jinja",
    "Qwen3.5-4B.jinja",
    "Reka-Edge.jinja",
    "StepFun3.5-Flash.jinja",
    "deepseek-ai-DeepSeek-R1-Distill-Llama-8B.jinja",
    "deepseek-ai-DeepSeek-R1-Distill-Qwen-32B.jinja",
    "deepseek-ai-DeepSeek-V3.1.jinja",
    "deepseek-ai-DeepSeek-V3.2.jinja",
    "deepseek-ai-DeepSeek-V4-Flash-0731.jinja",
    "deepseek-ai-DeepSeek-V4.jinja",
    "llama-cpp-deepseek-r1.jinja",
    "openbmb-MiniCPM5-1B.jinja",
    "poolside-Laguna-S-2.1.jinja",
    "poolside-Laguna-XS-2.1.jinja",
    "poolside-Laguna-XS.2.jinja",
};

constexpr int kBudgets[] = {0, 1, 5};

// Arguments that end: short strings, small integers.
const Json kWeather = {{"type", "object"},
                       {"properties",
                        {{"city", {{"type", "string"}, {"maxLength", 8}}},
                         {"days", {{"type", "integer"}, {"minimum", 1}, {"maximum", 7}}}}},
                       {"required", {"city", "days"}}};
const Json kTools = Json::array(
    {{{"type", "function"}, {"function", {{"name", "get_weather"}, {"parameters", kWeather}}}},
     {{"type", "function"},
      {"function",
       {{"name", "set_zone"},
        {"parameters",
         {{"type", "object"},
          {"properties", {{"zone", {{"enum", {"UTC", "CET"}}}}}},
          {"required", {"zone"}}}}}}}});
const Json kAnswerSchema = {
    {"type", "object"}, {"properties", {{"ok", {{"type", "boolean"}}}}}, {"required", {"ok"}}};

Json user_turn() {
  return Json::array({{{"role", "user"}, {"content", "Once upon a time"}}});
}

Json chat_base(int budget, int seed) {
  return {{"messages", user_turn()},
          {"thinking_budget_tokens", budget},
          {"temperature", 1.0},
          {"seed", seed},
          {"max_tokens", 512}};
}

// Characters, as maxLength counts them.
size_t code_points(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

// The arguments of a call to get_weather meet its schema.
bool weather_arguments_ok(const Json& args) {
  return args.is_object() && args.contains("city") && args["city"].is_string() &&
         code_points(args["city"].get<std::string>()) <= 8 && args.contains("days") &&
         args["days"].is_number_integer() && args["days"] >= 1 && args["days"] <= 7;
}

class ReasoningConstraints : public StoriesServer,
                             public ::testing::WithParamInterface<const char*> {
 protected:
  void SetUp() override {
    start({"-c", "16384", "--jinja", "--chat-template-file",
           shared_path(std::string("templates/") + GetParam())});
    int status = 0;
    Json props = parse_or_null(http_request(port(), "GET", "/props").body);
    tools_ = props["chat_template_caps"].value("supports_tool_calls", false);
    Json r = post_json(port(), "/v1/chat/completions",
                       {{"messages", user_turn()}, {"max_tokens", 3}}, &status);
    ASSERT_EQ(status, 200) << r.dump();
    // The premise: this template's generation prompt opens the thinking block.
    ASSERT_TRUE(r["choices"][0]["message"].contains("reasoning_content")) << r.dump();
  }

  Json post(const std::string& path, const Json& body, const std::string& label) {
    int status = 0;
    Json r = post_json(port(), path, body, &status);
    EXPECT_EQ(status, 200) << GetParam() << " " << label << ": " << r.dump().substr(0, 400);
    return r;
  }

  void expect_weather_call(const Json& reply, const std::string& label, bool named) {
    const Json& message = reply["choices"][0]["message"];
    ASSERT_TRUE(message.contains("tool_calls")) << label << ": " << reply.dump().substr(0, 400);
    for (const Json& call : message["tool_calls"]) {
      const std::string name = call["function"]["name"];
      Json args = parse_or_null(call["function"]["arguments"].get<std::string>());
      if (named || name == "get_weather") {
        EXPECT_EQ(name, "get_weather") << label;
        EXPECT_TRUE(weather_arguments_ok(args)) << label << ": " << args.dump();
      } else {
        EXPECT_EQ(name, "set_zone") << label;
        EXPECT_TRUE(args.is_object() && args.contains("zone")) << label << ": " << args.dump();
      }
    }
  }

  void expect_schema_answer(const Json& reply, const std::string& label) {
    const Json& message = reply["choices"][0]["message"];
    Json answer = parse_or_null(message.value("content", ""));
    EXPECT_TRUE(answer.is_object() && answer.contains("ok") && answer["ok"].is_boolean())
        << label << ": " << reply.dump().substr(0, 400);
  }

  bool tools_ = false;
};

TEST_P(ReasoningConstraints, EveryBudgetComposesWithEveryConstraint) {
  std::atomic<int> next{0};
  const int n = static_cast<int>(std::size(kBudgets));
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      for (int i = next++; i < n; i = next++) {
        const int budget = kBudgets[i];
        const std::string at = "budget " + std::to_string(budget);
        Json schema = chat_base(budget, i);
        schema["response_format"] = {{"type", "json_schema"},
                                     {"json_schema", {{"schema", kAnswerSchema}}}};
        expect_schema_answer(post("/v1/chat/completions", schema, at + " json_schema"), at);
        Json object = chat_base(budget, i);
        object["response_format"] = {{"type", "json_object"}, {"schema", kAnswerSchema}};
        expect_schema_answer(post("/v1/chat/completions", object, at + " json_object"), at);
        // A client's grammar governs all the output, the thinking block included: the
        // budget forces its end only where the grammar allows it.
        Json grammar = chat_base(budget, i);
        grammar["grammar"] = "root ::= \"yes\" | \"no\"";
        Json g = post("/v1/chat/completions", grammar, at + " grammar");
        const Json& gm = g["choices"][0]["message"];
        std::string said = gm.value("reasoning_content", "") + gm.value("content", "");
        said.erase(0, said.find_first_not_of(" \n"));
        EXPECT_TRUE(said == "yes" || said == "no") << at << " grammar: " << g.dump();
        if (!tools_) continue;
        Json required = chat_base(budget, i);
        required["tools"] = kTools;
        required["tool_choice"] = "required";
        expect_weather_call(post("/v1/chat/completions", required, at + " required"),
                            at + " required", false);
        Json named = chat_base(budget, i);
        named["tools"] = kTools;
        named["tool_choice"] = {{"type", "function"}, {"function", {{"name", "get_weather"}}}};
        expect_weather_call(post("/v1/chat/completions", named, at + " named"), at + " named",
                            true);
        Json anthropic = {
            {"model", "x"},
            {"max_tokens", 512},
            {"temperature", 1.0},
            {"messages", user_turn()},
            {"thinking", {{"type", "enabled"}, {"budget_tokens", budget}}},
            {"tools", Json::array({{{"name", "get_weather"}, {"input_schema", kWeather}}})},
            {"tool_choice", {{"type", "any"}}}};
        Json m = post("/v1/messages", anthropic, at + " anthropic any");
        bool used = false;
        for (const Json& block : m.value("content", Json::array())) {
          if (block.value("type", "") != "tool_use") continue;
          used = true;
          EXPECT_TRUE(weather_arguments_ok(block["input"])) << at << ": " << block.dump();
        }
        EXPECT_TRUE(used) << at << " anthropic any: " << m.dump().substr(0, 400);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  if (!tools_) {
    RecordProperty("tool_constraints", "not checked: the template renders no tool calls");
    std::printf("%s renders no tool calls: the tool constraints were not checked\n", GetParam());
  }
}

// The part of the answer an assistant message already holds is read by the grammar first,
// so the continuation completes it (the reference does the same) instead of starting over.
TEST_P(ReasoningConstraints, AContinuedAnswerIsReadByItsGrammar) {
  Json body = chat_base(3, 7);
  body["messages"].push_back(
      {{"role", "assistant"}, {"reasoning_content", "hmm"}, {"content", "{\"ok\": "}});
  body["response_format"] = {{"type", "json_schema"}, {"json_schema", {{"schema", kAnswerSchema}}}};
  Json r = post("/v1/chat/completions", body, "continued json_schema");
  expect_schema_answer(r, "continued json_schema");
  EXPECT_EQ(r["choices"][0]["message"].value("content", "").rfind("{\"ok\": ", 0), 0u) << r.dump();
  // Text the grammar cannot read is refused up front, not answered with a broken JSON.
  body["messages"].back()["content"] = "Sure, here it is";
  int status = 0;
  Json refused = post_json(port(), "/v1/chat/completions", body, &status);
  EXPECT_EQ(status, 400) << refused.dump();
  EXPECT_NE(refused.dump().find("does not match the grammar"), std::string::npos) << refused.dump();
}

INSTANTIATE_TEST_SUITE_P(ThinkingTemplates, ReasoningConstraints,
                         ::testing::ValuesIn(kThinkingTemplates), [](const auto& param) {
                           std::string name = param.param;
                           name = name.substr(0, name.rfind(".jinja"));
                           for (char& c : name) {
                             if (!isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return name;
                         });

}  // namespace
}  // namespace hearth::test

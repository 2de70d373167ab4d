// The chat and reasoning options end to end: --reasoning-format, --skip-chat-parsing,
// -rea, --reasoning-effort, --reasoning-preserve, --reasoning-budget(-message) and
// --no-prefill-assistant, each with the request field that overrides it.
#include <memory>

#include "server/server_fixture.h"

namespace hearth::test {
namespace {

Json ask(const std::string& text, int max_tokens = 8) {
  return {{"messages", Json::array({{{"role", "user"}, {"content", text}}})},
          {"max_tokens", max_tokens},
          {"temperature", 0}};
}

std::vector<std::string> with_template(const std::string& file, std::vector<std::string> extra) {
  std::vector<std::string> args = {"--jinja", "--chat-template-file",
                                   shared_path("templates/" + file)};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

// Each test starts several servers, one per option set.
class ServerChatOptions : public ::testing::Test {
 protected:
  int start(const std::vector<std::string>& extra) {
    servers_.push_back(std::make_unique<ServerProcess>());
    EXPECT_TRUE(servers_.back()->start(stories_args(extra))) << servers_.back()->log();
    return servers_.back()->port();
  }
  std::vector<std::unique_ptr<ServerProcess>> servers_;
};

TEST_F(ServerChatOptions, ReasoningFormatAndSkipChatParsing) {
  int port = start(with_template("Qwen-QwQ-32B.jinja", {"--reasoning-format", "none"}));
  Json reply = post_json(port, "/v1/chat/completions", ask("Once upon a time"));
  const Json& message = reply["choices"][0]["message"];
  EXPECT_FALSE(message.contains("reasoning_content")) << reply.dump();
  EXPECT_EQ(message["content"].get<std::string>().rfind("<think>", 0), 0u);
  Json body = ask("Once upon a time");
  body["reasoning_format"] = "deepseek";  // the request's choice wins
  reply = post_json(port, "/v1/chat/completions", body);
  EXPECT_TRUE(reply["choices"][0]["message"].contains("reasoning_content")) << reply.dump();
  // --skip-chat-parsing: nothing is separated, whatever the request asks.
  port = start(with_template("Qwen-QwQ-32B.jinja", {"--skip-chat-parsing"}));
  reply = post_json(port, "/v1/chat/completions", body);
  EXPECT_FALSE(reply["choices"][0]["message"].contains("reasoning_content")) << reply.dump();
  EXPECT_EQ(reply["choices"][0]["message"]["content"].get<std::string>().rfind("<think>", 0), 0u);
}

TEST_F(ServerChatOptions, ThinkingSwitchAndTemplateVariables) {
  int port = start(with_template("Qwen-Qwen3-0.6B.jinja", {"-rea", "off"}));
  Json prompt = post_json(port, "/apply-template", ask("Hi"));
  const std::string off = prompt["prompt"];
  EXPECT_EQ(off.substr(off.size() - 19), "<think>\n\n</think>\n\n") << off;
  Json body = ask("Hi");
  body["chat_template_kwargs"] = {{"enable_thinking", true}};  // the request wins
  const std::string on = post_json(port, "/apply-template", body)["prompt"];
  EXPECT_EQ(on.find("<think>"), std::string::npos) << on;
  // --reasoning-effort is a template variable; GPT-OSS prints it.
  port = start(with_template("openai-gpt-oss-120b.jinja", {"--reasoning-effort", "high"}));
  EXPECT_NE(post_json(port, "/apply-template", ask("Hi"))["prompt"].get<std::string>().find(
                "Reasoning: high"),
            std::string::npos);
  body = ask("Hi");
  body["reasoning_effort"] = "low";
  EXPECT_NE(
      post_json(port, "/apply-template", body)["prompt"].get<std::string>().find("Reasoning: low"),
      std::string::npos);
  // --reasoning-preserve sets preserve_reasoning; unset, the template's default stands.
  const std::string shows =
      "[{{ preserve_reasoning }}]{% for m in messages %}{{ m.content }}{% endfor %}";
  port = start({"--jinja", "--chat-template", shows, "--no-reasoning-preserve"});
  EXPECT_EQ(post_json(port, "/apply-template", ask("Hi"))["prompt"], "[False]Hi");
  port = start({"--jinja", "--chat-template", shows});
  EXPECT_EQ(post_json(port, "/apply-template", ask("Hi"))["prompt"], "[]Hi");
}

// A template's own stop strings follow the request's (Laguna: "</assistant>"), as the
// verbose answer's generation settings show them.
TEST_F(ServerChatOptions, TemplateStopStringsJoinTheRequests) {
  int port = start(with_template("poolside-Laguna-XS.2.jinja", {}));
  auto stops = [&](Json body) {
    body["verbose"] = true;
    Json reply = post_json(port, "/v1/chat/completions", body);
    EXPECT_TRUE(reply.contains("__verbose")) << reply.dump();
    return reply.contains("__verbose") ? reply["__verbose"]["generation_settings"]["stop"] : Json();
  };
  Json body = ask("Hi");
  body["stop"] = "END";
  EXPECT_EQ(stops(body), Json::array({"END", "</assistant>"}));
  EXPECT_EQ(stops(ask("Hi")), Json::array({"</assistant>"}));
  // A template without such strings adds none.
  port = start(with_template("Qwen-Qwen3-0.6B.jinja", {}));
  EXPECT_EQ(stops(ask("Hi")), Json::array());
}

TEST_F(ServerChatOptions, ReasoningBudgetDefaults) {
  int port = start(with_template("Qwen-QwQ-32B.jinja", {"--reasoning-budget", "0"}));
  Json reply = post_json(port, "/v1/chat/completions", ask("Once upon a time", 16));
  EXPECT_FALSE(reply["choices"][0]["message"].contains("reasoning_content")) << reply.dump();
  Json body = ask("Once upon a time", 16);
  body["thinking_budget_tokens"] = -1;  // the request's budget wins: unlimited
  reply = post_json(port, "/v1/chat/completions", body);
  EXPECT_TRUE(reply["choices"][0]["message"].contains("reasoning_content")) << reply.dump();
  port = start(with_template(
      "Qwen-QwQ-32B.jinja", {"--reasoning-budget", "2", "--reasoning-budget-message", " Enough."}));
  reply = post_json(port, "/v1/chat/completions", ask("Once upon a time", 24));
  const std::string reasoning = reply["choices"][0]["message"]["reasoning_content"];
  EXPECT_EQ(reasoning.substr(reasoning.size() - 7), "Enough.") << reasoning;
}

TEST_F(ServerChatOptions, NoPrefillAssistant) {
  Json body = ask("Tell a story");
  body["messages"].push_back({{"role", "assistant"}, {"content", "Once upon"}});
  int port = start(with_template("Qwen-Qwen3-0.6B.jinja", {}));
  const std::string prefilled = post_json(port, "/apply-template", body)["prompt"];
  EXPECT_EQ(prefilled.substr(prefilled.size() - 9), "Once upon");
  port = start(with_template("Qwen-Qwen3-0.6B.jinja", {"--no-prefill-assistant"}));
  const std::string complete = post_json(port, "/apply-template", body)["prompt"];
  EXPECT_NE(complete.find("Once upon<|im_end|>"), std::string::npos) << complete;
}

}  // namespace
}  // namespace hearth::test

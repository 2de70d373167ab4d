// Loading templates: capability probes, parse failures, the start-up fallback to ChatML and
// the --chat-template validation.
#include <gtest/gtest.h>

#include "unit/chat/chat_test_util.h"

namespace hearth::chat {
namespace {

using test::make_templates;

TEST(ChatTemplates, ChatmlCapsAsTheReferenceReportsThem) {
  auto t = make_templates("chatml");
  EXPECT_EQ(t->default_source(), kChatmlTemplateSource);
  EXPECT_EQ(t->tool_use_source(), "");
  EXPECT_FALSE(t->supports_thinking());
  // The b10573 capture of /props for stories260K (whose template is ChatML).
  EXPECT_EQ(
      t->caps().to_json().dump(),
      R"({"supports_object_arguments":false,"supports_parallel_tool_calls":false,)"
      R"("supports_preserve_reasoning":false,"supports_reasoning_effort":false,)"
      R"("supports_string_content":true,"supports_system_role":true,)"
      R"("supports_tool_calls":false,"supports_tools":false,"supports_typed_content":false})");
}

TEST(ChatTemplates, ToolCapableTemplateCaps) {
  auto t = make_templates(
      "{% for t in tools or [] %}{{ t.function.name }};{% endfor %}"
      "{% for m in messages %}{{ m.role }}:{{ m.content }}{% for c in m.tool_calls or [] %}"
      "<call>{{ c.function.name }} {{ c.function.arguments }}</call>{% endfor %}"
      "{% if m.reasoning_content %}<think>{{ m.reasoning_content }}</think>{% endif %}"
      "{% endfor %}{{ reasoning_effort }}");
  const TemplateCaps& caps = t->caps();
  EXPECT_TRUE(caps.supports_tools);
  EXPECT_TRUE(caps.supports_tool_calls);
  EXPECT_TRUE(caps.supports_parallel_tool_calls);
  EXPECT_FALSE(caps.supports_object_arguments);
  EXPECT_TRUE(caps.supports_preserve_reasoning);
  EXPECT_TRUE(caps.supports_reasoning_effort);
  EXPECT_TRUE(caps.supports_system_role);
}

TEST(ChatTemplates, ParseFailureIsAnError) {
  TemplateOrigin origin;
  origin.override_text = "{% if %}";
  Result<std::shared_ptr<const ChatTemplates>> t =
      ChatTemplates::create({true, select_template_sources(origin), {}});
  ASSERT_FALSE(t.is_ok());
  EXPECT_NE(t.status().message().find("line 1"), std::string::npos) << t.status().message();
}

TEST(ChatTemplates, BrokenToolUseVariantIsIgnored) {
  auto t = make_templates("chatml", "{% for %}");
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->tool_use_source(), "");
  ChatInputs inputs = test::conversation({test::msg("user", "Hi")});
  inputs.tools = {{"f", "", Json::object()}};
  EXPECT_EQ(test::prompt_of(*t, inputs), "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST(ChatTemplates, StartupFallsBackToChatmlWhenTheExampleFails) {
  TemplateOrigin origin;
  origin.model_default = "{{ raise_exception('unsupported') }}";
  Result<std::shared_ptr<const ChatTemplates>> t =
      load_chat_templates(origin, true, {}, Json::object());
  ASSERT_TRUE(t.is_ok()) << t.status().message();
  EXPECT_EQ((*t)->default_source(), kChatmlTemplateSource);
  // A template that renders the example is kept, with the server's kwargs applied.
  origin.model_default = "{% if not k %}{{ raise_exception('needs k') }}{% endif %}ok";
  t = load_chat_templates(origin, true, {}, Json{{"k", true}});
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ((*t)->default_source(), *origin.model_default);
  // Legacy mode falls back too when no built-in format matches.
  origin.model_default = "{{ messages }}";
  t = load_chat_templates(origin, false, {}, Json::object());
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ((*t)->default_source(), kChatmlTemplateSource);
}

TEST(ChatTemplates, VerifyRendersOneTestMessage) {
  EXPECT_TRUE(verify_chat_template("chatml", true).is_ok());
  EXPECT_TRUE(verify_chat_template("This is not a chat template, it is", true).is_ok());
  EXPECT_FALSE(verify_chat_template("{% if %}", true).is_ok());
  Status raised = verify_chat_template("{{ raise_exception('nope') }}", true);
  ASSERT_FALSE(raised.is_ok());
  EXPECT_NE(raised.message().find("nope"), std::string::npos);
  // Without Jinja only names and recognizable templates pass.
  EXPECT_TRUE(verify_chat_template("llama3", false).is_ok());
  EXPECT_TRUE(verify_chat_template("{{ '<|im_start|>' }}", false).is_ok());
  EXPECT_FALSE(verify_chat_template("This is not a chat template, it is", false).is_ok());
}

TEST(ChatTemplates, LiteralTextInJinjaMode) {
  // Upstream's test: a built-in name or plain text renders verbatim with --jinja.
  auto t = make_templates("This is not a chat template, it is");
  EXPECT_EQ(test::prompt_of(*t, test::conversation({test::msg("user", "x")})),
            "This is not a chat template, it is");
}

}  // namespace
}  // namespace hearth::chat

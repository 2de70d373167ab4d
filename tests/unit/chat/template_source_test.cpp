// Template selection (chat-templates.md §2): priority, the "chatml" name, the tool-use
// variant, the Mistral-Small-2503 quirk, the source patches and the text normalization.
#include <gtest/gtest.h>

#include "chat/template_source.h"

namespace hearth::chat {
namespace {

TEST(TemplateSource, OverrideBeatsTheModel) {
  TemplateOrigin origin;
  origin.override_text = "OVERRIDE {{ messages }}";
  origin.model_default = "MODEL";
  origin.model_tool_use = "TOOLS";
  TemplateSources s = select_template_sources(origin);
  EXPECT_EQ(s.default_source, "OVERRIDE {{ messages }}");
  EXPECT_EQ(s.tool_use_source, "");  // an override replaces both of the model's templates
}

TEST(TemplateSource, ModelTemplatesWithoutOverride) {
  TemplateOrigin origin;
  origin.model_default = "MODEL";
  origin.model_tool_use = "TOOLS";
  TemplateSources s = select_template_sources(origin);
  EXPECT_EQ(s.default_source, "MODEL");
  EXPECT_EQ(s.tool_use_source, "TOOLS");
}

TEST(TemplateSource, ToolUseVariantStandsInForAMissingDefault) {
  TemplateOrigin origin;
  origin.model_tool_use = "TOOLS";
  TemplateSources s = select_template_sources(origin);
  EXPECT_EQ(s.default_source, "TOOLS");
  EXPECT_EQ(s.tool_use_source, "TOOLS");
  origin.model_default = "";  // an empty default counts as missing
  EXPECT_EQ(select_template_sources(origin).default_source, "TOOLS");
}

TEST(TemplateSource, ChatmlFallbackAndName) {
  TemplateOrigin none;
  EXPECT_EQ(select_template_sources(none).default_source, kChatmlTemplateSource);
  // Real newlines inside the Jinja string literals, as the reference's /props shows.
  EXPECT_NE(kChatmlTemplateSource.find("message.role + '\n' + message.content"), std::string::npos);
  TemplateOrigin named;
  named.override_text = "chatml";
  EXPECT_EQ(select_template_sources(named).default_source, kChatmlTemplateSource);
  // Other built-in names are template text in Jinja mode (rendered literally).
  named.override_text = "llama3";
  EXPECT_EQ(select_template_sources(named).default_source, "llama3");
  // The model's default named "chatml" yields to its tool-use variant.
  TemplateOrigin model;
  model.model_default = "chatml";
  model.model_tool_use = "TOOLS";
  EXPECT_EQ(select_template_sources(model).default_source, "TOOLS");
}

TEST(TemplateSource, MistralSmallWithoutTemplateIsNamed) {
  TemplateOrigin origin;
  origin.vocab_pre = "tekken";
  origin.n_layer = 40;
  EXPECT_EQ(select_template_sources(origin).default_source, "mistral-v7-tekken");
  origin.n_layer = 32;
  EXPECT_EQ(select_template_sources(origin).default_source, kChatmlTemplateSource);
}

TEST(TemplateSource, GptOssContentCheckIsDisabled) {
  const std::string check =
      "{%- if \"<|channel|>analysis<|message|>\" in message.content or "
      "\"<|channel|>final<|message|>\" in message.content %}";
  const std::string source = "<|channel|>" + check + "{{ raise_exception('x') }}{%- endif %}";
  EXPECT_EQ(patch_template_source(source),
            "<|channel|>{%- if false %}{{ raise_exception('x') }}{%- endif %}");
  // Other checks stay.
  const std::string other = "<|channel|>{%- if message.content %}";
  EXPECT_EQ(patch_template_source(other), other);
}

TEST(TemplateSource, MistralEmptyAssistantCheckIsDisabled) {
  const std::string check =
      "{%- if (message['content'] is none or message['content'] == '' or "
      "message['content']|length == 0) and (message['tool_calls'] is not defined or "
      "message['tool_calls'] is none or message['tool_calls']|length == 0) %}";
  EXPECT_EQ(patch_template_source("[TOOL_CALLS]" + check), "[TOOL_CALLS]{%- if false %}");
  EXPECT_EQ(patch_template_source(check), check);
}

TEST(TemplateSource, PatchesApplyToTheDefaultOnly) {
  const std::string check =
      "{%- if \"<|channel|>analysis<|message|>\" in message.content or "
      "\"<|channel|>final<|message|>\" in message.content %}";
  TemplateOrigin origin;
  origin.model_default = "<|channel|>" + check;
  origin.model_tool_use = "<|channel|>" + check;
  TemplateSources s = select_template_sources(origin);
  EXPECT_EQ(s.default_source, "<|channel|>{%- if false %}");
  EXPECT_EQ(s.tool_use_source, "<|channel|>" + check);
}

TEST(TemplateSource, NormalizesLineEndingsAndOneTrailingNewline) {
  EXPECT_EQ(normalize_template_text("a\r\nb\rc\n\n"), "a\nb\nc\n");
  EXPECT_EQ(normalize_template_text("a\r\n"), "a");
  EXPECT_EQ(normalize_template_text("a\r"), "a\n");  // decided on the original last byte
  EXPECT_EQ(normalize_template_text("\n"), "");
  EXPECT_EQ(normalize_template_text(""), "");
  TemplateOrigin origin;
  origin.override_text = "x\r\n";
  EXPECT_EQ(select_template_sources(origin).default_source, "x");
}

}  // namespace
}  // namespace hearth::chat

// The chat-template options: --jinja / --no-jinja, --chat-template, --chat-template-file,
// --chat-template-kwargs, from the command line and the environment, and the built-in
// names in the help.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "chat/legacy_templates.h"
#include "support/test_paths.h"
#include "unit/options/options_test_util.h"

namespace hearth::server::options {
namespace {

using test::parse;
using test::parse_ok;

TEST(ChatTemplateOptions, JinjaIsOnByDefault) {
  EXPECT_TRUE(parse_ok({}).chat.use_jinja);
  EXPECT_TRUE(parse_ok({"--jinja"}).chat.use_jinja);
  EXPECT_FALSE(parse_ok({"--no-jinja"}).chat.use_jinja);
  EXPECT_FALSE(parse_ok({}, {{"LLAMA_ARG_NO_JINJA", "1"}}).chat.use_jinja);
  EXPECT_FALSE(parse_ok({}, {{"LLAMA_ARG_JINJA", "false"}}).chat.use_jinja);
  EXPECT_TRUE(parse_ok({"--jinja"}, {{"LLAMA_ARG_JINJA", "0"}}).chat.use_jinja);  // argv wins
}

TEST(ChatTemplateOptions, ChatTemplateText) {
  EXPECT_EQ(parse_ok({}).chat_template, "");
  EXPECT_EQ(parse_ok({"--chat-template", "chatml"}).chat_template, "chatml");
  EXPECT_EQ(parse_ok({}, {{"LLAMA_ARG_CHAT_TEMPLATE", "{{ messages }}"}}).chat_template,
            "{{ messages }}");
}

TEST(ChatTemplateOptions, ChatTemplateFileIsReadAsIs) {
  const std::string dir = hearth::test::make_temp_dir("chat_template_file");
  const std::string path = dir + "/t.jinja";
  std::ofstream(path, std::ios::binary) << "{{ a }}\r\n";
  EXPECT_EQ(parse_ok({"--chat-template-file", path}).chat_template, "{{ a }}\r\n");
  EXPECT_EQ(parse_ok({}, {{"LLAMA_ARG_CHAT_TEMPLATE_FILE", path}}).chat_template, "{{ a }}\r\n");
  ParseOutcome missing = parse({"--chat-template-file", dir + "/none.jinja"});
  ASSERT_EQ(missing.action, ParseAction::kError);
  EXPECT_EQ(missing.text, "error: failed to open file '" + dir + "/none.jinja'");
}

TEST(ChatTemplateOptions, KwargsMergeInOrder) {
  ServerArgs args = parse_ok({"--chat-template-kwargs", R"({"a": 1, "b": "x"})",
                              "--chat-template-kwargs", R"({"b": [true], "c": null})"});
  // One object in order of first appearance; a key given again takes the later value.
  EXPECT_EQ(args.chat.template_kwargs.dump(), R"({"a":1,"b":[true],"c":null})");
  args = parse_ok({}, {{"LLAMA_ARG_CHAT_TEMPLATE_KWARGS", R"({"k": {"n": 2}})"}});
  EXPECT_EQ(args.chat.template_kwargs.dump(), R"({"k":{"n":2}})");
}

TEST(ChatTemplateOptions, KwargsMustBeAJsonObject) {
  ParseOutcome bad = parse({"--chat-template-kwargs", "{nope"});
  ASSERT_EQ(bad.action, ParseAction::kError);
  EXPECT_EQ(bad.text.rfind("error while handling argument \"--chat-template-kwargs\": "
                           "[json.exception.parse_error.101]",
                           0),
            0u)
      << bad.text;
  ParseOutcome array = parse({"--chat-template-kwargs", "[1]"});
  ASSERT_EQ(array.action, ParseAction::kError);
  EXPECT_EQ(array.text.rfind("error while handling argument \"--chat-template-kwargs\": expected "
                             "a JSON object",
                             0),
            0u)
      << array.text;
}

TEST(ChatTemplateOptions, EnableThinkingKwargIsDeprecated) {
  ParseOutcome out = parse({"--chat-template-kwargs", R"({"enable_thinking": false})"});
  ASSERT_EQ(out.action, ParseAction::kRun);
  EXPECT_TRUE(test::has_warning(
      out,
      "Setting 'enable_thinking' via --chat-template-kwargs is deprecated. Use --reasoning "
      "on / --reasoning off instead."));
}

TEST(ChatTemplateOptions, HelpListsTheBuiltInNames) {
  ParseOutcome help = parse({"--help"});
  ASSERT_EQ(help.action, ParseAction::kPrintAndExit);
  // Descriptions are wrapped; compare with the whitespace folded.
  std::string folded;
  for (char c : help.text) {
    if (c == '\n' || c == ' ') {
      if (!folded.empty() && folded.back() != ' ') folded += ' ';
    } else {
      folded += c;
    }
  }
  EXPECT_NE(folded.find("Built-in names: " + chat::legacy_template_name_list()), std::string::npos);
}

}  // namespace
}  // namespace hearth::server::options

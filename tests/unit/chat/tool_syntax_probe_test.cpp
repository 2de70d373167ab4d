// The derived tool-call syntax (chat-templates.md §8.1 step 3): templates outside the family
// table, made up here in each of the three shapes the reference's autoparser knows, get a
// syntax that reads their models' calls back. (On the real templates the table covers, the
// derivation alone is measured by output_roundtrip_test.)
#include <gtest/gtest.h>

#include "chat/output_syntax.h"
#include "chat/tool_syntax_probe.h"
#include "unit/chat/chat_test_util.h"

namespace hearth::chat {
namespace {

using test::conversation;
using test::msg;

// A turn loop around `calls`, the template's way of writing an assistant turn's calls.
std::string made_up_template(const std::string& calls) {
  return "{% if tools %}Tools: {{ tools | tojson }}\n{% endif %}"
         "{% for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}" +
         calls +
         "{% else %}{{ m.content }}{% endif %}<|end|>\n{% endfor %}"
         "{% if add_generation_prompt %}<|assistant|>{% endif %}";
}

std::vector<Tool> tools() {
  return {{"get_weather", "",
           Json::parse(R"({"type":"object","properties":{"city":{"type":"string"},)"
                       R"("days":{"type":"integer"}},"required":["city"]})")},
          {"get_time", "",
           Json::parse(R"({"type":"object","properties":{"zone":{"type":"string"}}})")}};
}

// The syntax the server reads a request's output with, tools given.
OutputSyntax request_syntax(const ChatTemplates& t) {
  ChatInputs ask = conversation({msg("user", "Weather in Paris?")});
  ask.tools = tools();
  Result<ChatPrompt> prompt = t.apply(ask);
  EXPECT_TRUE(prompt.is_ok()) << prompt.status().message();
  OutputSyntax s = prompt.is_ok() ? prompt->syntax : OutputSyntax{};
  s.parse_tool_calls = true;
  s.tools.string_params["get_weather"] = {"city"};
  s.tools.string_params["get_time"] = {"zone"};
  return s;
}

void expect_calls(const OutputSyntax& s, const std::string& output, const std::string& content) {
  SCOPED_TRACE(output);
  ParsedMessage m = parse_output(s, output, false);
  EXPECT_EQ(m.content, content);
  ASSERT_EQ(m.tool_calls.size(), 2u);
  EXPECT_EQ(m.tool_calls[0].name, "get_weather");
  EXPECT_EQ(Json::parse(m.tool_calls[0].arguments), Json::parse(R"({"city":"Paris","days":3})"));
  EXPECT_EQ(m.tool_calls[1].name, "get_time");
  EXPECT_EQ(Json::parse(m.tool_calls[1].arguments), Json::parse(R"({"zone":"CET"})"));
  // Streamed: no call before its name is whole, no marker piece as content.
  for (size_t n = 1; n < output.size(); ++n) {
    ParsedMessage partial = parse_output(s, std::string_view(output).substr(0, n), true);
    EXPECT_EQ(content.rfind(partial.content, 0), 0u) << "at " << n << ": " << partial.content;
  }
}

TEST(ToolSyntaxProbe, JsonCallsInAnArray) {
  auto t = test::make_templates(made_up_template(
      "<calls>[{% for c in m.tool_calls %}{% if not loop.first %}, {% endif %}"
      "{\"fn\": {{ c.function.name | tojson }}, \"args\": {{ c.function.arguments | tojson }}, "
      "\"ref\": {{ c.id | tojson }}}{% endfor %}]</calls>"));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->tool_call_family(), "derived");
  OutputSyntax s = request_syntax(*t);
  EXPECT_EQ(s.tools.style, ToolCallStyle::kJsonArray);
  EXPECT_EQ(s.tools.section_start, "<calls>");
  EXPECT_EQ(s.tools.id_key, "ref");
  expect_calls(s,
               "Checking.<calls>[{\"fn\": \"get_weather\", \"args\": {\"city\": \"Paris\", "
               "\"days\": 3}, \"ref\": \"a1\"}, {\"fn\": \"get_time\", \"args\": {\"zone\": "
               "\"CET\"}, \"ref\": \"a2\"}]</calls>",
               "Checking.");
  EXPECT_EQ(parse_output(
                s, "<calls>[{\"fn\": \"get_time\", \"args\": {}, \"ref\": \"x9\"}]</calls>", false)
                .tool_calls.at(0)
                .id,
            "x9");
}

TEST(ToolSyntaxProbe, NameInTagsWithJsonArguments) {
  auto t = test::make_templates(
      made_up_template("{% for c in m.tool_calls %}<<call:{{ c.function.name }}>>"
                       "{{ c.function.arguments | tojson }}<</call>>\n{% endfor %}"));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->tool_call_family(), "derived");
  OutputSyntax s = request_syntax(*t);
  EXPECT_EQ(s.tools.style, ToolCallStyle::kNameThenJson);
  EXPECT_EQ(s.tools.call_start, "<<call:");
  EXPECT_EQ(s.tools.name_end, ">>");
  EXPECT_EQ(s.tools.call_end, "<</call>>");
  expect_calls(s,
               "<<call:get_weather>>{\"city\": \"Paris\", \"days\": 3}<</call>>\n"
               "<<call:get_time>>{\"zone\": \"CET\"}<</call>>",
               "");
}

TEST(ToolSyntaxProbe, NameAndArgumentsInTagsInsideASection) {
  auto t = test::make_templates(made_up_template(
      "<uses>\n{% for c in m.tool_calls %}<use tool=\"{{ c.function.name }}\">"
      "{% for k, v in c.function.arguments.items() %}<arg name=\"{{ k }}\">{{ v }}</arg>"
      "{% endfor %}</use>\n{% endfor %}</uses>"));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->tool_call_family(), "derived");
  OutputSyntax s = request_syntax(*t);
  EXPECT_EQ(s.tools.style, ToolCallStyle::kKeyValueTags);
  EXPECT_EQ(s.tools.section_start, "<uses>");
  EXPECT_EQ(s.tools.section_end, "</uses>");
  EXPECT_EQ(s.tools.call_start, "<use tool=\"");
  EXPECT_EQ(s.tools.name_end, "\">");
  EXPECT_EQ(s.tools.key_open, "<arg name=\"");
  EXPECT_EQ(s.tools.key_close, "\">");
  EXPECT_EQ(s.tools.value_close, "</arg>");
  EXPECT_EQ(s.tools.call_end, "</use>");
  expect_calls(s,
               "Let me look.\n<uses>\n<use tool=\"get_weather\"><arg name=\"city\">Paris</arg>"
               "<arg name=\"days\">3</arg></use>\n<use tool=\"get_time\"><arg name=\"zone\">CET"
               "</arg></use>\n</uses>",
               "Let me look.");
}

TEST(ToolSyntaxProbe, TemplatesWithoutReadableCallsGetNone) {
  // Calls rendered as prose: nothing to read back, so no syntax (and no grammar).
  auto t = test::make_templates(made_up_template(
      "{% for c in m.tool_calls %}I would call {{ c.function.name }} now.{% endfor %}"));
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->tool_call_family(), "none");
  // Without tool calls in its turns the template is not analysed at all.
  auto plain = test::make_templates(made_up_template("{{ m.content }}"));
  ASSERT_NE(plain, nullptr);
  EXPECT_EQ(plain->tool_call_family(), "none");
}

}  // namespace
}  // namespace hearth::chat

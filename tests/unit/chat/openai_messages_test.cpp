// OpenAI messages and tools into the common message list, with the reference's error texts,
// and back into the JSON templates see (chat-templates.md §6.1).
#include <gtest/gtest.h>

#include "chat/openai_messages.h"

namespace hearth::chat {
namespace {

std::string parse_error(const char* messages_json) {
  Result<std::vector<Message>> out = parse_openai_messages(Json::parse(messages_json));
  return out.is_ok() ? "<ok>" : out.status().message();
}

TEST(OpenAiMessages, ParsesEveryField) {
  Result<std::vector<Message>> out = parse_openai_messages(Json::parse(R"([
    {"role": "user", "content": [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]},
    {"role": "assistant", "content": null, "reasoning_content": "why",
     "tool_calls": [{"id": "c1", "type": "function",
                     "function": {"name": "f", "arguments": {"x": 1}}}]},
    {"role": "tool", "content": "42", "name": "f", "tool_call_id": "c1"}])"));
  ASSERT_TRUE(out.is_ok()) << out.status().message();
  const std::vector<Message>& m = *out;
  ASSERT_EQ(m.size(), 3u);
  ASSERT_EQ(m[0].content_parts.size(), 2u);
  EXPECT_EQ(m[0].text("\n\n"), "a\n\nb");
  EXPECT_EQ(m[1].content, "");
  EXPECT_EQ(m[1].reasoning_content, "why");
  ASSERT_EQ(m[1].tool_calls.size(), 1u);
  EXPECT_EQ(m[1].tool_calls[0].arguments, "{\"x\":1}");  // objects are re-serialized
  EXPECT_EQ(m[1].tool_calls[0].id, "c1");
  EXPECT_EQ(m[2].tool_name, "f");
  EXPECT_EQ(m[2].tool_call_id, "c1");
}

TEST(OpenAiMessages, ErrorsNameTheProblem) {
  EXPECT_EQ(parse_error(R"([{"content":"hi"}])"),
            "Failed to parse messages: Missing 'role' in message: {\"content\":\"hi\"}");
  EXPECT_EQ(parse_error(R"([{"role":"user","content":[{"type":"text"}]}])"),
            "Failed to parse messages: [json.exception.out_of_range.403] key 'text' not found");
  EXPECT_EQ(parse_error(R"([{"role":5,"content":"x"}])"),
            "Failed to parse messages: [json.exception.type_error.302] type must be string, but "
            "is number");
  EXPECT_EQ(parse_error(R"([{"role":"assistant","tool_calls":[{"function":{"name":"f"}}]}])"),
            "Failed to parse messages: Missing tool call type: {\"function\":{\"name\":\"f\"}}");
  EXPECT_EQ(parse_error(R"([{"role":"assistant","tool_calls":[{"type":"x"}]}])"),
            "Failed to parse messages: Unsupported tool call type: {\"type\":\"x\"}");
  EXPECT_EQ(parse_error(R"([{"role":"assistant","tool_calls":[{"type":"function"}]}])"),
            "Failed to parse messages: Missing tool call function: {\"type\":\"function\"}");
  EXPECT_EQ(parse_error(R"([{"role":"user"}])"),
            "Failed to parse messages: Expected 'content' or 'tool_calls' (ref: "
            "https://github.com/ggml-org/llama.cpp/issues/8367 & "
            "https://github.com/ggml-org/llama.cpp/issues/12279)");
}

TEST(OpenAiMessages, Tools) {
  Result<std::vector<Tool>> tools = parse_openai_tools(Json::parse(
      R"([{"type":"function","function":{"name":"f","parameters":{"type":"object"},"strict":true}}])"));
  ASSERT_TRUE(tools.is_ok());
  ASSERT_EQ(tools->size(), 1u);
  EXPECT_EQ((*tools)[0].description, "");
  EXPECT_EQ(
      tools_to_json(*tools).dump(),
      R"([{"type":"function","function":{"name":"f","description":"","parameters":{"type":"object"}}}])");
  EXPECT_TRUE(tools_to_json({}).is_null());
  EXPECT_TRUE(parse_openai_tools(Json()).is_ok());
  Result<std::vector<Tool>> bad = parse_openai_tools(Json::parse(R"([{"function":{}}])"));
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message(),
            "Failed to parse tools: Missing tool type: {\"function\":{}}; tools = [\n  {\n    "
            "\"function\": {}\n  }\n]");
}

// The schema is kept as the value the request held: the same keys in the same order, the
// same numbers; a schema that is not an object reaches the template as {}.
TEST(OpenAiMessages, ToolsKeepTheirParsedSchema) {
  const Json request = Json::parse(
      R"([{"type":"function","function":{"name":"f","parameters":)"
      R"({"properties":{"b":{"type":"string"},"a":{"maximum":1e2}},"type":"object"}}},)"
      R"({"type":"function","function":{"name":"g","parameters":"{\"type\":\"object\"}"}},)"
      R"({"type":"function","function":{"name":"h"}}])");
  Result<std::vector<Tool>> tools = parse_openai_tools(request);
  ASSERT_TRUE(tools.is_ok());
  ASSERT_EQ(tools->size(), 3u);
  EXPECT_EQ((*tools)[0].parameters, request[0]["function"]["parameters"]);
  EXPECT_EQ((*tools)[0].parameters.dump(),
            R"({"properties":{"b":{"type":"string"},"a":{"maximum":100.0}},"type":"object"})");
  // tool_schema() hands out the tool's own value: nothing is copied or parsed again.
  EXPECT_EQ(&tool_schema((*tools)[0]), &(*tools)[0].parameters);
  EXPECT_TRUE((*tools)[1].parameters.is_string());  // text is a string, not a schema
  EXPECT_EQ(tool_schema((*tools)[1]), Json::object());
  EXPECT_EQ(tool_schema((*tools)[2]), Json::object());
  const Json rendered = tools_to_json(*tools);
  EXPECT_EQ(rendered[0]["function"]["parameters"].dump(), (*tools)[0].parameters.dump());
  EXPECT_EQ(rendered[1]["function"]["parameters"], Json::object());
  EXPECT_EQ(rendered[2]["function"]["parameters"], Json::object());
}

TEST(OpenAiMessages, TemplateShape) {
  Message m;
  m.role = "assistant";
  m.tool_calls = {{"f", "{\"a\":1}", ""}, {"g", "{}", "id2"}};
  EXPECT_EQ(
      message_to_json(m, true).dump(),
      R"({"role":"assistant","content":"","tool_calls":[{"type":"function","function":{"name":"f","arguments":"{\"a\":1}"}},{"type":"function","function":{"name":"g","arguments":"{}"},"id":"id2"}]})");
  Message parts;
  parts.role = "user";
  parts.content_parts = {{"text", "a"}, {"text", "b"}};
  EXPECT_EQ(message_to_json(parts, true)["content"], "a\nb");
  EXPECT_EQ(message_to_json(parts, false)["content"].dump(),
            R"([{"type":"text","text":"a"},{"type":"text","text":"b"}])");
  // Media markers sit against their neighbours and always flatten the message.
  parts.content_parts = {{"text", "a"}, {"media_marker", "<M>"}, {"text", "b"}};
  EXPECT_EQ(message_to_json(parts, false)["content"], "a<M>b");
}

}  // namespace
}  // namespace hearth::chat

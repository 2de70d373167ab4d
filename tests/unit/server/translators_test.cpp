// The Anthropic and Responses translators: their bodies are parsed once, by their field
// tables, into typed requests, then mapped to the chat request. A member or content block
// of the wrong type is a 400 naming its path (differences.json anthropic-wrong-types-400,
// responses-wrong-types-400); every valid member maps to the chat request the chat table
// reads from the chat body the translation writes (openai-compat.md §7.1, §8.1).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "server/chat_request.h"
#include "server/openai/anthropic_request.h"
#include "server/openai/responses_request.h"

namespace hearth::server::openai {
namespace {

// JSON compared without its key order.
nlohmann::json unordered(const Json& j) {
  return nlohmann::json::parse(j.dump());
}

// Every member the chat layer reads of a chat request.
void expect_same_request(const ChatRequest& got, const ChatRequest& want) {
  ASSERT_TRUE(got.messages && want.messages);
  EXPECT_EQ(got.messages->dump(), want.messages->dump());
  EXPECT_EQ(got.tools.dump(), want.tools.dump());
  EXPECT_EQ(got.tool_choice, want.tool_choice);
  EXPECT_EQ(got.tool_choice_function, want.tool_choice_function);
  EXPECT_EQ(got.chat_template_kwargs.dump(), want.chat_template_kwargs.dump());
  EXPECT_EQ(got.stream, want.stream);
  EXPECT_EQ(got.parallel_tool_calls, want.parallel_tool_calls);
  EXPECT_EQ(got.thinking_budget_tokens, want.thinking_budget_tokens);
  EXPECT_EQ(got.reasoning_budget_tokens, want.reasoning_budget_tokens);
  EXPECT_EQ(got.reasoning_effort, want.reasoning_effort);
  EXPECT_EQ(got.reasoning_format, want.reasoning_format);
  EXPECT_EQ(got.logprobs, want.logprobs);
  EXPECT_EQ(got.include_usage, want.include_usage);
  EXPECT_EQ(unordered(got.native), unordered(want.native));
}

ChatRequest chat_of(const char* chat_body) {
  ChatRequest want;
  auto err = parse_chat_request(Json::parse(chat_body), want);
  EXPECT_FALSE(err) << err->message;
  return want;
}

std::string anthropic_error(const std::string& body) {
  AnthropicRequest request;
  auto err = parse_anthropic_request(Json::parse(body), request);
  return err ? err->message : "(accepted)";
}

std::string responses_error(const std::string& body) {
  ResponsesRequest request;
  auto err = parse_responses_request(Json::parse(body), request);
  return err ? err->message : "(accepted)";
}

// Every member the translation reads, as the chat body the translation wrote before the
// tables (openai-compat.md §8.1).
TEST(AnthropicRequestTest, EveryMemberMapsToTheChatRequest) {
  const char* body = R"({
    "model": "m", "max_tokens": 64, "temperature": 0.5, "top_p": 0.9, "top_k": 40,
    "stream": true, "stop_sequences": ["END"], "chat_template_kwargs": {"enable_thinking": false},
    "system": [{"type": "text", "text": "You are "},
               {"type": "text", "text": "kind.", "cache_control": {"type": "ephemeral"}},
               {"type": "document", "source": {}}],
    "tools": [{"name": "get_weather", "description": "Weather",
               "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}},
              {"name": "noop"}],
    "tool_choice": {"type": "tool", "name": "get_weather", "disable_parallel_tool_use": true},
    "thinking": {"type": "enabled", "budget_tokens": 256},
    "metadata": {"user_id": "u"}, "service_tier": "auto",
    "messages": [
      {"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": [
        {"type": "thinking", "thinking": "Let me ", "signature": "s"},
        {"type": "thinking", "thinking": "look."},
        {"type": "text", "text": "Checking."},
        {"type": "tool_use", "id": "t1", "name": "get_weather", "input": {"city": "Paris"}},
        {"type": "redacted_thinking", "data": "x"}]},
      {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1",
         "content": [{"type": "text", "text": "Sunny"}, {"type": "text", "text": ", 20C"}]},
        {"type": "tool_result", "tool_use_id": "t2", "content": "plain", "is_error": true},
        {"type": "tool_result", "tool_use_id": "t3"},
        {"type": "text", "text": "Thanks"}]},
      {"role": "user", "content": [{"type": "search_result", "content": []}]},
      {"role": "assistant"},
      {"role": "user", "content": null}]})";
  const ChatRequest want = chat_of(R"({
    "messages": [
      {"role": "system", "content": "You are kind."},
      {"role": "user", "content": "Weather?"},
      {"role": "assistant", "content": [{"type": "text", "text": "Checking."}],
       "tool_calls": [{"id": "t1", "type": "function",
                       "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}],
       "reasoning_content": "Let me look."},
      {"role": "user", "content": [{"type": "text", "text": "Thanks"}]},
      {"role": "tool", "tool_call_id": "t1", "content": "Sunny, 20C"},
      {"role": "tool", "tool_call_id": "t2", "content": "plain"},
      {"role": "tool", "tool_call_id": "t3", "content": ""},
      {"role": "user", "content": null}],
    "max_tokens": 64, "stop": ["END"], "temperature": 0.5, "top_p": 0.9, "top_k": 40,
    "stream": true, "chat_template_kwargs": {"enable_thinking": false},
    "tools": [{"type": "function", "function": {"name": "get_weather", "description": "Weather",
               "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
              {"type": "function", "function": {"name": "noop", "description": "",
               "parameters": {}}}],
    "tool_choice": {"type": "function", "function": {"name": "get_weather"}},
    "parallel_tool_calls": false, "thinking_budget_tokens": 256})");
  AnthropicRequest request;
  auto err = parse_anthropic_request(Json::parse(body), request);
  ASSERT_FALSE(err) << err->message;
  expect_same_request(to_chat_request(request, true), want);
  // count_tokens: no max_tokens.
  ChatRequest counted = to_chat_request(request, false);
  EXPECT_FALSE(counted.native.contains("max_tokens"));
}

TEST(AnthropicRequestTest, DefaultsChoicesAndImagesMap) {
  struct Case {
    const char* body;
    const char* chat;
  };
  const Case cases[] = {
      // max_tokens defaults to 4096; null asks for the server's default.
      {R"({"messages": []})", R"({"messages": [], "max_tokens": 4096})"},
      {R"({"messages": [], "max_tokens": null})", R"({"messages": [], "max_tokens": null})"},
      {R"({"messages": [], "tool_choice": {"type": "any"}})",
       R"({"messages": [], "max_tokens": 4096, "tool_choice": "required"})"},
      {R"({"messages": [], "tool_choice": {"type": "auto", "disable_parallel_tool_use": false}})",
       R"({"messages": [], "max_tokens": 4096, "tool_choice": "auto",
           "parallel_tool_calls": true})"},
      {R"({"messages": [], "tool_choice": {"type": "none"}})",
       R"({"messages": [], "max_tokens": 4096})"},
      {R"({"messages": [], "thinking": {"type": "enabled"}})",
       R"({"messages": [], "max_tokens": 4096, "thinking_budget_tokens": 10000})"},
      {R"({"messages": [], "thinking": {"type": "disabled", "budget_tokens": 5}})",
       R"({"messages": [], "max_tokens": 4096})"},
      // A billing header's hash is blanked; stop_sequences as one string.
      {R"({"messages": [], "system": "x-anthropic-billing-header: a=1; cch=ab12c; rest",
           "stop_sequences": "Z"})",
       R"({"messages": [{"role": "system",
                         "content": "x-anthropic-billing-header: a=1; cch=fffff; rest"}],
           "max_tokens": 4096, "stop": ["Z"]})"},
      // An image (a data URL, default type image/jpeg), refused later by the chat layer.
      {R"({"messages": [{"role": "user", "content": [
           {"type": "image", "source": {"type": "base64", "data": "AAA"}},
           {"type": "image", "source": {"type": "url", "url": "http://x/y.png"}}]}]})",
       R"({"messages": [{"role": "user", "content": [
           {"type": "image_url", "image_url": {"url": "data:image/jpeg;base64,AAA"}},
           {"type": "image_url", "image_url": {"url": "http://x/y.png"}}]}],
           "max_tokens": 4096})"},
      // A tool result holding an image: text and image parts (openai-compat.md §8.1).
      {R"({"messages": [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "a",
           "content": [{"type": "text", "text": "see"},
                       {"type": "image", "source": {"type": "url", "url": "u"}}]}]}]})",
       R"({"messages": [{"role": "tool", "tool_call_id": "a", "content": [
           {"type": "text", "text": "see"},
           {"type": "image_url", "image_url": {"url": "u"}}]}], "max_tokens": 4096})"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.body);
    AnthropicRequest request;
    auto err = parse_anthropic_request(Json::parse(c.body), request);
    ASSERT_FALSE(err) << err->message;
    expect_same_request(to_chat_request(request, true), chat_of(c.chat));
  }
}

// The reference reads each of these leniently: the block disappears, or the member becomes
// its default. Each is a 400 naming the member's path.
TEST(AnthropicRequestTest, WrongTypesAre400NamingTheMember) {
  struct Case {
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      {R"({"model": "m"})", "'messages' is required"},
      {R"({"messages": {}})", "Field 'messages': type must be array, but is object"},
      {R"({"messages": [{"role": "user", "content": "a"}, "hi"]})",
       "Field 'messages[1]': type must be object, but is string"},
      {R"({"messages": [{"role": 5, "content": "a"}]})",
       "Field 'messages[0].role': type must be string, but is number"},
      {R"({"messages": [{"role": "user", "content": 5}]})",
       "Field 'messages[0].content': type must be string or array, but is number"},
      {R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
                        {"role": "user", "content": [{"type": 5}]}]})",
       "Field 'messages[2].content[0].type': type must be string, but is number"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}, "b"]}]})",
       "Field 'messages[0].content[1]': type must be object, but is string"},
      {R"({"messages": [{"role": "user", "content": [{"text": "a"}]}]})",
       "'messages[0].content[0].type' is required"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text", "text": 5}]}]})",
       "Field 'messages[0].content[0].text': type must be string, but is number"},
      {R"({"messages": [{"role": "user", "content": [{"type": "text"}]}]})",
       "'messages[0].content[0].text' is required"},
      {R"({"messages": [{"role": "assistant", "content": [{"type": "thinking", "thinking": []}]}]})",
       "Field 'messages[0].content[0].thinking': type must be string, but is array"},
      {R"({"messages": [{"role": "user", "content": [{"type": "image", "source": "u"}]}]})",
       "Field 'messages[0].content[0].source': type must be object, but is string"},
      {R"({"messages": [{"role": "user", "content": [
           {"type": "image", "source": {"type": "base64", "data": 5}}]}]})",
       "Field 'messages[0].content[0].source.data': type must be string, but is number"},
      {R"({"messages": [{"role": "assistant", "content": [
           {"type": "tool_use", "id": "t", "name": "f", "input": "{}"}]}]})",
       "Field 'messages[0].content[0].input': type must be object, but is string"},
      {R"({"messages": [{"role": "assistant", "content": [{"type": "tool_use", "name": 1}]}]})",
       "Field 'messages[0].content[0].name': type must be string, but is number"},
      {R"({"messages": [{"role": "user", "content": [
           {"type": "tool_result", "tool_use_id": 7}]}]})",
       "Field 'messages[0].content[0].tool_use_id': type must be string, but is number"},
      {R"({"messages": [{"role": "user", "content": [
           {"type": "tool_result", "tool_use_id": "t", "content": 5}]}]})",
       "Field 'messages[0].content[0].content': type must be string or array, but is number"},
      {R"({"messages": [{"role": "user", "content": [
           {"type": "tool_result", "tool_use_id": "t", "content": [{"type": "text", "text": 1}]}]}]})",
       "Field 'messages[0].content[0].content[0].text': type must be string, but is number"},
      {R"({"messages": [{"role": "user", "content": [
           {"type": "tool_result", "tool_use_id": "t", "content": ["x"]}]}]})",
       "Field 'messages[0].content[0].content[0]': type must be object, but is string"},
      {R"({"messages": [], "system": 5})",
       "Field 'system': type must be string or array, but is number"},
      {R"({"messages": [], "system": [{"type": "text", "text": 5}]})",
       "Field 'system[0].text': type must be string, but is number"},
      {R"({"messages": [], "system": ["a"]})",
       "Field 'system[0]': type must be object, but is string"},
      {R"({"messages": [], "tools": {}})", "Field 'tools': type must be array, but is object"},
      {R"({"messages": [], "tools": ["f"]})",
       "Field 'tools[0]': type must be object, but is string"},
      {R"({"messages": [], "tools": [{"name": "f", "input_schema": "{}"}]})",
       "Field 'tools[0].input_schema': type must be object, but is string"},
      {R"({"messages": [], "tools": [{"name": 5}]})",
       "Field 'tools[0].name': type must be string, but is number"},
      {R"({"messages": [], "tool_choice": "auto"})",
       "Field 'tool_choice': type must be object, but is string"},
      {R"({"messages": [], "tool_choice": {"type": 1}})",
       "Field 'tool_choice.type': type must be string, but is number"},
      {R"({"messages": [], "tool_choice": {"type": "any", "disable_parallel_tool_use": "yes"}})",
       "Field 'tool_choice.disable_parallel_tool_use': type must be boolean, but is string"},
      {R"({"messages": [], "tool_choice": {"type": "tool"}})", "'tool_choice.name' is required"},
      {R"({"messages": [], "thinking": true})",
       "Field 'thinking': type must be object, but is boolean"},
      {R"({"messages": [], "thinking": {"type": "enabled", "budget_tokens": "many"}})",
       "Field 'thinking.budget_tokens': type must be integer, but is string"},
      {R"({"messages": [], "thinking": {"type": "enabled", "budget_tokens": -2}})",
       "Field 'thinking.budget_tokens': Value must be between -1 <= value <= 2147483647, but got "
       "-2"},
      {R"({"messages": [], "stop_sequences": [1]})",
       "Field 'stop_sequences[0]': type must be string, but is number"},
      {R"({"messages": [], "stop_sequences": {}})",
       "Field 'stop_sequences': type must be array of strings, but is object"},
      {R"({"messages": [], "stream": "yes"})",
       "Field 'stream': type must be boolean, but is string"},
      {R"({"messages": [], "chat_template_kwargs": []})",
       "Field 'chat_template_kwargs': type must be object, but is array"},
  };
  for (const Case& c : cases) EXPECT_EQ(anthropic_error(c.body), c.message) << c.body;
}

// Blocks of a type Hearth does not read are ignored, as in the reference.
TEST(AnthropicRequestTest, UnknownBlockTypesAreIgnored) {
  AnthropicRequest request;
  auto err = parse_anthropic_request(Json::parse(R"({"messages": [{"role": "user", "content": [
      {"type": "document", "source": 5}, {"type": "text", "text": "hi"}]}]})"),
                                     request);
  ASSERT_FALSE(err) << err->message;
  const ChatRequest chat = to_chat_request(request, true);
  EXPECT_EQ(chat.messages->dump(), R"([{"role":"user","content":[{"type":"text","text":"hi"}]}])");
}

// Every member the translation reads, as the chat body the translation wrote before the
// tables (openai-compat.md §7.1): the rest of the body is a chat body's.
TEST(ResponsesRequestTest, EveryMemberMapsToTheChatRequest) {
  const char* body = R"({
    "model": "m", "instructions": "Be brief.", "max_output_tokens": 32, "temperature": 0,
    "stream": false, "reasoning": {"effort": "low", "summary": "auto"},
    "reasoning_effort": 5, "tool_choice": "auto", "parallel_tool_calls": false,
    "text": {"format": {"type": "text"}}, "store": false, "previous_response_id": "",
    "tools": [{"type": "function", "name": "get_weather", "parameters": {"type": "object"}},
              {"type": "web_search"}, {"name": "untyped"},
              {"type": "function", "name": "f2", "strict": false}],
    "input": [
      {"role": "user", "content": "Weather?"},
      {"role": "developer", "type": "message", "status": "x",
       "content": [{"type": "input_text", "text": "Use tools."}]},
      {"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "Think."}]},
      {"type": "function_call", "call_id": "c1", "name": "get_weather",
       "arguments": "{\"city\":\"Paris\"}"},
      {"type": "function_call_output", "call_id": "c1",
       "output": [{"type": "input_text", "text": "Sunny"}]},
      {"role": "assistant", "type": "message",
       "content": [{"type": "output_text", "text": "It is sunny."}]},
      {"role": "assistant", "type": "message", "content": " Anything else?"},
      {"type": "function_call_output", "call_id": "c2", "output": "done"}]})";
  const ChatRequest want = chat_of(R"({
    "model": "m", "temperature": 0, "stream": false, "tool_choice": "auto",
    "parallel_tool_calls": false, "text": {"format": {"type": "text"}}, "store": false,
    "messages": [
      {"role": "system", "content": "Be brief."},
      {"role": "user", "content": [{"type": "text", "text": "Weather?"}]},
      {"role": "developer", "content": [{"type": "text", "text": "Use tools."}]},
      {"role": "assistant", "content": "", "reasoning_content": "Think.",
       "tool_calls": [{"id": "c1", "type": "function",
                       "function": {"name": "get_weather", "arguments": "{\"city\":\"Paris\"}"}}]},
      {"role": "tool", "tool_call_id": "c1", "content": [{"type": "text", "text": "Sunny"}]},
      {"role": "assistant", "content": [{"type": "text", "text": "It is sunny."},
                                        {"type": "text", "text": " Anything else?"}]},
      {"role": "tool", "tool_call_id": "c2", "content": "done"}],
    "tools": [{"type": "function", "function": {"name": "get_weather",
               "parameters": {"type": "object"}, "strict": true}},
              {"type": "function", "function": {"name": "f2", "strict": false}}],
    "max_tokens": 32, "reasoning_effort": "low"})");
  ResponsesRequest request;
  auto err = parse_responses_request(Json::parse(body), request);
  ASSERT_FALSE(err) << err->message;
  expect_same_request(to_chat_request(request), want);
}

TEST(ResponsesRequestTest, StringInputAndNoFunctionTools) {
  ResponsesRequest request;
  auto err = parse_responses_request(
      Json::parse(R"({"input": "Hi", "tools": [{"type": "mcp"}], "max_tokens": 9})"), request);
  ASSERT_FALSE(err) << err->message;
  expect_same_request(
      to_chat_request(request),
      chat_of(R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 9})"));
}

TEST(ResponsesRequestTest, WrongTypesAre400NamingTheMember) {
  struct Case {
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      // The reference's own errors keep their texts.
      {R"({"model": "m"})", "'input' is required"},
      {R"({"input": 5})", "'input' must be a string or array of objects"},
      {R"({"input": null})", "'input' must be a string or array of objects"},
      {R"({"input": "x", "previous_response_id": "r1"})",
       "llama.cpp does not support 'previous_response_id'."},
      {R"({"input": [{"type": "nope"}]})", "Cannot determine type of 'item'"},
      {R"({"input": ["hi"]})", "Cannot determine type of 'item'"},
      {R"({"input": [{"type": "function_call", "call_id": "c", "arguments": "{}"}]})",
       "Cannot determine type of 'item'"},
      {R"({"input": [{"type": "reasoning", "summary": [], "content": []}]})",
       "Cannot determine type of 'item'"},
      {R"({"input": [{"role": "user", "content": [{"type": "input_file"}]}]})",
       "'input_file' is not supported by llamacpp at this moment"},
      {R"({"input": [{"role": "user", "content": [{"type": "x"}]}]})",
       "'type' must be one of 'input_text', 'input_image', or 'input_file'"},
      {R"({"input": [{"role": "user", "content": [{"type": "input_image"}]}]})",
       "'image_url' is required"},
      {R"({"input": [{"role": "assistant", "type": "message", "content": [{"type": "refusal"}]}]})",
       "'Refusal' requires 'refusal'"},
      {R"({"input": [{"role": "assistant", "type": "message",
                      "content": [{"type": "output_text"}]}]})",
       "'text' is required"},
      {R"({"input": [{"type": "function_call_output", "call_id": "c",
                      "output": [{"type": "output_text", "text": "x"}]}]})",
       "Output of tool call should be 'Input text'"},
      {R"({"input": "x", "tools": 5})", "'tools' must be an array of objects"},
      {R"({"input": "x", "tools": null})", "'tools' must be an array of objects"},
      // Members the reference drops or ignores when of the wrong type.
      {R"({"input": "x", "tools": [{"type": "function", "name": "f"}, 5]})",
       "Field 'tools[1]': type must be object, but is number"},
      {R"({"input": "x", "tools": [{"type": 5}]})",
       "Field 'tools[0].type': type must be string, but is number"},
      {R"({"input": "x", "instructions": 5})",
       "Field 'instructions': type must be string, but is number"},
      {R"({"input": "x", "previous_response_id": 5})",
       "Field 'previous_response_id': type must be string, but is number"},
      {R"({"input": "x", "reasoning": "high"})",
       "Field 'reasoning': type must be object, but is string"},
      {R"({"input": "x", "reasoning": {"effort": 1}})",
       "Field 'reasoning.effort': type must be string, but is number"},
      {R"({"input": "x", "max_output_tokens": "many"})",
       "Field 'max_output_tokens': type must be number, but is string"},
      {R"({"input": [{"role": "user", "content": ["hi"]}]})",
       "Field 'input[0].content[0]': type must be object, but is string"},
      {R"({"input": [{"role": "user", "content": 5}]})",
       "Field 'input[0].content': type must be string or array, but is number"},
      {R"({"input": [{"role": 5, "content": "x"}]})",
       "Field 'input[0].role': type must be string, but is number"},
      {R"({"input": [{"role": "user", "content": [{"type": "input_text", "text": 5}]}]})",
       "Field 'input[0].content[0].text': type must be string, but is number"},
      {R"({"input": [{"role": "user", "content": [{"type": "input_image", "image_url": {}}]}]})",
       "Field 'input[0].content[0].image_url': type must be string, but is object"},
      {R"({"input": [{"type": "function_call", "call_id": "c", "name": "f", "arguments": {}}]})",
       "Field 'input[0].arguments': type must be string, but is object"},
      {R"({"input": [{"type": "function_call_output", "call_id": "c",
                      "output": [{"type": "input_text", "text": 5}]}]})",
       "Field 'input[0].output[0].text': type must be string, but is number"},
      {R"({"input": [{"type": "reasoning", "summary": [], "content": [{"text": 5}]}]})",
       "Field 'input[0].content[0].text': type must be string, but is number"},
      // The rest is the chat table's.
      {R"({"input": "x", "stream": "yes"})", "Field 'stream': type must be boolean, but is string"},
  };
  for (const Case& c : cases) EXPECT_EQ(responses_error(c.body), c.message) << c.body;
}

}  // namespace
}  // namespace hearth::server::openai

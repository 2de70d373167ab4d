// The chat, embeddings and /lora-adapters bodies are read by their field tables: every row
// refuses a wrong type naming its member, and every member lands in the typed request.
#include <gtest/gtest.h>

#include "server/chat_request.h"
#include "server/embeddings/embedding_routes.h"

namespace hearth::server {
namespace {

// A value of the wrong type for a row: a string for the rows that take numbers or
// booleans, a number for the others.
Json wrong_value_for(std::string_view name) {
  for (std::string_view numeric :
       {"top_logprobs", "reasoning_budget_tokens", "thinking_budget_tokens", "logprobs",
        "add_generation_prompt", "stream", "parallel_tool_calls", "echo", "reasoning_control"}) {
    if (name == numeric) return "x";
  }
  return 5;
}

TEST(ChatRequestFields, EveryTypedRowRefusesAWrongTypeNamingTheMember) {
  size_t checked = 0;
  for (const fields::Field<ChatRequest>& row : chat_fields()) {
    // The messages are checked after the server's checks; internal rows read nothing.
    if (row.name == "messages" || std::holds_alternative<std::monostate>(row.target)) continue;
    SCOPED_TRACE(std::string(row.name));
    ChatRequest request;
    const Json body = {{"messages", Json::array()},
                       {std::string(row.name), wrong_value_for(row.name)}};
    auto err = parse_chat_request(body, request);
    ASSERT_TRUE(err);
    EXPECT_NE(err->message.find(std::string(row.name)), std::string::npos) << err->message;
    ++checked;
  }
  EXPECT_GE(checked, 20u);
}

TEST(ChatRequestFields, EveryMemberLandsInTheRequest) {
  const Json body = Json::parse(R"({
    "messages": [{"role": "user", "content": "hi"}],
    "tools": [{"type": "function", "function": {"name": "f"}}],
    "tool_choice": {"type": "function", "function": {"name": "f"}},
    "chat_template_kwargs": {"k": 1},
    "add_generation_prompt": false,
    "continue_final_message": "content",
    "reasoning_format": "none",
    "reasoning_effort": "low",
    "response_format": {"type": "json_object"},
    "json_schema": {"type": "object"},
    "grammar": null,
    "logprobs": true,
    "top_logprobs": 3,
    "stream": true,
    "stream_options": {"include_usage": true},
    "parallel_tool_calls": false,
    "echo": true,
    "reasoning_budget_tokens": 7,
    "thinking_budget_tokens": 9,
    "reasoning_budget_message": "stop",
    "reasoning_control": true,
    "temperature": 0.5
  })");
  ChatRequest r;
  ASSERT_FALSE(parse_chat_request(body, r));
  ASSERT_TRUE(r.messages);
  EXPECT_EQ(r.messages->size(), 1u);
  EXPECT_EQ(r.tools.size(), 1u);
  EXPECT_EQ(r.tool_choice, "auto");  // a named function leaves the string form at its default
  EXPECT_EQ(r.tool_choice_function, "f");
  EXPECT_EQ(r.chat_template_kwargs, Json({{"k", 1}}));
  EXPECT_FALSE(r.add_generation_prompt);
  EXPECT_TRUE(r.continuation_given);
  EXPECT_EQ(r.continuation, chat::Continuation::kContent);
  EXPECT_EQ(r.reasoning_format, "none");
  EXPECT_EQ(r.reasoning_effort, "low");
  EXPECT_EQ(r.response_format["type"], "json_object");
  EXPECT_EQ(r.json_schema["type"], "object");
  EXPECT_TRUE(r.grammar_given);  // null counts as sent, as the reference's `contains`
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 3);
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.parallel_tool_calls, false);
  EXPECT_TRUE(r.echo);
  EXPECT_EQ(r.reasoning_budget_tokens, 7);
  EXPECT_EQ(r.thinking_budget_tokens, 9);
  EXPECT_EQ(r.reasoning_budget_message, "stop");
  EXPECT_TRUE(r.reasoning_control);
  // The native view keeps what the native table reads, and nothing only the chat layer does.
  for (const char* kept :
       {"temperature", "stream", "stream_options", "response_format", "json_schema", "grammar"}) {
    EXPECT_TRUE(r.native.contains(kept)) << kept;
  }
  for (const char* dropped : {"messages", "tools", "logprobs", "top_logprobs", "echo",
                              "reasoning_format", "continue_final_message", "reasoning_control"}) {
    EXPECT_FALSE(r.native.contains(dropped)) << dropped;
  }
}

TEST(ChatRequestFields, MembersSetByTheChatLayerNeverReachTheNativeView) {
  ChatRequest r;
  ASSERT_FALSE(parse_chat_request(
      Json{{"messages", Json::array()}, {"prompt", "injected"}, {"grammar_lazy", true}}, r));
  EXPECT_FALSE(r.native.contains("prompt"));
  EXPECT_FALSE(r.native.contains("grammar_lazy"));
}

TEST(ChatRequestFields, BudgetsAreIntegersFromMinusOne) {
  ChatRequest r;
  auto err = parse_chat_request(Json{{"reasoning_budget_tokens", -2}}, r);
  ASSERT_TRUE(err);
  EXPECT_NE(err->message.find("reasoning_budget_tokens"), std::string::npos);
  EXPECT_FALSE(parse_chat_request(Json{{"thinking_budget_tokens", -1}}, r));
  EXPECT_EQ(r.thinking_budget_tokens, -1);
}

TEST(EmbeddingRequestFields, RowsReadTheirMembers) {
  EmbeddingRequest r;
  const Json body = {{"input", nullptr},      {"content", "c"},
                     {"embd_normalize", 2.7}, {"encoding_format", "base64"},
                     {"dimensions", 8},       {"model", "m"}};
  ASSERT_FALSE(fields::parse_fields(embedding_fields(), body, r, {}));
  ASSERT_TRUE(r.input);  // a null input is present (and refused later as a prompt)
  EXPECT_TRUE(r.input->is_null());
  EXPECT_EQ(r.content, Json("c"));
  EXPECT_EQ(r.embd_normalize, 2);
  EXPECT_TRUE(r.base64);
  EXPECT_EQ(r.dimensions, 8);
  EXPECT_EQ(r.model, "m");
  for (const auto& [name, value] :
       std::vector<std::pair<const char*, Json>>{{"embd_normalize", "2"},
                                                 {"encoding_format", 5},
                                                 {"encoding_format", "int8"},
                                                 {"model", 5}}) {
    EmbeddingRequest bad;
    EXPECT_TRUE(fields::parse_fields(embedding_fields(), Json{{name, value}}, bad, {})) << name;
  }
}

}  // namespace
}  // namespace hearth::server

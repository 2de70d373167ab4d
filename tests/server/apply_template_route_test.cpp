// POST /apply-template's route, request checks and template options on the fake server (no
// model: the template is rendered by the server, whatever the model): continuation, the
// request checks of the chat routes, --chat-template, --chat-template-file,
// --chat-template-kwargs, --no-jinja, and what /props reports. The golden capture and the
// options read from a model file stay in apply_template_test.cpp.
#include <fstream>

#include "server/fake_fixture.h"
#include "support/test_paths.h"

namespace hearth::test {
namespace {

constexpr const char* kChatml =
    "{%- for message in messages -%}\n"
    "  {{- '<|im_start|>' + message.role + '\n' + message.content + '<|im_end|>\n' -}}\n"
    "{%- endfor -%}\n"
    "{%- if add_generation_prompt -%}\n"
    "  {{- '<|im_start|>assistant\n' -}}\n"
    "{%- endif -%}";

class ApplyTemplate : public FakeServerTest {
 protected:
  // POSTs `body` and returns the reply parsed (status in status_).
  Json apply(const Json& body) { return post_json(port(), "/apply-template", body, &status_); }
  std::string prompt_for(const Json& body) {
    Json r = apply(body);
    EXPECT_EQ(status_, 200) << r.dump();
    return r.value("prompt", "");
  }
  // Expects an error reply with this status, type and message.
  void expect_error(const Json& body, int status, const std::string& message) {
    Json r = apply(body);
    EXPECT_EQ(status_, status) << body.dump() << " -> " << r.dump();
    EXPECT_EQ(r["error"]["code"], status);
    EXPECT_EQ(r["error"]["type"], status == 400 ? "invalid_request_error" : "server_error");
    EXPECT_EQ(r["error"]["message"], message) << body.dump();
  }
  std::string write_file(const std::string& name, const std::string& text) {
    const std::string path = make_temp_dir("apply_template") + "/" + name;
    std::ofstream(path, std::ios::binary) << text;
    return path;
  }
  static Json user(const std::string& content) { return {{"role", "user"}, {"content", content}}; }
  int status_ = 0;
};

TEST_F(ApplyTemplate, ContinuesATrailingAssistantMessage) {
  start();
  const Json story = {{"role", "assistant"}, {"content", "Once upon a time"}};
  const std::string continued =
      "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nOnce upon a time";
  EXPECT_EQ(prompt_for({{"messages", {user("Hi"), story}}}), continued);
  EXPECT_EQ(prompt_for({{"messages", {user("Hi"), story}},
                        {"continue_final_message", true},
                        {"add_generation_prompt", false}}),
            continued);
  EXPECT_EQ(prompt_for({{"messages", {user("Hi")}}, {"add_generation_prompt", false}}),
            "<|im_start|>user\nHi<|im_end|>\n");
  expect_error({{"messages", {user("Hi"), story}}, {"continue_final_message", true}}, 400,
               "Cannot set both add_generation_prompt and continue_final_message to true.");
  expect_error({{"messages", {user("Hi"), story, story}}}, 400,
               "Cannot have 2 or more assistant messages at the end of the list.");
}

TEST_F(ApplyTemplate, BadRequestsAnswerAsTheReference) {
  start();
  expect_error(Json::object(), 400, "'messages' is required");
  expect_error({{"messages", "hello"}}, 400, "Expected 'messages' to be an array");
  expect_error({{"messages", {"hi"}}}, 400, "All non-assistant messages must contain 'content'");
  expect_error({{"messages", {{{"role", "user"}}}}}, 400,
               "All non-assistant messages must contain 'content'");
  expect_error({{"messages", {{{"role", "assistant"}}}}}, 400,
               "Assistant message must contain either 'content' or 'tool_calls'!");
  expect_error({{"messages", {{{"role", "user"}, {"content", 5}}}}}, 400,
               "Expected 'content' to be a string or an array");
  expect_error({{"messages", {{{"role", "user"}, {"content", {{{"type", "foo"}}}}}}}}, 400,
               "unsupported content[].type");
  // Each 500 of the reference for a client's mistake is a 400 here (differences.json,
  // client-mistakes-400).
  expect_error({{"messages", {{{"role", "user"}, {"content", {{{"type", "image_url"}}}}}}}}, 400,
               "image input is not supported - hint: if this is unexpected, you may need to "
               "provide the mmproj");
  expect_error({{"messages", {{{"content", "hi"}}}}}, 400,
               "Failed to parse messages: Missing 'role' in message: {\"content\":\"hi\"}");
  expect_error({{"messages", {user("x")}}, {"tool_choice", "maybe"}}, 400,
               "Invalid tool_choice: maybe");
  expect_error({{"messages", {user("x")}}, {"response_format", {{"type", "xml"}}}}, 400,
               "response_format type must be one of \"text\" or \"json_object\", but got: xml");
  expect_error(
      {{"messages", {user("x")}}, {"json_schema", Json::object()}, {"grammar", "root ::= \"a\""}},
      400, "Cannot use both json_schema and grammar");
  expect_error({{"messages", {user("x")}}, {"reasoning_format", "foo"}}, 400,
               "Unknown reasoning format: foo");
  expect_error({{"messages", {user("x")}}, {"chat_template_kwargs", {{"enable_thinking", "yes"}}}},
               400, "invalid type for \"enable_thinking\" (expected boolean, got string)");
  expect_error({{"messages", {user("x")}}, {"top_logprobs", 2}}, 400,
               "top_logprobs requires logprobs to be set to true");
  Json bad_tools = apply({{"messages", {user("x")}}, {"tools", {{{"function", Json::object()}}}}});
  EXPECT_EQ(status_, 400);
  EXPECT_EQ(bad_tools["error"]["message"].get<std::string>().rfind(
                "Failed to parse tools: Missing tool type: ", 0),
            0u);
  HttpReply not_json = http_request(port(), "POST", "/apply-template", "{\"messages\": ");
  EXPECT_EQ(not_json.status, 400);
  // Members of the wrong type are refused (the reference reads them leniently).
  expect_error({{"messages", {user("x")}}, {"add_generation_prompt", "yes"}}, 400,
               "Field 'add_generation_prompt': type must be boolean, but is string");
  expect_error({{"messages", {user("x")}}, {"tools", "none"}}, 400,
               "Field 'tools': type must be array, but is string");
  expect_error({{"messages", {user("x")}}, {"reasoning_format", 3}}, 400,
               "Field 'reasoning_format': type must be string, but is number");
  expect_error({{"messages", {user("x")}}, {"parallel_tool_calls", "no"}}, 400,
               "Field 'parallel_tool_calls': type must be boolean, but is string");
  expect_error({{"messages", {user("x")}}, {"echo", 1}}, 400,
               "Field 'echo': type must be boolean, but is number");
}

TEST_F(ApplyTemplate, ToolsWithATemplateThatIgnoresThem) {
  start();
  const Json tools = {{{"type", "function"}, {"function", {{"name", "lookup"}}}}};
  EXPECT_EQ(prompt_for({{"messages", {user("Hi")}}, {"tools", tools}, {"tool_choice", "required"}}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}

TEST_F(ApplyTemplate, ChatTemplateChatmlAndProps) {
  start({"--chat-template", "chatml"});
  EXPECT_EQ(prompt_for({{"messages", {user("Hi")}}}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  HttpReply props = http_request(port(), "GET", "/props");
  Json p = parse_or_null(props.body);
  EXPECT_EQ(p["chat_template"], kChatml);
  EXPECT_FALSE(p.contains("chat_template_tool_use"));
  EXPECT_EQ(p["chat_template_caps"]["supports_string_content"], true);
  EXPECT_EQ(p["chat_template_caps"]["supports_tools"], false);
}

TEST_F(ApplyTemplate, ChatTemplateFileThatRaises) {
  const std::string path = write_file(
      "raises.jinja",
      "{%- for m in messages -%}\r\n"
      "{%- if m.content == 'boom' %}{{ raise_exception('boom is not allowed') }}{% endif -%}\r\n"
      "[{{ m.role }}] {{ m.content }}\r\n"
      "{%- endfor %}\r\n");
  start({"--chat-template-file", path});
  EXPECT_EQ(prompt_for({{"messages", {user("fine")}}}), "[user] fine");
  Json r = apply({{"messages", {user("boom")}}});
  EXPECT_EQ(status_, 400) << r.dump();  // the reference: 500 server_error
  EXPECT_EQ(r["error"]["type"], "invalid_request_error");
  EXPECT_NE(r["error"]["message"].get<std::string>().find("boom is not allowed"), std::string::npos)
      << r.dump();
  // /props shows the normalized source: LF line ends, the final newline dropped.
  Json p = parse_or_null(http_request(port(), "GET", "/props").body);
  EXPECT_EQ(p["chat_template"].get<std::string>().find('\r'), std::string::npos);
  EXPECT_EQ(p["chat_template"].get<std::string>().back(), '}');
}

TEST_F(ApplyTemplate, ChatTemplateKwargsMergeServerThenRequest) {
  const std::string path =
      write_file("kwargs.jinja", "{{ greeting }}, {{ who }}: {{ messages[0].content }}");
  start({"--chat-template-file", path, "--chat-template-kwargs",
         R"({"greeting": "Hello", "who": "server"})"});
  EXPECT_EQ(prompt_for({{"messages", {user("x")}}}), "Hello, server: x");
  EXPECT_EQ(prompt_for({{"messages", {user("x")}}, {"chat_template_kwargs", {{"who", "request"}}}}),
            "Hello, request: x");
}

TEST_F(ApplyTemplate, NoJinjaWithANamedTemplate) {
  start({"--no-jinja", "--chat-template", "llama3"});
  EXPECT_EQ(prompt_for({{"messages", {user(" Hi ")}}}),
            "<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|><|start_header_id|>assistant"
            "<|end_header_id|>\n\n");
  // Content parts are joined with "\n"; a continued message is closed (no dedicated handling).
  Json parts = {{{"type", "text"}, {"text", "a"}}, {{"type", "text"}, {"text", "b"}}};
  EXPECT_EQ(prompt_for({{"messages",
                         {{{"role", "user"}, {"content", parts}},
                          {{"role", "assistant"}, {"content", "Yo"}}}}}),
            "<|start_header_id|>user<|end_header_id|>\n\na\nb<|eot_id|><|start_header_id|>"
            "assistant<|end_header_id|>\n\nYo<|eot_id|>");
  const Json tools = {{{"type", "function"}, {"function", {{"name", "f"}}}}};
  expect_error({{"messages", {user("x")}}, {"tools", tools}}, 400,
               "tools param requires --jinja flag");
  expect_error({{"messages", {user("x")}}, {"tool_choice", "required"}}, 400,
               "tool_choice param requires --jinja flag");
  Json p = parse_or_null(http_request(port(), "GET", "/props").body);
  EXPECT_EQ(p["chat_template"], "llama3");
}

TEST_F(ApplyTemplate, NoJinjaChatmlClosesTheContinuedMessage) {
  start({"--no-jinja", "--chat-template", "chatml"});
  EXPECT_EQ(prompt_for({{"messages", {user("Hi"), {{"role", "assistant"}, {"content", "Yo"}}}}}),
            "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\nYo<|im_end|>\n");
}

}  // namespace
}  // namespace hearth::test

// POST /apply-template end to end on stories260K (other-native-routes.md §10): the golden
// capture, the start-up check of --chat-template, and a model with a tool-use template
// variant. The request checks and template options are the server's whatever the model:
// apply_template_route_test.cpp, on the fake server.
#include <fstream>

#include "gguf/file.h"
#include "gguf/writer.h"
#include "server/server_fixture.h"
#include "support/process.h"

namespace hearth::test {
namespace {

class ApplyTemplate : public StoriesServer {};

TEST_F(ApplyTemplate, GoldenCapture) {
  start();
  const Json capture = Json::parse(
      read_file(shared_path("golden/llama-server-b10573/stories260K-np4/apply_template.json")));
  HttpReply reply =
      http_request(port(), "POST", "/apply-template", capture["request"]["body"].dump());
  EXPECT_EQ(reply.status, capture["status"]);
  EXPECT_EQ(reply.header("content-type"), capture["content_type"]);
  EXPECT_EQ(parse_or_null(reply.body), capture["response"]);
}

TEST(ApplyTemplateStartup, UnsupportedChatTemplateAbortsStartup) {
  ProcessResult raised = run_process({bin_dir() + "/hearth-server", "-m", stories_model(), "--port",
                                      "0", "--chat-template", "{{ raise_exception('no') }}"});
  EXPECT_EQ(raised.exit_code, 1);
  EXPECT_NE(raised.err.find("error: the supplied chat template is not supported: {{ "
                            "raise_exception('no') }}"),
            std::string::npos)
      << raised.err;
  ProcessResult legacy = run_process({bin_dir() + "/hearth-server", "-m", stories_model(), "--port",
                                      "0", "--no-jinja", "--chat-template", "nonsense"});
  EXPECT_EQ(legacy.exit_code, 1);
  EXPECT_NE(legacy.err.find("error: the supplied chat template is not supported: nonsense\nnote: "
                            "llama.cpp was started without --jinja, we only support commonly "
                            "used templates"),
            std::string::npos)
      << legacy.err;
}

// stories260K with a default and a tool-use template in its metadata.
std::string model_with_templates(const std::string& default_template,
                                 const std::string& tool_use_template) {
  Result<gguf::File> in = gguf::File::open(stories_model());
  EXPECT_TRUE(in.is_ok()) << in.status().message();
  gguf::Writer w;
  for (const gguf::KeyValue& kv : in->metadata()) w.set_value(kv.key, kv.value);
  w.set_string("tokenizer.chat_template", default_template);
  w.set_string("tokenizer.chat_template.tool_use", tool_use_template);
  for (const gguf::TensorInfo& t : in->tensors()) {
    std::vector<int64_t> ne(t.ne.begin(), t.ne.begin() + t.n_dims);
    Status st = w.add_tensor(t.name, t.type, ne, std::vector<uint8_t>(t.data, t.data + t.n_bytes));
    EXPECT_TRUE(st.is_ok()) << st.message();
  }
  const std::string path = make_temp_dir("apply_template_model") + "/tools.gguf";
  EXPECT_TRUE(w.write(path).is_ok());
  return path;
}

TEST(ApplyTemplateToolUse, ToolUseVariantServesRequestsWithTools) {
  const std::string tool_use =
      "TOOLS:{% for t in tools %}{{ t.function.name }};{% endfor %}"
      "{% for m in messages %}{{ m.role }}={{ m.content }}{% for c in m.tool_calls or [] %}"
      "<{{ c.function.name }} {{ c.function.arguments }}>{% endfor %}|{% endfor %}";
  const std::string model = model_with_templates("DEFAULT:{{ messages[0].content }}", tool_use);
  ServerProcess server;
  ASSERT_TRUE(server.start({"-m", model, "-np", "1", "-c", "512"})) << server.log();
  int status = 0;
  const Json hi = {{"role", "user"}, {"content", "Hi"}};
  Json r = post_json(server.port(), "/apply-template", {{"messages", {hi}}}, &status);
  EXPECT_EQ(r["prompt"], "DEFAULT:Hi") << r.dump();
  const Json tools = {{{"type", "function"}, {"function", {{"name", "lookup"}}}}};
  const Json call = {{"role", "assistant"},
                     {"tool_calls",
                      {{{"type", "function"},
                        {"id", "c1"},
                        {"function", {{"name", "lookup"}, {"arguments", {{"q", 1}}}}}}}}};
  const Json result = {{"role", "tool"}, {"content", "42"}, {"tool_call_id", "c1"}};
  r = post_json(server.port(), "/apply-template",
                {{"messages", {hi, call, result, hi}}, {"tools", tools}}, &status);
  EXPECT_EQ(status, 200) << r.dump();
  EXPECT_EQ(r["prompt"], "TOOLS:lookup;user=Hi|assistant=<lookup {\"q\":1}>|tool=42|user=Hi|");
  Json p = parse_or_null(http_request(server.port(), "GET", "/props").body);
  EXPECT_EQ(p["chat_template"], "DEFAULT:{{ messages[0].content }}");
  EXPECT_EQ(p["chat_template_tool_use"], tool_use);
  EXPECT_EQ(p["chat_template_caps"]["supports_tools"], true);
  EXPECT_EQ(p["chat_template_caps"]["supports_tool_calls"], true);
  EXPECT_EQ(server.stop(), 0) << server.log();
}

}  // namespace
}  // namespace hearth::test

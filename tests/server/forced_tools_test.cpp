// Forced tool calls on a real model (the issue's acceptance): stories260K knows nothing of
// tools and Qwen3's markers are not single tokens of its vocabulary, yet every request with
// tool_choice "required" (Anthropic: "any") must come back with calls whose arguments parse
// and validate against the tool's schema (checked by python3-jsonschema), streamed or not.
#include <fstream>
#include <mutex>
#include <thread>

#include "server/server_fixture.h"
#include "support/process.h"

namespace hearth::test {
namespace {

// The issue asks for 100; the sanitizer build, several times slower, checks a quarter.
#if defined(__SANITIZE_ADDRESS__)
constexpr int kRequests = 25;
#else
constexpr int kRequests = 100;
#endif
constexpr const char* kPython = "/usr/bin/python3";

const Json kTools = Json::parse(R"([
  {"type":"function","function":{"name":"get_weather","description":"Weather for a city",
   "parameters":{"type":"object","properties":{"city":{"type":"string","maxLength":12},
     "days":{"type":"integer","minimum":1,"maximum":7}},"required":["city","days"]}}},
  {"type":"function","function":{"name":"set_zone","description":"Pick a time zone",
   "parameters":{"type":"object","properties":{"zone":{"type":"string","enum":["UTC","CET","PST"]},
     "dst":{"type":"boolean"}},"required":["zone"]}}},
  {"type":"function","function":{"name":"book","description":"Book a trip",
   "parameters":{"type":"object","properties":{
     "traveller":{"type":"object","properties":{"name":{"type":"string","maxLength":8},
       "age":{"type":"integer","minimum":0,"maximum":120}},"required":["name","age"]},
     "legs":{"type":"array","items":{"type":"number"},"maxItems":3}},
     "required":["traveller","legs"]}}}
])");

const Json* schema_of(const std::string& name) {
  for (const Json& t : kTools) {
    if (t["function"]["name"] == name) return &t["function"]["parameters"];
  }
  return nullptr;
}

struct Call {
  std::string name;
  std::string arguments;
};

std::vector<Call> calls_of_message(const Json& reply);
std::vector<Call> calls_of_stream(const std::string& body);

class ForcedToolCalls : public StoriesServer {
 protected:
  void SetUp() override {
    if (access(kPython, X_OK) != 0) GTEST_SKIP() << kPython << " is missing (python3-jsonschema)";
    start({"-c", context_size(), "--jinja", "--chat-template-file", template_path()});
  }
  // Four slots share it: each must hold the prompt (the tools rendered by the template)
  // and the answer.
  virtual std::string context_size() const { return "8192"; }
  virtual std::string template_path() const {
    return shared_path("templates/Qwen-Qwen3-0.6B.jinja");
  }

  // One call per answer: with parallel calls a random model keeps writing calls until the
  // token budget cuts the last one (ParallelCallsEndWhole covers that case).
  Json chat_body(int seed, bool stream, bool parallel = false) const {
    return {{"messages", Json::array({{{"role", "user"}, {"content", "Once upon a time"}}})},
            {"tools", kTools},
            {"tool_choice", "required"},
            {"parallel_tool_calls", parallel},
            {"temperature", 1.0},
            {"seed", seed},
            {"max_tokens", 512},
            {"stream", stream}};
  }

  // Runs `work(i)` for i in [0, n) on four threads (the server has four slots).
  static void parallel(int n, const std::function<void(int)>& work) {
    std::atomic<int> next{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&] {
        for (int i = next++; i < n; i = next++) work(i);
      });
    }
    for (std::thread& t : threads) t.join();
  }

  // Every call must name a tool and carry arguments that parse; they are queued for the
  // schema check.
  void collect(const std::string& label, const std::vector<Call>& calls) {
    std::lock_guard lock(mutex_);
    if (calls.empty()) {
      ADD_FAILURE() << label << ": no tool call";
      return;
    }
    for (const Call& c : calls) {
      const Json* schema = schema_of(c.name);
      Json args = Json::parse(c.arguments, nullptr, false);
      if (schema == nullptr || args.is_discarded()) {
        ADD_FAILURE() << label << ": call " << c.name << " " << c.arguments;
        continue;
      }
      cases_.push_back({{"schema", *schema}, {"instance", args}, {"label", label}});
    }
  }

  void validate_all(size_t at_least) {
    ASSERT_GE(cases_.size(), at_least);
    const std::string path = testing::TempDir() + "/hearth_forced_tool_calls.json";
    std::ofstream(path) << cases_.dump();
    ProcessResult r = run_process(
        {kPython, std::string(HEARTH_SOURCE_DIR) + "/tests/server/validate_schemas.py", path}, 120);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }

  // `n` seeded required calls, answered whole and streamed: the stream's arguments equal
  // the answer's, and the answer's calls validate.
  void required_calls_streamed_and_not(const std::string& label, int n) {
    parallel(n, [&](int seed) {
      int status = 0;
      Json reply = post_json(port(), "/v1/chat/completions", chat_body(seed, false), &status);
      EXPECT_EQ(status, 200) << reply.dump();
      std::vector<Call> whole = calls_of_message(reply);
      collect(label + " seed " + std::to_string(seed), whole);
      HttpReply stream =
          http_request(port(), "POST", "/v1/chat/completions", chat_body(seed, true).dump());
      std::vector<Call> streamed = calls_of_stream(stream.body);
      ASSERT_EQ(streamed.size(), whole.size()) << label << " seed " << seed;
      for (size_t i = 0; i < whole.size(); ++i) {
        EXPECT_EQ(streamed[i].arguments, whole[i].arguments);
      }
    });
    validate_all(static_cast<size_t>(n));
  }

  std::mutex mutex_;
  Json cases_ = Json::array();
};

std::vector<Call> calls_of_message(const Json& reply) {
  std::vector<Call> out;
  const Json& message = reply["choices"][0]["message"];
  if (!message.contains("tool_calls")) return out;
  for (const Json& c : message["tool_calls"]) {
    out.push_back({c["function"]["name"], c["function"]["arguments"]});
  }
  return out;
}

std::vector<Call> calls_of_stream(const std::string& body) {
  std::vector<Call> out;
  for (const std::string& payload : sse_payloads(body)) {
    Json chunk = parse_or_null(payload);
    if (!chunk.is_object() || !chunk.contains("choices") || chunk["choices"].empty()) continue;
    const Json& delta = chunk["choices"][0]["delta"];
    if (!delta.contains("tool_calls")) continue;
    for (const Json& c : delta["tool_calls"]) {
      const size_t index = c["index"];
      if (index >= out.size()) out.resize(index + 1);
      if (c["function"].contains("name")) out[index].name = c["function"]["name"];
      if (c["function"].contains("arguments")) out[index].arguments += c["function"]["arguments"];
    }
  }
  return out;
}

TEST_F(ForcedToolCalls, ChatRequiredStreamedAndNot) {
  std::vector<std::vector<Call>> whole(kRequests), streamed(kRequests);
  parallel(kRequests, [&](int seed) {
    int status = 0;
    Json reply = post_json(port(), "/v1/chat/completions", chat_body(seed, false), &status);
    EXPECT_EQ(status, 200) << reply.dump();
    whole[seed] = calls_of_message(reply);
    collect("chat seed " + std::to_string(seed), whole[seed]);
    HttpReply stream =
        http_request(port(), "POST", "/v1/chat/completions", chat_body(seed, true).dump());
    EXPECT_EQ(stream.status, 200);
    streamed[seed] = calls_of_stream(stream.body);
    collect("chat stream seed " + std::to_string(seed), streamed[seed]);
  });
  // A fixed seed draws the same tokens: the stream's calls are the answer's calls.
  for (int seed = 0; seed < kRequests; ++seed) {
    ASSERT_EQ(whole[seed].size(), streamed[seed].size()) << "seed " << seed;
    for (size_t i = 0; i < whole[seed].size(); ++i) {
      EXPECT_EQ(whole[seed][i].name, streamed[seed][i].name);
      EXPECT_EQ(whole[seed][i].arguments, streamed[seed][i].arguments);
    }
  }
  validate_all(2 * kRequests);
}

// With parallel calls the budget may cut the last call: the answer holds the whole ones.
TEST_F(ForcedToolCalls, ParallelCallsEndWhole) {
  constexpr int kParallel = 8;
  parallel(kParallel, [&](int seed) {
    Json body = chat_body(seed, false, true);
    body["max_tokens"] = 192;
    int status = 0;
    Json reply = post_json(port(), "/v1/chat/completions", body, &status);
    EXPECT_EQ(status, 200) << reply.dump();
    collect("parallel seed " + std::to_string(seed), calls_of_message(reply));
  });
  validate_all(kParallel);
}

// A named function (OpenAI's object form, Anthropic's "tool") is the one called.
TEST_F(ForcedToolCalls, NamedToolIsTheOneCalled) {
  constexpr int kNamed = 8;
  parallel(kNamed, [&](int seed) {
    Json body = chat_body(seed, false);
    body["tool_choice"] = {{"type", "function"}, {"function", {{"name", "set_zone"}}}};
    int status = 0;
    Json reply = post_json(port(), "/v1/chat/completions", body, &status);
    EXPECT_EQ(status, 200) << reply.dump();
    std::vector<Call> calls = calls_of_message(reply);
    for (const Call& c : calls) EXPECT_EQ(c.name, "set_zone");
    collect("named seed " + std::to_string(seed), calls);
  });
  int status = 0;
  Json body = chat_body(0, false);
  body["tool_choice"] = {{"type", "function"}, {"function", {{"name", "no_such_tool"}}}};
  Json reply = post_json(port(), "/v1/chat/completions", body, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(reply["error"]["message"],
            "tool_choice names a function that is not in tools: no_such_tool");
  validate_all(kNamed);
}

// Families that write parameters in tags get grammars too: Qwen3-Coder's XML parameters.
class ForcedTaggedToolCalls : public ForcedToolCalls {
 protected:
  std::string template_path() const override { return shared_path("templates/Qwen3-Coder.jinja"); }
};

// A template outside the family table: its syntax is derived by rendering it (tags around
// the name and each argument, inside a section), and the grammar follows it.
class ForcedDerivedToolCalls : public ForcedToolCalls {
 protected:
  std::string template_path() const override {
    const std::string path = make_temp_dir("derived-template") + "/made-up.jinja";
    std::ofstream(path)
        << "{% if tools %}Tools: {{ tools | tojson }}\n{% endif %}"
           "{% for m in messages %}<|{{ m.role }}|>{% if m.tool_calls %}<uses>\n"
           "{% for c in m.tool_calls %}<use tool=\"{{ c.function.name }}\">"
           "{% for k, v in c.function.arguments.items() %}<arg name=\"{{ k }}\">{{ v }}</arg>"
           "{% endfor %}</use>\n{% endfor %}</uses>{% else %}{{ m.content }}{% endif %}<|end|>\n"
           "{% endfor %}{% if add_generation_prompt %}<|assistant|>{% endif %}";
    return path;
  }
};

// Gemma 4: arguments in the template's own literal (bare keys, <|"|> strings), read back
// as JSON that validates.
class ForcedGemmaToolCalls : public ForcedToolCalls {
 protected:
  std::string template_path() const override {
    return shared_path("templates/google-gemma-4-31B-it.jinja");
  }
};

TEST_F(ForcedGemmaToolCalls, GemmaRequiredStreamedAndNot) {
  required_calls_streamed_and_not("gemma-4", 24);
}

// Kimi K3: a thinking block the prompt opened, closed before the tools section; numbered
// calls with typed arguments.
class ForcedKimiK3ToolCalls : public ForcedToolCalls {
 protected:
  std::string template_path() const override { return shared_path("templates/Kimi-K3.jinja"); }
};

TEST_F(ForcedKimiK3ToolCalls, KimiK3RequiredStreamedAndNot) {
  required_calls_streamed_and_not("kimi-k3", 24);
}

// MiniMax M3: nested objects and lists written as elements (the book tool's traveller and
// legs), read back as JSON. M3's own template spends 1,900 of stories260K's 2,048 tokens of
// context on its system prompt, so a short template of the same syntax stands in for it
// (the family is known by M3's namespace token and invoke tag).
class ForcedMiniMaxM3ToolCalls : public ForcedToolCalls {
 protected:
  std::string template_path() const override {
    const std::string path = make_temp_dir("m3-template") + "/m3-syntax.jinja";
    std::ofstream(path)
        << "{%- set ns = ']<]minimax[>[' -%}{% if tools %}]~b]system\nCall a tool.[e~[\n"
           "{% endif %}{% for m in messages %}]~b]{{ m.role }}\n{{ m.content }}"
           "{% if m.tool_calls %}{{ ns }}<tool_call>\n{% for c in m.tool_calls %}"
           "{{ ns }}<invoke name=\"{{ c.function.name }}\">{% for k, v in "
           "c.function.arguments.items() %}{{ ns }}<{{ k }}>{{ v }}{{ ns }}</{{ k }}>"
           "{% endfor %}{{ ns }}</invoke>\n{% endfor %}{{ ns }}</tool_call>{% endif %}[e~[\n"
           "{% endfor %}{% if add_generation_prompt %}]~b]ai\n{% endif %}";
    return path;
  }
};

TEST_F(ForcedMiniMaxM3ToolCalls, MiniMaxM3RequiredStreamedAndNot) {
  required_calls_streamed_and_not("minimax-m3", 24);
}

// Muse Glimmer: each call a message to its function, after the assistant's header.
class ForcedGlimmerToolCalls : public ForcedToolCalls {
 protected:
  std::string template_path() const override { return shared_path("templates/muse-glimmer.jinja"); }
};

TEST_F(ForcedGlimmerToolCalls, GlimmerRequiredStreamedAndNot) {
  required_calls_streamed_and_not("muse-glimmer", 24);
}

TEST_F(ForcedDerivedToolCalls, DerivedSyntaxRequiredStreamedAndNot) {
  required_calls_streamed_and_not("derived", 12);
}

TEST_F(ForcedTaggedToolCalls, QwenCoderRequiredStreamedAndNot) {
  required_calls_streamed_and_not("coder", 24);
}

TEST_F(ForcedToolCalls, MessagesToolChoiceAny) {
  Json tools = Json::array();
  for (const Json& t : kTools) {
    tools.push_back({{"name", t["function"]["name"]},
                     {"description", t["function"]["description"]},
                     {"input_schema", t["function"]["parameters"]}});
  }
  parallel(kRequests, [&](int seed) {
    Json body = {{"model", "m"},
                 {"max_tokens", 512},
                 {"temperature", 1.0},
                 {"tools", tools},
                 {"tool_choice", {{"type", "any"}, {"disable_parallel_tool_use", true}}},
                 {"messages", Json::array({{{"role", "user"}, {"content", "Once upon a time"}}})}};
    // Anthropic bodies carry no seed; each request's own random seed varies the draw.
    int status = 0;
    Json reply = post_json(port(), "/v1/messages", body, &status);
    EXPECT_EQ(status, 200) << reply.dump();
    std::vector<Call> calls;
    for (const Json& block : reply["content"]) {
      if (block["type"] == "tool_use") calls.push_back({block["name"], block["input"].dump()});
    }
    // disable_parallel_tool_use: one call (the reference drops the member).
    EXPECT_EQ(calls.size(), 1u) << reply.dump();
    collect("messages request " + std::to_string(seed), calls);
  });
  validate_all(kRequests);
}

}  // namespace
}  // namespace hearth::test

// Grammar-constrained generation end to end: every constrained output parses under its
// grammar, JSON-schema outputs validate against their schema (python3-jsonschema as the
// oracle), and bad grammars, schemas and triggers are refused with clear 400s.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "grammar/grammar.h"
#include "json_schema/json_schema.h"
#include "server/server_fixture.h"
#include "support/process.h"

namespace hearth::test {
namespace {

// Bounded grammars: each sentence is finite, so a generation always reaches the point
// where only end-of-generation is allowed.
const std::vector<std::string>& bounded_grammars() {
  static const std::vector<std::string> kGrammars = {
      R"(root ::= "yes" | "no")",
      R"(root ::= "-"? [1-9] [0-9]{0,5})",
      "root ::= \"[\" item (\",\" \" \"? item){0,4} \"]\"\nitem ::= [a-z]{1,6}",
      R"(root ::= [a-zA-Z_] [a-zA-Z0-9_]{0,11})",
      "root ::= term ((\"+\" | \"-\") term){0,3}\n"
      "term ::= [0-9]{1,3} | \"(\" [0-9]{1,3} (\"*\" [0-9]{1,3})? \")\"",
      R"(root ::= ("a" "b"{1,2}){1,3} ".")",
      "root ::= [\xC3\xA0-\xC3\xBF]{1,4} \" \" [\xE4\xB8\x80-\xE9\xBE\xA5]{1,2}",
      R"(root ::= "The " ("cat" | "dog" | "bird") " " ("ran" | "sat" | "sang") ".")",
      "root ::= pair (\"; \" pair){0,2}\npair ::= [a-z]{1,5} \"=\" [0-9]{1,3}",
      R"(root ::= [0-9]{4} "-" ("0" [1-9] | "1" [0-2]) "-" [0-2] [0-9])",
  };
  return kGrammars;
}

const std::vector<Json>& bounded_schemas() {
  static const std::vector<Json> kSchemas = {
      Json::parse(R"({"type":"object","properties":{"name":{"type":"string","maxLength":8},
        "age":{"type":"integer","minimum":0,"maximum":120},"pet":{"enum":["cat","dog"]}},
        "required":["name","age"]})"),
      Json::parse(R"({"type":"array","items":{"type":"boolean"},"minItems":1,"maxItems":4})"),
      Json::parse(R"({"type":"string","pattern":"^[A-Z][a-z]{1,6}$"})"),
      Json::parse(R"({"type":"object","properties":{"id":{"type":"string","format":"uuid"},
        "tags":{"type":"array","items":{"type":"string","maxLength":5},"maxItems":3}},
        "required":["id"]})"),
      Json::parse(R"({"anyOf":[{"type":"integer","minimum":-50,"maximum":50},{"type":"null"}]})"),
  };
  return kSchemas;
}

struct Generation {
  Json request;
  std::string grammar;  // GBNF the output must match
  bool is_schema = false;
  int status = 0;
  Json response;
};

std::vector<Generation> plan_generations(int n) {
  std::vector<Generation> plan;
  const auto& grammars = bounded_grammars();
  const auto& schemas = bounded_schemas();
  const size_t kinds = grammars.size() + schemas.size();
  for (int i = 0; i < n; ++i) {
    Generation g;
    g.request = Json{{"prompt", i % 2 ? "Once upon a time" : "The answer is"},
                     {"n_predict", 256},
                     {"temperature", 1.5},
                     {"top_k", 0},
                     {"seed", 1000 + i}};
    const size_t k = static_cast<size_t>(i) % kinds;
    if (k < grammars.size()) {
      g.grammar = grammars[k];
      g.request["grammar"] = g.grammar;
    } else {
      const Json& schema = schemas[k - grammars.size()];
      g.request["json_schema"] = schema;
      g.grammar = json_schema::to_gbnf(schema).value();
      g.is_schema = true;
    }
    plan.push_back(std::move(g));
  }
  return plan;
}

void run_all(int port, std::vector<Generation>& plan, int n_clients) {
  std::atomic<size_t> next{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < n_clients; ++c) {
    clients.emplace_back([&] {
      for (size_t i = next++; i < plan.size(); i = next++) {
        plan[i].response = post_json(port, "/completion", plan[i].request, &plan[i].status);
      }
    });
  }
  for (std::thread& t : clients) t.join();
}

// Validates every (schema, output) pair with python3-jsonschema; returns its report.
ProcessResult validate_with_python(const std::vector<Generation>& plan) {
  const std::string dir = make_temp_dir("grammar_e2e");
  std::ofstream cases(dir + "/cases.jsonl");
  for (const Generation& g : plan) {
    if (!g.is_schema) continue;
    cases << Json{{"schema", g.request["json_schema"]}, {"output", g.response["content"]}}.dump()
          << "\n";
  }
  cases.close();
  std::ofstream(dir + "/check.py") << R"(import json, sys, jsonschema
bad = 0
n = 0
for line in open(sys.argv[1], encoding="utf-8"):
    case = json.loads(line)
    n += 1
    try:
        jsonschema.validate(json.loads(case["output"]), case["schema"])
    except Exception as e:
        bad += 1
        print("INVALID:", repr(case["output"]), "->", str(e).splitlines()[0])
print("validated", n, "outputs,", bad, "invalid")
sys.exit(1 if bad or n == 0 else 0)
)";
  return run_process({"/usr/bin/env", "python3", dir + "/check.py", dir + "/cases.jsonl"});
}

class ServerGrammar : public StoriesServer {};

// HEARTH_GRAMMAR_MODEL runs the same check on another model (e.g. the synthesized 1.1B
// llama of the README, by hand: it takes minutes there).
TEST_F(ServerGrammar, ConstrainedGenerationsParseUnderTheirGrammar) {
  const char* model = std::getenv("HEARTH_GRAMMAR_MODEL");
  if (model != nullptr && *model != '\0') {
    ASSERT_TRUE(server_.start({"-m", model, "-c", "4096", "-np", "4"})) << server_.log();
  } else {
    start();
  }
  std::vector<Generation> plan = plan_generations(200);
  run_all(port(), plan, 4);
  int n_schema = 0;
  for (const Generation& g : plan) {
    ASSERT_EQ(g.status, 200) << g.request.dump() << " -> " << g.response.dump();
    const std::string content = g.response["content"];
    EXPECT_EQ(g.response["stop_type"], "eos") << g.request.dump() << " -> " << content;
    auto compiled = grammar::parse(g.grammar);
    ASSERT_TRUE(compiled.is_ok()) << compiled.status().message();
    EXPECT_TRUE(grammar::accepts(compiled.value(), content))
        << "grammar:\n"
        << g.grammar << "\noutput: " << content;
    EXPECT_EQ(g.response["generation_settings"]["grammar"], g.grammar);
    n_schema += g.is_schema ? 1 : 0;
  }
  EXPECT_GE(n_schema, 60);
  ProcessResult check = validate_with_python(plan);
  EXPECT_EQ(check.exit_code, 0) << check.out << check.err;
}

TEST_F(ServerGrammar, BadGrammarsSchemasAndTriggersAreRefused) {
  start();
  struct Case {
    Json fields;
    std::string message_start;
  };
  const Case cases[] = {
      {{{"grammar", "root ::= foo"}}, "Failed to initialize samplers: failed to parse grammar"},
      {{{"grammar", "root ::= \"unterminated"}},
       "Failed to initialize samplers: failed to parse grammar"},
      {{{"grammar", "root ::= \"a\"{2001,2001}"}},
       "Failed to initialize samplers: failed to parse grammar"},
      {{{"json_schema", {{"type", "foo"}}}},
       "Field 'json_schema': \"json_schema\": JSON schema conversion failed:\nUnrecognized "
       "schema: {\"type\":\"foo\"}"},
      {{{"grammar", "root ::= \"a\""}, {"grammar_lazy", true}, {"grammar_triggers", Json::array()}},
       "Field 'grammar_triggers': Error: no triggers set for lazy grammar!"},
      {{{"grammar", "root ::= \"a\""}, {"grammar_triggers", {{{"type", 1}, {"value", "<s>"}}}}},
       "Field 'grammar_triggers': Grammar trigger word should be marked as preserved token: <s>"},
      {{{"grammar", "root ::= \"a\""}, {"grammar_triggers", {{{"type", 2}, {"value", "(["}}}}},
       "Failed to initialize samplers: invalid grammar trigger pattern"},
      {{{"repeat_penalty", 0.0}}, "Failed to initialize samplers: repeat_penalty"},
  };
  for (const Case& c : cases) {
    Json request = Json{{"prompt", "Hi"}, {"n_predict", 4}};
    request.update(c.fields);
    int status = 0;
    Json r = post_json(port(), "/completion", request, &status);
    EXPECT_EQ(status, 400) << request.dump() << " -> " << r.dump();
    EXPECT_EQ(r["error"]["type"], "invalid_request_error");
    EXPECT_EQ(r["error"]["message"].get<std::string>().rfind(c.message_start, 0), 0u) << r.dump();
  }
  // The parse error says where and why.
  Json r = post_json(port(), "/completion", Json{{"prompt", "Hi"}, {"grammar", "root ::= foo"}});
  EXPECT_NE(r["error"]["message"].get<std::string>().find("foo"), std::string::npos) << r.dump();
  // The server keeps serving.
  int status = 0;
  post_json(port(), "/completion", Json{{"prompt", "Hi"}, {"n_predict", 2}}, &status);
  EXPECT_EQ(status, 200);
}

TEST_F(ServerGrammar, GrammarWinsOverJsonSchemaAndNullDropsBoth) {
  start();
  Json both = post_json(port(), "/completion",
                        Json{{"prompt", "Hi"},
                             {"n_predict", 8},
                             {"json_schema", {{"type", "integer"}}},
                             {"grammar", "root ::= \"zz\""}});
  EXPECT_EQ(both["content"], "zz");
  Json null_grammar = post_json(port(), "/completion",
                                Json{{"prompt", "Hi"},
                                     {"n_predict", 8},
                                     {"temperature", 0},
                                     {"json_schema", {{"type", "integer"}}},
                                     {"grammar", nullptr}});
  EXPECT_EQ(null_grammar["generation_settings"]["grammar"], "");
}

// The reference's native routes ignore response_format; Hearth honours it as the chat
// route defines it (a recorded difference).
TEST_F(ServerGrammar, ResponseFormatConstrainsTheNativeRoute) {
  start();
  const Json schema = Json::parse(R"({"type":"object","properties":{"n":{"type":"integer",
      "minimum":0,"maximum":9}},"required":["n"]})");
  Json r = post_json(
      port(), "/completion",
      Json{{"prompt", "Hi"},
           {"n_predict", 64},
           {"response_format", {{"type", "json_schema"}, {"json_schema", {{"schema", schema}}}}}});
  const Json parsed = parse_or_null(r["content"].get<std::string>());
  ASSERT_TRUE(parsed.is_object()) << r.dump();
  EXPECT_TRUE(parsed["n"].is_number_integer()) << r.dump();
  Json object = post_json(
      port(), "/completion",
      Json{{"prompt", "Hi"}, {"n_predict", 4}, {"response_format", {{"type", "json_object"}}}});
  EXPECT_EQ(object["content"].get<std::string>().substr(0, 1), "{") << object.dump();
  Json text =
      post_json(port(), "/completion",
                Json{{"prompt", "Hi"}, {"n_predict", 4}, {"response_format", {{"type", "text"}}}});
  EXPECT_EQ(text["generation_settings"]["grammar"], "");
  int status = 0;
  Json bad = post_json(port(), "/completion",
                       Json{{"prompt", "Hi"}, {"response_format", {{"type", "xml"}}}}, &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(bad["error"]["message"],
            "response_format type must be one of \"text\" or \"json_object\", but got: xml");
}

class ServerWideGrammar : public StoriesServer {};

TEST_F(ServerWideGrammar, GrammarOptionConstrainsEveryRequest) {
  start({"--grammar", "root ::= \"yes\" | \"no\""});
  Json r = post_json(port(), "/completion", Json{{"prompt", "Hi"}, {"n_predict", 8}});
  EXPECT_TRUE(r["content"] == "yes" || r["content"] == "no") << r.dump();
  // An empty request grammar means none.
  Json free =
      post_json(port(), "/completion", Json{{"prompt", "Hi"}, {"n_predict", 4}, {"grammar", ""}});
  EXPECT_EQ(free["generation_settings"]["grammar"], "");
  EXPECT_EQ(free["tokens_predicted"], 4);
}

TEST_F(ServerWideGrammar, JsonSchemaOptionIsConvertedAtStartup) {
  start({"-j", R"({"type":"integer","minimum":0,"maximum":99})"});
  Json r = post_json(port(), "/completion", Json{{"prompt", "Hi"}, {"n_predict", 8}});
  const std::string content = r["content"];
  ASSERT_FALSE(content.empty());
  EXPECT_LE(std::stoi(content), 99);
  EXPECT_EQ(content.find_first_not_of("0123456789"), std::string::npos) << content;
}

TEST(ServerWideGrammarStartup, InvalidJsonSchemaFailsStartup) {
  ProcessResult r = run_process({bin_dir() + "/hearth-server", "-m", stories_model(), "--port", "0",
                                 "-j", R"({"type":"foo"})"},
                                60);
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.err.find("Unrecognized schema"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace hearth::test

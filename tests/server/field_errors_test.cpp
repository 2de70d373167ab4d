// Field, type and translation errors of every route, and the embedding routes' checks, on
// the fake server (no model: each is decided before a model is asked): refused completion
// fields, /infill's missing FIM tokens, the Responses and Messages translators, the
// embeddings and rerank bodies, and the slot actions' checks in the reference's order.
#include <cmath>
#include <fstream>
#include <map>

#include "server/fake_fixture.h"
#include "server/native_fields.h"
#include "support/test_paths.h"

namespace hearth::test {
namespace {

// A value other than the reference's default for each refused field.
Json non_default_value(const std::string& name) {
  static const std::map<std::string, Json> kValues = {
      {"lora", Json::array({Json{{"id", 0}, {"scale", 1.0}}})},
      {"chat_format", 1},
      {"reasoning_format", "none"},
      {"generation_prompt", "x"},
      {"parse_tool_calls", false},
      {"chat_parser", "x"},
      {"continue_final_message", true},
      {"echo", true},
      {"reasoning_control", true},
      {"reasoning_budget_tokens", 5},
      {"reasoning_budget_start_tag", "<think>"},
      {"reasoning_budget_end_tags", Json::array({"</think>"})},
      {"reasoning_budget_message", "x"},
      {"n_cache_reuse", 16},
  };
  auto it = kValues.find(name);
  return it != kValues.end() ? it->second : Json(0.37);
}

class ServerFields : public FakeServerTest {};

TEST_F(ServerFields, InfillFieldsAreReadBeforeTheModelIsAsked) {
  start();
  int status = 0;
  // A vocabulary without FIM tokens (stories260K's; the fixture's default): the reference's
  // 501 comes first, naming what is missing.
  Json r = post_json(
      port(), "/infill",
      Json{{"input_prefix", "a"}, {"input_suffix", "b"}, {"input_extra", Json::array()}}, &status);
  EXPECT_EQ(status, 501);
  EXPECT_EQ(r["error"]["message"],
            "Infill is not supported by this model: prefix token is missing. suffix token is "
            "missing. middle token is missing. ");
}

TEST_F(ServerFields, RefusedFieldsAreRefused) {
  start();
  int checked = 0;
  const Json fields = native_fields_manifest();
  for (const Json& field : fields["entries"]) {
    if (field["state"] == "supported") continue;
    const std::string name = field["name"];
    SCOPED_TRACE(name);
    Json request = base_request();
    request[name] = non_default_value(name);
    int status = 0;
    Json r = post_json(port(), "/completion", request, &status);
    EXPECT_EQ(status, 400) << r.dump();
    EXPECT_EQ(r["error"]["type"], "invalid_request_error");
    const std::string message = r["error"]["message"].get<std::string>();
    EXPECT_NE(message.find("'" + name + "'"), std::string::npos) << r.dump();
    // A deferred field says what is missing and which issue delivers it.
    if (field["state"] == "deferred") {
      EXPECT_NE(message.find(field["reason"].get<std::string>()), std::string::npos) << message;
      EXPECT_NE(message.find("issue " + std::to_string(field["issue"].get<int>())),
                std::string::npos)
          << message;
    }
    // The reference's default value is accepted, so clients sending full settings work.
    ++checked;
  }
  EXPECT_GE(checked, 3);
  Json defaults = base_request();
  defaults.update(Json{{"chat_parser", ""}, {"lora", Json::array()}, {"n_cache_reuse", 0}});
  int status = 0;
  post_json(port(), "/completion", defaults, &status);
  EXPECT_EQ(status, 200);
}

class OpenAIRoutes : public FakeServerTest {};

TEST_F(OpenAIRoutes, TranslationErrorsAreClientErrors) {
  start();
  struct Case {
    const char* path;
    const char* body;
    const char* message;
  };
  const Case cases[] = {
      {"/v1/responses", R"({"model":"m"})", "'input' is required"},
      {"/v1/responses", R"({"input":5})", "'input' must be a string or array of objects"},
      {"/v1/responses", R"({"input":"x","previous_response_id":"r1"})",
       "llama.cpp does not support 'previous_response_id'."},
      {"/v1/responses", R"({"input":[{"type":"nope"}]})", "Cannot determine type of 'item'"},
      {"/v1/responses", R"({"input":[{"role":"user","content":[{"type":"input_file"}]}]})",
       "'input_file' is not supported by llamacpp at this moment"},
      {"/v1/responses", R"({"input":"x","tools":5})", "'tools' must be an array of objects"},
      {"/v1/messages", R"({"model":"m","max_tokens":4})", "'messages' is required"},
      {"/v1/chat/completions", R"({"messages":"hello"})", "Expected 'messages' to be an array"},
      {"/v1/chat/completions", R"({"messages":[],"tool_choice":"maybe"})",
       "Invalid tool_choice: maybe"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.path) + " " + c.body);
    HttpReply reply = http_request(port(), "POST", c.path, c.body);
    EXPECT_EQ(reply.status, 400);
    EXPECT_EQ(parse_or_null(reply.body)["error"]["message"], c.message);
  }
}

// A block or member of the wrong type, which the reference silently drops or reads as its
// default, is a 400 naming its path on every route of the translator (differences.json
// anthropic-wrong-types-400, responses-wrong-types-400).
TEST_F(OpenAIRoutes, TranslatorsNameTheMemberOfTheWrongType) {
  start();
  struct Case {
    const char* body;
    const char* message;
  };
  const Case messages_cases[] = {
      {R"({"max_tokens":4,"messages":[{"role":"user","content":"a"},{"role":"assistant",
          "content":"b"},{"role":"user","content":[{"type":5,"text":"c"}]}]})",
       "Field 'messages[2].content[0].type': type must be string, but is number"},
      {R"({"max_tokens":4,"messages":[{"role":"user","content":["hi"]}]})",
       "Field 'messages[0].content[0]': type must be object, but is string"},
      {R"({"max_tokens":4,"messages":[{"role":"user","content":[{"type":"tool_result",
          "tool_use_id":"t","content":7}]}]})",
       "Field 'messages[0].content[0].content': type must be string or array, but is number"},
      {R"({"max_tokens":4,"system":[{"type":"text","text":1}],"messages":[]})",
       "Field 'system[0].text': type must be string, but is number"},
      {R"({"max_tokens":4,"messages":[],"tool_choice":{"type":"tool"}})",
       "'tool_choice.name' is required"},
  };
  for (const char* path : {"/v1/messages", "/v1/messages/count_tokens"}) {
    for (const Case& c : messages_cases) {
      SCOPED_TRACE(std::string(path) + " " + c.body);
      HttpReply reply = http_request(port(), "POST", path, c.body);
      EXPECT_EQ(reply.status, 400);
      EXPECT_EQ(parse_or_null(reply.body)["error"]["message"], c.message);
    }
  }
  const Case responses_cases[] = {
      {R"({"input":"x","tools":[{"type":"function","name":"f"},"g"]})",
       "Field 'tools[1]': type must be object, but is string"},
      {R"({"input":"x","instructions":["Be brief."]})",
       "Field 'instructions': type must be string, but is array"},
      {R"({"input":"x","reasoning":"low"})",
       "Field 'reasoning': type must be object, but is string"},
      {R"({"input":[{"role":"user","content":[{"type":"input_text","text":5}]}]})",
       "Field 'input[0].content[0].text': type must be string, but is number"},
  };
  for (const char* path : {"/v1/responses", "/v1/responses/input_tokens"}) {
    for (const Case& c : responses_cases) {
      SCOPED_TRACE(std::string(path) + " " + c.body);
      HttpReply reply = http_request(port(), "POST", path, c.body);
      EXPECT_EQ(reply.status, 400);
      EXPECT_EQ(parse_or_null(reply.body)["error"]["message"], c.message);
    }
  }
}

class EmbeddingServer : public FakeServerTest {
 protected:
  Json post(const std::string& path, const Json& body, int want_status = 200) {
    const HttpReply reply = http_request(port(), "POST", path, body.dump());
    EXPECT_EQ(reply.status, want_status) << reply.body.substr(0, 400);
    return Json::parse(reply.body, nullptr, false);
  }
};

// Options and requests the reference turns down, and what Hearth adds for a client's
// mistakes (differences.json, client-mistakes-400).
TEST_F(EmbeddingServer, ClientMistakesAre400) {
  start_exactly({"--reranking", "-np", "2"});
  post("/embedding", Json{{"input", "x"}, {"embd_normalize", "2"}}, 400);
  post("/embedding", Json{{"input", "x"}, {"embd_normalize", 1e300}}, 400);
  post("/embedding", Json{{"input", "x"}, {"embd_normalize", 2.7}}, 200);
  post("/embedding", Json{{"input", "x"}, {"encoding_format", 5}}, 400);
  post("/rerank", Json{{"query", "q"}, {"documents", {"a"}}, {"top_n", -1}}, 400);
  post("/rerank", Json{{"query", "q"}, {"documents", {"a"}}, {"top_n", "1"}}, 400);
  post("/rerank", Json{{"query", "q"}, {"texts", {"a"}}, {"return_text", "yes"}}, 400);
  // `dimensions` is honoured only as the width the model gives.
  const Json models = Json::parse(http_request(port(), "GET", "/v1/models").body);
  const int n_embd = models["data"][0]["meta"]["n_embd"];
  post("/v1/embeddings", Json{{"input", "x"}, {"dimensions", n_embd}}, 200);
  post("/v1/embeddings", Json{{"input", "x"}, {"dimensions", n_embd / 2}}, 400);
  post("/embedding", Json{{"input", {99999}}}, 400);
}

// --embd-normalize sets the requests' default; a request's embd_normalize still wins.
TEST_F(EmbeddingServer, ServerNormalizationIsTheDefault) {
  start_exactly({"--embedding", "--pooling", "mean", "--embd-normalize", "-1", "-np", "1"});
  const auto length = [](const Json& v) {
    double s = 0;
    for (const Json& x : v) s += x.get<double>() * x.get<double>();
    return std::sqrt(s);
  };
  const Json raw = post("/embedding", Json{{"input", "Once upon a time"}});
  EXPECT_GT(std::fabs(length(raw[0]["embedding"][0]) - 1.0), 0.01) << "left unnormalized";
  const Json unit = post("/embedding", Json{{"input", "Once upon a time"}, {"embd_normalize", 2}});
  EXPECT_NEAR(length(unit[0]["embedding"][0]), 1.0, 1e-5);
}

// Without --embedding every route answers the reference's 501; completions still work.
TEST_F(EmbeddingServer, DisabledRoutesAnswer501) {
  start_exactly({"-np", "1"});
  const Json e = post("/v1/embeddings", Json{{"input", "x"}}, 501);
  EXPECT_EQ(e["error"]["type"], "not_supported_error");
  post("/rerank", Json{{"query", "q"}, {"documents", {"a"}}}, 501);
  post("/completion", Json{{"prompt", "Once"}, {"n_predict", 2}}, 200);
}

class ServerSlotActions : public FakeServerTest {};

TEST_F(ServerSlotActions, ChecksComeInTheReferenceOrder) {
  const std::string dir = make_temp_dir("slots");
  start({"-np", "1", "--slot-save-path", dir});
  auto error_of = [&](const std::string& path, const std::string& body, int expected_status) {
    HttpReply reply = http_request(port(), "POST", path, body);
    EXPECT_EQ(reply.status, expected_status) << path << " " << reply.body;
    return parse_or_null(reply.body)["error"]["message"];
  };
  EXPECT_EQ(error_of("/slots/x?action=save", R"({"filename":"a"})", 400), "Invalid slot ID");
  EXPECT_EQ(error_of("/slots/0?action=fly", R"({"filename":"a"})", 400), "Invalid action");
  EXPECT_EQ(error_of("/slots/0", R"({"filename":"a"})", 400), "Invalid action");
  // The reference answers these two 500 with its JSON library's messages.
  EXPECT_EQ(error_of("/slots/0?action=save", "{}", 400), "\"filename\" is required");
  EXPECT_EQ(error_of("/slots/0?action=save", "{\"filename\": 3}", 400),
            "Field 'filename': type must be string, but is number");
  EXPECT_EQ(error_of("/slots/0?action=save", "not json", 400)
                .get<std::string>()
                .rfind("Invalid JSON in request body: ", 0),
            0u);
  EXPECT_EQ(error_of("/slots/0?action=save", R"({"filename":"../escape"})", 400),
            "Invalid filename");
  EXPECT_EQ(error_of("/slots/-1?action=save", R"({"filename":"a"})", 400), "Invalid slot ID");
  const Json missing = error_of("/slots/0?action=restore", R"({"filename":"none.bin"})", 400);
  EXPECT_EQ(missing.get<std::string>().rfind("Unable to restore slot: ", 0), 0u) << missing;
  EXPECT_EQ(error_of("/slots/999?action=save", R"({"filename":"a"})", 400),
            "Invalid slot ID: 999 is outside 0..0");
  EXPECT_EQ(error_of("/slots/999?action=erase", "", 400), "Invalid slot ID: 999 is outside 0..0");
  // "0x" reads as slot 0, as the reference's integer parse does.
  HttpReply erase = http_request(port(), "POST", "/slots/0x?action=erase", "{}");
  EXPECT_EQ(erase.status, 200);
  EXPECT_EQ(parse_or_null(erase.body)["id_slot"], 0);
}

}  // namespace
}  // namespace hearth::test

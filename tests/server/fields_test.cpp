// Request fields: every field the manifest calls supported has an observable effect (or the
// reference's documented lack of one) checked here; every other field is refused with a
// 400 naming it when sent with a non-default value.
#include <fstream>
#include <functional>
#include <map>

#include "server/server_fixture.h"

namespace hearth::test {
namespace {

Json fields_manifest() {
  std::ifstream in(std::string(HEARTH_SOURCE_DIR) + "/compat/llama-server/b10621/fields.json");
  return Json::parse(in);
}

struct FieldCheck {
  Json request;                            // added to a small greedy completion
  std::function<void(const Json&)> check;  // on the response (object, array or frames)
};

Json base_request() {
  return Json{{"prompt", "Once upon a time"}, {"n_predict", 6}, {"temperature", 0}};
}

// Runs a request; streaming answers come back as an array of frames.
Json run(int port, Json request) {
  HttpReply reply = http_request(port, "POST", "/completion", request.dump());
  EXPECT_EQ(reply.status, 200) << request.dump() << " -> " << reply.body;
  if (request.value("stream", false)) {
    Json frames = Json::array();
    for (const std::string& p : sse_payloads(reply.body)) frames.push_back(parse_or_null(p));
    return frames;
  }
  return parse_or_null(reply.body);
}

std::map<std::string, FieldCheck> supported_checks() {
  auto gs = [](const Json& r) { return r["generation_settings"]; };
  return {
      {"prompt", {{}, [](const Json& r) { EXPECT_EQ(r["tokens_evaluated"], 5); }}},
      {"id_slot", {{{"id_slot", 2}}, [](const Json& r) { EXPECT_EQ(r["id_slot"], 2); }}},
      {"message_delimiters",
       {{{"message_delimiters", Json::array()}}, [](const Json& r) { EXPECT_TRUE(r["stop"]); }}},
      {"stream", {{{"stream", true}}, [](const Json& f) { EXPECT_EQ(f.size(), 7u); }}},
      {"stream_options",
       {{{"stream_options", {{"include_usage", true}}}},
        [](const Json& r) { EXPECT_TRUE(r["stop"]); }}},
      {"stream_options.include_usage",
       {{{"stream_options", {{"include_usage", false}}}},
        [](const Json& r) { EXPECT_TRUE(r["stop"]); }}},
      {"timings_per_token",
       {{{"stream", true}, {"timings_per_token", true}},
        [](const Json& f) { EXPECT_TRUE(f[0].contains("timings")); }}},
      {"return_tokens",
       {{{"return_tokens", true}}, [](const Json& r) { EXPECT_EQ(r["tokens"].size(), 6u); }}},
      {"return_progress",
       {{{"stream", true}, {"return_progress", true}},
        [](const Json& f) { EXPECT_TRUE(f[0].contains("prompt_progress")); }}},
      {"response_fields",
       {{{"response_fields", {"content"}}}, [](const Json& r) { EXPECT_EQ(r.size(), 1u); }}},
      {"verbose",
       {{{"verbose", true}}, [](const Json& r) { EXPECT_FALSE(r.contains("__verbose")); }}},
      {"sse_ping_interval",
       {{{"sse_ping_interval", 5}, {"stream", true}},
        [](const Json& f) { EXPECT_TRUE(f.back()["stop"]); }}},
      {"n_probs",
       {{{"n_probs", 2}},
        [](const Json& r) {
          EXPECT_EQ(r["completion_probabilities"][0]["top_logprobs"].size(), 2u);
        }}},
      {"post_sampling_probs",
       {{{"n_probs", 2}, {"post_sampling_probs", true}},
        [](const Json& r) { EXPECT_EQ(r["completion_probabilities"][0]["prob"], 1.0); }}},
      {"n_predict",
       {{{"n_predict", 3}}, [](const Json& r) { EXPECT_EQ(r["tokens_predicted"], 3); }}},
      {"stop",
       {{{"stop", {"there"}}, {"n_predict", 16}},
        [](const Json& r) {
          EXPECT_EQ(r["stop_type"], "word");
          EXPECT_EQ(r["content"], ", ");
        }}},
      {"ignore_eos",
       {{{"ignore_eos", true}},
        [gs](const Json& r) { EXPECT_EQ(gs(r)["logit_bias"][0]["bias"], nullptr); }}},
      {"n_indent",
       {{{"n_indent", 4}, {"n_predict", 64}},
        [](const Json& r) { EXPECT_EQ(r["tokens_predicted"], 60); }}},
      {"t_max_predict_ms",
       {{{"t_max_predict_ms", 1}, {"n_predict", 200}},
        [](const Json& r) { EXPECT_EQ(r["tokens_predicted"], 58); }}},
      {"cache_prompt",
       {{{"cache_prompt", false}}, [](const Json& r) { EXPECT_EQ(r["timings"]["cache_n"], 0); }}},
      {"n_keep", {{{"n_keep", 3}}, [gs](const Json& r) { EXPECT_EQ(gs(r)["n_keep"], 3); }}},
      {"n_discard",
       {{{"n_discard", 2}}, [gs](const Json& r) { EXPECT_EQ(gs(r)["n_discard"], 2); }}},
      {"n_cmpl",
       {{{"n_cmpl", 2}},
        [](const Json& r) {
          EXPECT_EQ(r.size(), 2u);
          EXPECT_EQ(r[1]["index"], 1);
        }}},
      {"temperature",
       {{{"temperature", 0.7}, {"seed", 7}},
        [gs](const Json& r) { EXPECT_NEAR(gs(r)["temperature"].get<double>(), 0.7, 1e-6); }}},
      {"top_k",
       {{{"top_k", 1}, {"temperature", 1.0}},
        [](const Json& r) { EXPECT_EQ(r["content"], ", there was a little g"); }}},
      {"top_p",
       {{{"top_p", 0.0}, {"temperature", 1.0}},
        [](const Json& r) { EXPECT_EQ(r["content"], ", there was a little g"); }}},
      {"min_p",
       {{{"min_p", 1.0}, {"temperature", 1.0}},
        [](const Json& r) { EXPECT_EQ(r["content"], ", there was a little g"); }}},
      {"min_keep", {{{"min_keep", 3}}, [gs](const Json& r) { EXPECT_EQ(gs(r)["min_keep"], 3); }}},
      {"seed", {{{"seed", 42}}, [gs](const Json& r) { EXPECT_EQ(gs(r)["seed"], 42); }}},
      {"logit_bias",
       {{{"logit_bias", {{432, false}}}},
        [](const Json& r) { EXPECT_NE(r["content"].get<std::string>().substr(0, 1), ","); }}},
      {"backend_sampling",
       {{{"backend_sampling", true}},
        [gs](const Json& r) { EXPECT_EQ(gs(r)["backend_sampling"], true); }}},
  };
}

class ServerFields : public StoriesServer {};

TEST_F(ServerFields, EverySupportedFieldIsHonoured) {
  start();
  const auto checks = supported_checks();
  const Json fields = fields_manifest();
  for (const Json& field : fields["entries"]) {
    if (field["state"] != "supported") continue;
    const std::string name = field["name"];
    if (name.rfind("input_", 0) == 0) continue;  // /infill fields: ServerFields.InfillFields
    SCOPED_TRACE(name);
    auto it = checks.find(name);
    ASSERT_NE(it, checks.end()) << "no check for supported field " << name;
    Json request = base_request();
    for (auto& [k, v] : it->second.request.items()) request[k] = v;
    it->second.check(run(port(), request));
  }
}

TEST_F(ServerFields, InfillFieldsAreReadBeforeTheModelIsAsked) {
  start();
  int status = 0;
  // stories260K has no FIM tokens: the reference's 501 comes first, naming what is missing.
  Json r = post_json(
      port(), "/infill",
      Json{{"input_prefix", "a"}, {"input_suffix", "b"}, {"input_extra", Json::array()}}, &status);
  EXPECT_EQ(status, 501);
  EXPECT_EQ(r["error"]["message"],
            "Infill is not supported by this model: prefix token is missing. suffix token is "
            "missing. middle token is missing. ");
}

// A value other than the reference's default for each refused field.
Json non_default_value(const std::string& name) {
  static const std::map<std::string, Json> kValues = {
      {"samplers", Json::array({"top_k"})},
      {"dry_sequence_breakers", Json::array({"x"})},
      {"json_schema", Json{{"type", "object"}}},
      {"grammar_type", "tool_calls"},
      {"grammar_lazy", true},
      {"grammar_triggers", Json::array({Json{{"type", 1}, {"value", "x"}}})},
      {"preserved_tokens", Json::array({"<s>"})},
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
      {"mirostat", 2},
      {"repeat_last_n", 8},
      {"dry_allowed_length", 3},
      {"dry_penalty_last_n", 8},
      {"n_cache_reuse", 16},
      {"adaptive_decay", 0.5},
  };
  auto it = kValues.find(name);
  return it != kValues.end() ? it->second : Json(0.37);
}

TEST_F(ServerFields, RefusedFieldsAreRefused) {
  start();
  int checked = 0;
  const Json fields = fields_manifest();
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
    EXPECT_NE(r["error"]["message"].get<std::string>().find("'" + name + "'"), std::string::npos)
        << r.dump();
    // The reference's default value is accepted, so clients sending full settings work.
    ++checked;
  }
  EXPECT_GE(checked, 30);
  Json defaults = base_request();
  defaults.update(Json{{"repeat_penalty", 1.0},
                       {"typical_p", 1.0},
                       {"mirostat", 0},
                       {"dry_multiplier", 0.0},
                       {"samplers", "edskypmxt"},
                       {"lora", Json::array()},
                       {"grammar", ""},
                       {"xtc_threshold", 0.1},
                       {"top_n_sigma", -1.0}});
  int status = 0;
  post_json(port(), "/completion", defaults, &status);
  EXPECT_EQ(status, 200);
}

}  // namespace
}  // namespace hearth::test

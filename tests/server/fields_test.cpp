// Request fields: every field the manifest calls supported has an observable effect (or the
// reference's documented lack of one) checked here; every other field is refused with a
// 400 naming it when sent with a non-default value.
#include <algorithm>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "server/native_fields.h"
#include "server/server_fixture.h"

namespace hearth::test {
namespace {

struct FieldCheck {
  Json request;                            // added to a small greedy completion
  std::function<void(const Json&)> check;  // on the response (object, array or frames)
};

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

// The greedy answer to base_request() alone (set by the test before the checks run): the
// answer of a field whose only effect is in a feature the request cannot reach.
std::string& plain_content() {
  static std::string content;
  return content;
}

// The same greedy answer as base_request() alone.
void same_answer(const Json& r) {
  ASSERT_FALSE(plain_content().empty());
  EXPECT_EQ(r["content"], plain_content());
}

// A generation prompt that opens a thinking block, with its tags, plus `extra`.
Json budget_request(Json extra) {
  Json r = {{"generation_prompt", "<think>"},
            {"reasoning_budget_start_tag", "<think>"},
            {"reasoning_budget_end_tags", Json::array({"</think>"})},
            {"n_predict", 16}};
  r.update(extra);
  return r;
}

void ends_block(const Json& r) {
  const std::string content = r["content"];
  EXPECT_NE(content.find("</think>"), std::string::npos) << content;
  EXPECT_LE(content.find("</think>"), 6u) << content;
}

std::map<std::string, FieldCheck> supported_checks() {
  auto gs = [](const Json& r) { return r["generation_settings"]; };
  return {
      {"prompt", {{}, [](const Json& r) { EXPECT_EQ(r["tokens_evaluated"], 5); }}},
      // §3.10: the native routes echo the chat fields and do not parse the output (as the
      // reference); the budget fields end a thinking block the generation prompt opened.
      {"chat_format",
       {{{"chat_format", 2}},
        [gs](const Json& r) { EXPECT_EQ(gs(r)["chat_format"], "peg-native"); }}},
      {"reasoning_format",
       {{{"reasoning_format", "none"}},
        [gs](const Json& r) { EXPECT_EQ(gs(r)["reasoning_format"], "none"); }}},
      {"generation_prompt",
       {{{"generation_prompt", "<|im_start|>assistant\n"}},
        [gs](const Json& r) { EXPECT_EQ(gs(r)["generation_prompt"], "<|im_start|>assistant\n"); }}},
      {"parse_tool_calls",
       {{{"parse_tool_calls", false}, {"prompt", "<tool_call>"}},
        [](const Json& r) { EXPECT_FALSE(r.contains("tool_calls")); }}},
      {"continue_final_message",
       {{{"continue_final_message", "content"}},
        [](const Json& r) { EXPECT_EQ(r["tokens_evaluated"], 5); }}},
      {"echo",
       {{{"echo", true}},
        [](const Json& r) { EXPECT_NE(r["content"].get<std::string>().rfind("Once", 0), 0u); }}},
      {"reasoning_control",
       {budget_request({{"reasoning_control", true}}),
        [](const Json& r) {
          // Control alone ends nothing: the block runs to the token limit.
          EXPECT_EQ(r["content"].get<std::string>().find("</think>"), std::string::npos);
        }}},
      {"reasoning_budget_tokens", {budget_request({{"reasoning_budget_tokens", 0}}), ends_block}},
      {"reasoning_budget_start_tag",
       {budget_request({{"reasoning_budget_tokens", 1}}), ends_block}},
      {"reasoning_budget_end_tags",
       {budget_request({{"reasoning_budget_tokens", 0}, {"reasoning_budget_end_tag", "</think>"}}),
        ends_block}},
      {"reasoning_budget_message",
       {budget_request({{"reasoning_budget_tokens", 0}, {"reasoning_budget_message", " Done."}}),
        [](const Json& r) {
          const std::string content = r["content"];
          EXPECT_LT(content.find("Done."), content.find("</think>")) << content;
        }}},
      {"id_slot", {{{"id_slot", 2}}, [](const Json& r) { EXPECT_EQ(r["id_slot"], 2); }}},
      // Only places KV checkpoints, in the reference too (native-completion.md §3.1): the
      // answer is the one without it.
      {"message_delimiters",
       {{{"message_delimiters", Json::array({Json{{"role", "user"}, {"delimiter", "\n"}}})}},
        same_answer}},
      {"stream", {{{"stream", true}}, [](const Json& f) { EXPECT_EQ(f.size(), 7u); }}},
      // The native stream has no usage frame, with or without include_usage (as in the
      // reference; the chat routes add one: OpenAIRoutes' streaming tests): the same seven
      // frames as the plain stream, none of them a usage frame.
      {"stream_options",
       {{{"stream", true}, {"stream_options", {{"include_usage", true}}}},
        [](const Json& f) {
          ASSERT_EQ(f.size(), 7u);
          for (const Json& frame : f) EXPECT_FALSE(frame.contains("usage")) << frame.dump();
        }}},
      {"stream_options.include_usage",
       {{{"stream", true}, {"stream_options", {{"include_usage", false}}}},
        [](const Json& f) { EXPECT_EQ(f.size(), 7u); }}},
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
      // n_keep and n_discard act only when the context shifts, which Hearth refuses until
      // issue 37 builds --context-shift: the answer is the plain one, and the value is kept.
      {"n_keep",
       {{{"n_keep", 3}},
        [gs](const Json& r) {
          same_answer(r);
          EXPECT_EQ(gs(r)["n_keep"], 3);
        }}},
      {"n_discard",
       {{{"n_discard", 2}},
        [gs](const Json& r) {
          same_answer(r);
          EXPECT_EQ(gs(r)["n_discard"], 2);
        }}},
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
      // top_p 0 keeps one candidate; min_keep 3 keeps three (the probabilities after the
      // chain show them).
      {"min_keep",
       {{{"min_keep", 3},
         {"top_p", 0.0},
         {"temperature", 1.0},
         {"n_predict", 1},
         {"n_probs", 5},
         {"post_sampling_probs", true}},
        [gs](const Json& r) {
          EXPECT_EQ(gs(r)["min_keep"], 3);
          EXPECT_EQ(r["completion_probabilities"][0]["top_probs"].size(), 3u) << r.dump();
        }}},
      // Its effect on the draws: ServerFields.SeedDecidesTheDraws.
      {"seed", {{{"seed", 42}}, [gs](const Json& r) { EXPECT_EQ(gs(r)["seed"], 42); }}},
      {"logit_bias",
       {{{"logit_bias", {{432, false}}}},
        [](const Json& r) { EXPECT_NE(r["content"].get<std::string>().substr(0, 1), ","); }}},
      {"backend_sampling",
       {{{"backend_sampling", true}},
        [gs](const Json& r) { EXPECT_EQ(gs(r)["backend_sampling"], true); }}},
  };
}

// The request of a check that compares with greedy decoding of the base request.
constexpr const char* kGreedy = ", there was a little g";

Json no_filters(Json extra) {
  Json r = Json{{"temperature", 1.0}, {"top_k", 0}, {"top_p", 1.0}, {"min_p", 0.0}, {"seed", 3}};
  r.update(extra);
  return r;
}

bool tokens_distinct(const Json& r) {
  std::vector<int> seen;
  for (int t : r["tokens"]) {
    if (std::find(seen.begin(), seen.end(), t) != seen.end()) return false;
    seen.push_back(t);
  }
  return true;
}

// Checks of the sampling and constraint fields (issue 5).
std::map<std::string, FieldCheck> sampling_checks() {
  auto gs = [](const Json& r) { return r["generation_settings"]; };
  auto content = [](const Json& r) { return r["content"].get<std::string>(); };
  auto echo = [gs](const char* key, Json value) {
    return [gs, key, value](const Json& r) { EXPECT_EQ(gs(r)[key], value) << key; };
  };
  return {
      // Filters that keep only the top token make temperature-1 sampling greedy.
      {"top_n_sigma",
       {no_filters({{"top_n_sigma", 1e-6}}),
        [=](const Json& r) { EXPECT_EQ(content(r), kGreedy); }}},
      {"mirostat",
       {no_filters({{"mirostat", 2}, {"mirostat_tau", 0.0}}),
        [=](const Json& r) { EXPECT_EQ(content(r), kGreedy); }}},
      {"mirostat_tau",
       {no_filters({{"mirostat", 2}, {"mirostat_tau", 0.0}}),
        [=](const Json& r) { EXPECT_EQ(content(r), kGreedy); }}},
      {"mirostat_eta", {{{"mirostat_eta", 0.25}}, echo("mirostat_eta", 0.25)}},
      {"samplers",
       {no_filters({{"samplers", {"top_k"}}, {"top_k", 1}, {"temperature", 0.0}}),
        [=](const Json& r) {
          EXPECT_EQ(content(r), kGreedy);
          EXPECT_EQ(r["generation_settings"]["samplers"], Json::array({"top_k"}));
        }}},
      // XTC with threshold 0 drops every candidate but the least likely one.
      {"xtc_probability",
       {{{"xtc_probability", 1.0}, {"xtc_threshold", 0.0}},
        [=](const Json& r) { EXPECT_NE(content(r), kGreedy); }}},
      {"xtc_threshold",
       {{{"xtc_probability", 1.0}, {"xtc_threshold", 0.0}},
        [=](const Json& r) { EXPECT_NE(content(r), kGreedy); }}},
      {"typical_p",
       {no_filters({{"typical_p", 0.0}}),
        [=](const Json& r) { EXPECT_EQ(r["tokens_predicted"], 6); }}},
      {"dynatemp_range", {no_filters({{"dynatemp_range", 0.5}}), echo("dynatemp_range", 0.5)}},
      {"dynatemp_exponent", {{{"dynatemp_exponent", 2.0}}, echo("dynatemp_exponent", 2.0)}},
      {"adaptive_target",
       {{{"adaptive_target", 0.5}, {"samplers", {"adaptive_p"}}}, echo("adaptive_target", 0.5)}},
      {"adaptive_decay", {{{"adaptive_decay", 0.5}}, echo("adaptive_decay", 0.5)}},
      // Penalties over prompt + output: a huge presence penalty never repeats a token.
      {"presence_penalty",
       {{{"presence_penalty", 1000.0}, {"n_predict", 24}, {"return_tokens", true}},
        [](const Json& r) { EXPECT_TRUE(tokens_distinct(r)) << r["tokens"]; }}},
      {"frequency_penalty",
       {{{"frequency_penalty", 1000.0}, {"n_predict", 24}, {"return_tokens", true}},
        [](const Json& r) { EXPECT_TRUE(tokens_distinct(r)) << r["tokens"]; }}},
      {"repeat_penalty",
       {{{"repeat_penalty", 1e6}, {"n_predict", 24}, {"return_tokens", true}},
        [](const Json& r) { EXPECT_TRUE(tokens_distinct(r)) << r["tokens"]; }}},
      {"repeat_last_n",
       {{{"presence_penalty", 1000.0}, {"repeat_last_n", 0}, {"n_predict", 32}},
        [](const Json& r) { EXPECT_EQ(r["generation_settings"]["repeat_last_n"], 0); }}},
      {"dry_multiplier",
       {{{"dry_multiplier", 1000.0}, {"dry_allowed_length", 1}, {"n_predict", 48}},
        [](const Json& r) { EXPECT_EQ(r["generation_settings"]["dry_multiplier"], 1000.0); }}},
      {"dry_base", {{{"dry_base", 0.5}}, echo("dry_base", Json(1.75f))}},
      {"dry_allowed_length", {{{"dry_allowed_length", 3}}, echo("dry_allowed_length", 3)}},
      {"dry_penalty_last_n", {{{"dry_penalty_last_n", 8}}, echo("dry_penalty_last_n", 8)}},
      {"dry_sequence_breakers",
       {{{"dry_sequence_breakers", {"x"}}}, echo("dry_sequence_breakers", Json::array({"x"}))}},
      {"json_schema",
       {{{"json_schema", {{"type", "integer"}}}, {"n_predict", 8}},
        [=](const Json& r) {
          const std::string c = content(r);
          EXPECT_FALSE(c.empty());
          EXPECT_EQ(c.find_first_not_of("-0123456789"), std::string::npos) << c;
        }}},
      {"grammar_type",
       {{{"grammar_type", "tool_calls"}}, [](const Json& r) { EXPECT_TRUE(r["stop"]); }}},
      {"grammar_lazy",
       {{{"grammar", "root ::= \"little\" [ a-z]*"},
         {"grammar_lazy", true},
         {"grammar_triggers", {{{"type", 2}, {"value", "little"}}}},
         {"n_predict", 12}},
        [=](const Json& r) {
          const std::string c = content(r);
          const size_t at = c.find("little");
          ASSERT_NE(at, std::string::npos) << c;
          EXPECT_EQ(c.substr(0, at), ", there was a ");
          EXPECT_EQ(c.find_first_not_of(" abcdefghijklmnopqrstuvwxyz", at), std::string::npos) << c;
        }}},
      {"grammar_triggers",
       {{{"grammar", "root ::= \" little\" [ a-z]*"},
         {"grammar_lazy", true},
         {"grammar_triggers", {{{"type", 1}, {"value", "little"}}}},
         {"preserved_tokens", {"little"}}},
        [gs](const Json& r) {
          // "little" is one token: the word trigger becomes a token trigger.
          EXPECT_EQ(gs(r)["grammar_triggers"][0]["type"], 0);
          EXPECT_EQ(gs(r)["grammar_triggers"][0]["value"], "little");
        }}},
      {"preserved_tokens",
       {{{"preserved_tokens", {"<s>"}}}, echo("preserved_tokens", Json::array({1}))}},
  };
}

class ServerFields : public StoriesServer {};

TEST_F(ServerFields, EverySupportedFieldIsHonoured) {
  start();
  plain_content() = run(port(), base_request())["content"].get<std::string>();
  ASSERT_FALSE(plain_content().empty());
  auto checks = supported_checks();
  checks.merge(sampling_checks());
  const Json fields = native_fields_manifest();
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

// The same seed draws the same text at temperature 1; other seeds draw other texts.
TEST_F(ServerFields, SeedDecidesTheDraws) {
  start();
  auto draw = [&](int seed) {
    Json request = base_request();
    request.update(no_filters({{"seed", seed}}));
    return run(port(), request)["content"].get<std::string>();
  };
  const std::string first = draw(42);
  EXPECT_EQ(draw(42), first);
  std::set<std::string> texts = {first};
  for (int seed = 43; seed < 48; ++seed) texts.insert(draw(seed));
  EXPECT_GE(texts.size(), 2u) << "six seeds drew the same text: the seed is not used";
}

// The probabilities without min_keep: top_p 0 keeps the one most likely candidate.
TEST_F(ServerFields, WithoutMinKeepTopPZeroKeepsOneCandidate) {
  start();
  Json request = base_request();
  request.update({{"top_p", 0.0},
                  {"temperature", 1.0},
                  {"n_predict", 1},
                  {"n_probs", 5},
                  {"post_sampling_probs", true}});
  EXPECT_EQ(run(port(), request)["completion_probabilities"][0]["top_probs"].size(), 1u);
}

}  // namespace
}  // namespace hearth::test

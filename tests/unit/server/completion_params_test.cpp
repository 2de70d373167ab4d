// The completion field parser and result shaping, without a server.
#include <gtest/gtest.h>

#include <cmath>

#include "gguf/file.h"
#include "server/completion_json.h"
#include "server/fields/completion_fields.h"
#include "support/test_paths.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server {
namespace {

class CompletionParamsTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto archive = gguf::Archive::open(test::shared_path("models/stories260K.gguf"));
    ASSERT_TRUE(archive) << archive.status().message();
    auto tok = tokenizer::Tokenizer::from_gguf(archive->primary());
    ASSERT_TRUE(tok) << tok.status().message();
    tok_ = new tokenizer::Tokenizer(std::move(*tok));
  }
  static void TearDownTestSuite() { delete tok_; }

  // The route requires a prompt; these tests are about the other fields, so a body
  // without one gets a short one.
  std::optional<ApiError> parse(const std::string& body, CompletionSettings& out) {
    Json j = Json::parse(body);
    if (j.is_object() && !j.contains("prompt")) j["prompt"] = "x";
    return parse_completion_settings(j, defaults_, *tok_, out);
  }
  std::string error_of(const std::string& body) {
    CompletionSettings s;
    auto err = parse(body, s);
    return err ? err->message : "";
  }

  static tokenizer::Tokenizer* tok_;
  RequestDefaults defaults_;
};
tokenizer::Tokenizer* CompletionParamsTest::tok_ = nullptr;

TEST_F(CompletionParamsTest, PromptIsRequiredByItsRowOnTheCompletionRouteOnly) {
  CompletionSettings s;
  auto err = parse_completion_settings(Json::object(), defaults_, *tok_, s, fields::kCompletion);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->message, "\"prompt\" is required");
  // A null prompt is present: it reaches the prompt's own parser.
  err = parse_completion_settings(Json{{"prompt", nullptr}}, defaults_, *tok_, s,
                                  fields::kCompletion);
  EXPECT_TRUE(!err || err->message != "\"prompt\" is required");
  // The chat layer sets the prompt itself.
  EXPECT_FALSE(parse_completion_settings(Json::object(), defaults_, *tok_, s, fields::kChatNative));
  // /infill requires its two texts instead.
  err =
      parse_completion_settings(Json{{"input_prefix", "a"}}, defaults_, *tok_, s, fields::kInfill);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->message, "\"input_suffix\" is required");
}

TEST_F(CompletionParamsTest, DefaultsComeFromTheServer) {
  defaults_.n_predict = 17;
  defaults_.stop = {"END"};
  CompletionSettings s;
  ASSERT_FALSE(parse("{}", s));
  EXPECT_EQ(s.task.n_predict, 17);
  EXPECT_EQ(s.task.stop, std::vector<std::string>{"END"});
  EXPECT_FLOAT_EQ(s.task.sampling.temperature, 0.8f);
}

TEST_F(CompletionParamsTest, AliasesAndNullsFollowTheReference) {
  CompletionSettings s;
  ASSERT_FALSE(parse(R"({"max_tokens": 5, "max_completion_tokens": 6})", s));
  EXPECT_EQ(s.task.n_predict, 6);  // max_completion_tokens comes before max_tokens
  ASSERT_FALSE(parse(R"({"n_predict": null, "max_tokens": 5})", s));
  EXPECT_EQ(s.task.n_predict, 5);
  ASSERT_FALSE(parse(R"({"logprobs": true})", s));
  EXPECT_EQ(s.task.n_probs, 1);
  ASSERT_FALSE(parse(R"({"n": 2})", s));
  EXPECT_EQ(s.n_cmpl, 2);
}

TEST_F(CompletionParamsTest, IntegersWrapAndRangesAreChecked) {
  CompletionSettings s;
  ASSERT_FALSE(parse(R"({"n_predict": 4294967298})", s));
  EXPECT_EQ(s.task.n_predict, 2);
  EXPECT_EQ(
      error_of(R"({"n_predict": 2147483648})"),
      "Field 'n_predict': Value must be between -1 <= value <= 2147483647, but got -2147483648");
  ASSERT_FALSE(parse(R"({"seed": -2})", s));
  EXPECT_EQ(s.task.sampling.seed, 4294967294u);
  EXPECT_EQ(error_of(R"({"n_cmpl": 5})"),
            "Field 'n_cmpl': Value must be between 1 <= value <= 4, but got 5");
  EXPECT_EQ(error_of(R"({"adaptive_decay": 1.5})"),
            "Field 'adaptive_decay': Value must be between 0.000000 <= value <= 0.990000, but got "
            "1.500000");
  ASSERT_FALSE(parse(R"({"top_p": 7, "temperature": -1, "top_k": -3})", s));  // soft ranges clamp
  EXPECT_FLOAT_EQ(s.task.sampling.top_p, 1.0f);
  EXPECT_FLOAT_EQ(s.task.sampling.temperature, 0.0f);
  EXPECT_EQ(s.task.sampling.top_k, 0);
}

TEST_F(CompletionParamsTest, TypeErrorsNameTheField) {
  EXPECT_EQ(error_of(R"({"n_predict": "many"})"),
            "Field 'n_predict': type must be number, but is string");
  EXPECT_EQ(error_of(R"({"return_tokens": 1})"),
            "Field 'return_tokens': type must be boolean, but is number");
  EXPECT_EQ(error_of(R"({"stop": [1]})"), "Field 'stop': type must be string, but is number");
  EXPECT_EQ(error_of(R"({"stream_options": {"include_usage": "yes"}})"),
            "Field 'include_usage': type must be boolean, but is string");
}

TEST_F(CompletionParamsTest, StopAndBiasForms) {
  CompletionSettings s;
  ASSERT_FALSE(parse(R"({"stop": ["", "a", "b"]})", s));
  EXPECT_EQ(s.task.stop, (std::vector<std::string>{"a", "b"}));
  ASSERT_FALSE(parse(R"({"stop": "x"})", s));
  EXPECT_EQ(s.task.stop, std::vector<std::string>{"x"});
  ASSERT_FALSE(parse(R"({"logit_bias": [[261, -100], ["Once", 2]]})", s));
  ASSERT_GE(s.logit_bias_echo.size(), 2u);
  EXPECT_EQ(s.logit_bias_echo[0].first, 261);
  // Entries the reference skips silently are refused, naming the problem.
  EXPECT_EQ(error_of(R"({"logit_bias": [[9999, 1]]})"),
            "Field 'logit_bias': token id 9999 is outside the vocabulary (0..511)");
  EXPECT_EQ(error_of(R"({"logit_bias": [[1, true]]})"),
            "Field 'logit_bias': a bias must be a number or false, but is true");
  EXPECT_EQ(error_of(R"({"logit_bias": [[1]]})"),
            "Field 'logit_bias': each entry must be a [token, bias] pair");
  EXPECT_EQ(error_of(R"({"logit_bias": 5})"),
            "Field 'logit_bias': type must be array or object, but is number");
  ASSERT_FALSE(parse(R"({"logit_bias": {"261": false}, "ignore_eos": true})", s));
  ASSERT_GE(s.logit_bias_echo.size(), 2u);
  EXPECT_TRUE(std::isinf(s.logit_bias_echo[0].second));
  Json gs = generation_settings_json(s, true);
  EXPECT_EQ(gs["logit_bias"][0]["bias"], nullptr);
  EXPECT_EQ(gs.size(), 49u);
  EXPECT_EQ(generation_settings_json(s, false).size(), 42u);
}

TEST_F(CompletionParamsTest, UnhonouredFieldsAreRefusedUnlessDefault) {
  CompletionSettings s;
  EXPECT_FALSE(parse(R"({"repeat_penalty": 1.0, "dry_base": 1.75})", s).has_value());
  EXPECT_NE(error_of(R"({"chat_parser": "{}"})").find("'chat_parser'"), std::string::npos);
  EXPECT_EQ(error_of(R"({"chat_parser": ""})"), "");
  EXPECT_EQ(error_of(R"({"samplers": "edskypmxt", "mirostat": 0, "grammar": ""})"), "");
  EXPECT_NE(error_of(R"({"n_cache_reuse": 4})").find("'n_cache_reuse'"), std::string::npos);
  EXPECT_NE(error_of(R"({"lora": [{"id": 0, "scale": 1}]})").find("'lora'"), std::string::npos);
  EXPECT_EQ(error_of(R"({"lora": 3})"),
            "Field 'lora': Error: 'lora' must be an array of objects with 'id' and 'scale' fields");
}

TEST_F(CompletionParamsTest, ChatParserAndReasoningFields) {
  CompletionSettings s;
  ASSERT_FALSE(parse(R"({"chat_format": 2, "reasoning_format": "none",
                         "generation_prompt": "<think>"})",
                     s));
  Json gs = generation_settings_json(s, true);
  EXPECT_EQ(gs["chat_format"], "peg-native");
  EXPECT_EQ(gs["reasoning_format"], "none");
  EXPECT_EQ(gs["generation_prompt"], "<think>");
  EXPECT_EQ(error_of(R"({"chat_format": 7})"),
            "Field 'chat_format': Value must be between 0 <= value <= 4, but got 7");
  EXPECT_EQ(error_of(R"({"reasoning_format": "x"})"),
            "Field 'reasoning_format': Unknown reasoning format: x");
  EXPECT_EQ(error_of(R"({"reasoning_budget_tokens": -2})"),
            "Field 'reasoning_budget_tokens': Value must be between -1 <= value <= 2147483647, but "
            "got -2");
  EXPECT_NE(error_of(R"({"continue_final_message": "maybe"})"), "");
  // The budget exists with both tags and a budget (or a lazy grammar, or control).
  ASSERT_FALSE(parse(R"({"reasoning_budget_tokens": 3, "reasoning_budget_start_tag": "<think>",
                         "reasoning_budget_end_tag": "</think>"})",
                     s));
  EXPECT_TRUE(s.task.reasoning.active());
  EXPECT_EQ(s.task.reasoning.budget, 3);
  EXPECT_EQ(s.task.reasoning.end_tag, "</think>");
  ASSERT_FALSE(parse(R"({"reasoning_budget_start_tag": "<think>",
                         "reasoning_budget_end_tags": ["", "</think>"]})",
                     s));
  EXPECT_FALSE(s.task.reasoning.active());  // no budget, no grammar, no control
  ASSERT_FALSE(parse(R"({"reasoning_budget_tokens": 3})", s));
  EXPECT_FALSE(s.task.reasoning.active());  // no tags
}

TEST_F(CompletionParamsTest, SamplingFieldsFollowTheReferenceRules) {
  CompletionSettings s;
  ASSERT_FALSE(parse(R"({"repeat_penalty": 1.1, "samplers": "kt", "mirostat": 7,
                         "xtc_probability": 3, "xtc_threshold": -1, "dry_base": 0.5,
                         "adaptive_target": 4, "dry_sequence_breakers": ["a", "b"],
                         "top_n_sigma": 1.5, "typical_p": 0.5, "dynatemp_range": 0.25})",
                     s));
  const sampling::SamplerParams& p = s.task.sampling;
  EXPECT_FLOAT_EQ(p.repeat_penalty, 1.1f);
  EXPECT_EQ(p.samplers, (std::vector<sampling::SamplerType>{sampling::SamplerType::kTopK,
                                                            sampling::SamplerType::kTemperature}));
  EXPECT_EQ(p.mirostat, 2);  // soft range: clamped
  EXPECT_FLOAT_EQ(p.xtc_probability, 1.0f);
  EXPECT_FLOAT_EQ(p.xtc_threshold, 0.0f);
  EXPECT_FLOAT_EQ(p.dry_base, 1.75f);  // below 1: the server default
  EXPECT_FLOAT_EQ(p.adaptive_target, 1.0f);
  EXPECT_EQ(p.dry_sequence_breakers, (std::vector<std::string>{"a", "b"}));
  EXPECT_FLOAT_EQ(p.top_n_sigma, 1.5f);
  EXPECT_FLOAT_EQ(p.typical_p, 0.5f);
  EXPECT_FLOAT_EQ(p.dynatemp_range, 0.25f);
  // Names in an array, with the reference's aliases; unknown names and letters and other
  // types are refused (the reference skips them silently).
  ASSERT_FALSE(parse(R"({"samplers": ["Top-K", "nucleus", "temp"]})", s));
  EXPECT_EQ(s.task.sampling.samplers.size(), 3u);
  EXPECT_EQ(error_of(R"({"samplers": ["bogus", 5]})")
                .rfind("Field 'samplers': unknown sampler 'bogus'", 0),
            0u);
  EXPECT_EQ(error_of(R"({"samplers": ["top_k", 5]})"),
            "Field 'samplers': type must be string, but is number");
  EXPECT_EQ(
      error_of(R"({"samplers": "kzt"})").rfind("Field 'samplers': unknown sampler letter 'z'", 0),
      0u);
  EXPECT_EQ(error_of(R"({"samplers": 5})"),
            "Field 'samplers': type must be array of names or string of letters, but is number");
  // Hard ranges and the reference's messages.
  EXPECT_EQ(error_of(R"({"adaptive_decay": 1.5})"),
            "Field 'adaptive_decay': Value must be between 0.000000 <= value <= 0.990000, but got "
            "1.500000");
  EXPECT_EQ(error_of(R"({"repeat_last_n": -1})"),
            "Field 'repeat_last_n': Value must be between 0 <= value <= 2147483647, but got -1");
  EXPECT_EQ(error_of(R"({"dry_sequence_breakers": "none"})"),
            "Field 'dry_sequence_breakers': Error: dry_sequence_breakers must be a non-empty "
            "array of strings");
  EXPECT_EQ(error_of(R"({"dry_sequence_breakers": []})").empty(), false);
  EXPECT_EQ(error_of(R"({"repeat_penalty": -1})").rfind("Failed to initialize samplers: ", 0), 0u);
  EXPECT_EQ(error_of(R"({"frequency_penalty": 1e39})").rfind("Failed to initialize samplers", 0),
            0u);
}

TEST_F(CompletionParamsTest, WrongTypesAreRefusedWhereTheReferenceFallsBack) {
  // Each of these the reference accepts and ignores (or reads as its default).
  EXPECT_EQ(error_of(R"({"stop": 5})"),
            "Field 'stop': type must be string or array of strings, but is number");
  EXPECT_EQ(error_of(R"({"stream_options": 1})"),
            "Field 'stream_options': type must be object, but is number");
  EXPECT_EQ(error_of(R"({"response_fields": "content"})"),
            "Field 'response_fields': type must be array, but is string");
  EXPECT_EQ(error_of(R"({"response_fields": [1]})"),
            "Field 'response_fields': type must be string, but is number");
  EXPECT_EQ(error_of(R"({"id_slot": "0"})"),
            "Field 'id_slot': type must be integer, but is string");
  EXPECT_EQ(error_of(R"({"id_slot": 4})"), "Field 'id_slot': slot id 4 is outside -1 (any) .. 3");
  EXPECT_EQ(error_of(R"({"json_schema": "notobject"})"),
            "Field 'json_schema': must be a JSON Schema object");
  EXPECT_EQ(error_of(R"({"json_schema": 5})"), "Field 'json_schema': must be a JSON Schema object");
  EXPECT_EQ(error_of(R"({"message_delimiters": {}})"),
            "Field 'message_delimiters': type must be array, but is object");
  EXPECT_EQ(error_of(R"({"grammar_type": 1})"),
            "Field 'grammar_type': type must be string, but is number");
  // Size limits on what feeds the engine.
  Json many = Json::array();
  for (int i = 0; i < 200; ++i) many.push_back("s" + std::to_string(i));
  EXPECT_EQ(error_of(Json{{"stop", many}}.dump()), "Field 'stop': at most 128 items, but got 200");
  EXPECT_EQ(error_of(Json{{"stop", std::string(5000, 'x')}}.dump()),
            "Field 'stop': strings of at most 4096 bytes");
  CompletionSettings s;
  EXPECT_FALSE(parse(R"({"id_slot": -1, "stop": [], "response_fields": []})", s));
}

TEST_F(CompletionParamsTest, GrammarFields) {
  CompletionSettings s;
  ASSERT_FALSE(parse(R"({"json_schema": {"type": "integer"}})", s));
  EXPECT_NE(s.task.grammar.text.find("root"), std::string::npos);
  EXPECT_NE(s.task.grammar.config.grammar, nullptr);
  // grammar wins over json_schema; "" is no grammar.
  ASSERT_FALSE(parse(R"({"json_schema": {"type": "integer"}, "grammar": "root ::= \"a\""})", s));
  EXPECT_EQ(s.task.grammar.text, "root ::= \"a\"");
  ASSERT_FALSE(parse(R"({"grammar": ""})", s));
  EXPECT_EQ(s.task.grammar.config.grammar, nullptr);
  // Triggers: a multi-token word becomes an escaped pattern, a pattern is kept, a full
  // pattern is anchored; a token trigger needs its id.
  ASSERT_FALSE(parse(R"({"grammar": "root ::= \"a\"", "grammar_lazy": true,
                         "grammar_triggers": [{"type": 1, "value": "a.b"},
                                              {"type": 2, "value": "x+"},
                                              {"type": 3, "value": "y"},
                                              {"type": 0, "value": "<s>", "token": 1}]})",
                     s));
  EXPECT_TRUE(s.task.grammar.config.lazy);
  EXPECT_EQ(s.task.grammar.config.trigger_patterns,
            (std::vector<std::string>{"a\\.b", "x+", "^y$"}));
  EXPECT_EQ(s.task.grammar.config.trigger_tokens, (std::vector<int32_t>{1}));
  EXPECT_NE(
      error_of(R"({"grammar": "root ::= \"a\"", "grammar_triggers": [{"type": 0, "value": "x"}]})"),
      "");
  EXPECT_NE(
      error_of(R"({"grammar": "root ::= \"a\"", "grammar_triggers": [{"type": 9, "value": "x"}]})"),
      "");
  // preserved_tokens: single-token strings only, sorted.
  ASSERT_FALSE(parse(R"({"preserved_tokens": ["</s>", "<s>", "two words"]})", s));
  EXPECT_EQ(s.task.grammar.preserved_tokens, (std::vector<int32_t>{1, 2}));
}

TEST_F(CompletionParamsTest, PromptForms) {
  std::vector<std::vector<int32_t>> prompts;
  ASSERT_FALSE(parse_prompts(*tok_, Json("Once upon a time"), prompts));
  EXPECT_EQ(prompts, (std::vector<std::vector<int32_t>>{{1, 403, 407, 261, 378}}));
  ASSERT_FALSE(
      parse_prompts(*tok_, Json::parse(R"(["a", [1, 2], {"prompt_string": "b"}])"), prompts));
  EXPECT_EQ(prompts.size(), 3u);
  EXPECT_EQ(prompts[1], (std::vector<int32_t>{1, 2}));
  ASSERT_FALSE(parse_prompts(*tok_, Json::parse(R"([5, "Once"])"), prompts));
  ASSERT_EQ(prompts.size(), 1u);
  EXPECT_EQ(prompts[0].front(), 5);  // no BOS: the first element is not a string
  EXPECT_TRUE(parse_prompts(*tok_, Json::parse("[]"), prompts));
  EXPECT_TRUE(parse_prompts(*tok_, Json(3.5), prompts));
  EXPECT_TRUE(parse_prompts(*tok_, Json::parse(R"(["a", true])"), prompts));
}

TEST(CompletionJsonTest, ProjectionKeepsWholePathsAsKeys) {
  Json result = Json::parse(
      R"({"content":"x","timings":{"prompt_n":3},"generation_settings":{"n_predict":8}})");
  Json out = project_fields(result, {"content", "generation_settings/n_predict", "timings/prompt_n",
                                     "missing", "content/x", ""});
  EXPECT_EQ(out.dump(),
            R"({"content":"x","generation_settings/n_predict":8,"timings/prompt_n":3})");
}

TEST(CompletionJsonTest, TimingsDerivations) {
  scheduler::Timings t{7, 1, 2.0, 4, 15.132};
  Json j = timings_json(t);
  EXPECT_DOUBLE_EQ(j["predicted_per_token_ms"].get<double>(), 15.132 / 3);
  EXPECT_DOUBLE_EQ(j["prompt_per_second"].get<double>(), 500.0);
  scheduler::Timings none{};
  EXPECT_EQ(timings_json(none)["predicted_per_second"].get<double>(), 0.0);
}

}  // namespace
}  // namespace hearth::server

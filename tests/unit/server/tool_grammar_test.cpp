// The tool-call grammar of each family accepts the calls the family writes, with the
// request's tool names and arguments that follow their schemas, and nothing else; and
// what it accepts, the output parser reads back.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>

#include "base/json_parse.h"
#include "chat/openai_messages.h"
#include "chat/output_syntax.h"
#include "grammar/grammar.h"
#include "sampling/grammar_sampler.h"
#include "server/json_util.h"
#include "server/openai/tool_grammar.h"
#include "support/test_paths.h"

namespace hearth::server::openai {
namespace {

std::vector<chat::Tool> tools() {
  return {{"get_weather", "",
           Json::parse(R"({"type":"object","properties":{"city":{"type":"string"},)"
                       R"("days":{"type":"integer","minimum":1,"maximum":7}},)"
                       R"("required":["city","days"]})")},
          {"get_time", "",
           Json::parse(R"({"type":"object","properties":{"zone":{"enum":["UTC","CET"]}}})")}};
}

const std::string kArgs = R"({"city": "Paris", "days": 3})";
const std::string kBadArgs = R"({"city": "Paris", "days": 9})";  // days over its maximum

struct Family {
  const char* template_file;
  const char* family;
  std::string call;  // one call of get_weather with kArgs, as the family writes it
};

std::vector<Family> families() {
  return {
      {"Qwen-Qwen3-0.6B.jinja", "hermes",
       "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}\n</tool_call>"},
      {"mistralai-Mistral-Nemo-Instruct-2407.jinja", "mistral-nemo",
       "[TOOL_CALLS][{\"name\": \"get_weather\", \"arguments\": " + kArgs +
           ", \"id\": \"abcdef123\"}]"},
      {"CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", "command-r7b",
       "<|START_ACTION|>[{\"tool_call_id\": \"0\", \"tool_name\": \"get_weather\", "
       "\"parameters\": " +
           kArgs + "}]<|END_ACTION|>"},
      {"deepseek-ai-DeepSeek-V3.1.jinja", "deepseek-v3",
       "<｜tool▁calls▁begin｜><｜tool▁call▁begin｜>get_weather<｜tool▁sep｜>" + kArgs +
           "<｜tool▁call▁end｜><｜tool▁calls▁end｜>"},
      {"moonshotai-Kimi-K2.jinja", "kimi-k2",
       "<|tool_calls_section_begin|><|tool_call_begin|>functions.get_weather:0"
       "<|tool_call_argument_begin|>" +
           kArgs + "<|tool_call_end|><|tool_calls_section_end|>"},
      {"unsloth-mistral-Devstral-Small-2507.jinja", "mistral-args",
       "[TOOL_CALLS]get_weather[ARGS]" + kArgs},
      {"Mistral-Small-3.2-24B-Instruct-2506.jinja", "mistral-call-id",
       "[TOOL_CALLS]get_weather[CALL_ID]abc123def[ARGS]" + kArgs},
      {"meetkai-functionary-medium-v3.1.jinja", "functionary-v3.1",
       "<function=get_weather>" + kArgs + "</function>"},
      // Tagged parameters: strings as text, other values as JSON of their schema.
      {"Qwen3-Coder.jinja", "qwen3-coder",
       "<tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
       "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>"},
      {"ByteDance-Seed-OSS.jinja", "seed-oss",
       "<seed:tool_call>\n<function=get_weather>\n<parameter=city>\nParis\n</parameter>\n"
       "<parameter=days>\n3\n</parameter>\n</function>\n</seed:tool_call>"},
      {"GLM-4.6.jinja", "glm-4.5",
       "<tool_call>get_weather\n<arg_key>city</arg_key>\n<arg_value>Paris</arg_value>\n"
       "<arg_key>days</arg_key>\n<arg_value>3</arg_value>\n</tool_call>"},
      {"MiniMax-M2.jinja", "minimax-m2",
       "<minimax:tool_call>\n<invoke name=\"get_weather\">\n<parameter name=\"city\">Paris"
       "</parameter>\n<parameter name=\"days\">3</parameter>\n</invoke>\n</minimax:tool_call>"},
      {"deepseek-ai-DeepSeek-V3.2.jinja", "deepseek-v3.2-dsml",
       "<｜DSML｜function_calls>\n<｜DSML｜invoke name=\"get_weather\">\n<｜DSML｜parameter "
       "name=\"city\" string=\"true\">Paris</｜DSML｜parameter>\n<｜DSML｜parameter name=\"days\" "
       "string=\"false\">3</｜DSML｜parameter>\n</｜DSML｜invoke>\n</｜DSML｜function_calls>"},
      {"openai-gpt-oss-120b.jinja", "gpt-oss",
       " to=functions.get_weather<|channel|>commentary json<|message|>" + kArgs + "<|call|>"},
      {"Apertus-8B-Instruct.jinja", "apertus",
       "<|tools_prefix|>[{\"get_weather\": " + kArgs + "}]<|tools_suffix|>"},
      {"MiniMax-M1.jinja", "minimax-m1",
       "<tool_calls>\n{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}\n</tool_calls>"},
      {"GigaChat3.1-10B-A1.8B.jinja", "gigachat3.1",
       "<|function_call|>{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}"},
      {"upstage-Solar-Open-100B.jinja", "solar-open",
       "<|tool_calls|><|tool_call:begin|>call00001<|tool_call:name|>get_weather"
       "<|tool_call:args|>" +
           kArgs + "<|tool_call:end|><|calls|>"},
      {"openbmb-MiniCPM5-1B.jinja", "minicpm5",
       "<function name=\"get_weather\"><param name=\"city\">Paris</param>"
       "<param name=\"days\">3</param></function>"},
      // LFM2/LFM2.5: a Python list of calls, values JSON of their schema.
      {"LFM2.5-8B-A1B.jinja", "lfm2",
       "<|tool_call_start|>[get_weather(city=\"Paris\", days=3)]<|tool_call_end|>"},
      {"tencent-Hy3.jinja", "hy3",
       "<tool_calls:opensource>\n<tool_call:opensource>get_weather<tool_sep:opensource>\n"
       "<arg_key:opensource>city</arg_key:opensource>\n<arg_value:opensource>Paris"
       "</arg_value:opensource>\n<arg_key:opensource>days</arg_key:opensource>\n"
       "<arg_value:opensource>3</arg_value:opensource>\n</tool_call:opensource>\n"
       "</tool_calls:opensource>"},
      // Kimi K3: numbered calls, typed arguments, one tools section.
      {"Kimi-K3.jinja", "kimi-k3",
       "<|open|>tools<|sep|><|open|>call tool=\"get_weather\" index=\"1\"<|sep|>"
       "<|open|>argument key=\"city\" type=\"string\"<|sep|>Paris<|close|>argument<|sep|>"
       "<|open|>argument key=\"days\" type=\"number\"<|sep|>3<|close|>argument<|sep|>"
       "<|close|>call<|sep|><|close|>tools<|sep|>"},
      // MiniMax M3: an element per argument, each tag led by the namespace token.
      {"MiniMax-M3.jinja", "minimax-m3",
       "]<]minimax[>[<tool_call>\n]<]minimax[>[<invoke name=\"get_weather\">]<]minimax[>[<city>"
       "Paris]<]minimax[>[</city>]<]minimax[>[<days>3]<]minimax[>[</days>]<]minimax[>[</invoke>\n"
       "]<]minimax[>[</tool_call>"},
      // Muse Glimmer: a message to the function holding its invoke tags.
      {"muse-glimmer.jinja", "muse-glimmer",
       " to=get_weather<|message|><atem:function_calls>\n<atem:invoke name=\"get_weather\">\n"
       "<atem:parameter name=\"city\">Paris</atem:parameter>\n<atem:parameter name=\"days\">3"
       "</atem:parameter>\n</atem:invoke>\n</atem:function_calls>"},
      // Gemma 4: bare keys in sorted order, strings between <|"|>.
      {"google-gemma-4-31B-it.jinja", "gemma-4",
       "<|tool_call>call:get_weather{city:<|\"|>Paris<|\"|>,days:3}<tool_call|>"},
  };
}

bool accepts(const std::string& gbnf, const std::string& text) {
  auto g = grammar::parse(gbnf);
  EXPECT_TRUE(g.is_ok()) << g.status().message() << "\n" << gbnf;
  if (!g.is_ok()) return false;
  grammar::Matcher m(*g, nullptr);
  return m.accept_text(text).is_ok() && m.can_end();
}

std::string replace(std::string s, const std::string& from, const std::string& to) {
  const size_t at = s.find(from);
  if (at != std::string::npos) s.replace(at, from.size(), to);
  return s;
}

std::string bad_call(const Family& f) {
  std::string bad = replace(f.call, kArgs, kBadArgs);
  for (const char* three : {"\n3\n", ">3<", "days=3", "days:3", "days>3]"}) {
    std::string nine = three;
    nine[nine.find('3')] = '9';
    bad = replace(bad, three, nine);
  }
  return bad;
}

// The family's output syntax, as its template sets it.
chat::OutputSyntax family_syntax(const Family& f) {
  const std::string source = hearth::test::read_file(
      hearth::test::shared_path(std::string("templates/") + f.template_file));
  EXPECT_EQ(chat::tool_call_family(source), f.family);
  chat::OutputSyntax syntax;
  syntax.tools = chat::tool_call_format(source);
  syntax.parse_tool_calls = true;
  syntax.harmony = source.find("<|channel|>") != std::string::npos;
  syntax.recipients = chat::writes_recipient_messages(source);
  return syntax;
}

TEST(ToolGrammar, EachFamilyAcceptsItsCallsAndNothingElse) {
  for (const Family& f : families()) {
    SCOPED_TRACE(f.family);
    chat::OutputSyntax syntax = family_syntax(f);
    std::optional<ToolGrammar> required;
    ASSERT_FALSE(build_tool_grammar(syntax, tools(), true, required).has_value());
    ASSERT_TRUE(required.has_value());
    EXPECT_FALSE(required->lazy);
    EXPECT_TRUE(accepts(required->gbnf, f.call));
    EXPECT_FALSE(accepts(required->gbnf, replace(f.call, "get_weather", "get_wether")));
    // days 3 -> 9 (over its maximum), as each family writes the value.
    const std::string bad = bad_call(f);
    EXPECT_NE(bad, f.call);
    EXPECT_FALSE(accepts(required->gbnf, bad));
    EXPECT_FALSE(accepts(required->gbnf, "Sure! " + f.call));
    // What the grammar lets through, the parser reads back.
    chat::ParsedMessage parsed = chat::parse_output(syntax, f.call, false);
    ASSERT_EQ(parsed.tool_calls.size(), 1u);
    EXPECT_EQ(parsed.tool_calls[0].name, "get_weather");
    EXPECT_EQ(Json::parse(parsed.tool_calls[0].arguments), Json::parse(kArgs));
    // tool_choice auto: lazy, starting at the family's marker.
    std::optional<ToolGrammar> lazy;
    ASSERT_FALSE(build_tool_grammar(syntax, tools(), false, lazy).has_value());
    ASSERT_TRUE(lazy.has_value());
    EXPECT_TRUE(lazy->lazy);
    EXPECT_EQ(f.call.rfind(lazy->trigger, 0), 0u) << lazy->trigger;
    if (!lazy->trigger_pattern.empty()) {
      // Glimmer: a header to one of the tools, never to=self or to=user; one capture group,
      // where the grammar starts.
      EXPECT_EQ(lazy->trigger_pattern, "( to=(?:get_weather|get_time)<\\|message\\|>)");
      EXPECT_TRUE(sampling::check_trigger_patterns({lazy->trigger_pattern}).is_ok());
    }
  }
}

// Tools carry their schema parsed; the grammar and the output syntax read that value and
// parse nothing. This schema holds an annotation of 5,000 keys, more than the request
// parser takes from text (4,096): a reader that printed it and parsed it back would lose
// the schema, and let days 9 through or read city 123 as a number.
TEST(ToolGrammar, SchemasAreReadAsParsedNeverReparsed) {
  std::vector<chat::Tool> parsed = tools();
  Json annotation = Json::object();
  for (int i = 0; i < 5000; ++i) annotation["k" + std::to_string(i)] = i;
  parsed[0].parameters["x-annotation"] = std::move(annotation);
  ASSERT_FALSE(parse_json(parsed[0].parameters.dump()).is_ok());
  EXPECT_EQ(&chat::tool_schema(parsed[0]), &parsed[0].parameters);
  for (const Family& f : families()) {
    SCOPED_TRACE(f.family);
    std::optional<ToolGrammar> g;
    ASSERT_FALSE(build_tool_grammar(family_syntax(f), parsed, true, g).has_value());
    ASSERT_TRUE(g.has_value());
    EXPECT_TRUE(accepts(g->gbnf, f.call));
    EXPECT_FALSE(accepts(g->gbnf, bad_call(f)));
  }
  // Tagged parameters: a string parameter's value is text, whatever it looks like.
  const std::vector<Family> all = families();
  auto coder = std::find_if(all.begin(), all.end(),
                            [](const Family& f) { return std::string(f.family) == "qwen3-coder"; });
  ASSERT_NE(coder, all.end());
  chat::OutputSyntax syntax = family_syntax(*coder);
  chat::add_string_params(parsed, syntax.tools);
  EXPECT_EQ(syntax.tools.string_params["get_weather"], std::set<std::string>{"city"});
  chat::ParsedMessage m = chat::parse_output(
      syntax,
      "<tool_call>\n<function=get_weather>\n<parameter=city>\n123\n</parameter>\n"
      "<parameter=days>\n3\n</parameter>\n</function>\n</tool_call>",
      false);
  ASSERT_EQ(m.tool_calls.size(), 1u);
  EXPECT_EQ(Json::parse(m.tool_calls[0].arguments), Json::parse(R"({"city":"123","days":3})"));
}

TEST(ToolGrammar, OneCallWithoutParallelCalls) {
  const std::string call =
      "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": " + kArgs + "}\n</tool_call>";
  chat::OutputSyntax syntax;
  syntax.tools = chat::tool_call_format("{{ '<tool_call>' }}");
  syntax.parse_tool_calls = true;
  std::optional<ToolGrammar> g;
  ASSERT_FALSE(build_tool_grammar(syntax, tools(), true, g).has_value());
  EXPECT_TRUE(accepts(g->gbnf, call + "\n" + call));
  syntax.parallel_tool_calls = false;
  ASSERT_FALSE(build_tool_grammar(syntax, tools(), true, g).has_value());
  EXPECT_TRUE(accepts(g->gbnf, call));
  EXPECT_FALSE(accepts(g->gbnf, call + "\n" + call));
}

// After a generation prompt that opened a thinking block the grammar is the answer's
// alone: the chat layer starts it once the block is closed (the reasoning budget forces the
// end tag), so it neither needs nor accepts the end tag itself.
TEST(ToolGrammar, ForcedCallAfterAnOpenedThinkingBlockIsTheAnswersGrammar) {
  chat::OutputSyntax syntax;
  syntax.tools = chat::tool_call_format("{{ '<tool_call>' }}");
  syntax.parse_tool_calls = true;
  syntax.literal = "<|im_start|>assistant\n";
  syntax.prefix = "<|im_start|>assistant\n<think>\n";
  syntax.reasoning_start = "<think>";
  syntax.reasoning_end = "</think>";
  syntax.extract_reasoning = true;
  EXPECT_TRUE(opens_thinking(syntax));
  std::optional<ToolGrammar> g;
  ASSERT_FALSE(build_tool_grammar(syntax, tools(), true, g).has_value());
  const std::string call =
      "<tool_call>\n{\"name\": \"get_time\", \"arguments\": {\"zone\": \"UTC\"}}\n</tool_call>";
  EXPECT_TRUE(accepts(g->gbnf, call));
  EXPECT_FALSE(accepts(g->gbnf, "</think>" + call));
  chat::ParsedMessage parsed = chat::parse_output(syntax, " </think>" + call, false);
  ASSERT_EQ(parsed.tool_calls.size(), 1u);
  EXPECT_EQ(parsed.tool_calls[0].name, "get_time");
  syntax.prefix = "<|im_start|>assistant\n<think>\n\n</think>\n\n";
  EXPECT_FALSE(opens_thinking(syntax));
}

// Functionary v3.2: the generation prompt ends with the first message's ">>>", so a forced
// call starts at the name; later calls and calls after content carry their own ">>>".
TEST(ToolGrammar, FunctionaryV32CallsStartInTheGenerationPrompt) {
  const std::string source = hearth::test::read_file(
      hearth::test::shared_path("templates/meetkai-functionary-medium-v3.2.jinja"));
  ASSERT_EQ(chat::tool_call_family(source), "functionary-v3.2");
  chat::OutputSyntax syntax;
  syntax.tools = chat::tool_call_format(source);
  syntax.parse_tool_calls = true;
  syntax.content_start = chat::content_start(source);
  syntax.literal = "<|start_header_id|>assistant<|end_header_id|>\n\n";
  syntax.prefix = syntax.literal + ">>>";
  std::optional<ToolGrammar> g;
  ASSERT_FALSE(build_tool_grammar(syntax, tools(), true, g).has_value());
  const std::string call = "get_weather\n" + kArgs;
  EXPECT_TRUE(accepts(g->gbnf, call));
  EXPECT_TRUE(accepts(g->gbnf, call + ">>>get_time\n{\"zone\": \"UTC\"}"));
  EXPECT_FALSE(accepts(g->gbnf, ">>>" + call));
  EXPECT_FALSE(accepts(g->gbnf, "all\nSure"));
  chat::ParsedMessage parsed =
      chat::parse_output(syntax, call + ">>>get_time\n{\"zone\": \"UTC\"}", false);
  ASSERT_EQ(parsed.tool_calls.size(), 2u);
  EXPECT_EQ(parsed.tool_calls[1].name, "get_time");
  EXPECT_EQ(parsed.content, "");
  // tool_choice auto: content to the user first, then a call after its own marker.
  ASSERT_FALSE(build_tool_grammar(syntax, tools(), false, g).has_value());
  EXPECT_TRUE(g->lazy);
  EXPECT_EQ(g->trigger, ">>>");
  EXPECT_TRUE(accepts(g->gbnf, ">>>" + call));
  parsed = chat::parse_output(syntax, "all\nLet me check.>>>" + call, false);
  EXPECT_EQ(parsed.content, "Let me check.");
  ASSERT_EQ(parsed.tool_calls.size(), 1u);
  EXPECT_EQ(Json::parse(parsed.tool_calls[0].arguments), Json::parse(kArgs));
  // The recipient line is never content, not even while it is being written.
  EXPECT_EQ(chat::parse_output(syntax, "al", true).content, "");
  EXPECT_EQ(chat::parse_output(syntax, "all\nHi", true).content, "Hi");
  syntax.parse_tool_calls = false;
  EXPECT_EQ(chat::parse_output(syntax, "all\nHello there", false).content, "Hello there");
}

TEST(ToolGrammar, PythonCallsTakeRequiredArgumentsFirst) {
  chat::OutputSyntax syntax;
  syntax.tools = chat::tool_call_format("<|tool_call_start|>");
  syntax.parse_tool_calls = true;
  std::optional<ToolGrammar> g;
  ASSERT_FALSE(build_tool_grammar(syntax, tools(), true, g).has_value());
  const std::string start = "<|tool_call_start|>[";
  const std::string end = "]<|tool_call_end|>";
  EXPECT_TRUE(accepts(g->gbnf, start + "get_time()" + end));
  EXPECT_TRUE(accepts(g->gbnf, start + "get_time(zone=\"UTC\")" + end));
  EXPECT_FALSE(accepts(g->gbnf, start + "get_time(zone=\"EST\")" + end));
  EXPECT_FALSE(accepts(g->gbnf, start + "get_weather(city=\"Paris\")" + end));
  EXPECT_TRUE(accepts(g->gbnf, start + "get_weather(city=\"Paris\", days=3), get_time()" + end));
  chat::ParsedMessage parsed = chat::parse_output(
      syntax, start + "get_weather(city=\"Paris\", days=3), get_time()" + end, false);
  ASSERT_EQ(parsed.tool_calls.size(), 2u);
  EXPECT_EQ(Json::parse(parsed.tool_calls[0].arguments), Json::parse(kArgs));
  EXPECT_EQ(parsed.tool_calls[1].arguments, "{}");
}

// Gemma 4's arguments follow the schema in the template's literal: keys bare and sorted,
// optional ones optional, enums, lists, nested objects and local $refs.
TEST(ToolGrammar, GemmaArgumentsFollowTheSchema) {
  chat::OutputSyntax syntax;
  syntax.tools = chat::tool_call_format("{{ '<|tool_call>call:' }}");
  syntax.parse_tool_calls = true;
  const std::vector<chat::Tool> gemma_tools = {
      {"plan", "",
       Json::parse(R"({"type":"object","$defs":{"stop":{"type":"object","properties":{)"
                   R"("Town":{"type":"string","maxLength":8},"nights":{"type":"integer",)"
                   R"("minimum":1}},"required":["Town"]}},"properties":{"mode":{"enum":)"
                   R"(["rail","bus"]},"stops":{"type":"array","items":{"$ref":"#/$defs/stop"},)"
                   R"("maxItems":2},"budget":{"type":["number","null"]},"notes":{}},)"
                   R"("required":["stops"]})")}};
  std::optional<ToolGrammar> g;
  ASSERT_FALSE(build_tool_grammar(syntax, gemma_tools, true, g).has_value());
  ASSERT_TRUE(g.has_value());
  auto call = [](const std::string& args) {
    return "<|tool_call>call:plan" + args + "<tool_call|>";
  };
  const std::string q = "<|\"|>";
  const std::string good = "{budget:12.5,mode:" + q + "bus" + q + ",notes:{a:[1," + q + "x<y" + q +
                           "]},stops:[{nights:2,Town:" + q + "Oslo" + q + "},{Town:" + q + "Rome" +
                           q + "}]}";
  EXPECT_TRUE(accepts(g->gbnf, call(good)));
  EXPECT_TRUE(accepts(g->gbnf, call("{stops:[]}")));
  EXPECT_TRUE(accepts(g->gbnf, call("{budget:null,stops:[]}")));
  EXPECT_FALSE(accepts(g->gbnf, call("{}")));  // stops is required
  EXPECT_FALSE(accepts(g->gbnf, call("{stops:[],mode:" + q + "bus" + q + "}")));  // unsorted
  EXPECT_FALSE(accepts(g->gbnf, call("{mode:" + q + "car" + q + ",stops:[]}")));  // enum
  EXPECT_FALSE(accepts(g->gbnf, call("{stops:[{nights:2}]}")));  // Town is required
  EXPECT_FALSE(accepts(g->gbnf, call("{stops:[{Town:" + q + "Amsterdam" + q + "}]}")));
  EXPECT_FALSE(accepts(g->gbnf, call("{stops:[{nights:0,Town:" + q + "Oslo" + q + "}]}")));
  EXPECT_FALSE(accepts(g->gbnf, call("{stops:[],extra:1}")));  // undeclared key
  EXPECT_FALSE(accepts(g->gbnf, call("{stops:[{Town:" + q + "A" + q + "},{Town:" + q + "B" + q +
                                     "},{Town:" + q + "C" + q + "}]}")));  // maxItems
  chat::ParsedMessage parsed = chat::parse_output(syntax, call(good), false);
  ASSERT_EQ(parsed.tool_calls.size(), 1u);
  EXPECT_EQ(Json::parse(parsed.tool_calls[0].arguments),
            Json::parse(R"({"budget":12.5,"mode":"bus","notes":{"a":[1,"x<y"]},)"
                        R"("stops":[{"nights":2,"Town":"Oslo"},{"Town":"Rome"}]})"));
  // A tool whose keys are all optional takes none of them too.
  ASSERT_FALSE(build_tool_grammar(syntax, tools(), true, g).has_value());
  EXPECT_TRUE(accepts(g->gbnf, "<|tool_call>call:get_time{}<tool_call|>"));
  EXPECT_TRUE(
      accepts(g->gbnf, "<|tool_call>call:get_time{zone:" + q + "CET" + q + "}<tool_call|>"));
  EXPECT_FALSE(accepts(g->gbnf, "<|tool_call>call:get_time{zone:" + q + "X" + q + "}<tool_call|>"));
  // A reference that does not resolve is the client's error.
  std::optional<ApiError> err = build_tool_grammar(
      syntax, {{"f", "", Json::parse(R"({"properties":{"x":{"$ref":"#/$defs/missing"}}})")}}, true,
      g);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->message,
            "JSON schema conversion failed:\nunresolvable $ref '#/$defs/missing' (tool 'f')")
      << err->message;
}

// MiniMax M3 nests objects as elements and lists as <item> elements; what its grammar
// lets through reads back as the JSON arguments.
TEST(ToolGrammar, MiniMaxM3NestedElements) {
  chat::OutputSyntax syntax;
  syntax.tools = chat::tool_call_format("]<]minimax[>[ <invoke name=");
  syntax.parse_tool_calls = true;
  const std::vector<chat::Tool> m3_tools = {
      {"plan", "",
       Json::parse(R"({"type":"object","properties":{"title":{"type":"string"},)"
                   R"("stops":{"type":"array","items":{"type":"object","properties":{)"
                   R"("town":{"type":"string"},"nights":{"type":"integer","minimum":1}},)"
                   R"("required":["town"]}},"fast":{"type":"boolean"}},"required":["stops"]})")}};
  std::optional<ToolGrammar> g;
  ASSERT_FALSE(build_tool_grammar(syntax, m3_tools, true, g).has_value());
  ASSERT_TRUE(g.has_value());
  const std::string ns = "]<]minimax[>[";
  auto el = [&](const std::string& tag, const std::string& inner) {
    return ns + "<" + tag + ">" + inner + ns + "</" + tag + ">";
  };
  auto call = [&](const std::string& args) {
    return ns + "<tool_call>\n" + ns + "<invoke name=\"plan\">" + args + ns + "</invoke>\n" + ns +
           "</tool_call>";
  };
  const std::string good = el("title", "Trip 1") +
                           el("stops", el("item", el("town", "Oslo") + el("nights", "2")) +
                                           el("item", el("town", "Rome"))) +
                           el("fast", "true");
  EXPECT_TRUE(accepts(g->gbnf, call(good)));
  EXPECT_TRUE(accepts(g->gbnf, call(el("stops", ""))));
  EXPECT_FALSE(accepts(g->gbnf, call(el("title", "x"))));  // stops required
  EXPECT_FALSE(accepts(g->gbnf, call(el("stops", el("item", el("nights", "2"))))));  // town
  EXPECT_FALSE(accepts(g->gbnf, call(el("stops", "") + el("fast", "yes"))));
  EXPECT_FALSE(accepts(g->gbnf, call(el("stops", "") + el("extra", "1"))));
  EXPECT_FALSE(accepts(g->gbnf, call(el("stops", "") + el("fast", "true") + el("fast", "true"))));
  EXPECT_FALSE(accepts(g->gbnf, call(el("stops", "") + el("title", "x"))));  // schema order
  syntax.tools.string_params["plan"] = {"title"};
  chat::ParsedMessage parsed = chat::parse_output(syntax, call(good), false);
  ASSERT_EQ(parsed.tool_calls.size(), 1u);
  EXPECT_EQ(Json::parse(parsed.tool_calls[0].arguments),
            Json::parse(R"({"title":"Trip 1","stops":[{"town":"Oslo","nights":2},)"
                        R"({"town":"Rome"}],"fast":true})"));
}

TEST(ToolGrammar, PrefixRulesRenamesReferencesNotLiterals) {
  const std::string gbnf =
      "root ::= \"root\" space item [root]\nitem ::= \"item\" | root-x\nroot-x ::= space\n"
      "space ::= \" \"\n";
  EXPECT_EQ(prefix_rules(gbnf, "p-"),
            "p-root ::= \"root\" p-space p-item [root]\np-item ::= \"item\" | p-root-x\n"
            "p-root-x ::= p-space\np-space ::= \" \"\n");
}

// A schema property named "0" gives rules named "0..."; the digits of a repetition count are
// not a reference to them (the fuzzer found "[0-9]{t0-0,15}", which did not parse).
TEST(ToolGrammar, PrefixRulesLeavesRepetitionCountsAlone) {
  const std::string gbnf = "root ::= 0 [0-9]{0,15} x{1}\n0 ::= \"a\"\n1 ::= 0{0,2}\n";
  EXPECT_EQ(prefix_rules(gbnf, "t0-"),
            "t0-root ::= t0-0 [0-9]{0,15} x{1}\nt0-0 ::= \"a\"\nt0-1 ::= t0-0{0,2}\n");
  chat::OutputSyntax syntax;
  syntax.tools = chat::tool_call_format("{{ '<tool_call>' }}");
  std::optional<ToolGrammar> g;
  ASSERT_FALSE(build_tool_grammar(syntax,
                                  {{"f", "",
                                    Json::parse(R"({"type":"object","properties":{"0":)"
                                                R"({"type":"array","items":{"type":"number"},)"
                                                R"("maxItems":3}},"required":["0"]})")}},
                                  true, g)
                   .has_value());
  const std::string call = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"0\": ";
  EXPECT_TRUE(accepts(g->gbnf, call + "[1.25, 20]}}\n</tool_call>")) << g->gbnf;
  EXPECT_FALSE(accepts(g->gbnf, call + "[1, 2, 3, 4]}}\n</tool_call>"));
}

// Every number a tool grammar lets through fits a double, so arguments always parse.
TEST(ToolGrammar, NumbersFitADouble) {
  chat::OutputSyntax syntax;
  syntax.tools = chat::tool_call_format("{{ '<tool_call>' }}");
  std::optional<ToolGrammar> g;
  ASSERT_FALSE(build_tool_grammar(syntax,
                                  {{"f", "",
                                    Json::parse(R"({"type":"object","properties":{"x":)"
                                                R"({"type":"number"}},"required":["x"]})")}},
                                  true, g)
                   .has_value());
  const std::string call = "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"x\": ";
  EXPECT_TRUE(accepts(g->gbnf, call + "1.5e-99}}\n</tool_call>"));
  EXPECT_FALSE(accepts(g->gbnf, call + "1e400}}\n</tool_call>"));
}

TEST(ToolGrammar, BadParameterSchemaIsTheClientsError) {
  chat::OutputSyntax syntax;
  syntax.tools = chat::tool_call_format("{{ '<tool_call>' }}");
  std::optional<ToolGrammar> g;
  std::optional<ApiError> err =
      build_tool_grammar(syntax, {{"f", "", Json{{"type", "foo"}}}}, true, g);
  ASSERT_TRUE(err.has_value());
  EXPECT_EQ(err->message.rfind(
                "JSON schema conversion failed:\nUnrecognized schema: {\"type\":\"foo\"}", 0),
            0u)
      << err->message;
}

}  // namespace
}  // namespace hearth::server::openai

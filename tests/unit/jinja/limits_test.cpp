// Limits: each bound of ParseOptions and Limits stops a runaway template with
// kResourceExhausted, while templates within the bound render; hostile nesting neither
// overflows the C++ stack while parsing nor while rendering or freeing values.
#include <gtest/gtest.h>
#include <pthread.h>

#include <string>

#include "template_test_util.h"

namespace hearth::jinja {
namespace {

using testing::failure;
using testing::render;

std::string repeat(std::string_view text, int count) {
  std::string out;
  for (int i = 0; i < count; ++i) out += text;
  return out;
}

Status parse_failure(std::string_view source, const ParseOptions& options = {}) {
  return Template::parse(source, options).status();
}

bool mentions(const Status& status, std::string_view text) {
  return status.message().find(text) != std::string::npos;
}

TEST(LimitsTest, OutputBytes) {
  RenderOptions options;
  options.limits.max_output_bytes = 100;
  EXPECT_EQ(render("{% for i in range(10) %}0123456789{% endfor %}", "{}", options),
            repeat("0123456789", 10));
  Status status = failure("{% for i in range(11) %}0123456789{% endfor %}", "{}", options);
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
  EXPECT_TRUE(mentions(status, "output exceeds the limit of 100 bytes")) << status.message();
}

TEST(LimitsTest, OutputBytesCountCapturedText) {
  // Text captured by macros and set blocks counts too: it cannot grow unbounded unseen.
  RenderOptions options;
  options.limits.max_output_bytes = 1000;
  Status status = failure(
      "{% set ns = namespace(s='x') %}{% for i in range(20) %}"
      "{% set ns.s = ns.s ~ ns.s %}{% endfor %}",
      "{}", options);
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
  status = failure("{% set s %}{% for i in range(200) %}0123456789{% endfor %}{% endset %}", "{}",
                   options);
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
}

TEST(LimitsTest, OutputBytesCountStringRepetition) {
  RenderOptions options;
  options.limits.max_output_bytes = 1000;
  Status status = failure("{% set s = 'x' * 100000 %}", "{}", options);
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
  EXPECT_EQ(status.message().rfind("line 1, column 16: ", 0), 0u) << status.message();
}

TEST(LimitsTest, CallDepth) {
  const std::string countdown =
      "{% macro f(n) %}{% if n > 0 %}{{ f(n - 1) }}{% endif %}.{% endmacro %}{{ f(depth) }}";
  RenderOptions options;
  options.limits.max_call_depth = 10;
  EXPECT_EQ(render(countdown, R"({"depth": 9})", options), "..........");
  Status status = failure(countdown, R"({"depth": 10})", options);
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
  EXPECT_TRUE(mentions(status, "calls nested deeper than the limit of 10")) << status.message();
}

TEST(LimitsTest, InfiniteRecursionStopsAtDefaultDepth) {
  Status status = failure("{% macro f() %}{{ f() }}{% endmacro %}{{ f() }}");
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
}

TEST(LimitsTest, CallerAndRecursiveLoopCountAsCalls) {
  RenderOptions options;
  options.limits.max_call_depth = 3;
  // A tree four levels deep needs four nested loop() calls.
  const char* tree = R"({"t": [{"c": [{"c": [{"c": [{"c": []}]}]}]}]})";
  Status status = failure("{% for n in t recursive %}{{ loop(n.c) }}{% endfor %}", tree, options);
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
  const char* three_levels = R"({"t": [{"c": [{"c": [{"c": []}]}]}]})";
  EXPECT_EQ(
      render("{% for n in t recursive %}({{ loop(n.c) }}){% endfor %}", three_levels, options),
      "((()))");
  status = failure(
      "{% macro m(n) %}{{ caller(n) }}{% endmacro %}"
      "{% macro r(n) %}{% call(k) m(n) %}{{ r(k - 1) if k > 0 }}{% endcall %}{% endmacro %}"
      "{{ r(5) }}",
      "{}", options);
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
}

TEST(LimitsTest, LoopIterationsSummedOverLoops) {
  RenderOptions options;
  options.limits.max_loop_iterations = 100;
  EXPECT_EQ(render("{% for i in range(50) %}{% endfor %}{% for i in range(50) %}{% endfor %}ok",
                   "{}", options),
            "ok");
  Status status = failure(
      "{% for i in range(50) %}{% endfor %}{% for i in range(51) %}{% endfor %}", "{}", options);
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
  EXPECT_TRUE(mentions(status, "loops exceeded the limit of 100 iterations")) << status.message();
  // Nested loops count every inner iteration.
  status = failure("{% for i in range(11) %}{% for j in range(10) %}{% endfor %}{% endfor %}", "{}",
                   options);
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
}

TEST(LimitsTest, EvaluationSteps) {
  RenderOptions options;
  options.limits.max_steps = 1000;
  Status status = failure("{% for i in range(1000) %}{{ i + 1 }}{% endfor %}", "{}", options);
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
  EXPECT_TRUE(mentions(status, "exceeded the limit of 1000 steps")) << status.message();
  EXPECT_EQ(render("{% for i in range(10) %}{{ i }}{% endfor %}", "{}", options), "0123456789");
}

TEST(LimitsTest, SourceSize) {
  ParseOptions options;
  options.max_source_bytes = 16;
  EXPECT_TRUE(Template::parse("0123456789abcdef", options).is_ok());
  Status status = parse_failure("0123456789abcdefg", options);
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
}

TEST(LimitsTest, NestedParenthesesAreBounded) {
  ParseOptions options;
  options.max_nesting = 50;
  EXPECT_TRUE(
      Template::parse("{{ " + repeat("(", 40) + "1" + repeat(")", 40) + " }}", options).is_ok());
  Status status =
      parse_failure("{{ " + repeat("(", 100000) + "1" + repeat(")", 100000) + " }}", options);
  EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted);
  EXPECT_TRUE(mentions(status, "nested too deeply")) << status.message();
}

TEST(LimitsTest, DeepExpressionsAreBoundedWithDefaults) {
  // Each shape would recurse once per level while parsing, evaluating or freeing the tree.
  const std::string shapes[] = {
      "{{ " + repeat("[", 20000) + repeat("]", 20000) + " }}",
      "{{ " + repeat("{'a': ", 20000) + "1" + repeat("}", 20000) + " }}",
      "{{ " + repeat("not ", 20000) + "x }}",
      "{{ " + repeat("- ", 20000) + "1 }}",
      "{{ 1" + repeat(" + 1", 20000) + " }}",
      "{{ x" + repeat(" and x", 20000) + " }}",
      "{{ x" + repeat("|string", 20000) + " }}",
      "{{ x" + repeat(".a", 20000) + " }}",
      "{{ x" + repeat("[0]", 20000) + " }}",
      "{{ x" + repeat("()", 20000) + " }}",
      "{{ x" + repeat(" if x else x", 20000) + " }}",
  };
  for (const std::string& source : shapes) {
    Status status = parse_failure(source);
    EXPECT_EQ(status.code(), ErrorCode::kResourceExhausted) << source.substr(0, 40);
  }
  // `~` chains are one flat node: long ones are fine.
  const std::string joined = render("{{ x" + repeat(" ~ x", 20000) + " }}", R"({"x": "a"})");
  EXPECT_EQ(joined.size(), 20001u);
  EXPECT_EQ(joined.find_first_not_of('a'), std::string::npos);
}

TEST(LimitsTest, DeepStatementsAreBounded) {
  const std::string ifs = repeat("{% if true %}", 100000) + "x" + repeat("{% endif %}", 100000);
  EXPECT_EQ(parse_failure(ifs).code(), ErrorCode::kResourceExhausted);
  ParseOptions options;
  options.max_nesting = 30;
  EXPECT_TRUE(
      Template::parse(repeat("{% if true %}", 20) + "x" + repeat("{% endif %}", 20), options)
          .is_ok());
  EXPECT_EQ(
      parse_failure(repeat("{% for x in y %}", 31) + repeat("{% endfor %}", 31), options).code(),
      ErrorCode::kResourceExhausted);
}

TEST(LimitsTest, DeeplyNestedValuesAreFreedAndPrintedSafely) {
  // Python prints such a list only to RecursionError; Hearth must not crash either way.
  const std::string source =
      "{% set ns = namespace(x=[]) %}{% for i in range(200) %}{% for j in range(200) %}"
      "{% set ns.x = [ns.x] %}{% endfor %}{% endfor %}{{ ns.x | length }}{{ (ns.x | string)[:4] }}";
  EXPECT_EQ(render(source), "1[[[[");
  const std::string namespaces =
      "{% set ns = namespace(p=none) %}{% for i in range(30000) %}{% set ns = namespace(p=ns) %}"
      "{% endfor %}ok";
  EXPECT_EQ(render(namespaces), "ok");
}

TEST(LimitsTest, DeepContextIsRefused) {
  const std::string deep = repeat("[", 5000) + repeat("]", 5000);
  Status status = failure("{{ x }}", "{\"x\": " + deep + "}");
  EXPECT_EQ(status.code(), ErrorCode::kInvalidArgument);
  EXPECT_EQ(render("{{ x }}", "{\"x\": " + repeat("[", 10) + repeat("]", 10) + "}"),
            repeat("[", 10) + repeat("]", 10));
}

std::string recursion_over_nested_ifs(int ifs, int calls) {
  const std::string body =
      repeat("{% if true %}", ifs) + "{{ f(n - 1) if n > 0 }}" + repeat("{% endif %}", ifs);
  return "{% macro f(n) %}" + body + "{% endmacro %}{{ f(" + std::to_string(calls) + ") }}done";
}

TEST(LimitsTest, DeepRecursionWithinLimitsRenders) {
  EXPECT_EQ(render(recursion_over_nested_ifs(10, 50)), "done");
}

struct ThreadRender {
  const Template* tmpl;
  Status status;
};

void* render_on_thread(void* arg) {
  auto* job = static_cast<ThreadRender*>(arg);
  job->status = job->tmpl->render(nlohmann::ordered_json::object()).status();
  return nullptr;
}

TEST(LimitsTest, RecursionThatWouldOverflowTheStackFails) {
  // Within the call depth and nesting limits, but not within a 1 MiB thread stack: the
  // evaluator must notice before the stack runs out. The template is parsed here, on the
  // main thread, as the server parses templates at startup (the parser is bounded by the
  // nesting limit instead).
  Result<Template> parsed = Template::parse(recursion_over_nested_ifs(190, 99));
  ASSERT_TRUE(parsed.is_ok()) << parsed.status().message();
  pthread_attr_t attr;
  ASSERT_EQ(pthread_attr_init(&attr), 0);
  ASSERT_EQ(pthread_attr_setstacksize(&attr, 1u << 20), 0);
  ThreadRender job{&*parsed, Status::ok()};
  pthread_t thread;
  ASSERT_EQ(pthread_create(&thread, &attr, render_on_thread, &job), 0);
  ASSERT_EQ(pthread_join(thread, nullptr), 0);
  pthread_attr_destroy(&attr);
  EXPECT_EQ(job.status.code(), ErrorCode::kResourceExhausted);
  EXPECT_TRUE(mentions(job.status, "too deep for the thread's stack")) << job.status.message();
}

}  // namespace
}  // namespace hearth::jinja

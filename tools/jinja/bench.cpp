// hearth-jinja-bench: how long Hearth's template engine takes to parse the Qwen3 chat
// template and to render a typical 10-message conversation with it (system prompt, tool
// definitions, user/assistant turns with reasoning, one tool call and its result, thinking
// on). The acceptance bar for rendering is well under a millisecond.
//   hearth-jinja-bench [--template PATH] [benchmark flags, e.g. --benchmark_min_time=1s]
// Without --template it reads $HEARTH_SHARED_DIR/templates/Qwen-Qwen3-0.6B.jinja (default
// shared directory: the checkout's ../shared).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "jinja/template.h"
#include "tools/jinja/conversations.h"

namespace {

namespace jt = hearth::jinja::tools;
using nlohmann::ordered_json;

std::string default_template_path() {
  const char* shared = std::getenv("HEARTH_SHARED_DIR");
  const std::string dir =
      (shared != nullptr && *shared != '\0') ? shared : HEARTH_DEFAULT_SHARED_DIR;
  return dir + "/templates/Qwen-Qwen3-0.6B.jinja";
}

ordered_json typical_conversation() {
  const ordered_json weather_tool = ordered_json::parse(R"({
    "type": "function",
    "function": {
      "name": "get_weather",
      "description": "Get the current weather for a city.",
      "parameters": {
        "type": "object",
        "properties": {
          "location": {"type": "string", "description": "City name"},
          "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}
        },
        "required": ["location"]
      }
    }
  })");
  const ordered_json messages = ordered_json::parse(R"([
    {"role": "system", "content": "You are a helpful travel assistant. Answer briefly."},
    {"role": "user", "content": "I'm going to Lisbon next week. What should I pack?"},
    {"role": "assistant", "reasoning_content": "I should check the forecast first.",
     "content": "", "tool_calls": [{"id": "call00001", "type": "function", "function":
       {"name": "get_weather", "arguments": {"location": "Lisbon", "unit": "celsius"}}}]},
    {"role": "tool", "tool_call_id": "call00001", "name": "get_weather",
     "content": "{\"temperature\": 27, \"condition\": \"sunny\", \"wind_kph\": 12}"},
    {"role": "assistant", "reasoning_content": "Warm and sunny: light clothes, sun protection.",
     "content": "Expect about 27°C and sun: pack light clothes, sunglasses and sunscreen."},
    {"role": "user", "content": "Any evening plans you'd recommend?"},
    {"role": "assistant", "content": "Catch a fado show in Alfama and watch the sunset from a miradouro."},
    {"role": "user", "content": "How do I get there from the airport?"},
    {"role": "assistant", "content": "Take the red metro line, change at Alameda, or a taxi (~20 min)."},
    {"role": "user", "content": "Thanks! Summarise everything in one list."}
  ])");
  ordered_json conversation = {{"name", "bench"},
                               {"messages", messages},
                               {"tools", ordered_json::array({weather_tool})},
                               {"add_generation_prompt", true},
                               {"variables", {{"enable_thinking", true}}}};
  return jt::conversation_context(conversation, "<s>", "</s>");
}

void BM_ParseTemplate(benchmark::State& state, const std::string& source) {
  for (auto _ : state) {
    auto parsed = hearth::jinja::Template::parse(source);
    if (!parsed.is_ok()) {
      state.SkipWithError(parsed.status().to_string().c_str());
      return;
    }
    benchmark::DoNotOptimize(parsed);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * source.size()));
}

void BM_RenderConversation(benchmark::State& state, const std::string& source) {
  auto parsed = hearth::jinja::Template::parse(source);
  if (!parsed.is_ok()) {
    state.SkipWithError(parsed.status().to_string().c_str());
    return;
  }
  const ordered_json context = typical_conversation();
  hearth::jinja::RenderOptions options;
  options.now = [] { return jt::kPinnedUnixTime; };
  size_t output_bytes = 0;
  for (auto _ : state) {
    auto output = parsed->render(context, options);
    if (!output.is_ok()) {
      state.SkipWithError(output.status().to_string().c_str());
      return;
    }
    output_bytes = output->size();
    benchmark::DoNotOptimize(output);
  }
  state.counters["output_bytes"] = static_cast<double>(output_bytes);
  state.counters["messages"] = static_cast<double>(context["messages"].size());
}

// Takes --template PATH / --template=PATH out of argv before the benchmark library sees it.
std::string take_template_flag(int& argc, char** argv) {
  std::string path;
  std::vector<char*> kept;
  for (int i = 0; i < argc; ++i) {
    if (std::strcmp(argv[i], "--template") == 0 && i + 1 < argc) {
      path = argv[++i];
    } else if (std::strncmp(argv[i], "--template=", 11) == 0) {
      path = argv[i] + 11;
    } else {
      kept.push_back(argv[i]);
    }
  }
  for (size_t i = 0; i < kept.size(); ++i) argv[i] = kept[i];
  argc = static_cast<int>(kept.size());
  return path.empty() ? default_template_path() : path;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = take_template_flag(argc, argv);
  auto source = jt::read_text_file(path);
  if (!source.is_ok()) {
    std::fprintf(stderr, "hearth-jinja-bench: %s (pass --template PATH)\n",
                 source.status().to_string().c_str());
    return 1;
  }
  benchmark::RegisterBenchmark("parse/qwen3", BM_ParseTemplate, *source);
  benchmark::RegisterBenchmark("render/qwen3_10_messages", BM_RenderConversation, *source)
      ->Unit(benchmark::kMicrosecond);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}

// hearth-chat-bench: the chat layer's own cost (the issue's overhead targets).
//   request/qwen3     one /v1/chat/completions body with tools and 6 messages: JSON parse,
//                     the chat checks and the Qwen3 template render, the parse of an answer
//                     with reasoning and a tool call, the response JSON. Target: < 1 ms.
//   stream_tokens/2000, stream_tokens/20000
//                     an answer of that many tokens (reasoning, content, then a tool call)
//                     streamed one token at a time: the parse after each token, the delta and
//                     the chunk JSON. Reported per token (per_token_us). Target: < 50 µs per
//                     token, the same at both lengths (streaming parses incrementally, so the
//                     total is linear in the answer's length).
// Usage: hearth-chat-bench [benchmark flags]; the template is read from
// $HEARTH_SHARED_DIR/templates (default: the checkout's ../shared).
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "chat/chat_templates.h"
#include "server/chat_request.h"
#include "server/json_util.h"
#include "server/openai/chat_output.h"

namespace {

using hearth::server::Json;

std::string shared_dir() {
  const char* dir = std::getenv("HEARTH_SHARED_DIR");
  return (dir != nullptr && *dir != '\0') ? dir : HEARTH_DEFAULT_SHARED_DIR;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

const char* const kBody = R"({
  "model": "m", "max_tokens": 256, "temperature": 0.7, "stream": false,
  "tools": [{"type": "function", "function": {"name": "get_weather",
    "description": "Get the current weather for a city.",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"},
      "unit": {"type": "string", "enum": ["celsius", "fahrenheit"]}}, "required": ["location"]}}}],
  "messages": [
    {"role": "system", "content": "You are a helpful travel assistant. Answer briefly."},
    {"role": "user", "content": "I'm going to Lisbon next week. What should I pack?"},
    {"role": "assistant", "content": "", "tool_calls": [{"id": "call00001", "type": "function",
      "function": {"name": "get_weather", "arguments": "{\"location\": \"Lisbon\"}"}}]},
    {"role": "tool", "tool_call_id": "call00001", "content": "{\"temperature\": 27}"},
    {"role": "assistant", "content": "Expect about 27°C and sun: pack light clothes."},
    {"role": "user", "content": "And the weather in Porto?"}]})";

const char* const kAnswer =
    "<think>\nThe user asks about Porto; I should call the weather tool.\n</think>\n\n"
    "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"Porto\"}}\n"
    "</tool_call>";

std::shared_ptr<const hearth::chat::ChatTemplates> qwen3() {
  hearth::chat::TemplateOrigin origin;
  origin.model_default = read_file(shared_dir() + "/templates/Qwen-Qwen3-0.6B.jinja");
  auto t = hearth::chat::load_chat_templates(origin, true, {}, Json::object());
  return t.is_ok() ? *t : nullptr;
}

void BM_Request(benchmark::State& state) {
  hearth::server::ChatSettings settings;
  settings.templates = qwen3();
  if (!settings.templates) {
    state.SkipWithError("the Qwen3 template did not load");
    return;
  }
  const std::string text = kBody;
  for (auto _ : state) {
    Json body = Json::parse(text);
    hearth::server::ChatRequest chat_request;
    hearth::server::ChatPromptRequest request;
    auto err = hearth::server::parse_chat_request(body, chat_request);
    if (!err) err = hearth::server::build_chat_prompt(chat_request, settings, request);
    if (err) {
      state.SkipWithError(err->message.c_str());
      return;
    }
    hearth::chat::OutputSyntax syntax = request.prompt.syntax;
    syntax.parse_tool_calls = true;
    hearth::server::openai::ChatOutput output(syntax, false);
    hearth::chat::ParsedMessage m = output.parse_final(kAnswer);
    Json message = {
        {"role", "assistant"}, {"content", m.content}, {"reasoning_content", m.reasoning}};
    for (const auto& c : output.answered_calls(0, m)) {
      message["tool_calls"].push_back({{"type", "function"},
                                       {"function", {{"name", c.name}, {"arguments", c.arguments}}},
                                       {"id", c.id}});
    }
    std::string reply = hearth::server::dump_json(Json{{"choices", {{{"message", message}}}}});
    benchmark::DoNotOptimize(reply);
  }
}

// An answer of `tokens` tokens in 4-byte pieces: 30% reasoning, 65% content, then a tool
// call written over the last 5% (2,000 tokens: 600 of reasoning, 1,300 of content, 100 of
// the call).
std::vector<std::string> long_answer(int tokens) {
  std::string text = "<think>\n";
  for (int i = 0; i < tokens * 3 / 10; ++i) text += "abc ";
  text += "\n</think>\n\n";
  for (int i = 0; i < tokens * 13 / 20; ++i) text += "xyz ";
  text += "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"";
  while (text.size() < static_cast<size_t>(tokens) * 4 - 8) text += "P";
  text += "\"}}\n</tool_call>";
  std::vector<std::string> pieces;
  for (size_t i = 0; i < text.size(); i += 4) pieces.push_back(text.substr(i, 4));
  return pieces;
}

void BM_Stream(benchmark::State& state) {
  auto templates = qwen3();
  hearth::chat::ChatInputs inputs;
  inputs.messages = {{"user", "Hi", {}, {}, "", "", ""}};
  auto prompt = templates->apply(inputs);
  hearth::chat::OutputSyntax syntax = prompt->syntax;
  syntax.parse_tool_calls = true;
  const std::vector<std::string> pieces = long_answer(static_cast<int>(state.range(0)));
  for (auto _ : state) {
    hearth::server::openai::ChatOutput output(syntax, false);
    size_t bytes = 0;
    for (const std::string& piece : pieces) {
      hearth::chat::MessageDelta d = output.step(0, piece);
      Json delta = Json::object();
      if (!d.reasoning.empty()) delta["reasoning_content"] = d.reasoning;
      if (!d.content.empty()) delta["content"] = d.content;
      for (const auto& t : d.tool_calls)
        delta["tool_calls"].push_back({{"index", t.index}, {"arguments", t.arguments}});
      bytes += hearth::server::dump_json(Json{{"choices", {{{"delta", delta}}}}}).size();
    }
    output.finish(0);
    benchmark::DoNotOptimize(bytes);
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(pieces.size()));
  state.counters["per_token_us"] = benchmark::Counter(
      static_cast<double>(state.iterations() * static_cast<int64_t>(pieces.size())),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}

}  // namespace

BENCHMARK(BM_Request)->Name("request/qwen3")->Unit(benchmark::kMicrosecond);
// Named stream_tokens/2000 and stream_tokens/20000.
BENCHMARK(BM_Stream)->Name("stream_tokens")->Arg(2000)->Arg(20000)->Unit(benchmark::kMillisecond);
BENCHMARK_MAIN();

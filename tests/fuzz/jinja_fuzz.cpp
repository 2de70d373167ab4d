// libFuzzer target for the Jinja template engine (src/jinja): the input is a template source,
// optionally followed by a NUL byte and a JSON object used as the render context (when that
// JSON is invalid or absent, a fixed chat context with messages and tools is used). Parse and
// render must end in a value or a clean error (kInvalidArgument, or kResourceExhausted for the
// limits), stay within the output limit, and render the same bytes twice.
//
//   ninja -C build-fuzz jinja_fuzz
//   build-fuzz/bin/jinja_fuzz -dict=tests/fuzz/jinja.dict -max_total_time=600 \
//     /tmp/jinja-corpus tests/fuzz/corpus/jinja
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "jinja/template.h"

namespace {

using nlohmann::ordered_json;

// Small limits so that one input runs in milliseconds however hard it loops or recurses.
hearth::jinja::ParseOptions parse_options() {
  hearth::jinja::ParseOptions options;
  options.max_source_bytes = 64 << 10;
  options.max_nesting = 64;
  return options;
}

hearth::jinja::RenderOptions render_options() {
  hearth::jinja::RenderOptions options;
  options.limits.max_output_bytes = 64 << 10;
  options.limits.max_call_depth = 16;
  options.limits.max_loop_iterations = 20'000;
  options.limits.max_steps = 200'000;
  options.now = [] { return std::time_t{1788000000}; };  // no clock dependence
  return options;
}

const ordered_json& default_context() {
  static const ordered_json context = ordered_json::parse(R"({
    "messages": [
      {"role": "system", "content": "You are helpful."},
      {"role": "user", "content": "Weather in Paris? 東京 👍"},
      {"role": "assistant", "content": "", "reasoning_content": "Call the tool.",
       "tool_calls": [{"id": "call00001", "type": "function",
                       "function": {"name": "get_weather", "arguments": {"city": "Paris"}}}]},
      {"role": "tool", "tool_call_id": "call00001", "name": "get_weather", "content": "21C"},
      {"role": "assistant", "content": [{"type": "text", "text": "It is 21C."}]},
      {"role": "user", "content": null}
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather",
      "description": "Weather", "parameters": {"type": "object",
      "properties": {"city": {"type": "string"}, "days": {"type": "integer", "default": 1}},
      "required": ["city"]}}}],
    "add_generation_prompt": true,
    "enable_thinking": false,
    "bos_token": "<s>",
    "eos_token": "</s>",
    "numbers": [0, -1, 2.5, 1e300, 9223372036854775807]
  })");
  return context;
}

bool is_clean_error(const hearth::Status& status) {
  return status.code() == hearth::ErrorCode::kInvalidArgument ||
         status.code() == hearth::ErrorCode::kResourceExhausted;
}

[[noreturn]] void fail(const char* what, const hearth::Status& status) {
  std::fprintf(stderr, "jinja_fuzz: %s: %s\n", what, status.to_string().c_str());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\0');
  const std::string_view source = input.substr(0, split);

  ordered_json parsed_context;
  if (split != std::string_view::npos) {
    parsed_context = ordered_json::parse(input.substr(split + 1), nullptr,
                                         /*allow_exceptions=*/false);
  }
  const ordered_json& context = parsed_context.is_object() ? parsed_context : default_context();

  auto parsed = hearth::jinja::Template::parse(source, parse_options());
  if (!parsed.is_ok()) {
    if (!is_clean_error(parsed.status())) fail("parse", parsed.status());
    return 0;
  }
  const auto options = render_options();
  auto first = parsed->render(context, options);
  if (!first.is_ok()) {
    if (!is_clean_error(first.status())) fail("render", first.status());
  } else if (first->size() > options.limits.max_output_bytes) {
    std::fprintf(stderr, "jinja_fuzz: output of %zu bytes exceeds the limit\n", first->size());
    std::abort();
  }
  // Rendering is const: a second render of the same program must agree exactly.
  auto second = parsed->render(context, options);
  if (first.is_ok() != second.is_ok() || (first.is_ok() && *first != *second)) {
    std::fprintf(stderr, "jinja_fuzz: two renders of one template differ\n");
    std::abort();
  }
  return 0;
}

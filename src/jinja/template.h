// A Jinja2-compatible template engine for chat templates: parse once, render many times over
// JSON input. Behaves as Python's Jinja2 configured like Hugging Face's chat-template
// environment (a sandbox with trim_blocks, lstrip_blocks, the loopcontrols extension, the
// `generation` block, tojson with ensure_ascii=False, raise_exception and strftime_now).
//
// Safe by construction: no file or environment access; rendering is bounded by Limits;
// every failure is a Status whose message names the template position.
#pragma once

#include <cstddef>
#include <cstdint>
#include <ctime>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "base/status.h"

namespace hearth::jinja {

struct ParseOptions {
  bool trim_blocks = true;             // drop the first newline after a block or comment tag
  bool lstrip_blocks = true;           // strip spaces/tabs before a block tag on its line
  bool keep_trailing_newline = false;  // Jinja2 default: drop one trailing newline
  size_t max_source_bytes = 1 << 20;
  int max_nesting = 200;  // nested blocks and expression depth
};

struct Limits {
  size_t max_output_bytes = 8u << 20;
  int max_call_depth = 100;                  // macro/caller recursion
  uint64_t max_loop_iterations = 1'000'000;  // summed over all loops of one render
  uint64_t max_steps = 50'000'000;           // evaluated nodes, against runaway templates
};

struct RenderOptions {
  Limits limits;
  // Clock for strftime_now (local time); unset = the system clock.
  std::function<std::time_t()> now;
};

namespace detail {
struct Program;
}

class Template {
 public:
  // Errors: kInvalidArgument "line L, column C: <reason>" (syntax errors, unknown filters
  // or tests, unsupported statements), kResourceExhausted for the source size and nesting.
  static Result<Template> parse(std::string_view source, const ParseOptions& options = {});

  // `context` is a JSON object whose keys become template variables. Errors:
  // kInvalidArgument "line L, column C: <reason>" for runtime errors (type errors, undefined
  // values used, unknown methods); for raise_exception the reason is the template's message
  // verbatim; kResourceExhausted when a limit is hit.
  Result<std::string> render(const nlohmann::ordered_json& context,
                             const RenderOptions& options = {}) const;

 private:
  std::shared_ptr<const detail::Program> program_;
};

}  // namespace hearth::jinja

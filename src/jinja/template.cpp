// Template: parse once into a shared immutable Program; each render runs a fresh Evaluator.
#include "jinja/template.h"

#include <nlohmann/json.hpp>

#include "jinja/evaluator.h"
#include "jinja/parser.h"

namespace hearth::jinja {

Result<Template> Template::parse(std::string_view source, const ParseOptions& options) {
  auto program = std::make_shared<detail::Program>();
  HEARTH_RETURN_IF_ERROR(parse_program(source, options, *program));
  Template result;
  result.program_ = std::move(program);
  return result;
}

Result<std::string> Template::render(const nlohmann::ordered_json& context,
                                     const RenderOptions& options) const {
  if (program_ == nullptr) {
    return Status(ErrorCode::kInvalidArgument, "render called on a template that was not parsed");
  }
  Evaluator evaluator(*program_, options);
  return evaluator.render(context);
}

}  // namespace hearth::jinja

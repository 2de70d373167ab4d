// Python-style argument binding for builtins: positional arguments fill parameters in order,
// keywords by name, the rest take their defaults.
#include <string>

#include "jinja/builtins.h"

namespace hearth::jinja {

namespace {

bool is_required(const Param& parameter) {
  return parameter.required || (parameter.default_value.is_undefined() &&
                                parameter.default_value.undefined_hint().empty());
}

}  // namespace

Result<std::vector<Value>> bind_args(std::string_view function, CallArgs& args,
                                     std::initializer_list<Param> parameters) {
  const size_t n_parameters = parameters.size();
  if (args.positional.size() > n_parameters) {
    return render_error(std::string(function) + "() takes at most " + std::to_string(n_parameters) +
                        " argument" + (n_parameters == 1 ? "" : "s") + " (" +
                        std::to_string(args.positional.size()) + " given)");
  }
  std::vector<Value> bound(n_parameters);
  std::vector<bool> given(n_parameters, false);
  for (size_t i = 0; i < args.positional.size(); ++i) {
    bound[i] = std::move(args.positional[i]);
    given[i] = true;
  }
  for (auto& [name, value] : args.keyword) {
    size_t index = 0;
    for (const Param& parameter : parameters) {
      if (parameter.name == name) break;
      ++index;
    }
    if (index == n_parameters) {
      return render_error(std::string(function) + "() got an unexpected keyword argument '" + name +
                          "'");
    }
    if (given[index]) {
      return render_error(std::string(function) + "() got multiple values for argument '" + name +
                          "'");
    }
    bound[index] = std::move(value);
    given[index] = true;
  }
  size_t index = 0;
  for (const Param& parameter : parameters) {
    if (!given[index]) {
      if (is_required(parameter)) {
        return render_error(std::string(function) + "() missing required argument '" +
                            std::string(parameter.name) + "'");
      }
      bound[index] = parameter.default_value;
    }
    ++index;
  }
  return bound;
}

}  // namespace hearth::jinja

// Handlers of the chat-template options: --jinja, --chat-template, --chat-template-file and
// --chat-template-kwargs. The template itself is validated after parsing (the server
// renders a test conversation before it loads the model), as the reference does.
#include <algorithm>
#include <string>

#include <nlohmann/json.hpp>

#include "server/options/option_handlers.h"

namespace hearth::server::options {

// Each occurrence adds its keys; a key given again takes the later value.
Status handle_chat_template_kwargs(const OptionInput& in, ParseState& st) {
  nlohmann::ordered_json object;
  try {
    object = nlohmann::ordered_json::parse(in.value);
  } catch (const nlohmann::json::exception& e) {
    return invalid_value(e.what());
  }
  if (!object.is_object()) return invalid_value("expected a JSON object");
  auto& kwargs = st.args.chat_template_kwargs;
  for (const auto& [key, value] : object.items()) {
    if (key == "enable_thinking") {
      st.warnings.push_back(
          "Setting 'enable_thinking' via --chat-template-kwargs is deprecated. Use --reasoning on "
          "/ --reasoning off instead.");
    }
    auto same = std::find_if(kwargs.begin(), kwargs.end(),
                             [&key](const auto& entry) { return entry.first == key; });
    if (same != kwargs.end()) {
      same->second = value.dump();
    } else {
      kwargs.emplace_back(key, value.dump());
    }
  }
  return Status::ok();
}

Status handle_chat_template_file(const OptionInput& in, ParseState& st) {
  return read_whole_file(in.value, st.args.chat_template);
}

}  // namespace hearth::server::options

// Handlers of the chat-template options: --jinja, --chat-template, --chat-template-file and
// --chat-template-kwargs. The template itself is validated after parsing (the server
// renders a test conversation before it loads the model), as the reference does.
#include <string>

#include <nlohmann/json.hpp>

#include "base/json_parse.h"
#include "server/options/option_handlers.h"

namespace hearth::server::options {

// Each occurrence adds its keys; a key given again takes the later value.
Status handle_chat_template_kwargs(const OptionInput& in, ParseState& st) {
  auto parsed = parse_json(in.value);
  if (!parsed.is_ok()) {
    // Invalid JSON is reported in the library's words, as the reference prints it; a text
    // the library reads but the limits refuse gets the limit's message.
    try {
      const nlohmann::ordered_json unchecked = nlohmann::ordered_json::parse(in.value);
    } catch (const nlohmann::json::exception& e) {
      return invalid_value(e.what());
    }
    return invalid_value(parsed.status().message());
  }
  const nlohmann::ordered_json& object = parsed.value();
  if (!object.is_object()) return invalid_value("expected a JSON object");
  // An ordered object: a new key goes last, a key given again keeps its place.
  Json& kwargs = st.args.chat.template_kwargs;
  for (const auto& [key, value] : object.items()) {
    if (key == "enable_thinking") {
      st.warnings.push_back(
          "Setting 'enable_thinking' via --chat-template-kwargs is deprecated. Use --reasoning on "
          "/ --reasoning off instead.");
    }
    kwargs[key] = value;
  }
  return Status::ok();
}

Status handle_reasoning_format(const OptionInput& in, ParseState& st) {
  const std::string v(in.value);
  if (v != "none" && v != "auto" && v != "deepseek" && v != "deepseek-legacy") {
    return invalid_value("unknown reasoning format: " + v);
  }
  st.args.chat.reasoning_format = v;
  return Status::ok();
}

// on / off / auto (the reference also takes 1, 0 and -1).
Status handle_reasoning(const OptionInput& in, ParseState& st) {
  const std::string v(in.value);
  if (v == "on" || v == "1" || v == "true") {
    st.args.chat.reasoning = 1;
  } else if (v == "off" || v == "0" || v == "false") {
    st.args.chat.reasoning = 0;
  } else if (v == "auto" || v == "-1") {
    st.args.chat.reasoning = -1;
  } else {
    return invalid_value("expected on, off or auto, got " + v);
  }
  return Status::ok();
}

Status handle_reasoning_budget(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(int32_t v, parse_int(in.value));
  if (v < -1) return invalid_value("value must be -1 (unlimited) or a token count >= 0");
  st.args.chat.reasoning_budget = v;
  return Status::ok();
}

Status handle_reasoning_preserve(const OptionInput& in, ParseState& st) {
  st.args.chat.reasoning_preserve = in.enabled ? 1 : 0;
  return Status::ok();
}

Status handle_chat_template_file(const OptionInput& in, ParseState& st) {
  return read_whole_file(in.value, st.args.chat_template);
}

}  // namespace hearth::server::options

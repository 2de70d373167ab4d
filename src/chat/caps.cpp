// Capability probes. The reference's engine records which inputs a template reads; Hearth's
// does not, so each capability is judged from the output of a synthetic conversation:
//  - string content: a string content renders and shows up (or typed content is the only
//    form that shows up, see below, and then strings are refused);
//  - typed content: [{"type":"text","text":M}] renders and shows M without a printed
//    {'type': ...} repr (a template that just prints the list would otherwise qualify);
//  - system role: a leading system message's text shows up;
//  - tools: a tool's name shows up; tool calls: an assistant tool call's name shows up
//    (arguments as a JSON string, else as an object);
//  - object arguments: the call shows its argument value only when arguments are an object;
//  - parallel tool calls: both names of a two-call message show up;
//  - preserve reasoning: an earlier assistant turn's reasoning_content shows up with
//    thinking enabled and the preserve switches on;
//  - reasoning effort: the source mentions reasoning_effort.
#include "chat/render.h"

namespace hearth::chat {

namespace {

constexpr const char* kUserText = "Hearth probe user message";
constexpr const char* kSystemText = "Hearth probe system message";
constexpr const char* kStringText = "Hearth probe string content";
constexpr const char* kTypedText = "Hearth probe typed content";
constexpr const char* kToolName = "hearth_probe_tool";
constexpr const char* kCallName = "hearth_probe_call";
constexpr const char* kSecondCallName = "hearth_probe_second_call";
constexpr const char* kArgumentValue = "hearthprobevalue";
constexpr const char* kReasoningText = "Hearth probe earlier reasoning";

struct Prober {
  const ParsedTemplate& tmpl;
  const VocabText& vocab;

  // The output, or nullopt when the template fails on this input.
  std::optional<std::string> render(Json messages, Json tools = Json(),
                                    Json kwargs = Json::object()) const {
    RenderRequest request;
    request.messages = std::move(messages);
    request.tools = std::move(tools);
    request.add_generation_prompt = true;
    request.enable_thinking = true;
    request.extra = extra_context(kwargs, std::nullopt);
    Result<std::string> out = render_template(tmpl, vocab, request);
    if (!out.is_ok()) return std::nullopt;
    return std::move(*out);
  }

  bool shows(const std::optional<std::string>& out, const char* text) const {
    return out && out->find(text) != std::string::npos;
  }
};

Json user(const char* text) {
  return Json{{"role", "user"}, {"content", text}};
}

Json tool_list() {
  Json parameters = {
      {"type", "object"}, {"properties", {{"arg", {{"type", "string"}}}}}, {"required", {"arg"}}};
  Json function = {{"name", kToolName}, {"description", "probe"}, {"parameters", parameters}};
  return Json::array({Json{{"type", "function"}, {"function", function}}});
}

Json tool_call(const char* name, const char* id, bool object_arguments) {
  Json arguments = Json{{"arg", kArgumentValue}};
  Json function = {{"name", name},
                   {"arguments", object_arguments ? arguments : Json(arguments.dump())}};
  return Json{{"type", "function"}, {"function", function}, {"id", id}};
}

Json call_conversation(Json calls) {
  Json assistant = {{"role", "assistant"}, {"content", ""}, {"tool_calls", std::move(calls)}};
  Json result = {{"role", "tool"}, {"content", "probe result"}, {"tool_call_id", "call00001"}};
  return Json::array({user(kUserText), assistant, result});
}

void probe_content(const Prober& p, TemplateCaps& caps) {
  Json typed_part = Json::array({Json{{"type", "text"}, {"text", kTypedText}}});
  auto typed = p.render(Json::array({Json{{"role", "user"}, {"content", typed_part}}}));
  caps.supports_typed_content = p.shows(typed, kTypedText) &&
                                typed->find("'type'") == std::string::npos &&
                                typed->find("\"type\"") == std::string::npos;
  auto plain = p.render(Json::array({user(kStringText)}));
  caps.supports_string_content =
      plain.has_value() && (p.shows(plain, kStringText) || !caps.supports_typed_content);
}

void probe_tools(const Prober& p, TemplateCaps& caps) {
  caps.supports_tools = p.shows(p.render(Json::array({user(kUserText)}), tool_list()), kToolName);
  auto with_strings = p.render(
      call_conversation(Json::array({tool_call(kCallName, "call00001", false)})), tool_list());
  auto with_objects = p.render(
      call_conversation(Json::array({tool_call(kCallName, "call00001", true)})), tool_list());
  caps.supports_tool_calls = p.shows(with_strings, kCallName) || p.shows(with_objects, kCallName);
  if (!caps.supports_tool_calls) return;
  // Objects are read when the value shows other than as Python's repr of the whole
  // object (what a template that only prints a string would make of one): Qwen3's
  // `arguments | tojson` counts, as the reference's access tracking counts it.
  caps.supports_object_arguments =
      p.shows(with_objects, kArgumentValue) &&
      with_objects->find(std::string("{'arg': '") + kArgumentValue) == std::string::npos;
  Json two = Json::array({tool_call(kCallName, "call00001", caps.supports_object_arguments),
                          tool_call(kSecondCallName, "call00002", caps.supports_object_arguments)});
  auto parallel = p.render(call_conversation(std::move(two)), tool_list());
  caps.supports_parallel_tool_calls =
      p.shows(parallel, kCallName) && p.shows(parallel, kSecondCallName);
}

void probe_reasoning(const Prober& p, TemplateCaps& caps) {
  Json earlier = {
      {"role", "assistant"}, {"content", "probe answer"}, {"reasoning_content", kReasoningText}};
  Json conversation = Json::array({user(kUserText), earlier, user("Hearth probe follow-up")});
  Json preserve = {{"preserve_reasoning", true}};
  caps.supports_preserve_reasoning =
      p.shows(p.render(conversation, Json(), preserve), kReasoningText);
  caps.supports_reasoning_effort = p.tmpl.source.find("reasoning_effort") != std::string::npos;
}

}  // namespace

Json TemplateCaps::to_json() const {
  Json j = Json::object();
  j["supports_object_arguments"] = supports_object_arguments;
  j["supports_parallel_tool_calls"] = supports_parallel_tool_calls;
  j["supports_preserve_reasoning"] = supports_preserve_reasoning;
  j["supports_reasoning_effort"] = supports_reasoning_effort;
  j["supports_string_content"] = supports_string_content;
  j["supports_system_role"] = supports_system_role;
  j["supports_tool_calls"] = supports_tool_calls;
  j["supports_tools"] = supports_tools;
  j["supports_typed_content"] = supports_typed_content;
  return j;
}

TemplateCaps probe_caps(const ParsedTemplate& tmpl, const VocabText& vocab) {
  const Prober p{tmpl, vocab};
  TemplateCaps caps;
  probe_content(p, caps);
  caps.supports_system_role = p.shows(
      p.render(Json::array({Json{{"role", "system"}, {"content", kSystemText}}, user(kUserText)})),
      kSystemText);
  probe_tools(p, caps);
  probe_reasoning(p, caps);
  return caps;
}

}  // namespace hearth::chat

#include "chat/chat_templates.h"

#include "base/log.h"
#include "chat/legacy_templates.h"
#include "chat/normalize.h"
#include "chat/openai_messages.h"
#include "chat/output_syntax.h"
#include "chat/render.h"
#include "chat/tool_syntax_probe.h"

namespace hearth::chat {

namespace {

// The thinking markers with the whitespace the template puts around reasoning, found by
// rendering an assistant turn that has reasoning and content (the reference's autoparser
// finds them by such diffs).
// One probe render: a user turn, then an assistant turn with reasoning and content (and, for
// templates that keep reasoning only beside tool calls, a call).
Result<std::string> render_reasoning_probe(const ParsedTemplate& tmpl, const VocabText& vocab,
                                           std::string_view reasoning, std::string_view content,
                                           bool with_call) {
  Message user;
  user.role = "user";
  user.content = "Hearth probe question";
  Message assistant;
  assistant.role = "assistant";
  assistant.content = content;
  assistant.reasoning_content = reasoning;
  RenderRequest request;
  if (with_call) {
    assistant.tool_calls = {{"hearth_probe_tool", "{\"a\": 1}", "call00001"}};
    request.tools = tools_to_json({{"hearth_probe_tool", "probe", Json{{"type", "object"}}}});
  }
  request.messages = Json::array({message_to_json(user, true), message_to_json(assistant, true)});
  request.extra = extra_context(Json::object(), std::nullopt);
  if (tmpl.caps.supports_object_arguments) (void)parse_tool_call_arguments(request.messages);
  return render_template(tmpl, vocab, request);
}

// The thinking markers with the whitespace the template puts around reasoning, found by
// rendering an assistant turn that has reasoning (the reference's autoparser finds them by
// such diffs).
std::optional<std::pair<std::string, std::string>> reasoning_markers(const ParsedTemplate& tmpl,
                                                                     const VocabText& vocab) {
  const std::optional<ThinkingTags> tags = thinking_tags(tmpl.source);
  if (!tags) return std::nullopt;
  const std::pair<std::string, std::string> bare{tags->start, tags->end};
  static constexpr std::string_view kReasoning = "HearthProbeReasoning";
  static constexpr std::string_view kContent = "HearthProbeContent";
  for (bool with_call : {false, true}) {
    if (with_call && !tmpl.caps.supports_tool_calls) break;
    Result<std::string> text =
        render_reasoning_probe(tmpl, vocab, kReasoning, with_call ? "" : kContent, with_call);
    if (!text.is_ok()) continue;
    const size_t r = text->find(kReasoning);
    if (r == std::string::npos) continue;
    const size_t start = text->rfind(tags->start, r);
    const size_t end = text->find(tags->end, r);
    if (start == std::string::npos || end == std::string::npos) continue;
    const size_t c = with_call ? text->size() : text->find(kContent);
    if (c == std::string::npos || end > c) continue;
    // The end marker runs to the end tag and the whitespace after it (not into a content
    // wrapper such as Command R7B's <|START_RESPONSE|>).
    size_t end_stop = end + tags->end.size();
    while (end_stop < c && ((*text)[end_stop] == '\n' || (*text)[end_stop] == ' ')) ++end_stop;
    const size_t after_r = r + kReasoning.size();
    return std::make_pair(text->substr(start, r - start),
                          text->substr(after_r, end_stop - after_r));
  }
  return bare;
}

Result<std::unique_ptr<ParsedTemplate>> parse_template(const std::string& source,
                                                       const VocabText& vocab) {
  jinja::ParseOptions options;
  // The source was already normalized, its one trailing newline dropped.
  options.keep_trailing_newline = true;
  HEARTH_ASSIGN_OR_RETURN(jinja::Template program, jinja::Template::parse(source, options));
  auto parsed = std::make_unique<ParsedTemplate>(
      ParsedTemplate{source, std::move(program), {}, {}, {}, "none"});
  parsed->caps = probe_caps(*parsed, vocab);
  parsed->reasoning_markers = reasoning_markers(*parsed, vocab);
  if (parsed->caps.supports_tool_calls) {
    parsed->tool_format = tool_call_format(source);
    parsed->tool_family = tool_call_family(source);
    if (parsed->tool_format.style == ToolCallStyle::kNone) {
      if (std::optional<ToolCallFormat> derived = derive_tool_call_format(*parsed, vocab)) {
        parsed->tool_format = std::move(*derived);
        parsed->tool_family = "derived";
      }
    }
  }
  return parsed;
}

Message simple_message(const char* role, const char* content) {
  Message m;
  m.role = role;
  m.content = content;
  return m;
}

// Whether the template's output depends on enable_thinking, for one user message.
bool reacts_to_thinking_switch(const ParsedTemplate& tmpl, const VocabText& vocab) {
  RenderRequest request;
  request.messages = Json::array({message_to_json(simple_message("user", "test"), true)});
  request.add_generation_prompt = true;
  request.extra = extra_context(Json::object(), std::nullopt);
  request.enable_thinking = true;
  Result<std::string> on = render_template(tmpl, vocab, request);
  request.enable_thinking = false;
  Result<std::string> off = render_template(tmpl, vocab, request);
  return on.is_ok() && off.is_ok() && *on != *off;
}

// Messages joined as the built-in formats take them: parts joined with "\n".
std::vector<LegacyMessage> legacy_messages(const std::vector<Message>& messages) {
  std::vector<LegacyMessage> out;
  for (const Message& m : messages) {
    std::string content = m.content;
    for (const ContentPart& part : m.content_parts) {
      if (part.type != "text" && part.type != "media_marker") continue;
      if (!content.empty()) content += "\n";
      content += part.text;
    }
    out.push_back({m.role, std::move(content)});
  }
  return out;
}

// The length of the longest end of `header` that begins `lead_in`.
size_t lead_in_overlap(const std::string& header, const std::string& lead_in) {
  for (size_t n = std::min(header.size(), lead_in.size()); n > 0; --n) {
    if (header.compare(header.size() - n, n, lead_in, 0, n) == 0) return n;
  }
  return 0;
}

// The text that continues the last message (the reference's autoparser path): the
// assistant header cut before the thinking start, then, when the template has thinking
// markers, start + reasoning (+ end, continuing content), then the content.
std::string continuation_text(const std::string& header, const Message& last, Continuation mode,
                              const std::optional<std::pair<std::string, std::string>>& markers,
                              const std::string& lead_in) {
  std::string out = header;
  if (markers) {
    const size_t at = out.find(markers->first);
    const size_t bare = out.find(thinking_tags(markers->first)->start);
    if (at != std::string::npos || bare != std::string::npos) out.resize(std::min(at, bare));
    out += markers->first + last.reasoning_content;
    if (mode == Continuation::kContent) out += markers->second;
  } else if (mode == Continuation::kReasoning) {
    out += last.reasoning_content;
  }
  if (mode == Continuation::kContent) {
    // The content's lead-in the header began (Functionary v3.2: ">>>" + "all\n").
    if (!lead_in.empty()) out += lead_in.substr(lead_in_overlap(out, lead_in));
    out += last.text("\n\n");
  }
  return out;
}

Continuation resolve_auto(Continuation mode, const Message& last) {
  if (mode != Continuation::kAuto) return mode;
  const bool only_reasoning =
      !last.reasoning_content.empty() && last.content.empty() && last.content_parts.empty();
  return only_reasoning ? Continuation::kReasoning : Continuation::kContent;
}

// The rewrites of chat-templates.md §6, in the reference's order.
Status normalize_for(const ParsedTemplate& tmpl, Json& messages) {
  if (tmpl.source.find("<|channel|>") == std::string::npos) map_developer_to_system(messages);
  if (!tmpl.caps.supports_system_role) HEARTH_RETURN_IF_ERROR(merge_system_message(messages));
  if (tmpl.caps.supports_tool_calls) add_empty_tool_call_content(messages);
  if (tmpl.caps.supports_object_arguments) {
    HEARTH_RETURN_IF_ERROR(parse_tool_call_arguments(messages));
  }
  return Status::ok();
}

}  // namespace

ChatTemplates::ChatTemplates() = default;
ChatTemplates::~ChatTemplates() = default;

Result<std::shared_ptr<const ChatTemplates>> ChatTemplates::create(
    const ChatTemplatesConfig& config) {
  std::shared_ptr<ChatTemplates> t(new ChatTemplates());
  t->use_jinja_ = config.use_jinja;
  t->vocab_ = config.vocab;
  Result<std::unique_ptr<ParsedTemplate>> parsed =
      parse_template(config.sources.default_source, config.vocab);
  if (!parsed.is_ok()) {
    log_error("failed to initialize chat template: {}", parsed.status().message());
    log_error("please consider disabling jinja via --no-jinja, or using another chat template");
    return parsed.status();
  }
  t->default_ = std::move(*parsed);
  if (!config.sources.tool_use_source.empty()) {
    Result<std::unique_ptr<ParsedTemplate>> tool_use =
        parse_template(config.sources.tool_use_source, config.vocab);
    if (tool_use.is_ok()) {
      t->tool_use_ = std::move(*tool_use);
    } else {
      log_error("failed to parse tool use chat template (ignoring it): {}",
                tool_use.status().message());
    }
  }
  t->supports_thinking_ = config.use_jinja && reacts_to_thinking_switch(*t->default_, t->vocab_);
  return std::shared_ptr<const ChatTemplates>(std::move(t));
}

const std::string& ChatTemplates::default_source() const {
  return default_->source;
}

const std::string& ChatTemplates::tool_use_source() const {
  static const std::string kNone;
  return tool_use_ ? tool_use_->source : kNone;
}

const std::string& ChatTemplates::tool_call_family() const {
  return tool_use_ ? tool_use_->tool_family : default_->tool_family;
}

const TemplateCaps& ChatTemplates::caps() const {
  return tool_use_ ? tool_use_->caps : default_->caps;
}

Result<ChatPrompt> ChatTemplates::apply(const ChatInputs& inputs) const {
  if (!use_jinja_) {
    const bool add = inputs.add_generation_prompt && inputs.continuation == Continuation::kNone;
    HEARTH_ASSIGN_OR_RETURN(
        std::string prompt,
        apply_legacy_template(default_->source, legacy_messages(inputs.messages), add));
    ChatPrompt out;
    out.prompt = std::move(prompt);
    return out;
  }
  const ParsedTemplate& tmpl = !inputs.tools.empty() && tool_use_ ? *tool_use_ : *default_;
  RenderRequest request;
  request.messages = shape_messages(inputs.messages, tmpl.caps);
  request.tools = tools_to_json(inputs.tools);
  request.add_generation_prompt = inputs.add_generation_prompt;
  request.enable_thinking = inputs.enable_thinking.value_or(supports_thinking_);
  request.extra = extra_context(inputs.kwargs, inputs.now);
  request.now = inputs.now;
  Message last;  // the message being continued; empty when there is none
  Continuation mode = inputs.continuation;
  if (mode != Continuation::kNone) {
    request.add_generation_prompt = false;
    if (!inputs.messages.empty()) {
      last = inputs.messages.back();
      request.messages.erase(request.messages.size() - 1);
    }
    mode = resolve_auto(mode, last);
  }
  HEARTH_RETURN_IF_ERROR(normalize_for(tmpl, request.messages));
  ChatPrompt out;
  const std::optional<ThinkingTags> tags = thinking_tags(tmpl.source);
  HEARTH_ASSIGN_OR_RETURN(out.prompt, render_template(tmpl, vocab_, request));
  if (mode != Continuation::kNone || request.add_generation_prompt) {
    // The other render of the pair that isolates the assistant header.
    request.add_generation_prompt = !request.add_generation_prompt;
    HEARTH_ASSIGN_OR_RETURN(std::string other, render_template(tmpl, vocab_, request));
    std::string header;
    if (mode == Continuation::kNone) {
      header = out.generation_prompt = generation_suffix(other, out.prompt);
    } else {
      header = generation_suffix(out.prompt, other);
      out.generation_prompt =
          continuation_text(header, last, mode, tmpl.reasoning_markers, content_start(tmpl.source));
      if (mode == Continuation::kContent) out.continued_answer = last.text("\n\n");
      out.prompt += out.generation_prompt;
    }
    if (tags && header.find(tags->start) != std::string::npos) {
      header.resize(header.find(tags->start));
    }
    out.syntax.content_start = content_start(tmpl.source);
    out.syntax.content_end = content_end(tmpl.source);
    out.syntax.message_end = message_end(tmpl.source);
    // A header that already began the content's lead-in (Functionary v3.2's ">>>") leaves
    // it to the output's parse.
    header.resize(header.size() - lead_in_overlap(header, out.syntax.content_start));
    out.syntax.literal = std::move(header);
  }
  out.syntax.format_name = "peg-native";
  out.syntax.prefix = out.generation_prompt;
  if (tmpl.reasoning_markers) {
    out.syntax.reasoning_start = tmpl.reasoning_markers->first;
    out.syntax.reasoning_end = tmpl.reasoning_markers->second;
  }
  out.syntax.tools = tmpl.tool_format;
  out.syntax.harmony = tmpl.source.find("<|channel|>") != std::string::npos;
  out.syntax.recipients = writes_recipient_messages(tmpl.source);
  out.additional_stops = additional_stops(tmpl.source);
  out.autoparsed = !reference_has_dedicated_parser(tmpl.source);
  return out;
}

Result<std::shared_ptr<const ChatTemplates>> load_chat_templates(const TemplateOrigin& origin,
                                                                 bool use_jinja,
                                                                 const VocabText& vocab,
                                                                 const Json& default_kwargs) {
  ChatTemplatesConfig config{use_jinja, select_template_sources(origin), vocab};
  HEARTH_ASSIGN_OR_RETURN(std::shared_ptr<const ChatTemplates> templates,
                          ChatTemplates::create(config));
  // The reference formats an example conversation at load and falls back to ChatML when
  // the model's template cannot render it.
  ChatInputs example;
  example.messages = {simple_message("system", "You are a helpful assistant"),
                      simple_message("user", "Hello"), simple_message("assistant", "Hi there"),
                      simple_message("user", "How are you?")};
  example.kwargs = default_kwargs.is_object() ? default_kwargs : Json::object();
  Result<ChatPrompt> rendered = templates->apply(example);
  if (rendered.is_ok()) return templates;
  log_warn("Chat template parsing error: {}", rendered.status().message());
  log_warn(
      "The chat template that comes with this model is not yet supported, falling back to "
      "chatml. This may cause the model to output suboptimal responses");
  TemplateOrigin chatml;
  chatml.override_text = "chatml";
  config.sources = select_template_sources(chatml);
  return ChatTemplates::create(config);
}

Status verify_chat_template(const std::string& text, bool use_jinja) {
  if (!use_jinja) {
    if (detect_legacy_format(text) == nullptr) {
      return error(ErrorCode::kUnsupported, "no built-in chat format matches the template");
    }
    return Status::ok();
  }
  TemplateOrigin origin;
  origin.override_text = text;
  ChatTemplatesConfig config{true, select_template_sources(origin), VocabText{}};
  HEARTH_ASSIGN_OR_RETURN(std::shared_ptr<const ChatTemplates> templates,
                          ChatTemplates::create(config));
  ChatInputs inputs;
  inputs.messages = {simple_message("user", "test")};
  Result<ChatPrompt> rendered = templates->apply(inputs);
  return rendered.is_ok() ? Status::ok() : rendered.status();
}

}  // namespace hearth::chat

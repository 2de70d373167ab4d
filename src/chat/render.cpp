#include "chat/render.h"

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <sstream>

namespace hearth::chat {

namespace {

std::time_t clock_now(std::optional<std::time_t> now) {
  return now ? *now : std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
}

std::string local_time_text(std::time_t t, const char* format) {
  std::tm local{};
  localtime_r(&t, &local);
  std::ostringstream out;
  out << std::put_time(&local, format);
  return out.str();
}

// The effort and preserve-reasoning switches fan out into the names templates read.
void add_reasoning_switches(Json& context) {
  auto effort = context.find("reasoning_effort");
  if (effort != context.end() && effort->is_string() && !effort->get<std::string>().empty()) {
    context["reasoning_strength"] = *effort;
  }
  auto preserve = context.find("preserve_reasoning");
  if (preserve != context.end() && preserve->is_boolean()) {
    const bool keep = preserve->get<bool>();
    context["preserve_thinking"] = keep;
    context["clear_thinking"] = !keep;
    context["truncate_history_thinking"] = !keep;
    context["drop_thinking"] = !keep;
  }
}

Json build_context(const VocabText& vocab, const RenderRequest& request) {
  Json context = Json::object();
  context["messages"] = request.messages;
  context["bos_token"] = vocab.bos;
  context["eos_token"] = vocab.eos;
  context["enable_thinking"] = request.enable_thinking;
  if (request.tools.is_array() && !request.tools.empty()) context["tools"] = request.tools;
  for (const auto& [key, value] : request.extra.items()) context[key] = value;
  // Set last, so it wins over a kwarg of the same name; left undefined when not wanted.
  if (request.add_generation_prompt) context["add_generation_prompt"] = true;
  add_reasoning_switches(context);
  return context;
}

}  // namespace

Json extra_context(const Json& kwargs, std::optional<std::time_t> now) {
  const std::time_t t = clock_now(now);
  Json extra = Json::object();
  extra["datetime"] = local_time_text(t, "%b %d %Y");
  extra["date_string"] = local_time_text(t, "%d %b %Y");
  if (kwargs.is_object()) {
    for (const auto& [key, value] : kwargs.items()) extra[key] = value;
  }
  return extra;
}

Result<std::string> render_template(const ParsedTemplate& tmpl, const VocabText& vocab,
                                    const RenderRequest& request) {
  jinja::RenderOptions options;
  if (request.now) {
    const std::time_t fixed = *request.now;
    options.now = [fixed] { return fixed; };
  }
  HEARTH_ASSIGN_OR_RETURN(std::string text,
                          tmpl.program.render(build_context(vocab, request), options));
  // The tokenizer adds these tokens itself; the template's copies would double them.
  if (vocab.add_bos && !vocab.bos.empty() && text.starts_with(vocab.bos)) {
    text.erase(0, vocab.bos.size());
  }
  if (vocab.add_eos && !vocab.eos.empty() && text.ends_with(vocab.eos)) {
    text.erase(text.size() - vocab.eos.size());
  }
  return text;
}

std::string generation_suffix(const std::string& without, const std::string& with) {
  const size_t limit = std::min(without.size(), with.size());
  size_t common = 0;
  while (common < limit && without[common] == with[common]) ++common;
  return with.substr(common);
}

}  // namespace hearth::chat

// hearth-jinja: renders a chat template with Hearth's engine, for debugging differences from
// Python's Jinja2 (scripts/jinja_oracle.py renders the same inputs there).
//   hearth-jinja TEMPLATE [--context CONTEXT.json]
//   hearth-jinja TEMPLATE --conversations tests/data/chat/conversations.json --conversation NAME
//   hearth-jinja tokenizer_config.json [--variant NAME] ...
// TEMPLATE is a template file, or a Hugging Face tokenizer_config.json whose chat_template is
// used. The rendered text goes to stdout byte for byte; errors go to stderr (exit status 1).
// The clock of strftime_now is pinned (--now, default the oracle's instant) and read in UTC
// unless --local-time is given.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

#include "jinja/template.h"
#include "tools/jinja/conversations.h"

namespace {

namespace jt = hearth::jinja::tools;
using nlohmann::ordered_json;

struct Options {
  std::string template_path;
  std::string variant;
  std::string context_path;
  std::string conversations_path;
  std::string conversation;
  int64_t now = jt::kPinnedUnixTime;
  bool local_time = false;
  bool keep_trailing_newline = false;
  bool list = false;
};

bool ends_with(const std::string& text, const std::string& suffix) {
  return text.size() >= suffix.size() &&
         text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
}

hearth::Result<std::string> load_template(const Options& o) {
  HEARTH_ASSIGN_OR_RETURN(std::string text, jt::read_text_file(o.template_path));
  if (!ends_with(o.template_path, ".json")) return text;
  HEARTH_ASSIGN_OR_RETURN(auto templates, jt::tokenizer_config_templates(text));
  for (const auto& candidate : templates) {
    if (o.variant.empty() || candidate.variant == o.variant) return candidate.source;
  }
  return hearth::error(hearth::ErrorCode::kNotFound,
                       "no chat_template variant '" + o.variant + "' in " + o.template_path);
}

hearth::Result<ordered_json> load_context(const Options& o) {
  if (!o.conversations_path.empty()) {
    HEARTH_ASSIGN_OR_RETURN(std::string text, jt::read_text_file(o.conversations_path));
    HEARTH_ASSIGN_OR_RETURN(auto conversations, jt::parse_conversations(text));
    for (auto& conversation : conversations) {
      if (o.list) std::printf("%s\n", conversation.name.c_str());
      if (conversation.name == o.conversation) return std::move(conversation.context);
    }
    return hearth::error(hearth::ErrorCode::kNotFound,
                         "no conversation '" + o.conversation + "' in " + o.conversations_path);
  }
  if (o.context_path.empty()) return ordered_json::object();
  HEARTH_ASSIGN_OR_RETURN(std::string text, jt::read_text_file(o.context_path));
  ordered_json context = ordered_json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (context.is_discarded() || !context.is_object()) {
    return hearth::error(hearth::ErrorCode::kInvalidArgument,
                         o.context_path + ": not a JSON object");
  }
  return context;
}

int run(const Options& o) {
  if (!o.local_time) {
    // strftime_now formats local time; the oracle's clock is UTC.
    setenv("TZ", "UTC", 1);
    tzset();
  }
  auto source = load_template(o);
  if (!source.is_ok()) {
    std::fprintf(stderr, "hearth-jinja: %s\n", source.status().to_string().c_str());
    return 1;
  }
  auto context = load_context(o);
  if (!context.is_ok()) {
    std::fprintf(stderr, "hearth-jinja: %s\n", context.status().to_string().c_str());
    return 1;
  }
  hearth::jinja::ParseOptions parse_options;
  parse_options.keep_trailing_newline = o.keep_trailing_newline;
  auto parsed = hearth::jinja::Template::parse(*source, parse_options);
  if (!parsed.is_ok()) {
    std::fprintf(stderr, "hearth-jinja: parse error: %s\n", parsed.status().to_string().c_str());
    return 1;
  }
  hearth::jinja::RenderOptions render_options;
  const std::time_t pinned = static_cast<std::time_t>(o.now);
  render_options.now = [pinned] { return pinned; };
  auto output = parsed->render(*context, render_options);
  if (!output.is_ok()) {
    std::fprintf(stderr, "hearth-jinja: render error: %s\n", output.status().to_string().c_str());
    return 1;
  }
  std::fwrite(output->data(), 1, output->size(), stdout);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"Render a Jinja chat template with Hearth's engine"};
  Options o;
  app.add_option("template", o.template_path, "template file, or a tokenizer_config.json")
      ->required();
  app.add_option("--variant", o.variant, "chat_template entry of a tokenizer_config.json");
  app.add_option("-c,--context", o.context_path, "JSON object of template variables");
  auto* conversations =
      app.add_option("--conversations", o.conversations_path, "conversations.json")
          ->excludes("--context");
  app.add_option("--conversation", o.conversation, "name of the conversation to render")
      ->needs(conversations);
  app.add_flag("--list", o.list, "print the conversations' names while searching");
  app.add_option("--now", o.now, "unix time strftime_now reports")->capture_default_str();
  app.add_flag("--local-time", o.local_time, "format --now in the local time zone, not UTC");
  app.add_flag("--keep-trailing-newline", o.keep_trailing_newline,
               "keep the template's final newline (Jinja2's keep_trailing_newline)");
  CLI11_PARSE(app, argc, argv);
  return run(o);
}

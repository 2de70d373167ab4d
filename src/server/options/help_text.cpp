// Texts printed by -h, --version and --completion-bash. The help follows llama-server's
// layout (cli.md section 1): four sections, heads padded to column 40, descriptions
// wrapped, an "(env: NAME)" line per entry; Hearth adds its state to each description.
#include <string>
#include <vector>

#include "chat/legacy_templates.h"
#include "server/options/option_table.h"
#include "server/options/parse_args.h"
#include "server/options/server_args.h"
#include "version/version.h"

namespace hearth::server::options {

namespace {

constexpr size_t kDescColumn = 40;
constexpr size_t kDescWidth = 70;
#if defined(__clang__)
constexpr std::string_view kCompiler = "clang " __clang_version__;
#elif defined(__GNUC__)
constexpr std::string_view kCompiler = "GCC " __VERSION__;
#else
constexpr std::string_view kCompiler = "an unknown compiler";
#endif

std::vector<std::string> wrap(std::string_view text, size_t width) {
  std::vector<std::string> lines;
  std::string line;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t space = text.find(' ', pos);
    std::string_view word = text.substr(pos, space == std::string_view::npos ? space : space - pos);
    pos = space == std::string_view::npos ? text.size() : space + 1;
    if (word.empty()) continue;
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      lines.push_back(std::move(line));
      line.clear();
    }
    if (!line.empty()) line += ' ';
    line += word;
  }
  if (!line.empty()) lines.push_back(std::move(line));
  return lines;
}

std::string head_of(const OptionSpec& spec) {
  std::vector<std::string_view> spellings = all_spellings(spec);
  std::string head;
  for (size_t i = 0; i < spellings.size(); ++i) {
    head += spellings[i];
    if (i + 1 == spellings.size()) break;
    head += ",";
    if (i == 0 && head.size() < 7) {
      head.append(7 - head.size(), ' ');
    } else {
      head += ' ';
    }
  }
  if (!spec.value_hint.empty()) head += " " + std::string(spec.value_hint);
  return head;
}

std::string state_note(const OptionSpec& spec) {
  switch (spec.state) {
    case OptionState::kSupported:
      return "";
    case OptionState::kAcceptedNoEffect:
      return " [hearth: no effect]";
    case OptionState::kDeferred:
      return " [hearth: not supported yet, issue " + std::to_string(spec.issue) + "]";
    case OptionState::kNotApplicable:
      return " [hearth: not supported]";
    case OptionState::kRemoved:
      return " [removed]";
  }
  return "";
}

}  // namespace

std::string default_shown(const OptionSpec& spec) {
  if (spec.parsed_default == nullptr) return std::string(spec.default_text);
  std::string shown = spec.parsed_default(ServerArgs{});
  if (shown.empty()) shown = "\"\"";
  // The reference's explanation of the value stays: "-1 (= auto)", "0 (model)".
  const size_t note = spec.default_text.find(" (");
  if (note != std::string_view::npos) shown += spec.default_text.substr(note);
  return shown;
}

std::string option_help_entry(const OptionSpec& spec) {
  std::string desc(spec.help);
  if (option_name(spec) == "--chat-template") {
    desc += ". Built-in names: " + chat::legacy_template_name_list();
  }
  const std::string shown = default_shown(spec);
  if (!shown.empty()) desc += " (default: " + shown + ")";
  desc += state_note(spec);
  std::vector<std::string> lines = wrap(desc, kDescWidth);
  if (!spec.env.empty()) lines.push_back("(env: " + std::string(spec.env) + ")");
  std::string out = head_of(spec);
  if (out.size() + 2 > kDescColumn) {
    out += '\n';
    out.append(kDescColumn, ' ');
  } else {
    out.append(kDescColumn - out.size(), ' ');
  }
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out.append(kDescColumn, ' ');
    out += lines[i];
    out += '\n';
  }
  return out;
}

std::string help_text() {
  return help_text(option_table());
}

std::string help_text(std::span<const OptionSpec> table) {
  std::string out;
  bool first = true;
  for (OptionSection section : {OptionSection::kCommon, OptionSection::kSampling,
                                OptionSection::kSpeculative, OptionSection::kExample}) {
    if (!first) out += "\n\n";
    first = false;
    out += "----- " + std::string(section_name(section)) + " -----\n\n";
    for (const OptionSpec& spec : table) {
      if (spec.section == section) out += option_help_entry(spec);
    }
  }
  return out;
}

// The reference's two lines, "version: <build number> (<commit>)" and "built with
// <compiler> for <target>": the number is the compatible release's and the commit Hearth's,
// so that "b<number>-<commit>" is /props build_info; the second line names Hearth's version.
std::string version_text() {
  const std::string release = std::to_string(kCompatibleLlamaServerBuild);
  return "version: " + release + " (" + std::string(hearth_commit()) + ")\n" + "built with " +
         std::string(kCompiler) + " for hearth-server " + std::string(hearth_version()) +
         ", compatible with llama-server b" + release + "\n";
}

std::string completion_bash_text() {
  return completion_bash_text(option_table());
}

std::string completion_bash_text(std::span<const OptionSpec> table) {
  std::string words;
  for (const OptionSpec& spec : table) {
    for (std::string_view spelling : all_spellings(spec)) {
      if (!words.empty()) words += ' ';
      words += spelling;
    }
  }
  return "_hearth_server_completion() {\n"
         "  local cur=\"${COMP_WORDS[COMP_CWORD]}\"\n"
         "  COMPREPLY=( $(compgen -W \"" +
         words +
         "\" -- \"$cur\") )\n"
         "}\n"
         "complete -F _hearth_server_completion hearth-server llama-server\n";
}

}  // namespace hearth::server::options

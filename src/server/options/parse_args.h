// hearth-server's command line: llama-server b10621's grammar (cli.md section 2) and
// environment variables (section 3) over the option table.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "server/options/option_table.h"
#include "server/options/server_args.h"

namespace hearth::server::options {

// Looks up an environment variable; nullopt when it is not set (set-but-empty is "").
using EnvLookup = std::function<std::optional<std::string>(std::string_view name)>;

// The process environment (getenv).
EnvLookup process_env();

enum class ParseAction {
  kRun,           // start the server with `args`
  kPrintAndExit,  // print `text` to stdout and exit with `exit_code` (0): help, version, ...
  kError,         // print `text` to stderr and exit with `exit_code` (1)
};

struct ParseOutcome {
  ParseAction action = ParseAction::kRun;
  ServerArgs args;   // meaningful for kRun
  std::string text;  // ends with a newline: print it as it is
  int exit_code = 0;
  // Warnings to log once logging is set up: repeated options, environment variables
  // overridden by the command line, options accepted without effect, deprecations.
  std::vector<std::string> warnings;
};

// Parses argv[1..argc) after applying the environment (environment first, in table
// order; the command line overrides it left to right). Never exits.
ParseOutcome parse_args(int argc, char** argv, const EnvLookup& env);
// The same over a vector of arguments, without the program name.
ParseOutcome parse_args(const std::vector<std::string>& args, const EnvLookup& env);
// The same over another option table (a test's fixture); the server's is option_table().
ParseOutcome parse_args(std::span<const OptionSpec> table, const std::vector<std::string>& args,
                        const EnvLookup& env);

// The text printed by -h (four sections, every entry with its env variable).
std::string help_text();
std::string help_text(std::span<const OptionSpec> table);
// The text printed by --version.
std::string version_text();
// The script printed by --completion-bash.
std::string completion_bash_text();
std::string completion_bash_text(std::span<const OptionSpec> table);
// The default --help prints for an option: its parsed default (with the reference's note,
// "-1 (= auto)") when it has one, else the reference's default text.
std::string default_shown(const OptionSpec& spec);
// The help entry of one option (used by argument errors).
std::string option_help_entry(const OptionSpec& spec);

}  // namespace hearth::server::options

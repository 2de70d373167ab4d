// Internal: what an option handler sees and changes, and the lookup of handlers by option
// name. Every supported option has a handler; accepted-without-effect options have one
// when their value needs validating.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "server/options/option_table.h"
#include "server/options/server_args.h"

namespace hearth::server::options {

struct ParseState {
  ServerArgs args;
  std::vector<std::string> warnings;
  bool help_requested = false;
  bool completion_requested = false;
  std::optional<std::string> print_now;  // --version, --list-devices: print and exit at once
};

struct OptionInput {
  const OptionSpec* spec = nullptr;
  std::string_view arg;     // the spelling as given, or the environment variable name
  std::string_view value;   // kValue / kTwoValues
  std::string_view value2;  // kTwoValues
  bool enabled = true;      // kFlag / kBoolPair: false for the negative form
  bool from_env = false;
};

// Errors with ErrorCode::kInvalidArgument / kOutOfRange are reported as "error while
// handling argument"; any other code prints the message as it is.
using OptionHandler = Status (*)(const OptionInput& in, ParseState& state);

// The handler for the option named `name` (option_name()); nullptr when none.
OptionHandler find_handler(std::string_view name);
// Names of all options with a handler (tests check them against the table).
std::vector<std::string_view> handler_names();

struct HandlerEntry {
  std::string_view name;
  OptionHandler handler;
};
// Validators of accepted-without-effect options (option_handlers_no_effect.cpp).
std::span<const HandlerEntry> no_effect_handlers();
// Handlers of the sampling and grammar options (option_handlers_sampling.cpp).
std::span<const HandlerEntry> sampling_handlers();
// Handlers of the chat-template options (option_handlers_chat.cpp).
std::span<const HandlerEntry> chat_handlers();

// An "error while handling argument" reason.
Status invalid_value(std::string_view reason);
// Parses the option's value as a float into `out`.
Status set_float(const OptionInput& in, float& out);
// Reads a whole file (--grammar-file, --json-schema-file, --chat-template-file) into `out`;
// kIo "failed to open file '<path>'" when it cannot be opened.
Status read_whole_file(std::string_view path, std::string& out);

}  // namespace hearth::server::options

// The complete llama-server b10621 option surface (cli.md section 9): one entry per help
// entry, in help order, with Hearth's state for each. The parser, the help text and the
// compatibility manifest test all read this one table.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace hearth::server::options {

// The four help sections, in help order.
enum class OptionSection { kCommon, kSampling, kSpeculative, kExample };

enum class OptionKind {
  kFlag,       // no value; switches something on
  kBoolPair,   // positive and negative spellings, no value
  kValue,      // consumes the next argv element
  kTwoValues,  // consumes the next two argv elements (--control-vector-layer-range)
};

enum class OptionState {
  kSupported,  // parsed and honoured
  // Meaningless for Hearth (GPU placement on a CPU-only build, ...): accepted and
  // validated, a warning says so; the manifest records it as "no_effect".
  kAcceptedNoEffect,
  kDeferred,       // refused unless given its default value; `issue` will deliver it
  kNotApplicable,  // refused unless given its default value; `reason` says why
  kRemoved,        // removed upstream too: always fails with `reason` (as the reference does)
};

struct OptionInput;
struct ParseState;
struct ServerArgs;
// Converts and stores an option's value (or validates it, for an option without effect).
// Errors with ErrorCode::kInvalidArgument / kOutOfRange are reported as "error while
// handling argument"; any other code prints the message as it is.
using OptionHandler = Status (*)(const OptionInput& in, ParseState& state);
// The value an option's target holds, as --help shows a default.
using DefaultOf = std::string (*)(const ServerArgs& args);

struct OptionSpec {
  std::string_view spellings;      // positive spellings in help order, ", "-separated
  std::string_view neg_spellings;  // negative spellings of a bool pair, ", "-separated
  std::string_view value_hint;     // "N", "FNAME", ...; empty for flags and bool pairs
  std::string_view env;            // environment variable, or empty
  std::string_view default_text;   // the reference's default as help shows it
  std::string_view help;           // short description (own words)
  OptionKind kind = OptionKind::kFlag;
  OptionState state = OptionState::kSupported;
  // kDeferred: what is missing; kNotApplicable: why it never applies; kAcceptedNoEffect:
  // what is ignored; kRemoved: the error text.
  std::string_view reason;
  // kDeferred / kNotApplicable: the values that equal Hearth's default and are therefore
  // accepted, '|'-separated ("on"/"off" name the positive/negative form of a flag or bool
  // pair). Numbers compare by value. Empty: every use is refused.
  std::string_view accepted;
  int issue = 0;      // kDeferred: the Hearth issue that delivers the option
  bool core = false;  // marked as a core serving option in the spec
  // Supported options: what handles the value; accepted-without-effect options: what
  // validates it (null when there is nothing to check).
  OptionHandler handler = nullptr;
  // Options with a value to show: the parsed default, which --help prints (default_text is
  // the reference's, kept for options whose default is not a value Hearth holds).
  DefaultOf parsed_default = nullptr;
  OptionSection section = OptionSection::kCommon;
};

// All 249 entries in help order.
std::span<const OptionSpec> option_table();

// The entry that has `spelling` (exact match, positive or negative); nullptr when none.
// The caller applies the "--" underscore normalisation first.
const OptionSpec* find_option(std::string_view spelling);
// The same in another table (a test's fixture); the first entry with the spelling.
const OptionSpec* find_option(std::span<const OptionSpec> table, std::string_view spelling);

// The entry's name: its first "--" spelling, else its first spelling.
std::string_view option_name(const OptionSpec& spec);
// Positive then negative spellings, in help order.
std::vector<std::string_view> all_spellings(const OptionSpec& spec);
bool is_negative_spelling(const OptionSpec& spec, std::string_view spelling);

// "common params", "sampling params", ...
std::string_view section_name(OptionSection section);
// "supported", "accepted_no_effect", "deferred", "not_applicable", "removed".
std::string_view state_name(OptionState state);
// True for the states that refuse non-default values (deferred, not applicable).
bool is_refused_state(OptionState state);

// Splits "a, b, c" into its items.
std::vector<std::string_view> split_spellings(std::string_view list);

}  // namespace hearth::server::options

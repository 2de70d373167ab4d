// The parse driver: environment first (table order), then argv left to right, then the
// post-parse actions (escapes, help, completion script).
#include "server/options/parse_args.h"

#include <cstdlib>

#include "server/options/option_handlers.h"
#include "server/options/value_parse.h"

namespace hearth::server::options {

namespace {

ParseOutcome fail(std::string message) {
  ParseOutcome out;
  out.action = ParseAction::kError;
  out.text = std::move(message);
  out.text += '\n';
  out.exit_code = 1;
  return out;
}

bool is_argument_error(const Status& status) {
  return status.code() == ErrorCode::kInvalidArgument || status.code() == ErrorCode::kOutOfRange;
}

ParseOutcome argument_error(const OptionInput& in, const Status& status) {
  if (!is_argument_error(status)) return fail("error: " + status.message());
  if (in.from_env) {
    return fail("error while handling environment variable \"" + std::string(in.arg) +
                "\": " + status.message());
  }
  return fail("error while handling argument \"" + std::string(in.arg) + "\": " + status.message() +
              "\n\nusage:\n" + option_help_entry(*in.spec) +
              "\nto show complete usage, run with -h");
}

// Whether a refused option's input equals Hearth's default (spec.accepted).
bool is_accepted_default(const OptionInput& in) {
  const OptionSpec& spec = *in.spec;
  for (const std::string& alt : split_any(spec.accepted, "|")) {
    if (alt.empty()) continue;
    if (spec.kind == OptionKind::kFlag || spec.kind == OptionKind::kBoolPair) {
      if (alt == (in.enabled ? "on" : "off")) return true;
      continue;
    }
    if (spec.kind != OptionKind::kValue) continue;
    if (in.value == alt) return true;
    Result<float> given = parse_float(in.value);
    Result<float> expected = parse_float(alt);
    if (given.is_ok() && expected.is_ok() && *given == *expected) return true;
  }
  return false;
}

Status refusal(const OptionInput& in) {
  const OptionSpec& spec = *in.spec;
  std::string what = "option '" + std::string(in.from_env ? option_name(spec) : in.arg) + "'";
  if (in.from_env) what += " (from environment variable " + std::string(in.arg) + ")";
  if (spec.state == OptionState::kDeferred) {
    return error(ErrorCode::kUnsupported,
                 what + " is not supported by hearth-server yet: " + std::string(spec.reason) +
                     " (deferred to issue " + std::to_string(spec.issue) + ")");
  }
  return error(ErrorCode::kUnsupported,
               what + " is not supported by hearth-server: " + std::string(spec.reason));
}

Status dispatch(const OptionInput& in, ParseState& st) {
  const OptionSpec& spec = *in.spec;
  switch (spec.state) {
    case OptionState::kRemoved:
      return invalid_value(spec.reason);
    case OptionState::kDeferred:
    case OptionState::kNotApplicable:
      return is_accepted_default(in) ? Status::ok() : refusal(in);
    case OptionState::kAcceptedNoEffect: {
      if (spec.handler != nullptr) HEARTH_RETURN_IF_ERROR(spec.handler(in, st));
      st.warnings.push_back("option '" + std::string(in.arg) +
                            "' has no effect in hearth-server: " + std::string(spec.reason));
      return Status::ok();
    }
    case OptionState::kSupported:
      break;
  }
  if (spec.handler == nullptr) {
    return error(ErrorCode::kInternal,
                 "no handler for supported option " + std::string(option_name(spec)));
  }
  return spec.handler(in, st);
}

// Applies one option's environment variable(s); sets `applied` when one was used.
ParseOutcome apply_env(const OptionSpec& spec, const EnvLookup& env, ParseState& st,
                       bool& applied) {
  OptionInput in;
  in.spec = &spec;
  in.arg = spec.env;
  in.from_env = true;
  std::optional<std::string> value = env(spec.env);
  std::string no_name;
  if (spec.kind == OptionKind::kBoolPair && spec.env.starts_with("LLAMA_ARG_")) {
    no_name = "LLAMA_ARG_NO_" + std::string(spec.env.substr(10));
    if (env(no_name).has_value()) {
      in.arg = no_name;
      value = "false";
    }
  }
  if (!value.has_value()) return ParseOutcome{};
  switch (spec.kind) {
    case OptionKind::kFlag:
      if (!is_truthy(*value)) return ParseOutcome{};
      break;
    case OptionKind::kBoolPair:
      if (!is_truthy(*value) && !is_falsey(*value)) {
        return argument_error(in, invalid_value("invalid boolean value"));
      }
      in.enabled = is_truthy(*value);
      break;
    case OptionKind::kValue:
    case OptionKind::kTwoValues:
      in.value = *value;
      break;
  }
  applied = true;
  Status status = dispatch(in, st);
  if (!status.is_ok()) return argument_error(in, status);
  return ParseOutcome{};
}

std::string normalise(const std::string& arg) {
  std::string key = arg;
  if (key.starts_with("--")) {
    for (char& c : key) {
      if (c == '_') c = '-';
    }
  }
  return key;
}

ParseOutcome finish(std::span<const OptionSpec> table, ParseState& st) {
  ParseOutcome out;
  out.warnings = std::move(st.warnings);
  if (st.args.escape) {
    for (std::string& prompt : st.args.defaults.stop) prompt = process_escapes(prompt);
    if (st.args.dry_breakers_set) {
      for (std::string& b : sampling_of(st.args).dry_sequence_breakers) b = process_escapes(b);
    }
  }
  if (st.help_requested || st.completion_requested) {
    out.action = ParseAction::kPrintAndExit;
    out.text = st.help_requested ? help_text(table) : completion_bash_text(table);
    return out;
  }
  out.args = std::move(st.args);
  return out;
}

ParseOutcome print_now(ParseState& st) {
  ParseOutcome out;
  out.action = ParseAction::kPrintAndExit;
  out.text = std::move(*st.print_now);
  out.warnings = std::move(st.warnings);
  return out;
}

}  // namespace

EnvLookup process_env() {
  return [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

ParseOutcome parse_args(const std::vector<std::string>& args, const EnvLookup& env) {
  return parse_args(option_table(), args, env);
}

ParseOutcome parse_args(std::span<const OptionSpec> table, const std::vector<std::string>& args,
                        const EnvLookup& env) {
  ParseState st;
  std::vector<bool> from_env(table.size(), false);
  std::vector<int> seen(table.size(), 0);
  for (size_t i = 0; i < table.size(); ++i) {
    if (table[i].env.empty()) continue;
    bool applied = false;
    ParseOutcome out = apply_env(table[i], env, st, applied);
    if (out.action != ParseAction::kRun) return out;
    from_env[i] = applied;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    std::string key = normalise(args[i]);
    const OptionSpec* spec = find_option(table, key);
    if (spec == nullptr) return fail("error: invalid argument: " + args[i]);
    size_t index = static_cast<size_t>(spec - table.data());
    if (seen[index]++ > 0 && option_name(*spec) != "--spec-type") {
      st.warnings.push_back("DEPRECATED: argument '" + args[i] +
                            "' specified multiple times, use comma-separated values instead "
                            "(only last value will be used)");
    }
    if (from_env[index]) {
      st.warnings.push_back("warn: " + std::string(spec->env) +
                            " environment variable is set, but will be overwritten by command "
                            "line argument " +
                            args[i]);
    }
    OptionInput in;
    in.spec = spec;
    in.arg = args[i];
    in.enabled = !is_negative_spelling(*spec, key);
    size_t n_values = spec->kind == OptionKind::kValue       ? 1
                      : spec->kind == OptionKind::kTwoValues ? 2
                                                             : 0;
    if (n_values > 0 && i + n_values >= args.size()) {
      return argument_error(in, invalid_value("expected value for argument"));
    }
    if (n_values >= 1) in.value = args[++i];
    if (n_values == 2) in.value2 = args[++i];
    Status status = dispatch(in, st);
    if (!status.is_ok()) return argument_error(in, status);
    if (st.print_now.has_value()) return print_now(st);
  }
  return finish(table, st);
}

ParseOutcome parse_args(int argc, char** argv, const EnvLookup& env) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) args.emplace_back(argv[i]);
  return parse_args(args, env);
}

}  // namespace hearth::server::options

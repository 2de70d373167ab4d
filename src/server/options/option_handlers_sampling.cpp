// Handlers of the sampling options (cli.md section 9, sampling.md section 4): the server-wide
// defaults every request starts from, with the reference's command-line validation.
#include <cctype>
#include <cmath>
#include <string>

#include "server/options/option_handlers.h"
#include "server/options/value_parse.h"

namespace hearth::server::options {

Status handle_seed(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(unsigned long seed, parse_ulong(in.value));
  sampling_of(st.args).seed = static_cast<uint32_t>(seed);
  return Status::ok();
}

// The random seed shows as the reference writes it: -1.
std::string show_seed(const ServerArgs& args) {
  return args.defaults.sampling.seed == kDefaultSeed ? "-1"
                                                     : std::to_string(args.defaults.sampling.seed);
}

Status handle_temp(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(float temp, parse_float(in.value));
  sampling_of(st.args).temperature = temp < 0.0f ? 0.0f : temp;
  mark_sampling_choice(in, st);
  return Status::ok();
}

// -l/--logit-bias TOKEN_ID(+|-)BIAS, e.g. 15043+1 or 15043-inf.
Status handle_logit_bias(const OptionInput& in, ParseState& st) {
  std::string text(in.value);
  size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == 0 || pos >= text.size() || (text[pos] != '+' && text[pos] != '-')) {
    return invalid_value("invalid input format");
  }
  HEARTH_ASSIGN_OR_RETURN(int32_t token, parse_int(text.substr(0, pos)));
  HEARTH_ASSIGN_OR_RETURN(float bias, parse_float(text.substr(pos + 1)));
  if (text[pos] == '-') bias = -bias;
  sampling_of(st.args).logit_bias.emplace_back(token, bias);
  return Status::ok();
}

Status handle_samplers(const OptionInput& in, ParseState& st) {
  std::vector<std::string> names = split_any(in.value, ";");
  sampling_of(st.args).samplers = sampling::samplers_from_names(names);
  mark_sampling_choice(in, st);
  return Status::ok();
}

std::string show_samplers(const ServerArgs& args) {
  std::string out;
  for (sampling::SamplerType type : args.defaults.sampling.samplers) {
    if (!out.empty()) out += ';';
    out += sampling::sampler_name(type);
  }
  return out;
}

// Unlike --samplers this does not count as a user choice (the reference's quirk).
Status handle_sampler_seq(const OptionInput& in, ParseState& st) {
  sampling_of(st.args).samplers = sampling::samplers_from_chars(in.value);
  return Status::ok();
}

std::string show_sampler_seq(const ServerArgs& args) {
  std::string out;
  for (sampling::SamplerType type : args.defaults.sampling.samplers)
    out += sampling::sampler_char(type);
  return out;
}

Status handle_repeat_penalty(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(float v, parse_float(in.value));
  if (!std::isfinite(v) || v <= 0.0f || !std::isfinite(1.0f / v)) {
    return invalid_value("repeat penalty must be finite and greater than 0");
  }
  sampling_of(st.args).repeat_penalty = v;
  mark_sampling_choice(in, st);
  return Status::ok();
}

Status handle_dry_base(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(float v, parse_float(in.value));
  if (v >= 1.0f) sampling_of(st.args).dry_base = v;  // below 1: ignored, as the reference
  return Status::ok();
}

// The first use replaces the default breakers; "none" empties the list.
Status handle_dry_breaker(const OptionInput& in, ParseState& st) {
  if (!st.args.dry_breakers_set) {
    sampling_of(st.args).dry_sequence_breakers.clear();
    st.args.dry_breakers_set = true;
  }
  if (in.value == "none") {
    sampling_of(st.args).dry_sequence_breakers.clear();
  } else {
    sampling_of(st.args).dry_sequence_breakers.emplace_back(in.value);
  }
  return Status::ok();
}

Status handle_mirostat(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(int32_t v, parse_int(in.value));
  // The reference aborts later on other values; refusing them here is the clear answer.
  if (v < 0 || v > 2) return invalid_value("mirostat must be 0, 1 or 2");
  sampling_of(st.args).mirostat = v;
  mark_sampling_choice(in, st);
  return Status::ok();
}

Status handle_grammar_file(const OptionInput& in, ParseState& st) {
  return read_whole_file(in.value, st.args.defaults.grammar);
}

Status handle_json_schema_file(const OptionInput& in, ParseState& st) {
  return read_whole_file(in.value, st.args.json_schema);
}

}  // namespace hearth::server::options

// Handlers of the sampling options (cli.md section 9, sampling.md section 4): the server-wide
// defaults every request starts from, with the reference's command-line validation.
#include <cctype>
#include <cmath>
#include <string>

#include "server/options/option_handlers.h"
#include "server/options/value_parse.h"

namespace hearth::server::options {

namespace {

using St = ParseState;
using In = OptionInput;

// Records that the user chose this option, so the model's general.sampling.* default for
// it does not apply.
void mark(St& st, std::string_view name) {
  st.args.sampling_set_by_user.emplace_back(name);
}

Status set_finite(const In& in, float& out) {
  HEARTH_ASSIGN_OR_RETURN(float v, parse_float(in.value));
  if (!std::isfinite(v)) return invalid_value("value must be finite");
  out = v;
  return Status::ok();
}

Status set_non_negative(const In& in, int32_t& out) {
  HEARTH_ASSIGN_OR_RETURN(int32_t v, parse_int(in.value));
  if (v < 0) return invalid_value("value must be non-negative");
  out = v;
  return Status::ok();
}

// -l/--logit-bias TOKEN_ID(+|-)BIAS, e.g. 15043+1 or 15043-inf.
Status add_logit_bias(const In& in, St& st) {
  std::string text(in.value);
  size_t pos = 0;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == 0 || pos >= text.size() || (text[pos] != '+' && text[pos] != '-')) {
    return invalid_value("invalid input format");
  }
  HEARTH_ASSIGN_OR_RETURN(int32_t token, parse_int(text.substr(0, pos)));
  HEARTH_ASSIGN_OR_RETURN(float bias, parse_float(text.substr(pos + 1)));
  if (text[pos] == '-') bias = -bias;
  st.args.sampling.logit_bias.emplace_back(token, bias);
  return Status::ok();
}

Status set_repeat_penalty(const In& in, St& st) {
  HEARTH_ASSIGN_OR_RETURN(float v, parse_float(in.value));
  if (!std::isfinite(v) || v <= 0.0f || !std::isfinite(1.0f / v)) {
    return invalid_value("repeat penalty must be finite and greater than 0");
  }
  st.args.sampling.repeat_penalty = v;
  mark(st, "--repeat-penalty");
  return Status::ok();
}

// The first use replaces the default breakers; "none" empties the list.
Status add_dry_breaker(const In& in, St& st) {
  if (!st.args.dry_breakers_set) {
    st.args.sampling.dry_sequence_breakers.clear();
    st.args.dry_breakers_set = true;
  }
  if (in.value == "none") {
    st.args.sampling.dry_sequence_breakers.clear();
  } else {
    st.args.sampling.dry_sequence_breakers.emplace_back(in.value);
  }
  return Status::ok();
}

Status set_mirostat(const In& in, St& st) {
  HEARTH_ASSIGN_OR_RETURN(int32_t v, parse_int(in.value));
  // The reference aborts later on other values; refusing them here is the clear answer.
  if (v < 0 || v > 2) return invalid_value("mirostat must be 0, 1 or 2");
  st.args.sampling.mirostat = v;
  mark(st, "--mirostat");
  return Status::ok();
}

Status set_samplers(const In& in, St& st) {
  std::vector<std::string> names = split_any(in.value, ";");
  st.args.sampling.samplers = sampling::samplers_from_names(names);
  mark(st, "--samplers");
  return Status::ok();
}

constexpr HandlerEntry kEntries[] = {
    {"--seed",
     [](const In& in, St& st) {
       HEARTH_ASSIGN_OR_RETURN(unsigned long seed, parse_ulong(in.value));
       st.args.sampling.seed = static_cast<uint32_t>(seed);
       return Status::ok();
     }},
    {"--temp",
     [](const In& in, St& st) {
       HEARTH_ASSIGN_OR_RETURN(float temp, parse_float(in.value));
       st.args.sampling.temperature = temp < 0.0f ? 0.0f : temp;
       mark(st, "--temp");
       return Status::ok();
     }},
    {"--top-k",
     [](const In& in, St& st) {
       HEARTH_ASSIGN_OR_RETURN(st.args.sampling.top_k, parse_int(in.value));
       mark(st, "--top-k");
       return Status::ok();
     }},
    {"--top-p",
     [](const In& in, St& st) {
       mark(st, "--top-p");
       return set_float(in, st.args.sampling.top_p);
     }},
    {"--min-p",
     [](const In& in, St& st) {
       mark(st, "--min-p");
       return set_float(in, st.args.sampling.min_p);
     }},
    {"--logit-bias", add_logit_bias},
    {"--samplers", set_samplers},
    {"--sampler-seq",
     [](const In& in, St& st) {
       // Unlike --samplers this does not count as a user choice (the reference's quirk).
       st.args.sampling.samplers = sampling::samplers_from_chars(in.value);
       return Status::ok();
     }},
    {"--ignore-eos",
     [](const In&, St& st) {
       st.args.ignore_eos = true;
       return Status::ok();
     }},
    {"--top-nsigma",
     [](const In& in, St& st) { return set_float(in, st.args.sampling.top_n_sigma); }},
    {"--xtc-probability",
     [](const In& in, St& st) {
       mark(st, "--xtc-probability");
       return set_float(in, st.args.sampling.xtc_probability);
     }},
    {"--xtc-threshold",
     [](const In& in, St& st) {
       mark(st, "--xtc-threshold");
       return set_float(in, st.args.sampling.xtc_threshold);
     }},
    {"--typical", [](const In& in, St& st) { return set_float(in, st.args.sampling.typical_p); }},
    {"--repeat-last-n",
     [](const In& in, St& st) {
       mark(st, "--repeat-last-n");
       return set_non_negative(in, st.args.sampling.repeat_last_n);
     }},
    {"--repeat-penalty", set_repeat_penalty},
    {"--presence-penalty",
     [](const In& in, St& st) { return set_finite(in, st.args.sampling.presence_penalty); }},
    {"--frequency-penalty",
     [](const In& in, St& st) { return set_finite(in, st.args.sampling.frequency_penalty); }},
    {"--dry-multiplier",
     [](const In& in, St& st) { return set_float(in, st.args.sampling.dry_multiplier); }},
    {"--dry-base",
     [](const In& in, St& st) {
       HEARTH_ASSIGN_OR_RETURN(float v, parse_float(in.value));
       if (v >= 1.0f) st.args.sampling.dry_base = v;  // below 1: ignored, as the reference
       return Status::ok();
     }},
    {"--dry-allowed-length",
     [](const In& in, St& st) {
       HEARTH_ASSIGN_OR_RETURN(st.args.sampling.dry_allowed_length, parse_int(in.value));
       return Status::ok();
     }},
    {"--dry-penalty-last-n",
     [](const In& in, St& st) {
       return set_non_negative(in, st.args.sampling.dry_penalty_last_n);
     }},
    {"--dry-sequence-breaker", add_dry_breaker},
    {"--adaptive-target",
     [](const In& in, St& st) { return set_float(in, st.args.sampling.adaptive_target); }},
    {"--adaptive-decay",
     [](const In& in, St& st) { return set_float(in, st.args.sampling.adaptive_decay); }},
    {"--dynatemp-range",
     [](const In& in, St& st) { return set_float(in, st.args.sampling.dynatemp_range); }},
    {"--dynatemp-exp",
     [](const In& in, St& st) { return set_float(in, st.args.sampling.dynatemp_exponent); }},
    {"--mirostat", set_mirostat},
    {"--mirostat-lr",
     [](const In& in, St& st) {
       mark(st, "--mirostat-lr");
       return set_float(in, st.args.sampling.mirostat_eta);
     }},
    {"--mirostat-ent",
     [](const In& in, St& st) {
       mark(st, "--mirostat-ent");
       return set_float(in, st.args.sampling.mirostat_tau);
     }},
    {"--grammar",
     [](const In& in, St& st) {
       st.args.grammar = std::string(in.value);
       return Status::ok();
     }},
    {"--grammar-file",
     [](const In& in, St& st) { return read_whole_file(in.value, st.args.grammar); }},
    {"--json-schema",
     [](const In& in, St& st) {
       st.args.json_schema = std::string(in.value);
       return Status::ok();
     }},
    {"--json-schema-file",
     [](const In& in, St& st) { return read_whole_file(in.value, st.args.json_schema); }},
};

}  // namespace

std::span<const HandlerEntry> sampling_handlers() {
  return kEntries;
}

}  // namespace hearth::server::options

// The sampling params entries of the option table (cli.md section 9), in help order.
// Fields: spellings, negative spellings, value hint, env, default, help, kind, state,
// reason/note, accepted default values, issue, core.
#include "server/options/option_table_parts.h"

namespace hearth::server::options {

using enum OptionKind;
using enum OptionState;
using namespace reasons;

namespace {

constexpr OptionSpec kEntries[] = {
    {"--samplers", "", "SAMPLERS", "",
     "penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature",
     "Order of the configurable samplers (see sampling.md §3)", kValue, kSupported, "", "", 0,
     false},
    {"-s, --seed", "", "SEED", "", "-1 (random)", "Default RNG seed; -1 (0xFFFFFFFF) = random",
     kValue, kSupported, "", "", 0, false},
    {"--sampler-seq, --sampling-seq", "", "SEQUENCE", "", "edskypmxt",
     "Same as --samplers using one letter per sampler (edskypmxt...)", kValue, kSupported, "", "",
     0, false},
    {"--ignore-eos", "", "", "", "off",
     "Ban every end-of-generation token (adds -inf logit biases) by default for all requests",
     kFlag, kSupported, "", "", 0, false},
    {"--temp, --temperature", "", "N", "", "0.80",
     "Default temperature; negative values become 0 (greedy)", kValue, kSupported, "", "", 0,
     false},
    {"--top-k", "", "N", "LLAMA_ARG_TOP_K", "40", "Default top-k; <= 0 disables", kValue,
     kSupported, "", "", 0, false},
    {"--top-p", "", "N", "", "0.95", "Default nucleus threshold; 1.0 disables", kValue, kSupported,
     "", "", 0, false},
    {"--min-p", "", "N", "", "0.05", "Default min-p; 0 disables", kValue, kSupported, "", "", 0,
     false},
    {"--top-nsigma, --top-n-sigma", "", "N", "", "-1.00", "Default top-n-sigma; <= 0 disables",
     kValue, kSupported, "", "", 0, false},
    {"--xtc-probability", "", "N", "", "0.00", "Default XTC trigger probability; 0 disables",
     kValue, kSupported, "", "", 0, false},
    {"--xtc-threshold", "", "N", "", "0.10", "Default XTC threshold; > 0.5 disables", kValue,
     kSupported, "", "", 0, false},
    {"--typical, --typical-p", "", "N", "", "1.00", "Default locally-typical p; 1.0 disables",
     kValue, kSupported, "", "", 0, false},
    {"--repeat-last-n", "", "N", "", "64",
     "Penalty window (prompt + generated tokens); 0 disables penalties; negative -> error", kValue,
     kSupported, "", "", 0, false},
    {"--repeat-penalty", "", "N", "", "1.00",
     "Repetition penalty divisor/multiplier; 1.0 = off; must be finite and > 0", kValue, kSupported,
     "", "", 0, false},
    {"--presence-penalty", "", "N", "", "0.00", "Presence penalty; 0 = off", kValue, kSupported, "",
     "", 0, false},
    {"--frequency-penalty", "", "N", "", "0.00", "Frequency penalty; 0 = off", kValue, kSupported,
     "", "", 0, false},
    {"--dry-multiplier", "", "N", "", "0.00", "DRY strength; 0 = off", kValue, kSupported, "", "",
     0, false},
    {"--dry-base", "", "N", "", "1.75",
     "DRY exponential base; a value below 1 is silently ignored (keeps 1.75)", kValue, kSupported,
     "", "", 0, false},
    {"--dry-allowed-length", "", "N", "", "2", "Longest repeat DRY tolerates without penalty",
     kValue, kSupported, "", "", 0, false},
    {"--dry-penalty-last-n", "", "N", "", "64", "DRY scan window; 0 disables; negative -> error",
     kValue, kSupported, "", "", 0, false},
    {"--dry-sequence-breaker", "", "STRING", "", "\\n : \" *",
     "Add a DRY breaker; the first use clears the defaults (\\n, :, \", *); the value none clears "
     "the list",
     kValue, kSupported, "", "", 0, false},
    {"--adaptive-target", "", "N", "", "-1.00",
     "adaptive-p target probability (used only if adaptive_p is in the sampler list); negative = "
     "plain sampling",
     kValue, kSupported, "", "", 0, false},
    {"--adaptive-decay", "", "N", "", "0.90",
     "adaptive-p moving-average decay (clamped to 0..0.99 at use)", kValue, kSupported, "", "", 0,
     false},
    {"--dynatemp-range", "", "N", "", "0.00", "Dynamic-temperature half range; 0 disables", kValue,
     kSupported, "", "", 0, false},
    {"--dynatemp-exp", "", "N", "", "1.00", "Dynamic-temperature exponent", kValue, kSupported, "",
     "", 0, false},
    {"--mirostat", "", "N", "", "0", "Mirostat version; replaces the whole configurable chain",
     kValue, kSupported, "", "", 0, false},
    {"--mirostat-lr", "", "N", "", "0.10", "Mirostat learning rate eta", kValue, kSupported, "", "",
     0, false},
    {"--mirostat-ent", "", "N", "", "5.00", "Mirostat target surprise tau", kValue, kSupported, "",
     "", 0, false},
    {"-l, --logit-bias", "", "TOKEN_ID(+/-)BIAS", "", "", "Add a logit bias for a token id, e.g",
     kValue, kSupported, "", "", 0, false},
    {"--grammar", "", "GRAMMAR", "", "", "Default grammar for all requests (grammar.md)", kValue,
     kSupported, "", "", 0, false},
    {"--grammar-file", "", "FNAME", "", "", "Read the default grammar from a file", kValue,
     kSupported, "", "", 0, false},
    {"-j, --json-schema", "", "JSON", "", "",
     "Default JSON-schema constraint (converted to a grammar at startup; external $refs "
     "unsupported)",
     kValue, kSupported, "", "", 0, false},
    {"-jf, --json-schema-file", "", "FNAME", "", "", "Same as -j, schema read from a file", kValue,
     kSupported, "", "", 0, false},
    {"-bs, --backend-sampling", "", "", "LLAMA_ARG_BACKEND_SAMPLING", "disabled",
     "Run the sampler chain on the compute backend (experimental); turned off per request when a "
     "grammar, reasoning budget or pre-sampling probabilities are needed",
     kFlag, kAcceptedNoEffect, kNoteCpuOnly, "", 0, false},
};

}  // namespace

std::span<const OptionSpec> sampling_option_entries() {
  return kEntries;
}

}  // namespace hearth::server::options

// The speculative params entries of the option table (cli.md section 9), in help order.
// Fields: spellings, negative spellings, value hint, env, default, help, kind, state,
// reason/note, accepted default values, issue, core.
#include "server/options/option_table_parts.h"

namespace hearth::server::options {

using enum OptionKind;
using enum OptionState;
using namespace reasons;

namespace {

constexpr OptionSpec kEntries[] = {
    {"--spec-draft-hf, -hfd, -hfrd, --hf-repo-draft", "", "<user>/<model>[:quant]",
     "LLAMA_ARG_SPEC_DRAFT_HF_REPO", "unused",
     "Hugging Face repository for the draft model (same selection rules as -hf; sidecar "
     "MTP/Eagle3/DFlash/DSpark files are discovered automatically when no --spec-type is given)",
     kValue, kNotApplicable, kReasonSpeculative, "", 0, false},
    {"--spec-draft-threads, -td, --threads-draft", "", "N", "", "same as -t",
     "Generation threads of the draft model (<= 0 -> all logical CPUs)", kValue, kNotApplicable,
     kReasonSpeculative, "", 0, false},
    {"--spec-draft-threads-batch, -tbd, --threads-batch-draft", "", "N", "",
     "same as draft threads", "Batch threads of the draft model", kValue, kNotApplicable,
     kReasonSpeculative, "", 0, false},
    {"--spec-draft-cpu-mask, -Cd, --cpu-mask-draft", "", "M", "", "same as -C",
     "Draft affinity mask", kValue, kNotApplicable, kReasonSpeculative, "", 0, false},
    {"--spec-draft-cpu-range, -Crd, --cpu-range-draft", "", "lo-hi", "", "", "Draft affinity range",
     kValue, kNotApplicable, kReasonSpeculative, "", 0, false},
    {"--spec-draft-cpu-strict, --cpu-strict-draft", "", "<0|1>", "", "same as --cpu-strict",
     "Strict placement for draft threads", kValue, kNotApplicable, kReasonSpeculative, "", 0,
     false},
    {"--spec-draft-prio, --prio-draft", "", "N", "", "0", "Draft thread priority", kValue,
     kNotApplicable, kReasonSpeculative, "0", 0, false},
    {"--spec-draft-poll, --poll-draft", "", "N", "", "same as --poll", "Draft polling level",
     kValue, kNotApplicable, kReasonSpeculative, "", 0, false},
    {"--spec-draft-cpu-mask-batch, -Cbd, --cpu-mask-batch-draft", "", "M", "", "same as -C",
     "Draft batch affinity mask", kValue, kNotApplicable, kReasonSpeculative, "", 0, false},
    {"--spec-draft-cpu-strict-batch, --cpu-strict-batch-draft", "", "<0|1>", "", "draft cpu-strict",
     "Strict placement for draft batch threads", kValue, kNotApplicable, kReasonSpeculative, "", 0,
     false},
    {"--spec-draft-prio-batch, --prio-batch-draft", "", "N", "", "0", "Draft batch thread priority",
     kValue, kNotApplicable, kReasonSpeculative, "0", 0, false},
    {"--spec-draft-poll-batch, --poll-batch-draft", "", "N", "", "draft poll",
     "Draft batch polling level", kValue, kNotApplicable, kReasonSpeculative, "", 0, false},
    {"--spec-draft-override-tensor, -otd, --override-tensor-draft", "",
     "<tensor name pattern>=<buffer type>,...", "", "",
     "Tensor placement overrides for the draft model", kValue, kNotApplicable, kReasonSpeculative,
     "", 0, false},
    {"--spec-draft-cpu-moe, -cmoed, --cpu-moe-draft", "", "", "LLAMA_ARG_SPEC_DRAFT_CPU_MOE", "",
     "Keep all draft MoE experts on the CPU", kFlag, kNotApplicable, kReasonSpeculative, "", 0,
     false},
    {"--spec-draft-n-cpu-moe, --spec-draft-ncmoe, -ncmoed, --n-cpu-moe-draft", "", "N",
     "LLAMA_ARG_SPEC_DRAFT_N_CPU_MOE", "",
     "Keep draft MoE experts of the first N layers on the CPU", kValue, kNotApplicable,
     kReasonSpeculative, "", 0, false},
    {"--spec-draft-n-max", "", "N", "LLAMA_ARG_SPEC_DRAFT_N_MAX", "3",
     "Maximum tokens drafted per step", kValue, kNotApplicable, kReasonSpeculative, "3", 0, false},
    {"--spec-draft-n-min", "", "N", "LLAMA_ARG_SPEC_DRAFT_N_MIN", "0",
     "Minimum draft length worth verifying", kValue, kNotApplicable, kReasonSpeculative, "0", 0,
     false},
    {"--spec-draft-p-split, --draft-p-split", "", "N", "LLAMA_ARG_SPEC_DRAFT_P_SPLIT", "0.10",
     "Draft tree split probability", kValue, kNotApplicable, kReasonSpeculative, "0.1", 0, false},
    {"--spec-draft-p-min, --draft-p-min", "", "N", "LLAMA_ARG_SPEC_DRAFT_P_MIN", "0.00",
     "Minimum draft-token probability to keep drafting (greedy drafting)", kValue, kNotApplicable,
     kReasonSpeculative, "0", 0, false},
    {"--spec-draft-backend-sampling", "--no-spec-draft-backend-sampling", "",
     "LLAMA_ARG_SPEC_DRAFT_BACKEND_SAMPLING", "enabled", "Sample the draft on the compute backend",
     kBoolPair, kNotApplicable, kReasonSpeculative, "on|off", 0, false},
    {"--spec-draft-device, -devd, --device-draft", "", "LIST", "", "",
     "Devices for the draft model", kValue, kNotApplicable, kReasonSpeculative, "", 0, false},
    {"--spec-draft-ngl, -ngld, --gpu-layers-draft, --n-gpu-layers-draft", "", "N",
     "LLAMA_ARG_N_GPU_LAYERS_DRAFT", "auto", "Draft layers on the accelerator", kValue,
     kNotApplicable, kReasonSpeculative, "auto", 0, false},
    {"--spec-draft-model, -md, --model-draft", "", "FNAME", "LLAMA_ARG_SPEC_DRAFT_MODEL", "unused",
     "Draft model file; the draft type is inferred from its metadata when --spec-type is not given",
     kValue, kNotApplicable, kReasonSpeculative, "", 0, false},
    {"--spec-type", "", "LIST", "LLAMA_ARG_SPEC_TYPE", "none",
     "Speculative methods, comma-separated: none, draft-simple, draft-eagle3, draft-mtp, "
     "draft-dflash, draft-dspark, ngram-simple, ngram-map-k, ngram-map-k4v, ngram-mod, ngram-cache",
     kValue, kNotApplicable, kReasonSpeculative, "none", 0, false},
    {"--spec-ngram-mod-n-min", "", "N", "", "48", "ngram-mod: minimum draft length", kValue,
     kNotApplicable, kReasonSpeculative, "48", 0, false},
    {"--spec-ngram-mod-n-max", "", "N", "", "64", "ngram-mod: maximum draft length", kValue,
     kNotApplicable, kReasonSpeculative, "64", 0, false},
    {"--spec-ngram-mod-n-match", "", "N", "", "24", "ngram-mod: lookup length", kValue,
     kNotApplicable, kReasonSpeculative, "24", 0, false},
    {"--spec-ngram-simple-size-n", "", "N", "", "12", "ngram-simple: lookup n-gram length", kValue,
     kNotApplicable, kReasonSpeculative, "12", 0, false},
    {"--spec-ngram-simple-size-m", "", "N", "", "48", "ngram-simple: drafted m-gram length", kValue,
     kNotApplicable, kReasonSpeculative, "48", 0, false},
    {"--spec-ngram-simple-min-hits", "", "N", "", "1", "ngram-simple: hits needed before proposing",
     kValue, kNotApplicable, kReasonSpeculative, "1", 0, false},
    {"--spec-ngram-map-k-size-n", "", "N", "", "12", "ngram-map-k: lookup length", kValue,
     kNotApplicable, kReasonSpeculative, "12", 0, false},
    {"--spec-ngram-map-k-size-m", "", "N", "", "48", "ngram-map-k: draft length", kValue,
     kNotApplicable, kReasonSpeculative, "48", 0, false},
    {"--spec-ngram-map-k-min-hits", "", "N", "", "1", "ngram-map-k: minimum hits", kValue,
     kNotApplicable, kReasonSpeculative, "1", 0, false},
    {"--spec-ngram-map-k4v-size-n", "", "N", "", "12", "ngram-map-k4v: lookup length", kValue,
     kNotApplicable, kReasonSpeculative, "12", 0, false},
    {"--spec-ngram-map-k4v-size-m", "", "N", "", "48", "ngram-map-k4v: draft length", kValue,
     kNotApplicable, kReasonSpeculative, "48", 0, false},
    {"--spec-ngram-map-k4v-min-hits", "", "N", "", "1", "ngram-map-k4v: minimum hits", kValue,
     kNotApplicable, kReasonSpeculative, "1", 0, false},
    {"--draft, --draft-n, --draft-max", "", "N", "LLAMA_ARG_DRAFT_MAX", "", kRemovedDraftMax,
     kValue, kRemoved, kRemovedDraftMax, "", 0, false},
    {"--draft-min, --draft-n-min", "", "N", "LLAMA_ARG_DRAFT_MIN", "", kRemovedDraftMin, kValue,
     kRemoved, kRemovedDraftMin, "", 0, false},
    {"--spec-ngram-size-n", "", "N", "", "", kRemovedNgramN, kValue, kRemoved, kRemovedNgramN, "",
     0, false},
    {"--spec-ngram-size-m", "", "N", "", "", kRemovedNgramM, kValue, kRemoved, kRemovedNgramM, "",
     0, false},
    {"--spec-ngram-min-hits", "", "N", "", "", kRemovedNgramHits, kValue, kRemoved,
     kRemovedNgramHits, "", 0, false},
};

}  // namespace

std::span<const OptionSpec> speculative_option_entries() {
  return kEntries;
}

}  // namespace hearth::server::options

// Internal: what an option handler sees and changes, and the handlers the option table's
// rows carry. A row whose option just stores its value names the member it goes to, as a
// path from ServerArgs (set_member<&ServerSettings::chat, &ChatSettings::reasoning_effort>,
// or set_sampling), and shows that member's initial value as its --help default
// (show_member / show_sampling). ServerArgs inherits the server's and the scheduler's
// settings, which their final configurations inherit in turn, so such an option takes one
// row and nothing else. Options that do more have a handler function of their own below.
#pragma once

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <fmt/format.h>

#include "base/status.h"
#include "server/options/option_table.h"
#include "server/options/server_args.h"
#include "server/options/value_parse.h"

namespace hearth::server::options {

struct ParseState {
  ServerArgs args;
  std::vector<std::string> warnings;
  bool help_requested = false;
  bool completion_requested = false;
  std::optional<std::string> print_now;  // --version, --list-devices: print and exit at once
  // On the command line: -lm, and one of its deprecated aliases (the reference warns once
  // when both are given).
  bool load_mode_given = false;
  bool load_alias_given = false;
};

struct OptionInput {
  const OptionSpec* spec = nullptr;
  std::string_view arg;     // the spelling as given, or the environment variable name
  std::string_view value;   // kValue / kTwoValues
  std::string_view value2;  // kTwoValues
  bool enabled = true;      // kFlag / kBoolPair: false for the negative form
  bool from_env = false;
};

// An "error while handling argument" reason.
Status invalid_value(std::string_view reason);
// Parses the option's value as a float into `out`.
Status set_float(const OptionInput& in, float& out);
// Reads a whole file (--grammar-file, --json-schema-file, --chat-template-file) into `out`;
// kIo "failed to open file '<path>'" when it cannot be opened.
Status read_whole_file(std::string_view path, std::string& out);
// Records that the user chose this sampling option, so the model's general.sampling.*
// default for it does not apply.
void mark_sampling_choice(const OptionInput& in, ParseState& st);

// --- Targets -----------------------------------------------------------------------------

// Stores the option's value in `value`: a flag or bool pair sets a bool, a value option is
// read as an int32 (std::stoi), a float (std::stof) or kept as text.
template <class T>
Status store(const OptionInput& in, T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    value = in.enabled;
  } else if constexpr (std::is_same_v<T, int32_t>) {
    HEARTH_ASSIGN_OR_RETURN(value, parse_int(in.value));
  } else if constexpr (std::is_same_v<T, int64_t>) {
    // Read as the reference reads it (std::stoi), into a wider target.
    HEARTH_ASSIGN_OR_RETURN(const int32_t v, parse_int(in.value));
    value = v;
  } else if constexpr (std::is_same_v<T, float>) {
    HEARTH_ASSIGN_OR_RETURN(value, parse_float(in.value));
  } else {
    static_assert(std::is_same_v<T, std::string>, "unsupported option target");
    value = std::string(in.value);
  }
  return Status::ok();
}

// A value as --help shows a default: integers plainly, floats with two decimals, booleans
// as enabled/disabled, text as it is.
template <class T>
std::string show(const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    return value ? "enabled" : "disabled";
  } else if constexpr (std::is_same_v<T, float>) {
    return fmt::format("{:.2f}", value);
  } else if constexpr (std::is_same_v<T, std::string>) {
    return value;
  } else {
    return fmt::format("{}", value);
  }
}

// The member a path of member pointers leads to from ServerArgs:
// member_at<&ServerSettings::http, &http::ServerOptions::port>(args).
template <auto... Path, class Args>
auto& member_at(Args& args) {
  return (args.*....*Path);
}

template <auto... Path>
Status set_member(const OptionInput& in, ParseState& st) {
  return store(in, member_at<Path...>(st.args));
}
template <auto... Path>
std::string show_member(const ServerArgs& args) {
  return show(member_at<Path...>(args));
}

// The server-wide sampling defaults every request starts from.
inline sampling::SamplerParams& sampling_of(ServerArgs& args) {
  return args.defaults.sampling;
}

// Sampling defaults; `kUserChoice` marks the options the model's general.sampling.* keys
// also set (a choice on the command line wins over the model's).
template <auto Member, bool kUserChoice = false>
Status set_sampling(const OptionInput& in, ParseState& st) {
  HEARTH_RETURN_IF_ERROR(store(in, sampling_of(st.args).*Member));
  if constexpr (kUserChoice) mark_sampling_choice(in, st);
  return Status::ok();
}
template <auto Member>
std::string show_sampling(const ServerArgs& args) {
  return show(args.defaults.sampling.*Member);
}
// The same with the reference's checks: a finite float, a non-negative int.
template <auto Member>
Status set_sampling_finite(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(float v, parse_float(in.value));
  if (!std::isfinite(v)) return invalid_value("value must be finite");
  sampling_of(st.args).*Member = v;
  return Status::ok();
}
template <auto Member, bool kUserChoice = false>
Status set_sampling_non_negative(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(int32_t v, parse_int(in.value));
  if (v < 0) return invalid_value("value must be non-negative");
  sampling_of(st.args).*Member = v;
  if constexpr (kUserChoice) mark_sampling_choice(in, st);
  return Status::ok();
}

// --- Handlers of options that do more than store a value -----------------------------------

// option_handlers.cpp: the process, threads, KV types, slots, network and keys.
Status handle_help(const OptionInput& in, ParseState& st);
Status handle_version(const OptionInput& in, ParseState& st);
Status handle_cache_list(const OptionInput& in, ParseState& st);
Status handle_completion_bash(const OptionInput& in, ParseState& st);
Status handle_threads(const OptionInput& in, ParseState& st);
Status handle_threads_batch(const OptionInput& in, ParseState& st);
std::string show_threads(const ServerArgs& args);
Status handle_cache_type(const OptionInput& in, ParseState& st);
Status handle_verbose(const OptionInput& in, ParseState& st);
Status handle_reverse_prompt(const OptionInput& in, ParseState& st);
Status handle_parallel(const OptionInput& in, ParseState& st);
Status handle_pooling(const OptionInput& in, ParseState& st);
Status handle_reranking(const OptionInput& in, ParseState& st);
Status handle_alias(const OptionInput& in, ParseState& st);
Status handle_tags(const OptionInput& in, ParseState& st);
Status handle_cors_origins(const OptionInput& in, ParseState& st);
Status handle_api_key(const OptionInput& in, ParseState& st);
Status handle_api_key_file(const OptionInput& in, ParseState& st);
Status handle_slot_save_path(const OptionInput& in, ParseState& st);
Status handle_media_path(const OptionInput& in, ParseState& st);
Status handle_vision_gemma_4b(const OptionInput& in, ParseState& st);
Status handle_vision_gemma_12b(const OptionInput& in, ParseState& st);
Status handle_threads_http(const OptionInput& in, ParseState& st);
Status handle_ui_config(const OptionInput& in, ParseState& st);
Status handle_ui_config_file(const OptionInput& in, ParseState& st);
Status handle_hf_repo(const OptionInput& in, ParseState& st);
Status handle_spec_draft_hf(const OptionInput& in, ParseState& st);

// option_handlers_cpu.cpp: the thread pools' CPU options (-C, -Cr, --cpu-strict, --prio,
// --poll, their batch and draft forms) and --numa. `Pool` names the pool's member of
// SchedulerSettings (cpu, cpu_batch, cpu_draft, cpu_draft_batch).
using PoolMember = scheduler::PoolCpuSettings scheduler::SchedulerSettings::*;
// The reference's CPU limit for masks and ranges (GGML_MAX_N_THREADS).
inline constexpr int32_t kMaxCpuIndex = 511;
// Adds the CPUs of a hex mask ("0x" optional; the lowest digit is CPUs 0-3) to `cpus`
// (ascending, no duplicates).
Status add_cpu_mask(std::string_view mask, std::vector<int32_t>& cpus);
// Adds CPUs lo..hi of "lo-hi" (lo empty: 0; hi empty: the last index) to `cpus`.
Status add_cpu_range(std::string_view range, std::vector<int32_t>& cpus);
Status set_pool_mask(const OptionInput& in, scheduler::PoolCpuSettings& pool);
Status set_pool_range(const OptionInput& in, scheduler::PoolCpuSettings& pool);
Status set_pool_strict(const OptionInput& in, scheduler::PoolCpuSettings& pool);
Status set_pool_priority(const OptionInput& in, scheduler::PoolCpuSettings& pool, int32_t lowest);
Status set_pool_poll(const OptionInput& in, scheduler::PoolCpuSettings& pool);
template <PoolMember Pool>
Status handle_cpu_mask(const OptionInput& in, ParseState& st) {
  return set_pool_mask(in, st.args.*Pool);
}
template <PoolMember Pool>
Status handle_cpu_range(const OptionInput& in, ParseState& st) {
  return set_pool_range(in, st.args.*Pool);
}
template <PoolMember Pool>
Status handle_cpu_strict(const OptionInput& in, ParseState& st) {
  return set_pool_strict(in, st.args.*Pool);
}
// The generation and draft pools take -1 (low) too; the batch pools start at 0 (normal).
template <PoolMember Pool, int32_t kLowest>
Status handle_priority(const OptionInput& in, ParseState& st) {
  return set_pool_priority(in, st.args.*Pool, kLowest);
}
template <PoolMember Pool>
Status handle_poll(const OptionInput& in, ParseState& st) {
  return set_pool_poll(in, st.args.*Pool);
}
Status handle_numa(const OptionInput& in, ParseState& st);

// option_handlers_no_effect.cpp: validators of the options accepted without effect.
Status check_ulong(const OptionInput& in, ParseState& st);
Status check_int(const OptionInput& in, ParseState& st);
Status check_float(const OptionInput& in, ParseState& st);
Status check_flash_attn(const OptionInput& in, ParseState& st);
Status check_rpc(const OptionInput& in, ParseState& st);
Status check_devices(const OptionInput& in, ParseState& st);
Status handle_list_devices(const OptionInput& in, ParseState& st);
Status check_tensor_overrides(const OptionInput& in, ParseState& st);
Status check_non_negative(const OptionInput& in, ParseState& st);
Status check_gpu_layers(const OptionInput& in, ParseState& st);
Status check_split_mode(const OptionInput& in, ParseState& st);
Status check_tensor_split(const OptionInput& in, ParseState& st);
Status check_fit(const OptionInput& in, ParseState& st);
Status check_int_list(const OptionInput& in, ParseState& st);
Status check_tristate(const OptionInput& in, ParseState& st);
Status check_checkpoint_min_step(const OptionInput& in, ParseState& st);
// --log-colors: on, off or auto, as the tri-state options read them.
Status handle_log_colors(const OptionInput& in, ParseState& st);
// --log-prompts-dir: creates the directory (and its parents) at once, as the reference
// does; one that cannot be created is an error here (the reference only warns).
Status handle_log_prompts_dir(const OptionInput& in, ParseState& st);
// Any text is valid (a token, a path): nothing to check.
Status accept_any_text(const OptionInput& in, ParseState& st);
Status check_mmproj_device(const OptionInput& in, ParseState& st);

// option_handlers_load.cpp: how the model is loaded. -lm and its deprecated aliases all set
// SchedulerSettings::load_mode; the last one given wins, as in the reference.
Status handle_load_mode(const OptionInput& in, ParseState& st);
Status handle_mlock(const OptionInput& in, ParseState& st);
Status handle_mmap(const OptionInput& in, ParseState& st);
Status handle_direct_io(const OptionInput& in, ParseState& st);
std::string show_load_mode(const ServerArgs& args);

// option_handlers_sampling.cpp: sampling options with the reference's validation.
Status handle_seed(const OptionInput& in, ParseState& st);
std::string show_seed(const ServerArgs& args);
Status handle_temp(const OptionInput& in, ParseState& st);
Status handle_logit_bias(const OptionInput& in, ParseState& st);
Status handle_samplers(const OptionInput& in, ParseState& st);
std::string show_samplers(const ServerArgs& args);
Status handle_sampler_seq(const OptionInput& in, ParseState& st);
std::string show_sampler_seq(const ServerArgs& args);
Status handle_repeat_penalty(const OptionInput& in, ParseState& st);
Status handle_dry_base(const OptionInput& in, ParseState& st);
Status handle_dry_breaker(const OptionInput& in, ParseState& st);
Status handle_mirostat(const OptionInput& in, ParseState& st);
Status handle_grammar_file(const OptionInput& in, ParseState& st);
Status handle_json_schema_file(const OptionInput& in, ParseState& st);

// option_handlers_spec.cpp: speculative decoding.
Status handle_spec_type(const OptionInput& in, ParseState& st);
Status handle_ngram_simple_n(const OptionInput& in, ParseState& st);
Status handle_ngram_simple_m(const OptionInput& in, ParseState& st);
Status check_ngram_min_hits(const OptionInput& in, ParseState& st);
Status handle_ngram_map_option(const OptionInput& in, ParseState& st);
Status handle_ngram_mod_n_min(const OptionInput& in, ParseState& st);
Status handle_ngram_mod_n_max(const OptionInput& in, ParseState& st);
Status handle_ngram_mod_n_match(const OptionInput& in, ParseState& st);
Status handle_spec_default(const OptionInput& in, ParseState& st);
Status handle_draft_n_max(const OptionInput& in, ParseState& st);
Status handle_draft_threads(const OptionInput& in, ParseState& st);

// option_handlers_chat.cpp: chat templates.
Status handle_chat_template_file(const OptionInput& in, ParseState& st);
Status handle_chat_template_kwargs(const OptionInput& in, ParseState& st);
Status handle_reasoning_format(const OptionInput& in, ParseState& st);
Status handle_reasoning(const OptionInput& in, ParseState& st);
Status handle_reasoning_budget(const OptionInput& in, ParseState& st);
Status handle_reasoning_preserve(const OptionInput& in, ParseState& st);

}  // namespace hearth::server::options

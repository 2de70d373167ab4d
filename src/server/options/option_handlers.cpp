// Handlers of the supported options: each converts and validates its value and stores it
// in ServerArgs.
#include "server/options/option_handlers.h"

#include <cctype>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "server/options/parse_args.h"
#include "server/options/value_parse.h"

namespace hearth::server::options {

Status invalid_value(std::string_view reason) {
  return error(ErrorCode::kInvalidArgument, std::string(reason));
}

Status set_float(const OptionInput& in, float& out) {
  HEARTH_ASSIGN_OR_RETURN(out, parse_float(in.value));
  return Status::ok();
}

Status read_whole_file(std::string_view path, std::string& out) {
  std::ifstream file{std::string(path), std::ios::binary};
  if (!file) return error(ErrorCode::kIo, "failed to open file '" + std::string(path) + "'");
  std::ostringstream text;
  text << file.rdbuf();
  out = text.str();
  return Status::ok();
}

namespace {

Status set_int(const OptionInput& in, int32_t& out) {
  HEARTH_ASSIGN_OR_RETURN(out, parse_int(in.value));
  return Status::ok();
}

Status set_string(const OptionInput& in, std::string& out) {
  out = std::string(in.value);
  return Status::ok();
}

Status enable(bool& flag) {
  flag = true;
  return Status::ok();
}

Status set_bool(const OptionInput& in, bool& out) {
  out = in.enabled;
  return Status::ok();
}

// Hearth's engine stores K and V in these types; llama-server accepts more.
constexpr std::string_view kReferenceCacheTypes[] = {"f32",  "f16",  "bf16",   "q8_0", "q4_0",
                                                     "q4_1", "q5_0", "iq4_nl", "q5_1"};
constexpr std::string_view kHearthCacheTypes[] = {"f32", "f16", "bf16", "q8_0"};

Status set_cache_type(const OptionInput& in, std::string& out) {
  for (std::string_view type : kHearthCacheTypes) {
    if (in.value == type) {
      out = std::string(type);
      return Status::ok();
    }
  }
  for (std::string_view type : kReferenceCacheTypes) {
    if (in.value == type) {
      return invalid_value("KV cache type '" + std::string(type) +
                           "' is not supported by hearth-server (supported: f32, f16, bf16, q8_0)");
    }
  }
  return invalid_value("Unsupported cache type: " + std::string(in.value));
}

Status add_api_keys(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(std::vector<std::string> keys, split_csv(in.value));
  for (std::string& key : keys) {
    if (!key.empty()) st.args.api_keys.push_back(std::move(key));
  }
  return Status::ok();
}

// One key per line; empty lines and '#' comments skipped; no trimming.
Status add_api_key_file(const OptionInput& in, ParseState& st) {
  std::ifstream file{std::string(in.value)};
  if (!file) {
    return error(ErrorCode::kIo, "failed to open file '" + std::string(in.value) + "'");
  }
  std::string line;
  while (std::getline(file, line)) {
    if (line.empty() || line.front() == '#') continue;
    st.args.api_keys.push_back(line);
  }
  return Status::ok();
}

Status set_slot_save_path(const OptionInput& in, ParseState& st) {
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::path(in.value), ec)) {
    return invalid_value("not a directory: " + std::string(in.value));
  }
  st.args.slot_save_path = std::string(in.value);
  if (st.args.slot_save_path.back() != '/') st.args.slot_save_path += '/';
  return Status::ok();
}

Status set_parallel(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(int32_t n, parse_int(in.value));
  if (n == 0) return invalid_value("invalid value for n_parallel");
  st.args.n_parallel = n;
  return Status::ok();
}

using St = ParseState;
using In = OptionInput;

constexpr HandlerEntry kSupported[] = {
    {"--help", [](const In&, St& st) { return enable(st.help_requested); }},
    {"--version",
     [](const In&, St& st) {
       st.print_now = version_text();
       return Status::ok();
     }},
    {"--completion-bash", [](const In&, St& st) { return enable(st.completion_requested); }},
    {"--threads",
     [](const In& in, St& st) {
       HEARTH_ASSIGN_OR_RETURN(st.args.n_threads, parse_int(in.value));
       return Status::ok();
     }},
    {"--threads-batch",
     [](const In& in, St& st) {
       HEARTH_ASSIGN_OR_RETURN(st.args.n_threads_batch, parse_int(in.value));
       return Status::ok();
     }},
    {"--ctx-size", [](const In& in, St& st) { return set_int(in, st.args.n_ctx); }},
    {"--predict", [](const In& in, St& st) { return set_int(in, st.args.n_predict); }},
    {"--batch-size", [](const In& in, St& st) { return set_int(in, st.args.n_batch); }},
    {"--ubatch-size", [](const In& in, St& st) { return set_int(in, st.args.n_ubatch); }},
    {"--keep", [](const In& in, St& st) { return set_int(in, st.args.n_keep); }},
    {"--escape", [](const In& in, St& st) { return set_bool(in, st.args.escape); }},
    {"--cache-type-k",
     [](const In& in, St& st) { return set_cache_type(in, st.args.cache_type_k); }},
    {"--cache-type-v",
     [](const In& in, St& st) { return set_cache_type(in, st.args.cache_type_v); }},
    {"--model", [](const In& in, St& st) { return set_string(in, st.args.model_path); }},
    {"--log-disable", [](const In&, St& st) { return enable(st.args.log_disable); }},
    {"--log-file", [](const In& in, St& st) { return set_string(in, st.args.log_file); }},
    {"--verbose",
     [](const In&, St& st) {
       st.args.verbosity = INT32_MAX;
       return Status::ok();
     }},
    {"--offline", [](const In&, St& st) { return enable(st.args.offline); }},
    {"--verbosity", [](const In& in, St& st) { return set_int(in, st.args.verbosity); }},
    {"--cache-ram", [](const In& in, St& st) { return set_int(in, st.args.cache_ram_mib); }},
    {"--kv-unified", [](const In& in, St& st) { return set_bool(in, st.args.kv_unified); }},
    {"--cache-idle-slots",
     [](const In& in, St& st) { return set_bool(in, st.args.cache_idle_slots); }},
    {"--reverse-prompt",
     [](const In& in, St& st) {
       st.args.reverse_prompts.emplace_back(in.value);
       return Status::ok();
     }},
    {"--special", [](const In&, St& st) { return enable(st.args.special); }},
    {"--spm-infill", [](const In&, St& st) { return enable(st.args.spm_infill); }},
    {"--parallel", set_parallel},
    {"--cont-batching", [](const In& in, St& st) { return set_bool(in, st.args.cont_batching); }},
    {"--alias",
     [](const In& in, St& st) {
       st.args.aliases = split_trimmed(in.value);
       return Status::ok();
     }},
    {"--host", [](const In& in, St& st) { return set_string(in, st.args.host); }},
    {"--port", [](const In& in, St& st) { return set_int(in, st.args.port); }},
    {"--cors-origins",
     [](const In& in, St& st) {
       st.args.cors_origins_set = true;
       return set_string(in, st.args.cors_origins);
     }},
    {"--cors-methods", [](const In& in, St& st) { return set_string(in, st.args.cors_methods); }},
    {"--cors-headers", [](const In& in, St& st) { return set_string(in, st.args.cors_headers); }},
    {"--cors-credentials",
     [](const In& in, St& st) { return set_bool(in, st.args.cors_credentials); }},
    {"--api-prefix", [](const In& in, St& st) { return set_string(in, st.args.api_prefix); }},
    {"--api-key", add_api_keys},
    {"--api-key-file", add_api_key_file},
    {"--timeout", [](const In& in, St& st) { return set_int(in, st.args.timeout_s); }},
    {"--sse-ping-interval",
     [](const In& in, St& st) { return set_int(in, st.args.sse_ping_interval_s); }},
    {"--cache-prompt", [](const In& in, St& st) { return set_bool(in, st.args.cache_prompt); }},
    {"--metrics", [](const In&, St& st) { return enable(st.args.endpoint_metrics); }},
    {"--props", [](const In&, St& st) { return enable(st.args.endpoint_props); }},
    {"--slots", [](const In& in, St& st) { return set_bool(in, st.args.endpoint_slots); }},
    {"--slot-save-path", set_slot_save_path},
    {"--slot-prompt-similarity",
     [](const In& in, St& st) { return set_float(in, st.args.slot_prompt_similarity); }},
};

}  // namespace

OptionHandler find_handler(std::string_view name) {
  for (const HandlerEntry& entry : kSupported) {
    if (entry.name == name) return entry.handler;
  }
  for (const HandlerEntry& entry : no_effect_handlers()) {
    if (entry.name == name) return entry.handler;
  }
  for (const HandlerEntry& entry : sampling_handlers()) {
    if (entry.name == name) return entry.handler;
  }
  for (const HandlerEntry& entry : chat_handlers()) {
    if (entry.name == name) return entry.handler;
  }
  return nullptr;
}

std::vector<std::string_view> handler_names() {
  std::vector<std::string_view> names;
  for (const HandlerEntry& entry : kSupported) names.push_back(entry.name);
  for (const HandlerEntry& entry : no_effect_handlers()) names.push_back(entry.name);
  for (const HandlerEntry& entry : sampling_handlers()) names.push_back(entry.name);
  for (const HandlerEntry& entry : chat_handlers()) names.push_back(entry.name);
  return names;
}

}  // namespace hearth::server::options

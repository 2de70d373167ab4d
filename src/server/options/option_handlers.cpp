// Handlers of the supported options: each converts and validates its value and stores it
// in ServerArgs.
#include "server/options/option_handlers.h"

#include <cctype>
#include <climits>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/pooling_type.h"
#include "hub/hf_cache.h"
#include "hub/hf_repo.h"
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

void mark_sampling_choice(const OptionInput& in, ParseState& st) {
  st.args.sampling_set_by_user.emplace_back(option_name(*in.spec));
}

namespace {

// Hearth's engine stores K and V in these types; llama-server accepts more.
constexpr std::string_view kReferenceCacheTypes[] = {"f32",  "f16",  "bf16",   "q8_0", "q4_0",
                                                     "q4_1", "q5_0", "iq4_nl", "q5_1"};
constexpr std::string_view kHearthCacheTypes[] = {"f32", "f16", "bf16", "q8_0"};

}  // namespace

Status handle_help(const OptionInput&, ParseState& st) {
  st.help_requested = true;
  return Status::ok();
}

Status handle_version(const OptionInput&, ParseState& st) {
  st.print_now = version_text();
  return Status::ok();
}

Status handle_cache_list(const OptionInput&, ParseState& st) {
  st.print_now = hub::cache_list_text();
  return Status::ok();
}

Status handle_completion_bash(const OptionInput&, ParseState& st) {
  st.completion_requested = true;
  return Status::ok();
}

Status handle_threads(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(st.args.n_threads, parse_int(in.value));
  return Status::ok();
}

Status handle_threads_batch(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(st.args.n_threads_batch, parse_int(in.value));
  return Status::ok();
}

std::string show_threads(const ServerArgs& args) {
  return std::to_string(args.n_threads.value_or(-1));
}

// -ctk and -ctv: the row's option name tells which.
Status handle_cache_type(const OptionInput& in, ParseState& st) {
  const std::string_view name = option_name(*in.spec);
  std::string& out = name == "--cache-type-k"        ? st.args.cache_type_k
                     : name == "--cache-type-v"      ? st.args.cache_type_v
                     : name == "--spec-draft-type-k" ? st.args.spec_draft_type_k
                                                     : st.args.spec_draft_type_v;
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

Status handle_log_colors(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(st.args.log_colors, parse_tristate(in.value));
  return Status::ok();
}

Status handle_log_prompts_dir(const OptionInput& in, ParseState& st) {
  const std::string dir(in.value);
  if (dir.empty()) return invalid_value("the prompts directory must not be empty");
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (!ec && !std::filesystem::is_directory(dir, ec)) {
    ec = std::make_error_code(std::errc::not_a_directory);
  }
  if (ec) return invalid_value("cannot create prompts directory '" + dir + "': " + ec.message());
  st.args.prompts_log_dir = dir;
  return Status::ok();
}

Status handle_verbose(const OptionInput&, ParseState& st) {
  st.args.verbosity = INT32_MAX;
  return Status::ok();
}

Status handle_reverse_prompt(const OptionInput& in, ParseState& st) {
  st.args.defaults.stop.emplace_back(in.value);
  return Status::ok();
}

Status handle_parallel(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(int32_t n, parse_int(in.value));
  if (n == 0) return invalid_value("invalid value for n_parallel");
  st.args.n_parallel = n;
  return Status::ok();
}

Status handle_pooling(const OptionInput& in, ParseState& st) {
  const std::optional<PoolingType> type = pooling_from_name(in.value);
  if (!type) return invalid_value("invalid value");
  st.args.pooling = static_cast<int32_t>(*type);
  return Status::ok();
}

// --rerank: embeddings with rank pooling (a later --pooling still overrides the pooling).
Status handle_reranking(const OptionInput&, ParseState& st) {
  st.args.embeddings = true;
  st.args.pooling = static_cast<int32_t>(PoolingType::kRank);
  return Status::ok();
}

Status handle_alias(const OptionInput& in, ParseState& st) {
  st.args.aliases = split_trimmed(in.value);
  return Status::ok();
}

Status handle_tags(const OptionInput& in, ParseState& st) {
  st.args.tags = split_trimmed(in.value);
  return Status::ok();
}

Status handle_cors_origins(const OptionInput& in, ParseState& st) {
  st.args.cors_origins_set = true;
  st.args.cors_origins = std::string(in.value);
  return Status::ok();
}

Status handle_api_key(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(std::vector<std::string> keys, split_csv(in.value));
  for (std::string& key : keys) {
    if (!key.empty()) st.args.api_keys.push_back(std::move(key));
  }
  return Status::ok();
}

// One key per line; empty lines and '#' comments skipped; no trimming.
Status handle_api_key_file(const OptionInput& in, ParseState& st) {
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

Status handle_slot_save_path(const OptionInput& in, ParseState& st) {
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::path(in.value), ec)) {
    return invalid_value("not a directory: " + std::string(in.value));
  }
  st.args.slot_save_path = std::string(in.value);
  if (st.args.slot_save_path.back() != '/') st.args.slot_save_path += '/';
  return Status::ok();
}

// --media-path: as --slot-save-path, an existing directory, kept with a trailing separator.
Status handle_media_path(const OptionInput& in, ParseState& st) {
  std::error_code ec;
  if (!std::filesystem::is_directory(std::filesystem::path(in.value), ec)) {
    return invalid_value("not a directory: " + std::string(in.value));
  }
  st.args.media_path = std::string(in.value);
  if (st.args.media_path.back() != '/') st.args.media_path += '/';
  return Status::ok();
}

// The HTTP layer's I/O threads; < 1: chosen from the CPU count.
Status handle_threads_http(const OptionInput& in, ParseState& st) {
  HEARTH_ASSIGN_OR_RETURN(int32_t n, parse_int(in.value));
  st.args.threads_http = n;
  return Status::ok();
}

// --ui-config: any JSON, as the reference accepts; it is shown as /props ui_settings.
Status handle_ui_config(const OptionInput& in, ParseState& st) {
  Json settings = Json::parse(in.value, nullptr, /*allow_exceptions=*/false);
  if (settings.is_discarded()) {
    return invalid_value("failed to parse UI config: not valid JSON");
  }
  st.args.ui_settings = std::move(settings);
  return Status::ok();
}

Status handle_ui_config_file(const OptionInput& in, ParseState& st) {
  std::string content;
  HEARTH_RETURN_IF_ERROR(read_whole_file(in.value, content));
  OptionInput from_file = in;
  from_file.value = content;
  return handle_ui_config(from_file, st);
}

// -hf and --spec-draft-hf: the reference's repository syntax is checked before anything starts.
Status set_hf_repo(const OptionInput& in, std::string& out) {
  if (auto rt = hub::split_repo_tag(in.value); !rt.is_ok()) {
    return invalid_value(rt.status().message());
  }
  out = std::string(in.value);
  return Status::ok();
}

Status handle_hf_repo(const OptionInput& in, ParseState& st) {
  return set_hf_repo(in, st.args.hf_repo);
}

Status handle_spec_draft_hf(const OptionInput& in, ParseState& st) {
  return set_hf_repo(in, st.args.spec_draft_hf);
}

}  // namespace hearth::server::options

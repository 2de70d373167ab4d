// Everything hearth-server takes from its command line and environment, with
// llama-server b10621's defaults. Plain data: parse_args() fills it, the server reads it.
// Options that are refused or accepted without effect mostly have no field here, so
// nothing can read them by mistake.
#pragma once

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/serving_defaults.h"
#include "scheduler/settings/scheduler_settings.h"
#include "server/config/server_settings.h"

namespace hearth::server::options {

enum class TriState { kAuto, kOn, kOff };

inline constexpr uint32_t kDefaultSeed = 0xFFFFFFFFu;  // -1: a random seed per request
inline constexpr int32_t kAutoSlots = 4;               // what -np -1 resolves to

// What the server and the scheduler take as given is inherited: the option rows name those
// members (set_member<&ServerSettings::cors_methods>, set_member<&ServerSettings::chat,
// &ChatSettings::reasoning_effort>), the members' initializers are the options' defaults,
// and hearth-server hands both bases over whole as the bases of ServerConfig and
// SchedulerConfig, so such a flag is one option row. The members below are read by
// hearth-server's start-up, which derives settings from them (several options together, or
// with the model): slot contexts, threads, KV types, speculation.
struct ServerArgs : ServerSettings, scheduler::SchedulerSettings {
  // Model source (the path and the -hf repository are in ServerSettings).
  bool offline = false;   // --offline: only the download cache is read
  std::string hf_file;    // -hff: a file of the -hf repository
  std::string hf_token;   // -hft / HF_TOKEN
  std::string model_url;  // -mu

  // The multimodal projector (images and audio).
  std::string mmproj;             // -mm: a projector file
  std::string mmproj_url;         // -mmu: downloaded like -mu
  bool mmproj_auto = true;        // --mmproj-auto / --no-mmproj: with -hf, fetch its projector
  int32_t image_min_tokens = -1;  // --image-min-tokens; <= 0: the projector file's value
  int32_t image_max_tokens = -1;  // --image-max-tokens; <= 0: the projector file's value

  // Threads: nullopt = not given (auto: physical cores; -tb copies -t). An explicit
  // value <= 0 means all logical CPUs.
  std::optional<int32_t> n_threads;        // -t
  std::optional<int32_t> n_threads_batch;  // -tb

  // Context, batching, slots.
  int32_t n_ctx = 0;                    // -c; 0: the model's training context
  int32_t n_batch = kDefaultBatchSize;  // -b (lowered to -ub with --embedding)
  int32_t n_parallel = -1;              // -np; -1: auto (see resolved_n_slots)
  bool repack = true;                   // --repack / -nr
  bool kv_unified = false;              // -kvu; forced on when -np is auto
  bool context_shift = false;           // --context-shift (enabling it is refused for now)

  // KV cache and loading.
  std::string cache_type_k = "f16";  // -ctk: f32, f16, bf16 or q8_0
  std::string cache_type_v = "f16";  // -ctv

  // Speculative decoding (--spec-type and its draft sources).
  // Every type given, after the reference's initial "none" (echoed as speculative.types;
  // uses_spec_type() reads it).
  std::vector<std::string> spec_types = {"none"};
  int32_t spec_ngram_simple_n = 12;     // --spec-ngram-simple-size-n
  int32_t spec_ngram_simple_m = 48;     // --spec-ngram-simple-size-m
  int32_t spec_ngram_mod_n_match = 24;  // --spec-ngram-mod-n-match
  int32_t spec_ngram_mod_n_min = 48;    // --spec-ngram-mod-n-min
  int32_t spec_ngram_mod_n_max = 64;    // --spec-ngram-mod-n-max
  struct NgramMapArgs {
    int32_t size_n = 12;
    int32_t size_m = 48;
    int32_t min_hits = 1;

    bool operator==(const NgramMapArgs&) const = default;
  };
  NgramMapArgs spec_ngram_map_k;          // --spec-ngram-map-k-size-n/-size-m/-min-hits
  NgramMapArgs spec_ngram_map_k4v;        // --spec-ngram-map-k4v-size-n/-size-m/-min-hits
  std::string lookup_cache_static;        // -lcs (ngram-cache)
  std::string lookup_cache_dynamic;       // -lcd (ngram-cache)
  std::string spec_draft_model;           // -md
  std::string spec_draft_hf;              // --spec-draft-hf user/model[:tag]
  int32_t spec_draft_n_max = 3;           // --spec-draft-n-max
  int32_t spec_draft_n_min = 0;           // --spec-draft-n-min
  float spec_draft_p_min = 0.0f;          // --spec-draft-p-min
  std::string spec_draft_type_k = "f16";  // -ctkd
  std::string spec_draft_type_v = "f16";  // -ctvd
  int32_t spec_draft_threads = 0;         // -td (0: as -t)
  int32_t spec_draft_threads_batch = 0;   // -tbd (0: as -td)

  // Text given on the command line: -r and the DRY breakers, escapes processed unless
  // --no-escape.
  bool escape = true;             // -e / --no-escape
  bool dry_breakers_set = false;  // the first --dry-sequence-breaker replaces the defaults
  // Sampling options given on the command line or in the environment (their GGUF
  // general.sampling.* defaults then do not apply); option names as in option_name().
  std::vector<std::string> sampling_set_by_user;
  std::string json_schema;  // -j / -jf: default JSON schema (converted at startup)
  // --pooling (a PoolingType number; -1: the model's); --rerank sets it and --embedding.
  int32_t pooling = -1;

  // Chat templates (the other chat options are in ServerSettings::chat).
  std::string chat_template;  // --chat-template TEXT, or --chat-template-file's contents

  // Network.
  int32_t threads_http = -1;      // --threads-http: I/O threads; < 1: from the CPU count
  bool cors_origins_set = false;  // --cors-origins given explicitly

  // Logging.
  int32_t verbosity = 3;  // -lv; -v sets it to INT32_MAX
  bool log_disable = false;
  std::string log_file;  // --log-file: also log to this file (base/log.h set_log_file)
  // base/log.h LogFormat; llama-server turns the prefix and timestamps on at startup.
  TriState log_colors = TriState::kAuto;  // --log-colors; auto: when stdout/stderr is a terminal
  bool log_prefix = true;                 // --log-prefix / --no-log-prefix
  bool log_timestamps = true;             // --log-timestamps / --no-log-timestamps

  // Compared by the option tests: a supported option must change what is parsed.
  bool operator==(const ServerArgs&) const = default;
};

// -np -1 (auto) serves 4 slots.
inline int32_t resolved_n_slots(const ServerArgs& args) {
  return args.n_parallel < 0 ? kAutoSlots : args.n_parallel;
}
// -np auto forces a unified KV cache; an explicit -np keeps -kvu as given.
// Whether --spec-type (or --spec-default) chose `type` (a list naming none adds only none).
inline bool uses_spec_type(const ServerArgs& args, std::string_view type) {
  return std::find(args.spec_types.begin(), args.spec_types.end(), type) != args.spec_types.end();
}

// The speculative.types echo: the types as given, comma-separated, after "none".
inline std::string spec_type_names(const ServerArgs& args) {
  std::string names;
  for (const std::string& t : args.spec_types) names += (names.empty() ? "" : ",") + t;
  return names;
}

inline bool resolved_kv_unified(const ServerArgs& args) {
  return args.n_parallel < 0 || args.kv_unified;
}

}  // namespace hearth::server::options

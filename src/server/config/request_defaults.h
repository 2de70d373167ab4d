// Server-wide defaults of request fields. Most are command-line options as given (the option
// rows name these members; the initializers are the options' defaults); the last four are
// derived from other options when the server's configuration is made.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/serving_defaults.h"
#include "sampling/params.h"

namespace hearth::server {

struct RequestDefaults {
  int32_t n_predict = -1;  // -n
  int32_t n_keep = 0;      // --keep
  bool cache_prompt = true;
  int32_t n_cache_reuse = 0;
  sampling::SamplerParams sampling;  // every sampling option; logit_bias: the -l list
  bool ignore_eos = false;           // --ignore-eos (its EOG bans are in sampling.logit_bias)
  std::string grammar;               // --grammar / --grammar-file, or the converted -j schema
  std::vector<std::string> stop;     // -r
  int32_t sse_ping_interval = kDefaultSsePingSeconds;
  // Derived, not set by an option row.
  std::string reasoning_format = "deepseek";  // --reasoning-format as echoed (auto: deepseek)
  std::string spec_types = "none";            // --spec-type as echoed ("speculative.types")
  int32_t n_slots = 4;                        // -np resolved
  int32_t max_prompts = 1024;  // prompts of one request at most (the scheduler's queue)
  // The "verbose" field's default: on when the log verbosity is above 9 (-v), as the
  // reference, so a verbose server answers with __verbose unless a request turns it off.
  bool verbose = false;

  bool operator==(const RequestDefaults&) const = default;
};

}  // namespace hearth::server

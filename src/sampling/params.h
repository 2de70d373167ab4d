// llama-server's sampling parameters (server defaults and per-request values) and the
// names of the configurable samplers. Defaults are the reference's (common_params_sampling).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "sampling/rng.h"

namespace hearth::sampling {

// The configurable samplers, in the reference's `samplers` vocabulary.
enum class SamplerType {
  kPenalties,
  kDry,
  kTopNSigma,
  kTopK,
  kTypicalP,
  kTopP,
  kMinP,
  kXtc,
  kTemperature,
  kInfill,
  kAdaptiveP,
};

// Canonical name ("penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p", "min_p",
// "xtc", "temperature", "infill", "adaptive_p").
std::string_view sampler_name(SamplerType type);
// The one-letter form ('e', 'd', 's', 'k', 'y', 'p', 'm', 'x', 't', 'i', 'a').
char sampler_char(SamplerType type);
// Case-insensitive canonical names and aliases (sampling.md section 3); nullopt if unknown.
std::optional<SamplerType> sampler_from_name(std::string_view name);
std::optional<SamplerType> sampler_from_char(char c);
// Unknown entries are skipped, as the reference does.
std::vector<SamplerType> samplers_from_names(const std::vector<std::string>& names);
std::vector<SamplerType> samplers_from_chars(std::string_view chars);
// penalties;dry;top_n_sigma;top_k;typ_p;top_p;min_p;xtc;temperature
std::vector<SamplerType> default_samplers();

struct SamplerParams {
  float temperature = 0.8f;
  float dynatemp_range = 0.0f;
  float dynatemp_exponent = 1.0f;
  int32_t top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float typical_p = 1.0f;
  float top_n_sigma = -1.0f;
  float xtc_probability = 0.0f;
  float xtc_threshold = 0.1f;
  int32_t repeat_last_n = 64;
  float repeat_penalty = 1.0f;
  float frequency_penalty = 0.0f;
  float presence_penalty = 0.0f;
  float dry_multiplier = 0.0f;
  float dry_base = 1.75f;
  int32_t dry_allowed_length = 2;
  int32_t dry_penalty_last_n = 64;
  std::vector<std::string> dry_sequence_breakers = {"\n", ":", "\"", "*"};
  int32_t mirostat = 0;  // 0 off, 1 v1, 2 v2
  float mirostat_tau = 5.0f;
  float mirostat_eta = 0.1f;
  float adaptive_target = -1.0f;
  float adaptive_decay = 0.9f;
  int32_t min_keep = 0;
  uint32_t seed = kRandomSeed;
  std::vector<SamplerType> samplers = default_samplers();
  // The merged logit-bias list: (token id, bias) pairs in order, -inf bans (the request's
  // or server's logit_bias, then ignore_eos bans, then suppress_tokens). Empty: no stage.
  std::vector<std::pair<int32_t, float>> logit_bias;

  bool operator==(const SamplerParams&) const = default;
};

}  // namespace hearth::sampling

#include "sampling/params.h"

#include <array>
#include <cctype>

#include "base/log.h"

namespace hearth::sampling {
namespace {

struct SamplerNames {
  SamplerType type;
  std::string_view canonical;
  char letter;
  // Other spellings the reference accepts in `samplers` lists (sampling.md section 3). Names
  // that merely look plausible (typical, typical_p, nucleus_p) are deliberately absent.
  std::array<std::string_view, 3> aliases;
};

constexpr std::array<SamplerNames, 11> kSamplers = {{
    {SamplerType::kPenalties, "penalties", 'e', {}},
    {SamplerType::kDry, "dry", 'd', {}},
    {SamplerType::kTopNSigma, "top_n_sigma", 's', {"top-n-sigma", "topnsigma"}},
    {SamplerType::kTopK, "top_k", 'k', {"top-k", "topk"}},
    {SamplerType::kTypicalP, "typ_p", 'y', {"typ-p", "typp", "typ"}},
    {SamplerType::kTopP, "top_p", 'p', {"top-p", "topp", "nucleus"}},
    {SamplerType::kMinP, "min_p", 'm', {"min-p", "minp"}},
    {SamplerType::kXtc, "xtc", 'x', {}},
    {SamplerType::kTemperature, "temperature", 't', {"temp"}},
    {SamplerType::kInfill, "infill", 'i', {}},
    {SamplerType::kAdaptiveP, "adaptive_p", 'a', {"adaptive-p", "adaptivep"}},
}};

const SamplerNames& names_of(SamplerType type) {
  for (const SamplerNames& names : kSamplers) {
    if (names.type == type) return names;
  }
  return kSamplers[0];  // unreachable: every enumerator has a row
}

std::string lowercase(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

std::string_view sampler_name(SamplerType type) {
  return names_of(type).canonical;
}

char sampler_char(SamplerType type) {
  return names_of(type).letter;
}

std::optional<SamplerType> sampler_from_name(std::string_view name) {
  const std::string lower = lowercase(name);
  for (const SamplerNames& names : kSamplers) {
    if (lower == names.canonical) return names.type;
    for (std::string_view alias : names.aliases) {
      if (!alias.empty() && lower == alias) return names.type;
    }
  }
  return std::nullopt;
}

std::optional<SamplerType> sampler_from_char(char c) {
  for (const SamplerNames& names : kSamplers) {
    if (names.letter == c) return names.type;
  }
  return std::nullopt;
}

std::vector<SamplerType> samplers_from_names(const std::vector<std::string>& names) {
  std::vector<SamplerType> out;
  for (const std::string& name : names) {
    if (const auto type = sampler_from_name(name)) {
      out.push_back(*type);
    } else {
      log_warn("sampling: unknown sampler name '{}' skipped", name);
    }
  }
  return out;
}

std::vector<SamplerType> samplers_from_chars(std::string_view chars) {
  std::vector<SamplerType> out;
  for (char c : chars) {
    if (const auto type = sampler_from_char(c)) {
      out.push_back(*type);
    } else {
      log_warn("sampling: unknown sampler character '{}' skipped", c);
    }
  }
  return out;
}

std::vector<SamplerType> default_samplers() {
  return {SamplerType::kPenalties, SamplerType::kDry,      SamplerType::kTopNSigma,
          SamplerType::kTopK,      SamplerType::kTypicalP, SamplerType::kTopP,
          SamplerType::kMinP,      SamplerType::kXtc,      SamplerType::kTemperature};
}

}  // namespace hearth::sampling

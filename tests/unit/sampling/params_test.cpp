// Sampler names, letters, aliases and the parameter defaults.
#include "sampling/params.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace hearth::sampling {
namespace {

const std::vector<SamplerType> kAllTypes = {
    SamplerType::kPenalties,   SamplerType::kDry,    SamplerType::kTopNSigma, SamplerType::kTopK,
    SamplerType::kTypicalP,    SamplerType::kTopP,   SamplerType::kMinP,      SamplerType::kXtc,
    SamplerType::kTemperature, SamplerType::kInfill, SamplerType::kAdaptiveP};

TEST(SamplerNames, CanonicalNamesAndLetters) {
  const std::vector<std::string> names = {"penalties",   "dry",    "top_n_sigma", "top_k",
                                          "typ_p",       "top_p",  "min_p",       "xtc",
                                          "temperature", "infill", "adaptive_p"};
  const std::string letters = "edskypmxtia";
  for (size_t i = 0; i < kAllTypes.size(); ++i) {
    EXPECT_EQ(sampler_name(kAllTypes[i]), names[i]);
    EXPECT_EQ(sampler_char(kAllTypes[i]), letters[i]);
    EXPECT_EQ(sampler_from_name(names[i]), kAllTypes[i]);
    EXPECT_EQ(sampler_from_char(letters[i]), kAllTypes[i]);
  }
}

TEST(SamplerNames, AliasesAreCaseInsensitive) {
  const std::vector<std::pair<std::string, SamplerType>> aliases = {
      {"top-n-sigma", SamplerType::kTopNSigma},
      {"TopNSigma", SamplerType::kTopNSigma},
      {"top-k", SamplerType::kTopK},
      {"TOPK", SamplerType::kTopK},
      {"typ-p", SamplerType::kTypicalP},
      {"typp", SamplerType::kTypicalP},
      {"Typ", SamplerType::kTypicalP},
      {"top-p", SamplerType::kTopP},
      {"topp", SamplerType::kTopP},
      {"nucleus", SamplerType::kTopP},
      {"min-p", SamplerType::kMinP},
      {"MINP", SamplerType::kMinP},
      {"temp", SamplerType::kTemperature},
      {"Temperature", SamplerType::kTemperature},
      {"adaptive-p", SamplerType::kAdaptiveP},
      {"adaptivep", SamplerType::kAdaptiveP},
      {"PENALTIES", SamplerType::kPenalties},
      {"Dry", SamplerType::kDry},
      {"XTC", SamplerType::kXtc},
      {"Infill", SamplerType::kInfill},
  };
  for (const auto& [alias, type] : aliases) EXPECT_EQ(sampler_from_name(alias), type) << alias;
}

TEST(SamplerNames, LookAlikesAreNotNames) {
  for (const char* name : {"typical_p", "typical", "nucleus_p", "", "top k", "top_k ", "t",
                           "temperature_", "min_p_", "mirostat", "dist"}) {
    EXPECT_EQ(sampler_from_name(name), std::nullopt) << name;
  }
  // Letters are exact: the reference's map holds only the lowercase ones.
  EXPECT_EQ(sampler_from_char('K'), std::nullopt);
  EXPECT_EQ(sampler_from_char('z'), std::nullopt);
}

TEST(SamplerNames, ListsSkipUnknownEntries) {
  EXPECT_EQ(samplers_from_names({"top_k", "bogus", "TEMP", "typical", "top_k"}),
            (std::vector<SamplerType>{SamplerType::kTopK, SamplerType::kTemperature,
                                      SamplerType::kTopK}));
  EXPECT_EQ(samplers_from_chars("kZt?k"),
            (std::vector<SamplerType>{SamplerType::kTopK, SamplerType::kTemperature,
                                      SamplerType::kTopK}));
  // A string is read letter by letter, so a name given as a string means other samplers.
  EXPECT_EQ(samplers_from_chars("top_k"),
            (std::vector<SamplerType>{SamplerType::kTemperature, SamplerType::kTopP,
                                      SamplerType::kTopK}));
  EXPECT_TRUE(samplers_from_names({}).empty());
  EXPECT_TRUE(samplers_from_chars("").empty());
}

TEST(SamplerNames, DefaultListIsEdskypmxt) {
  EXPECT_EQ(default_samplers(), samplers_from_chars("edskypmxt"));
  EXPECT_EQ(default_samplers(),
            samplers_from_names({"penalties", "dry", "top_n_sigma", "top_k", "typ_p", "top_p",
                                 "min_p", "xtc", "temperature"}));
}

TEST(SamplerParamsDefaults, AreTheReferences) {
  const SamplerParams p;
  EXPECT_EQ(p.temperature, 0.8f);
  EXPECT_EQ(p.dynatemp_range, 0.0f);
  EXPECT_EQ(p.dynatemp_exponent, 1.0f);
  EXPECT_EQ(p.top_k, 40);
  EXPECT_EQ(p.top_p, 0.95f);
  EXPECT_EQ(p.min_p, 0.05f);
  EXPECT_EQ(p.typical_p, 1.0f);
  EXPECT_EQ(p.top_n_sigma, -1.0f);
  EXPECT_EQ(p.xtc_probability, 0.0f);
  EXPECT_EQ(p.xtc_threshold, 0.1f);
  EXPECT_EQ(p.repeat_last_n, 64);
  EXPECT_EQ(p.repeat_penalty, 1.0f);
  EXPECT_EQ(p.dry_multiplier, 0.0f);
  EXPECT_EQ(p.dry_base, 1.75f);
  EXPECT_EQ(p.dry_allowed_length, 2);
  EXPECT_EQ(p.dry_penalty_last_n, 64);
  EXPECT_EQ(p.dry_sequence_breakers, (std::vector<std::string>{"\n", ":", "\"", "*"}));
  EXPECT_EQ(p.mirostat, 0);
  EXPECT_EQ(p.mirostat_tau, 5.0f);
  EXPECT_EQ(p.mirostat_eta, 0.1f);
  EXPECT_EQ(p.adaptive_target, -1.0f);
  EXPECT_EQ(p.adaptive_decay, 0.9f);
  EXPECT_EQ(p.seed, kRandomSeed);
  EXPECT_EQ(p.samplers, default_samplers());
  EXPECT_TRUE(p.logit_bias.empty());
}

}  // namespace
}  // namespace hearth::sampling

#include "sampling/chain_builder.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "sampling/adaptive_p.h"
#include "sampling/dist.h"
#include "sampling/dry.h"
#include "sampling/infill.h"
#include "sampling/logit_bias.h"
#include "sampling/min_p.h"
#include "sampling/mirostat.h"
#include "sampling/mirostat_v2.h"
#include "sampling/penalties.h"
#include "sampling/temperature.h"
#include "sampling/top_k.h"
#include "sampling/top_n_sigma.h"
#include "sampling/top_p.h"
#include "sampling/typical.h"
#include "sampling/xtc.h"

namespace hearth::sampling {
namespace {

// The mirostat v1 window the reference always uses.
constexpr int32_t kMirostatM = 100;

using StageResult = Result<std::unique_ptr<Stage>>;

// Builds the configurable stages of one chain; remembers the DRY breakers so a repeated
// `dry` entry does not scan the vocabulary again.
class StageFactory {
 public:
  StageFactory(const SamplerParams& params, const VocabView* vocab)
      : params_(params), vocab_(vocab) {}

  StageResult make(SamplerType type) {
    const SamplerParams& p = params_;
    switch (type) {
      case SamplerType::kPenalties:
        return make_penalties();
      case SamplerType::kDry:
        return make_dry();
      case SamplerType::kTopNSigma:
        return stage(std::make_unique<TopNSigmaStage>(p.top_n_sigma));
      case SamplerType::kTopK:
        return stage(std::make_unique<TopKStage>(p.top_k));
      case SamplerType::kTypicalP:
        return stage(std::make_unique<TypicalStage>(p.typical_p, p.min_keep));
      case SamplerType::kTopP:
        return stage(std::make_unique<TopPStage>(p.top_p, p.min_keep));
      case SamplerType::kMinP:
        return stage(std::make_unique<MinPStage>(p.min_p, p.min_keep));
      case SamplerType::kXtc:
        return stage(
            std::make_unique<XtcStage>(p.xtc_probability, p.xtc_threshold, p.min_keep, p.seed));
      case SamplerType::kTemperature:
        return stage(std::make_unique<TemperatureStage>(p.temperature, p.dynatemp_range,
                                                        p.dynatemp_exponent));
      case SamplerType::kInfill:
        if (vocab_ == nullptr) return missing_vocab("infill");
        return stage(std::make_unique<InfillStage>(*vocab_));
      case SamplerType::kAdaptiveP:
        break;  // not a stage at its position: it picks the terminal stage
    }
    return stage(nullptr);
  }

 private:
  static StageResult stage(std::unique_ptr<Stage> made) { return StageResult(std::move(made)); }

  static Status missing_vocab(const char* sampler) {
    return error(ErrorCode::kInvalidArgument,
                 std::string(sampler) + " sampler needs the model vocabulary, and none was given");
  }

  StageResult make_penalties() {
    const PenaltyParams penalties{params_.repeat_last_n, params_.repeat_penalty,
                                  params_.frequency_penalty, params_.presence_penalty};
    HEARTH_RETURN_IF_ERROR(validate_penalty_params(penalties));
    return stage(std::make_unique<PenaltiesStage>(penalties));
  }

  StageResult make_dry() {
    const DryParams dry{params_.dry_multiplier, params_.dry_base, params_.dry_allowed_length,
                        params_.dry_penalty_last_n};
    if (dry.multiplier != 0.0f && vocab_ == nullptr) return missing_vocab("dry");
    if (!dry_enabled(dry)) return stage(std::make_unique<DryStage>(dry, DryBreakers{}));
    if (!dry_breakers_) dry_breakers_ = build_dry_breakers(*vocab_, params_.dry_sequence_breakers);
    return stage(std::make_unique<DryStage>(dry, *dry_breakers_));
  }

  const SamplerParams& params_;
  const VocabView* vocab_;
  std::optional<DryBreakers> dry_breakers_;
};

Status add_configurable_stages(const SamplerParams& params, const VocabView* vocab, Chain& chain) {
  StageFactory factory(params, vocab);
  for (const SamplerType type : params.samplers) {
    HEARTH_ASSIGN_OR_RETURN(std::unique_ptr<Stage> made, factory.make(type));
    chain.add(std::move(made));
  }
  const bool adaptive = std::find(params.samplers.begin(), params.samplers.end(),
                                  SamplerType::kAdaptiveP) != params.samplers.end();
  if (adaptive) {
    chain.add(std::make_unique<AdaptivePStage>(params.adaptive_target, params.adaptive_decay,
                                               params.seed));
  } else {
    chain.add(std::make_unique<DistStage>(params.seed));
  }
  return Status::ok();
}

}  // namespace

Result<Chain> make_chain(const SamplerParams& params, const VocabView* vocab) {
  if (params.mirostat < 0 || params.mirostat > 2) {
    return error(ErrorCode::kInvalidArgument,
                 "mirostat must be 0 (off), 1 or 2, got " + std::to_string(params.mirostat));
  }
  Chain chain;
  if (!params.logit_bias.empty()) chain.add(std::make_unique<LogitBiasStage>(params.logit_bias));
  switch (params.mirostat) {
    case 0:
      HEARTH_RETURN_IF_ERROR(add_configurable_stages(params, vocab, chain));
      break;
    case 1: {
      const int32_t n_vocab = vocab != nullptr ? vocab->n_vocab() : 0;
      chain.add(std::make_unique<TemperatureStage>(params.temperature))
          .add(std::make_unique<MirostatStage>(n_vocab, params.seed, params.mirostat_tau,
                                               params.mirostat_eta, kMirostatM));
      break;
    }
    default:
      chain.add(std::make_unique<TemperatureStage>(params.temperature))
          .add(std::make_unique<MirostatV2Stage>(params.seed, params.mirostat_tau,
                                                 params.mirostat_eta));
      break;
  }
  return chain;
}

}  // namespace hearth::sampling

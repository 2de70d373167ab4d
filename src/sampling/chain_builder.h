// Builds a request's sampler chain from its effective parameters, in the reference's order
// (sampling.md 2.1):
//   [logit_bias, if the merged list is non-empty]
//   mirostat == 0: one stage per `samplers` entry, in order (duplicates repeat, inert stages
//                  stay as placeholders, adaptive_p only chooses the terminal stage), then
//                  dist(seed), or adaptive_p(target, decay, seed) if adaptive_p was listed;
//   mirostat == 1: temperature (static) -> mirostat(n_vocab, seed, tau, eta, m = 100);
//   mirostat == 2: temperature (static) -> mirostat_v2(seed, tau, eta).
// The chain is per request: build it, reset() it before feeding the prompt through accept(),
// then sample.
#pragma once

#include "base/status.h"
#include "sampling/chain.h"
#include "sampling/params.h"
#include "sampling/vocab_view.h"

namespace hearth::sampling {

// `vocab` (which must outlive the chain) may be null unless the chain needs token text: DRY
// with dry_multiplier != 0, or infill, among the configurable samplers of a mirostat == 0
// chain. It also gives mirostat v1 its vocabulary size (without it, the candidate count of
// each step is used). kInvalidArgument, with a message naming the parameter, for a mirostat
// mode other than 0..2, invalid penalties (repeat_penalty not finite, <= 0 or with an
// infinite reciprocal; frequency/presence_penalty not finite) when a penalties stage is
// built, or a missing vocabulary.
Result<Chain> make_chain(const SamplerParams& params, const VocabView* vocab);

}  // namespace hearth::sampling

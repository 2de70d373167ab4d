// The timed tests of hearth-bench, run on an engine::Context: prompt processing (pp),
// generation (tg) and llama-batched-bench's parallel sequences.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "engine/context.h"
#include "engine/model.h"

namespace hearth::bench {

struct ModelInfo {
  std::string path;
  std::string desc;             // "llama 1.1B Q4_0": architecture, parameters, main weight type
  uint64_t size_bytes = 0;      // all tensor bytes
  uint64_t n_params = 0;        // all tensor elements
  uint64_t streamed_bytes = 0;  // weight bytes one decode step reads (not an untied embedding)
  uint64_t expert_bytes = 0;    // of those, the experts' (ffn_*_exps) of a mixture of experts
  int32_t n_expert = 0, n_expert_used = 0;
  int32_t n_vocab = 0;
  // The weight bytes a decode step of `n_seq` sequences reads: every dense weight, and of the
  // experts the share that n_seq tokens' routes are expected to touch (uniform routing:
  // 1 - (1 - k/X)^n_seq).
  double step_bytes(int32_t n_seq) const;
};

ModelInfo describe_model(const std::string& path, const engine::Model& model);

// One pp or tg test: the time of each timed repetition and, for tg, the bytes per step that
// the roofline counts beyond the weights (KV rows read by attention, averaged over steps).
struct TimedRuns {
  std::vector<int64_t> ns;
  double kv_bytes_per_step = 0;
};

struct RunParams {
  int32_t repetitions = 1;
  int32_t chunk = 512;  // tokens per decode call when processing a prompt
  bool warmup = true;
  uint32_t seed = 0;
};

// pp: from an empty KV cache, `n_prompt` random tokens of one sequence in chunks.
Result<TimedRuns> run_prompt(engine::Context& ctx, int32_t n_prompt, const RunParams& p);
// tg: from an empty KV cache, `n_gen` tokens one decode call each, logits every time.
Result<TimedRuns> run_generation(engine::Context& ctx, int32_t n_gen, const RunParams& p);

// llama-batched-bench's measurement of one (pp, tg, pl).
struct BatchedRun {
  int32_t pp = 0, tg = 0, pl = 0;
  int32_t n_kv = 0;  // pl * (pp + tg)
  double t_pp = 0;   // seconds
  double t_tg = 0;
  double kv_bytes_per_step = 0;  // KV rows read per tg step, averaged
};

// `pl` sequences each get a `pp`-token prompt (one batch over all sequences, decoded in
// chunks), then `tg` steps each decode one token of every sequence in one call.
Result<BatchedRun> run_batched(engine::Context& ctx, int32_t pp, int32_t tg, int32_t pl,
                               const RunParams& p);

// Untimed: a few tokens through the context, then an empty cache again.
Status warm_up(engine::Context& ctx, int32_t n_tokens, uint32_t seed);

}  // namespace hearth::bench

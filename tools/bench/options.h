// hearth-bench's command line: llama-bench's flags (-m -p -n -t -r -b -ub -ctk -ctv -o) and
// llama-batched-bench's (-npp -ntg -npl -c), parsed with CLI11.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/tensor_type.h"

namespace hearth::bench {

enum class OutputFormat { kMarkdown, kJson };

struct Options {
  std::vector<std::string> models;
  std::vector<int32_t> n_prompt = {512};
  std::vector<int32_t> n_gen = {128};
  std::vector<int32_t> n_threads;  // empty: hardware threads
  std::vector<int32_t> n_batch = {2048};
  std::vector<int32_t> n_ubatch = {512};
  std::vector<TensorType> type_k = {TensorType::kF16};
  std::vector<TensorType> type_v = {TensorType::kF16};
  int32_t repetitions = 5;
  bool warmup = true;
  OutputFormat output = OutputFormat::kMarkdown;
  // Batched mode (llama-batched-bench): selected when any of the three lists is given.
  std::vector<int32_t> batched_pp;
  std::vector<int32_t> batched_tg;
  std::vector<int32_t> batched_pl;
  int32_t n_ctx = 0;  // batched mode's KV size; 0 = the largest pl*(pp+tg)
  // Roofline: memory read bandwidth measured over a buffer of this many MiB.
  bool roofline = true;
  int32_t bandwidth_mib = 1024;
  uint32_t seed = 1234;
  bool verbose = false;
  bool repack = true;  // -nr/--no-repack: keep the file's weight layout

  bool batched() const { return !batched_pp.empty() || !batched_tg.empty() || !batched_pl.empty(); }
};

// The outcome of parsing: run with `options`, or exit with `exit_code` (help, bad flags,
// flags the chosen mode would not use; the message has already been printed).
struct ParseResult {
  Options options;
  bool should_exit = false;
  int exit_code = 0;
};

ParseResult parse_options(int argc, char** argv);

// The thread counts to run: the -t list, or the hardware thread count.
std::vector<int32_t> thread_counts(const Options& o);

}  // namespace hearth::bench

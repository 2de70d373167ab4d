// hearth-bench's output: llama-bench's markdown table (printed row by row as tests finish)
// or, with --output json, one JSON object at the end.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "base/tensor_type.h"
#include "tools/bench/options.h"
#include "tools/bench/runner.h"

namespace hearth::bench {

// Where a tg result stands against the memory-bandwidth ceiling.
struct Roofline {
  double tokens_per_s = 0;  // bandwidth / bytes read per token
  double fraction = 0;      // measured / roofline
};

// bandwidth (GB/s) / bytes each step reads, times the tokens a step produces.
Roofline roofline_of(double gb_per_s, double bytes_per_step, int32_t tokens_per_step,
                     double measured_tokens_per_s);

struct TestRow {
  const ModelInfo* model = nullptr;
  int32_t n_threads = 0;
  int32_t n_batch = 0;
  int32_t n_ubatch = 0;
  TensorType type_k = TensorType::kF16;
  TensorType type_v = TensorType::kF16;
  int32_t n_prompt = 0;  // a pp test, or
  int32_t n_gen = 0;     // a tg test
  std::vector<int64_t> samples_ns;
  std::optional<Roofline> roofline;

  std::string test_name() const;  // "pp512", "tg128"
  std::vector<double> samples_ts() const;
};

struct BatchedRow {
  const ModelInfo* model = nullptr;
  int32_t n_threads = 0;
  int32_t n_ctx = 0;
  int32_t n_batch = 0;
  int32_t n_ubatch = 0;
  TensorType type_k = TensorType::kF16;
  TensorType type_v = TensorType::kF16;
  BatchedRun run;
  std::optional<Roofline> roofline;  // of the tg phase
};

struct Summary {
  std::string cpu_level;
  std::vector<int32_t> bandwidth_threads;
  std::vector<double> bandwidth_gb_per_s;  // empty with --no-roofline
  int64_t peak_rss_bytes = 0;
};

class Report {
 public:
  explicit Report(const Options& options);

  void bandwidth(const std::vector<int32_t>& threads, const std::vector<double>& gb_per_s);
  void test(const TestRow& row);
  void batched_header(const BatchedRow& first);
  void batched(const BatchedRow& row);
  void skipped(const std::string& why);
  void finish(const Summary& summary);

 private:
  void markdown_test_header();
  void markdown_test(const TestRow& row);

  const Options& options_;
  bool markdown_;
  bool header_printed_ = false;
  int batched_tables_ = 0;
  nlohmann::json tests_ = nlohmann::json::array();
  nlohmann::json batched_ = nlohmann::json::array();
};

std::string format_bytes(uint64_t bytes);  // "1.23 GiB", "560.50 MiB"
std::string format_params(uint64_t n);     // "1.10 B", "260.00 K"

}  // namespace hearth::bench

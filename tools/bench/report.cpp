#include "tools/bench/report.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <numeric>
#include <utility>

namespace hearth::bench {
namespace {

constexpr int kModelWidth = 30;

double mean(const std::vector<double>& v) {
  if (v.empty()) return 0;
  return std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Sample standard deviation (n - 1), as llama-bench; 0 for a single sample.
double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0;
  const double m = mean(v);
  double sq = 0;
  for (double x : v) sq += (x - m) * (x - m);
  return std::sqrt(sq / static_cast<double>(v.size() - 1));
}

double per_second(double n, double seconds) {
  return seconds > 0 ? n / seconds : 0;
}

std::string format_roofline(const Roofline& r) {
  const std::string ceiling = r.tokens_per_s >= 100 ? fmt::format("{:.0f}", r.tokens_per_s)
                                                    : fmt::format("{:.1f}", r.tokens_per_s);
  return r.fraction >= 0.1 ? fmt::format("{:.2f} of {} t/s", r.fraction, ceiling)
                           : fmt::format("{:.3f} of {} t/s", r.fraction, ceiling);
}

// roofline_ts and roofline_fraction: numbers for a tg result with a roofline, else null.
nlohmann::json with_roofline(nlohmann::json j, const std::optional<Roofline>& r) {
  j["roofline_ts"] = r ? nlohmann::json(r->tokens_per_s) : nlohmann::json(nullptr);
  j["roofline_fraction"] = r ? nlohmann::json(r->fraction) : nlohmann::json(nullptr);
  return j;
}

bool differs(const std::vector<int32_t>& values, int32_t default_value) {
  return values.size() != 1 || values.front() != default_value;
}

bool differs(const std::vector<TensorType>& values) {
  return values.size() != 1 || values.front() != TensorType::kF16;
}

nlohmann::json test_json(const TestRow& row) {
  std::vector<double> ns(row.samples_ns.begin(), row.samples_ns.end());
  const std::vector<double> ts = row.samples_ts();
  nlohmann::json j = {
      {"model_filename", row.model->path},
      {"model_type", row.model->desc},
      {"model_size", row.model->size_bytes},
      {"model_n_params", row.model->n_params},
      {"n_threads", row.n_threads},
      {"n_batch", row.n_batch},
      {"n_ubatch", row.n_ubatch},
      {"type_k", std::string(tensor_type_name(row.type_k))},
      {"type_v", std::string(tensor_type_name(row.type_v))},
      {"n_prompt", row.n_prompt},
      {"n_gen", row.n_gen},
      {"test", row.test_name()},
      {"avg_ns", mean(ns)},
      {"stddev_ns", stddev(ns)},
      {"avg_ts", mean(ts)},
      {"stddev_ts", stddev(ts)},
      {"samples_ns", row.samples_ns},
      {"samples_ts", ts},
  };
  return with_roofline(std::move(j), row.roofline);
}

nlohmann::json batched_json(const BatchedRow& row) {
  const BatchedRun& r = row.run;
  nlohmann::json j = {
      {"model_filename", row.model->path},
      {"model_type", row.model->desc},
      {"n_kv_max", row.n_ctx},
      {"n_batch", row.n_batch},
      {"n_ubatch", row.n_ubatch},
      {"type_k", std::string(tensor_type_name(row.type_k))},
      {"type_v", std::string(tensor_type_name(row.type_v))},
      {"n_threads", row.n_threads},
      {"pp", r.pp},
      {"tg", r.tg},
      {"pl", r.pl},
      {"n_kv", r.n_kv},
      {"t_pp", r.t_pp},
      {"speed_pp", per_second(double{1} * r.pl * r.pp, r.t_pp)},
      {"t_tg", r.t_tg},
      {"speed_tg", per_second(double{1} * r.pl * r.tg, r.t_tg)},
      {"t", r.t_pp + r.t_tg},
      {"speed", per_second(r.n_kv, r.t_pp + r.t_tg)},
  };
  return with_roofline(std::move(j), row.roofline);
}

}  // namespace

Roofline roofline_of(double gb_per_s, double bytes_per_step, int32_t tokens_per_step,
                     double measured_tokens_per_s) {
  Roofline r;
  if (bytes_per_step > 0) r.tokens_per_s = gb_per_s * 1e9 / bytes_per_step * tokens_per_step;
  if (r.tokens_per_s > 0) r.fraction = measured_tokens_per_s / r.tokens_per_s;
  return r;
}

std::string TestRow::test_name() const {
  return n_prompt > 0 ? fmt::format("pp{}", n_prompt) : fmt::format("tg{}", n_gen);
}

std::vector<double> TestRow::samples_ts() const {
  const double n = n_prompt > 0 ? n_prompt : n_gen;
  std::vector<double> out;
  for (int64_t ns : samples_ns) out.push_back(per_second(n, static_cast<double>(ns) / 1e9));
  return out;
}

std::string format_bytes(uint64_t bytes) {
  const auto b = static_cast<double>(bytes);
  if (b >= 1024.0 * 1024 * 1024) return fmt::format("{:.2f} GiB", b / (1024.0 * 1024 * 1024));
  return fmt::format("{:.2f} MiB", b / (1024.0 * 1024));
}

std::string format_params(uint64_t n) {
  const auto d = static_cast<double>(n);
  if (d >= 1e9) return fmt::format("{:.2f} B", d / 1e9);
  if (d >= 1e6) return fmt::format("{:.2f} M", d / 1e6);
  return fmt::format("{:.2f} K", d / 1e3);
}

Report::Report(const Options& options)
    : options_(options), markdown_(options.output == OutputFormat::kMarkdown) {}

void Report::bandwidth(const std::vector<int32_t>& threads, const std::vector<double>& gb_per_s) {
  if (!markdown_) return;
  for (size_t i = 0; i < threads.size(); ++i)
    std::printf("memory read bandwidth: %.1f GB/s (%d thread%s)\n", gb_per_s[i], threads[i],
                threads[i] == 1 ? "" : "s");
  std::printf("\n");
  std::fflush(stdout);
}

void Report::skipped(const std::string& why) {
  std::fprintf(stderr, "skipped: %s\n", why.c_str());
}

void Report::test(const TestRow& row) {
  if (!markdown_) {
    tests_.push_back(test_json(row));
    return;
  }
  if (!header_printed_) markdown_test_header();
  header_printed_ = true;
  markdown_test(row);
}

void Report::markdown_test_header() {
  std::string names = fmt::format("| {:<{}} | {:>10} | {:>10} | {:>7} |", "model", kModelWidth,
                                  "size", "params", "threads");
  std::string rule =
      fmt::format("| {:-<{}} | {:->9}: | {:->9}: | {:->6}: |", "", kModelWidth, "", "", "");
  const auto add = [&](bool on, const char* name, int width) {
    if (!on) return;
    names += fmt::format(" {:>{}} |", name, width);
    rule += fmt::format(" {:->{}}: |", "", width - 1);
  };
  add(differs(options_.n_batch, 2048), "n_batch", 7);
  add(differs(options_.n_ubatch, 512), "n_ubatch", 8);
  add(differs(options_.type_k), "type_k", 6);
  add(differs(options_.type_v), "type_v", 6);
  add(true, "test", 13);
  add(true, "t/s", 20);
  add(options_.roofline, "roofline", 20);
  std::printf("%s\n%s\n", names.c_str(), rule.c_str());
}

void Report::markdown_test(const TestRow& row) {
  const std::vector<double> ts = row.samples_ts();
  std::string line = fmt::format("| {:<{}} | {:>10} | {:>10} | {:>7} |", row.model->desc,
                                 kModelWidth, format_bytes(row.model->size_bytes),
                                 format_params(row.model->n_params), row.n_threads);
  const auto add = [&](bool on, const std::string& value, int width) {
    if (on) line += fmt::format(" {:>{}} |", value, width);
  };
  add(differs(options_.n_batch, 2048), std::to_string(row.n_batch), 7);
  add(differs(options_.n_ubatch, 512), std::to_string(row.n_ubatch), 8);
  add(differs(options_.type_k), std::string(tensor_type_name(row.type_k)), 6);
  add(differs(options_.type_v), std::string(tensor_type_name(row.type_v)), 6);
  add(true, row.test_name(), 13);
  add(true, fmt::format("{:.2f} ± {:.2f}", mean(ts), stddev(ts)), 20);
  add(options_.roofline, row.roofline ? format_roofline(*row.roofline) : std::string(), 20);
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void Report::batched_header(const BatchedRow& first) {
  if (!markdown_) return;
  if (batched_tables_++ > 0) std::printf("\n");
  std::printf(
      "%s: %s, n_kv_max = %d, n_batch = %d, n_ubatch = %d, type_k = %s, type_v = %s, n_threads "
      "= %d\n\n",
      first.model->desc.c_str(), first.model->path.c_str(), first.n_ctx, first.n_batch,
      first.n_ubatch, std::string(tensor_type_name(first.type_k)).c_str(),
      std::string(tensor_type_name(first.type_v)).c_str(), first.n_threads);
  std::string names = fmt::format(
      "|{:>6} | {:>6} | {:>4} | {:>6} | {:>8} | {:>8} | {:>8} | {:>8} | "
      "{:>8} | {:>8} |",
      "PP", "TG", "B", "N_KV", "T_PP s", "S_PP t/s", "T_TG s", "S_TG t/s", "T s", "S t/s");
  std::string rule =
      "|-------|--------|------|--------|----------|----------|----------|----------|"
      "----------|----------|";
  if (options_.roofline) {
    names += fmt::format(" {:>20} |", "roofline");
    rule += "----------------------|";
  }
  std::printf("%s\n%s\n", names.c_str(), rule.c_str());
}

void Report::batched(const BatchedRow& row) {
  if (!markdown_) {
    batched_.push_back(batched_json(row));
    return;
  }
  const BatchedRun& r = row.run;
  std::string line = fmt::format(
      "|{:>6} | {:>6} | {:>4} | {:>6} | {:>8.3f} | {:>8.2f} | {:>8.3f} | {:>8.2f} | {:>8.3f} | "
      "{:>8.2f} |",
      r.pp, r.tg, r.pl, r.n_kv, r.t_pp, per_second(double{1} * r.pl * r.pp, r.t_pp), r.t_tg,
      per_second(double{1} * r.pl * r.tg, r.t_tg), r.t_pp + r.t_tg,
      per_second(r.n_kv, r.t_pp + r.t_tg));
  if (options_.roofline)
    line += fmt::format(" {:>20} |", row.roofline ? format_roofline(*row.roofline) : "");
  std::printf("%s\n", line.c_str());
  std::fflush(stdout);
}

void Report::finish(const Summary& summary) {
  if (markdown_) {
    std::printf("\ncpu kernels: %s\npeak RSS: %s\n", summary.cpu_level.c_str(),
                format_bytes(static_cast<uint64_t>(summary.peak_rss_bytes)).c_str());
    std::fflush(stdout);
    return;
  }
  nlohmann::json bw = nlohmann::json::array();
  for (size_t i = 0; i < summary.bandwidth_gb_per_s.size(); ++i)
    bw.push_back(
        {{"n_threads", summary.bandwidth_threads[i]}, {"gb_per_s", summary.bandwidth_gb_per_s[i]}});
  const nlohmann::json out = {
      {"cpu_level", summary.cpu_level},
      {"memory_bandwidth", bw},
      {"tests", tests_},
      {"batched", batched_},
      {"peak_rss_bytes", summary.peak_rss_bytes},
  };
  std::printf("%s\n", out.dump(2).c_str());
  std::fflush(stdout);
}

}  // namespace hearth::bench

// hearth-bench end to end on stories260K: the llama-bench table, the batched table, the
// JSON report, and a clear error for a missing model.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "support/process.h"
#include "support/test_paths.h"

namespace hearth::test {
namespace {

std::string bench() {
  return bin_dir() + "/hearth-bench";
}

std::string model() {
  return shared_path("models/stories260K.gguf");
}

// A small bandwidth buffer keeps the roofline measurement quick.
ProcessResult run_bench(std::vector<std::string> args) {
  args.insert(args.begin(), {bench(), "-m", model(), "--bw-buffer-mib", "64"});
  return run_process(args, 60);
}

std::vector<std::string> table_rows(const std::string& out, const std::string& needle) {
  std::vector<std::string> rows;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (line.rfind("|", 0) == 0 && line.find(needle) != std::string::npos) rows.push_back(line);
  return rows;
}

// The cells of a markdown table row, trimmed.
std::vector<std::string> cells(const std::string& row) {
  std::vector<std::string> out;
  std::istringstream in(row.substr(1));
  for (std::string cell; std::getline(in, cell, '|');) {
    const auto b = cell.find_first_not_of(' '), e = cell.find_last_not_of(' ');
    out.push_back(b == std::string::npos ? "" : cell.substr(b, e - b + 1));
  }
  return out;
}

// "A<sep>B<suffix>" as two numbers; -1s when the cell has another shape.
std::pair<double, double> split_pair(const std::string& cell, const std::string& sep,
                                     const std::string& suffix) {
  const auto at = cell.find(sep);
  if (at == std::string::npos || cell.size() < suffix.size() ||
      cell.compare(cell.size() - suffix.size(), suffix.size(), suffix) != 0)
    return {-1, -1};
  const std::string a = cell.substr(0, at);
  const std::string b = cell.substr(at + sep.size(), cell.size() - suffix.size() - at - sep.size());
  const auto number = [](const std::string& text) {
    size_t used = 0;
    const double v = text.empty() ? -1 : std::stod(text, &used);
    return used == text.size() ? v : -1;
  };
  return {number(a), number(b)};
}

TEST(HearthBench, PrintsTheLlamaBenchTable) {
  const auto r = run_bench({"-p", "16", "-n", "8", "-r", "2", "-t", "1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| model"), std::string::npos) << r.out;
  for (const std::string test : {"pp16", "tg8"}) {
    const auto rows = table_rows(r.out, " " + test + " ");
    ASSERT_EQ(rows.size(), 1u) << test << "\n" << r.out;
    const auto c = cells(rows[0]);
    ASSERT_EQ(c.size(), 7u) << rows[0];  // model size params threads test t/s roofline
    EXPECT_EQ(c[3], "1");
    const auto [mean, dev] = split_pair(c[5], " ± ", "");
    EXPECT_GT(mean, 0.0) << rows[0];
    EXPECT_GE(dev, 0.0) << rows[0];
    if (test == "tg8") {
      const auto [fraction, ceiling] = split_pair(c[6], " of ", " t/s");
      EXPECT_GT(fraction, 0.0) << rows[0];
      EXPECT_GT(ceiling, 0.0) << rows[0];
    } else {
      EXPECT_EQ(c[6], "") << "no roofline for pp";
    }
  }
  EXPECT_NE(r.out.find("memory read bandwidth: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("GB/s (1 thread)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("cpu kernels: "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("peak RSS: "), std::string::npos) << r.out;
}

TEST(HearthBench, PrintsTheBatchedTable) {
  const auto r = run_bench({"-npp", "8", "-ntg", "4", "-npl", "1,2", "-t", "1", "--no-roofline"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("S_TG t/s"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("n_kv_max = 24"), std::string::npos) << "pl * (pp + tg): " << r.out;
  const auto rows = table_rows(r.out, "|     8 |");
  ASSERT_EQ(rows.size(), 2u) << r.out;
  for (size_t i = 0; i < rows.size(); ++i) {
    const auto c = cells(rows[i]);
    ASSERT_EQ(c.size(), 10u) << rows[i];
    EXPECT_EQ(c[1], "4");
    EXPECT_EQ(c[2], std::to_string(i + 1));
    EXPECT_EQ(c[3], std::to_string((i + 1) * 12));
    // Times (T_PP, T_TG, T, 3 decimals) may print as 0.000 on a tiny model; speeds may not.
    for (size_t k = 4; k < 10; k += 2) EXPECT_GE(std::stod(c[k]), 0.0) << rows[i];
    for (size_t k = 5; k < 10; k += 2) EXPECT_GT(std::stod(c[k]), 0.0) << rows[i];
  }
}

TEST(HearthBench, WritesJson) {
  const auto r = run_bench({"-p", "16", "-n", "8", "-r", "2", "-t", "1", "-o", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  for (const char* key : {"cpu_level", "memory_bandwidth", "tests", "batched", "peak_rss_bytes"})
    EXPECT_TRUE(j.contains(key)) << key;
  EXPECT_GT(j["peak_rss_bytes"].get<int64_t>(), 0);
  ASSERT_EQ(j["memory_bandwidth"].size(), 1u);
  EXPECT_GT(j["memory_bandwidth"][0]["gb_per_s"].get<double>(), 0.0);
  ASSERT_EQ(j["tests"].size(), 2u);
  for (const auto& t : j["tests"]) {
    for (const char* key :
         {"model_filename", "model_type", "model_size", "model_n_params", "n_threads",
          "n_batch",        "n_ubatch",   "type_k",     "type_v",         "n_prompt",
          "n_gen",          "test",       "avg_ns",     "stddev_ns",      "avg_ts",
          "stddev_ts",      "samples_ns", "samples_ts", "roofline_ts",    "roofline_fraction"})
      EXPECT_TRUE(t.contains(key)) << key;
    EXPECT_GT(t["avg_ts"].get<double>(), 0.0);
    EXPECT_EQ(t["samples_ts"].size(), 2u);
    EXPECT_EQ(t["n_threads"].get<int>(), 1);
  }
  EXPECT_EQ(j["tests"][0]["test"], "pp16");
  EXPECT_TRUE(j["tests"][0]["roofline_ts"].is_null());
  EXPECT_EQ(j["tests"][1]["test"], "tg8");
  EXPECT_GT(j["tests"][1]["roofline_fraction"].get<double>(), 0.0);
}

TEST(HearthBench, WritesBatchedJson) {
  const auto r = run_bench(
      {"-npp", "8", "-ntg", "4", "-npl", "1,2", "-t", "1", "--no-roofline", "--output", "json"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto j = nlohmann::json::parse(r.out);
  EXPECT_TRUE(j["memory_bandwidth"].empty());
  ASSERT_EQ(j["batched"].size(), 2u);
  for (const auto& b : j["batched"]) {
    for (const char* key : {"pp", "tg", "pl", "n_kv", "t_pp", "speed_pp", "t_tg", "speed_tg", "t",
                            "speed", "n_threads", "n_kv_max"})
      EXPECT_TRUE(b.contains(key)) << key;
    EXPECT_GT(b["speed_tg"].get<double>(), 0.0);
  }
}

TEST(HearthBench, MissingModelIsAClearError) {
  const auto r = run_process({bench(), "-m", "/nonexistent/model.gguf", "-p", "8", "-n", "4"});
  EXPECT_NE(r.exit_code, 0);
  EXPECT_LT(r.exit_code, 128);
  EXPECT_NE(r.err.find("error"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("/nonexistent/model.gguf"), std::string::npos) << r.err;
}

TEST(HearthBench, BadArgumentsAreRefused) {
  EXPECT_NE(run_process({bench(), "-p", "8"}).exit_code, 0) << "model is required";
  EXPECT_NE(run_process({bench(), "-m", model(), "-ctk", "q4_7"}).exit_code, 0);
  EXPECT_NE(run_process({bench(), "-m", model(), "-o", "csv"}).exit_code, 0);
}

// A flag the chosen mode would not use is refused, not ignored.
TEST(HearthBench, FlagsTheModeWouldIgnoreAreRefused) {
  const auto batched_with_p = run_bench({"-npp", "8", "-ntg", "4", "-npl", "1", "-p", "16"});
  EXPECT_EQ(batched_with_p.exit_code, 1);
  EXPECT_NE(batched_with_p.err.find("-p, -n and -r apply to the llama-bench table"),
            std::string::npos)
      << batched_with_p.err;
  const auto two_kv_types = run_bench({"-npp", "8", "-ntg", "4", "-npl", "1", "-ctk", "f16,q8_0"});
  EXPECT_EQ(two_kv_types.exit_code, 1);
  EXPECT_NE(two_kv_types.err.find("one value each of -b, -ub, -ctk and -ctv"), std::string::npos)
      << two_kv_types.err;
  const auto ctx_without_batched = run_bench({"-p", "8", "-n", "0", "-c", "64"});
  EXPECT_EQ(ctx_without_batched.exit_code, 1);
  EXPECT_NE(ctx_without_batched.err.find("-c applies to batched mode"), std::string::npos)
      << ctx_without_batched.err;
}

}  // namespace
}  // namespace hearth::test

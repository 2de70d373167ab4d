// hearth-bench: llama-bench and llama-batched-bench for Hearth's engine.
//   hearth-bench -m MODEL [-p 512] [-n 128] [-t THREADS] [-r 5] [-b 2048] [-ub 512]
//                [-ctk f16] [-ctv f16] [-o md|json]
//   hearth-bench -m MODEL -npp 128 -ntg 64 -npl 1,4,8,16 [-c N_CTX]
// Before the tests it measures the memory read bandwidth with the same thread counts and
// reports each generation result as a fraction of that roofline.
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/log.h"
#include "engine/context.h"
#include "kernels/cpu_level.h"
#include "models/registry.h"
#include "tools/bench/bandwidth.h"
#include "tools/bench/options.h"
#include "tools/bench/report.h"
#include "tools/bench/runner.h"

namespace hearth::bench {
namespace {

using BandwidthTable = std::map<int32_t, double>;  // threads -> GB/s

struct Session {
  const Options& options;
  Report& report;
  BandwidthTable bandwidth;
};

void progress(const Options& o, const std::string& what) {
  if (o.verbose) std::fprintf(stderr, "hearth-bench: %s\n", what.c_str());
}

std::optional<Roofline> roofline_for(const Session& s, int32_t n_threads, double bytes_per_step,
                                     int32_t tokens_per_step, double tokens_per_s) {
  const auto it = s.bandwidth.find(n_threads);
  if (it == s.bandwidth.end()) return std::nullopt;
  return roofline_of(it->second, bytes_per_step, tokens_per_step, tokens_per_s);
}

Result<std::unique_ptr<engine::Context>> make_context(const models::ModelPtr& model, int32_t n_ctx,
                                                      int32_t n_seq, int32_t n_threads,
                                                      TensorType type_k, TensorType type_v) {
  engine::ContextParams cp;
  cp.n_ctx = n_ctx;
  cp.n_seq_max = n_seq;
  cp.n_threads = n_threads;
  cp.n_threads_batch = n_threads;
  cp.type_k = type_k;
  cp.type_v = type_v;
  return engine::Context::create(model, cp);
}

double mean_tokens_per_s(int32_t n_tokens, const std::vector<int64_t>& ns) {
  double sum = 0;
  for (int64_t t : ns) sum += t > 0 ? n_tokens * 1e9 / static_cast<double>(t) : 0;
  return ns.empty() ? 0 : sum / static_cast<double>(ns.size());
}

// Every pp and tg test of one context (fixed model, threads and KV types).
Status run_tests(Session& s, engine::Context& ctx, const ModelInfo& info, TestRow base) {
  const Options& o = s.options;
  for (int32_t b : o.n_batch) {
    for (int32_t ub : o.n_ubatch) {
      const RunParams rp{o.repetitions, std::min(b, ub), o.warmup, o.seed};
      TestRow row = base;
      row.n_batch = b;
      row.n_ubatch = ub;
      for (int32_t p : o.n_prompt) {
        if (p <= 0) continue;
        progress(o, fmt::format("pp{} with {} threads", p, row.n_threads));
        HEARTH_ASSIGN_OR_RETURN(TimedRuns runs, run_prompt(ctx, p, rp));
        row.n_prompt = p;
        row.n_gen = 0;
        row.samples_ns = runs.ns;
        s.report.test(row);
      }
      for (int32_t n : o.n_gen) {
        if (n <= 0) continue;
        progress(o, fmt::format("tg{} with {} threads", n, row.n_threads));
        HEARTH_ASSIGN_OR_RETURN(TimedRuns runs, run_generation(ctx, n, rp));
        row.n_prompt = 0;
        row.n_gen = n;
        row.samples_ns = runs.ns;
        row.roofline = roofline_for(s, row.n_threads, info.step_bytes(1) + runs.kv_bytes_per_step,
                                    1, mean_tokens_per_s(n, runs.ns));
        s.report.test(row);
        row.roofline.reset();
      }
    }
  }
  return Status::ok();
}

// llama-bench mode: a context for each thread count and KV type pair.
Status bench_model(Session& s, const models::ModelPtr& model, const ModelInfo& info) {
  const Options& o = s.options;
  const int32_t n_ctx = std::max({1, *std::max_element(o.n_prompt.begin(), o.n_prompt.end()),
                                  *std::max_element(o.n_gen.begin(), o.n_gen.end())});
  for (TensorType tk : o.type_k) {
    for (TensorType tv : o.type_v) {
      for (int32_t t : thread_counts(o)) {
        HEARTH_ASSIGN_OR_RETURN(auto ctx, make_context(model, n_ctx, 1, t, tk, tv));
        TestRow base;
        base.model = &info;
        base.n_threads = t;
        base.type_k = tk;
        base.type_v = tv;
        HEARTH_RETURN_IF_ERROR(run_tests(s, *ctx, info, base));
      }
    }
  }
  return Status::ok();
}

int32_t batched_ctx_size(const Options& o) {
  if (o.n_ctx > 0) return o.n_ctx;
  int64_t n = 1;
  for (int32_t pp : o.batched_pp)
    for (int32_t tg : o.batched_tg)
      for (int32_t pl : o.batched_pl) n = std::max<int64_t>(n, int64_t{pl} * (pp + tg));
  return static_cast<int32_t>(std::min<int64_t>(n, 1 << 26));
}

// One (pp, tg, pl) of batched mode, or a note that it does not fit.
Status run_one_batched(Session& s, engine::Context& ctx, BatchedRow row, int32_t pp, int32_t tg,
                       int32_t pl) {
  const Options& o = s.options;
  if (int64_t{pl} * (pp + tg) > row.n_ctx) {
    s.report.skipped(fmt::format("pp {}, tg {}, pl {} needs {} KV cells, more than -c {}", pp, tg,
                                 pl, int64_t{pl} * (pp + tg), row.n_ctx));
    return Status::ok();
  }
  if (pp + tg == 0) return Status::ok();
  progress(o, fmt::format("batched pp {}, tg {}, pl {}", pp, tg, pl));
  const RunParams rp{1, std::min(row.n_batch, row.n_ubatch), o.warmup, o.seed};
  HEARTH_ASSIGN_OR_RETURN(row.run, run_batched(ctx, pp, tg, pl, rp));
  if (tg > 0 && row.run.t_tg > 0)
    row.roofline =
        roofline_for(s, row.n_threads, row.model->step_bytes(pl) + row.run.kv_bytes_per_step, pl,
                     pl * tg / row.run.t_tg);
  s.report.batched(row);
  return Status::ok();
}

// llama-batched-bench mode: a context with room for every sequence, per thread count.
Status bench_model_batched(Session& s, const models::ModelPtr& model, const ModelInfo& info) {
  const Options& o = s.options;
  const int32_t n_seq = *std::max_element(o.batched_pl.begin(), o.batched_pl.end());
  BatchedRow row;
  row.model = &info;
  row.n_ctx = batched_ctx_size(o);
  row.n_batch = o.n_batch.front();
  row.n_ubatch = o.n_ubatch.front();
  row.type_k = o.type_k.front();
  row.type_v = o.type_v.front();
  for (int32_t t : thread_counts(o)) {
    HEARTH_ASSIGN_OR_RETURN(auto ctx,
                            make_context(model, row.n_ctx, n_seq, t, row.type_k, row.type_v));
    row.n_threads = t;
    if (o.warmup) HEARTH_RETURN_IF_ERROR(warm_up(*ctx, std::min(16, row.n_ctx), o.seed + 1));
    s.report.batched_header(row);
    for (int32_t pp : o.batched_pp)
      for (int32_t tg : o.batched_tg)
        for (int32_t pl : o.batched_pl)
          HEARTH_RETURN_IF_ERROR(run_one_batched(s, *ctx, row, pp, tg, pl));
  }
  return Status::ok();
}

Status check_models_exist(const Options& o) {
  for (const std::string& path : o.models) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec))
      return error(
          ErrorCode::kNotFound,
          fmt::format("cannot open model file '{}': {}", path,
                      std::filesystem::exists(path, ec) ? "not a regular file" : "no such file"));
  }
  return Status::ok();
}

void measure_bandwidth(Session& s, Summary& summary) {
  std::vector<int32_t> threads = thread_counts(s.options);
  std::sort(threads.begin(), threads.end());
  threads.erase(std::unique(threads.begin(), threads.end()), threads.end());
  progress(s.options, "measuring the memory read bandwidth");
  auto bw =
      measure_read_bandwidth(threads, size_t{static_cast<uint32_t>(s.options.bandwidth_mib)} << 20);
  if (!bw.is_ok()) {
    std::fprintf(stderr, "warning: %s; no roofline\n", bw.status().message().c_str());
    return;
  }
  for (size_t i = 0; i < threads.size(); ++i) s.bandwidth[threads[i]] = (*bw)[i];
  summary.bandwidth_threads = threads;
  summary.bandwidth_gb_per_s = *bw;
  s.report.bandwidth(threads, *bw);
}

Status run_all(Session& s) {
  for (const std::string& path : s.options.models) {
    progress(s.options, "loading " + path);
    engine::LoadOptions load;
    load.repack = s.options.repack;
    auto model = models::load_model(path, load);
    if (!model.is_ok())
      return error(model.status().code(),
                   fmt::format("cannot load model '{}': {}", path, model.status().to_string()));
    const ModelInfo info = describe_model(path, **model);
    HEARTH_RETURN_IF_ERROR(s.options.batched() ? bench_model_batched(s, *model, info)
                                               : bench_model(s, *model, info));
  }
  return Status::ok();
}

int64_t peak_rss_bytes() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return 0;
  return int64_t{usage.ru_maxrss} * 1024;  // Linux reports KiB
}

int run(const Options& o) {
  if (o.verbose) set_log_level(LogLevel::kInfo);
  if (Status st = check_models_exist(o); !st.is_ok()) {
    std::fprintf(stderr, "error: %s\n", st.message().c_str());
    return 1;
  }
  Report report(o);
  Session session{o, report, {}};
  Summary summary;
  summary.cpu_level = std::string(kernels::cpu_level_name(kernels::active_cpu_level()));
  if (o.roofline) measure_bandwidth(session, summary);
  if (Status st = run_all(session); !st.is_ok()) {
    std::fprintf(stderr, "error: %s\n", st.message().c_str());
    return 1;
  }
  summary.peak_rss_bytes = peak_rss_bytes();
  report.finish(summary);
  return 0;
}

}  // namespace
}  // namespace hearth::bench

int main(int argc, char** argv) {
  auto parsed = hearth::bench::parse_options(argc, argv);
  if (parsed.should_exit) return parsed.exit_code;
  return hearth::bench::run(parsed.options);
}

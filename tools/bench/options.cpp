#include "tools/bench/options.h"

#include <CLI/CLI.hpp>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <utility>

#include "base/thread_pool.h"

namespace hearth::bench {
namespace {

// llama.cpp's single-dash long names, which CLI11 (2.1) cannot declare, and their long
// spellings here.
constexpr std::array<std::pair<std::string_view, std::string_view>, 6> kAliases = {{
    {"-ub", "--ubatch-size"},
    {"-ctk", "--cache-type-k"},
    {"-ctv", "--cache-type-v"},
    {"-npp", "--npp"},
    {"-ntg", "--ntg"},
    {"-npl", "--npl"},
}};

std::string rewrite_alias(const std::string& arg) {
  for (const auto& [alias, name] : kAliases) {
    if (arg == alias) return std::string(name);
    if (arg.size() > alias.size() && arg.compare(0, alias.size(), alias) == 0 &&
        arg[alias.size()] == '=')
      return std::string(name) + arg.substr(alias.size());
  }
  return arg;
}

struct RawOptions {
  std::vector<std::string> type_k = {"f16"};
  std::vector<std::string> type_v = {"f16"};
  std::string output = "md";
  bool no_roofline = false;
  bool no_warmup = false;
};

const CLI::Validator& kv_type_check() {
  static const CLI::Validator check =
      CLI::IsMember({"f16", "f32", "bf16", "q8_0"}, CLI::ignore_case);
  return check;
}

void add_llama_bench_options(CLI::App& app, Options& o, RawOptions& raw) {
  app.add_option("-m,--model", o.models, "model file (GGUF); repeatable or a comma list")
      ->required()
      ->delimiter(',');
  app.add_option("-p,--n-prompt", o.n_prompt, "prompt tokens of the pp test (list; 0 = skip)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("-n,--n-gen", o.n_gen, "generated tokens of the tg test (list; 0 = skip)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("-t,--threads", o.n_threads, "threads (list; default: all hardware threads)")
      ->delimiter(',')
      ->check(CLI::Range(1, 1024));
  app.add_option("-r,--repetitions", o.repetitions, "timed runs of each test")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000));
  app.add_option("-b,--batch-size", o.n_batch, "logical batch size (list)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--ubatch-size", o.n_ubatch,
                 "-ub: physical batch size (list); prompts are decoded in chunks of "
                 "min(batch, ubatch) tokens")
      ->delimiter(',')
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--cache-type-k", raw.type_k, "-ctk: KV cache type for K (list: f16 q8_0 ...)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(kv_type_check());
  app.add_option("--cache-type-v", raw.type_v, "-ctv: KV cache type for V (list)")
      ->delimiter(',')
      ->capture_default_str()
      ->check(kv_type_check());
  app.add_option("-o,--output", raw.output, "output format: md or json (to stdout)")
      ->capture_default_str()
      ->check(CLI::IsMember({"md", "json"}));
  app.add_flag("--no-warmup", raw.no_warmup, "skip the untimed warm-up run of each test");
}

void add_batched_options(CLI::App& app, Options& o) {
  app.add_option("--npp", o.batched_pp,
                 "-npp: batched mode (llama-batched-bench): prompt tokens per sequence (list; "
                 "default 128,256,512)")
      ->delimiter(',')
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--ntg", o.batched_tg,
                 "-ntg: batched mode: generated tokens per sequence (list; default 128,256)")
      ->delimiter(',')
      ->check(CLI::Range(0, 1 << 20));
  app.add_option("--npl", o.batched_pl,
                 "-npl: batched mode: parallel sequences (list; default 1,2,4,8,16,32)")
      ->delimiter(',')
      ->check(CLI::Range(1, 4096));
  app.add_option("-c,--ctx-size", o.n_ctx,
                 "batched mode: KV cache size in tokens; runs needing more are skipped "
                 "(default: the largest pl*(pp+tg))")
      ->check(CLI::Range(0, 1 << 26));
}

void add_other_options(CLI::App& app, Options& o, RawOptions& raw) {
  app.add_flag(
      "--no-roofline", raw.no_roofline,
      "skip the memory bandwidth measurement and the roofline column. The roofline of "
      "a tg test is bandwidth / bytes read per step: every weight tensor except an "
      "untied token-embedding matrix, plus the KV rows attention reads (a model that fits in "
      "the CPU caches can exceed 1)");
  app.add_option("--bw-buffer-mib", o.bandwidth_mib,
                 "size of the buffer the bandwidth measurement reads (MiB, split over threads)")
      ->capture_default_str()
      ->check(CLI::Range(16, 1 << 20));
  app.add_option("--seed", o.seed, "seed of the random prompt tokens")->capture_default_str();
  app.add_flag("-v,--verbose", o.verbose, "progress and engine logs to stderr");
  app.add_flag("!--no-repack", o.repack,
               "keep the file's weight layout (no repacking for the interleaved kernels), as "
               "hearth-server -nr does");
}

void apply_raw(const RawOptions& raw, Options& o) {
  const auto types = [](const std::vector<std::string>& names) {
    std::vector<TensorType> out;
    for (const auto& name : names) out.push_back(*tensor_type_from_name(name));
    return out;
  };
  o.type_k = types(raw.type_k);
  o.type_v = types(raw.type_v);
  o.output = raw.output == "json" ? OutputFormat::kJson : OutputFormat::kMarkdown;
  o.roofline = !raw.no_roofline;
  o.warmup = !raw.no_warmup;
  if (o.batched()) {
    if (o.batched_pp.empty()) o.batched_pp = {128, 256, 512};
    if (o.batched_tg.empty()) o.batched_tg = {128, 256};
    if (o.batched_pl.empty()) o.batched_pl = {1, 2, 4, 8, 16, 32};
  }
}

// Flags that the chosen mode would not use: refused, so that nothing given is ignored.
// Returns the complaint, or "" when every flag given takes effect.
std::string unused_flags(const CLI::App& app, const Options& o) {
  if (!o.batched()) {
    return app.count("--ctx-size") > 0 ? "-c applies to batched mode (-npp/-ntg/-npl) only" : "";
  }
  if (app.count("--n-prompt") + app.count("--n-gen") + app.count("--repetitions") > 0)
    return "-p, -n and -r apply to the llama-bench table, not to batched mode (-npp/-ntg/-npl)";
  if (o.n_batch.size() > 1 || o.n_ubatch.size() > 1 || o.type_k.size() > 1 || o.type_v.size() > 1)
    return "batched mode (-npp/-ntg/-npl) takes one value each of -b, -ub, -ctk and -ctv";
  return "";
}

}  // namespace

ParseResult parse_options(int argc, char** argv) {
  CLI::App app{
      "hearth-bench: prompt processing (pp) and generation (tg) speed of GGUF models, as "
      "llama-bench measures it; with -npp/-ntg/-npl, batched decoding as llama-batched-bench "
      "does. Prints a memory-bandwidth roofline for generation."};
  app.name("hearth-bench");
  ParseResult result;
  RawOptions raw;
  add_llama_bench_options(app, result.options, raw);
  add_batched_options(app, result.options);
  add_other_options(app, result.options, raw);
  // CLI11 takes the arguments in reverse order, without the program name.
  std::vector<std::string> args;
  for (int i = argc - 1; i >= 1; --i) args.push_back(rewrite_alias(argv[i]));
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    result.should_exit = true;
    result.exit_code = app.exit(e);
    return result;
  }
  apply_raw(raw, result.options);
  if (const std::string why = unused_flags(app, result.options); !why.empty()) {
    std::fprintf(stderr, "hearth-bench: error: %s\n", why.c_str());
    result.should_exit = true;
    result.exit_code = 1;
  }
  return result;
}

std::vector<int32_t> thread_counts(const Options& o) {
  if (!o.n_threads.empty()) return o.n_threads;
  return {ThreadPool::hardware_threads()};
}

}  // namespace hearth::bench

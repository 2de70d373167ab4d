// hearth-cli: one completion from the command line.
//   hearth-cli -m MODEL -p PROMPT -n N [--temp T] [--seed S] [-t THREADS]
// The completion goes to stdout as it is generated; load, prompt and generation speed go
// to stderr.
#include <CLI/CLI.hpp>

#include <cstdio>
#include <string>

#include "base/log.h"
#include "base/timer.h"
#include "engine/context.h"
#include "models/registry.h"
#include "tokenizer/tokenizer.h"
#include "tools/cli/generator.h"

namespace {

struct Options {
  std::string model;
  std::string prompt;
  int32_t n_predict = -1;
  int32_t n_ctx = 4096;
  int32_t n_threads = 0;
  float temperature = 0.8f;
  int64_t seed = -1;
  int32_t top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  std::vector<std::string> stop;
  bool verbose = false;
};

void add_options(CLI::App& app, Options& o) {
  app.add_option("-m,--model", o.model, "model path (GGUF)")->required();
  app.add_option("-p,--prompt", o.prompt, "prompt text")->required();
  app.add_option("-n,--n-predict", o.n_predict,
                 "tokens to generate (-1 = until end of text or context)")
      ->capture_default_str()
      ->check(CLI::Range(-1, INT32_MAX));
  app.add_option("-c,--ctx-size", o.n_ctx, "context size in tokens")
      ->capture_default_str()
      ->check(CLI::Range(1, 1 << 24));
  app.add_option("-t,--threads", o.n_threads, "threads (0 = all hardware threads)")
      ->check(CLI::Range(0, 1024));
  app.add_option("--temp", o.temperature, "temperature (<= 0: greedy)")->capture_default_str();
  app.add_option("--seed", o.seed, "RNG seed (-1 = random)")->capture_default_str();
  app.add_option("--top-k", o.top_k, "top-k sampling (<= 0: off)")->capture_default_str();
  app.add_option("--top-p", o.top_p, "top-p sampling (1.0: off)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--min-p", o.min_p, "min-p sampling (0.0: off)")
      ->capture_default_str()
      ->check(CLI::Range(0.0, 1.0));
  app.add_option("--stop", o.stop, "stop string (repeatable)");
  app.add_flag("-v,--verbose", o.verbose, "log loading details");
}

int run(const Options& o) {
  if (o.verbose) hearth::set_log_level(hearth::LogLevel::kInfo);
  const int64_t t0 = hearth::now_us();
  auto model = hearth::models::load_model(o.model);
  if (!model.is_ok()) {
    std::fprintf(stderr, "error: cannot load model: %s\n", model.status().to_string().c_str());
    return 1;
  }
  auto tok = hearth::tokenizer::Tokenizer::from_gguf((*model)->metadata());
  if (!tok.is_ok()) {
    std::fprintf(stderr, "error: cannot load the tokenizer: %s\n",
                 tok.status().to_string().c_str());
    return 1;
  }
  hearth::engine::ContextParams cp;
  cp.n_ctx = o.n_ctx;
  cp.n_threads = o.n_threads;
  auto ctx = hearth::engine::Context::create(*model, cp);
  if (!ctx.is_ok()) {
    std::fprintf(stderr, "error: %s\n", ctx.status().to_string().c_str());
    return 1;
  }
  std::fprintf(stderr, "loaded %s (%s, %d layers) in %.1f ms\n", o.model.c_str(),
               (*model)->hparams().arch.c_str(), (*model)->hparams().n_layer,
               static_cast<double>(hearth::now_us() - t0) / 1000.0);
  hearth::cli::GenerationRequest req;
  req.prompt = tok->tokenize(o.prompt, /*add_special=*/true, /*parse_special=*/true);
  req.n_predict = o.n_predict;
  req.stop = o.stop;
  req.sampling.temperature = o.temperature;
  req.sampling.seed = static_cast<uint32_t>(o.seed);
  req.sampling.top_k = o.top_k;
  req.sampling.top_p = o.top_p;
  req.sampling.min_p = o.min_p;
  auto res = hearth::cli::generate(**ctx, *tok, req, [](std::string_view text) {
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
  });
  if (!res.is_ok()) {
    std::fprintf(stderr, "\nerror: %s\n", res.status().to_string().c_str());
    return 1;
  }
  const auto per_second = [](int32_t n, double ms) { return ms > 0 ? n * 1000.0 / ms : 0.0; };
  std::fprintf(stderr, "\nprompt: %d tokens in %.2f ms (%.2f tokens/s)\n", res->n_prompt,
               res->prompt_ms, per_second(res->n_prompt, res->prompt_ms));
  std::fprintf(stderr, "generation: %d tokens in %.2f ms (%.2f tokens/s), stop: %s\n",
               res->n_predicted, res->predicted_ms, per_second(res->n_predicted, res->predicted_ms),
               res->stop_type.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"hearth-cli: generate a completion with a GGUF model"};
  Options options;
  add_options(app, options);
  CLI11_PARSE(app, argc, argv);
  return run(options);
}

// hearth-server: llama-server's command line and HTTP API over Hearth's engine.
// The listener opens before the model loads (routes answer 503 "Loading model" until then);
// SIGINT/SIGTERM stop accepting, cancel in-flight work and exit 0.
#include <pthread.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include "base/log.h"
#include "base/memory.h"
#include "base/thread_placement.h"
#include "chat_setup.h"
#include "hub/http_client.h"
#include "hub/model_source.h"
#include "media/audio_projector.h"
#include "media/clip_file.h"
#include "media/projector.h"
#include "model_info.h"
#include "models/registry.h"
#include "sampling_defaults.h"
#include "scheduler/cpu_placement.h"
#include "scheduler/scheduler.h"
#include "server/options/parse_args.h"
#include "server/server.h"
#include "server_config.h"
#include "server_env.h"
#include "tokenizer/tokenizer.h"
#include "webui/embedded_assets.h"

namespace {

using hearth::server::options::ServerArgs;
using hearth::server_tool::logical_batch;
using hearth::server_tool::make_config;
using hearth::server_tool::slot_context;

// Set by SIGINT/SIGTERM: a download in progress stops (its partial file stays, to resume).
std::atomic<bool> g_stop_downloads{false};

// A repository's model with the token and --offline: -hf's, or --spec-draft-hf's (chosen by
// the same rules).
hearth::hub::ModelRequest repo_request(const ServerArgs& args, const std::string& hf_repo) {
  hearth::hub::ModelRequest request;
  request.hf_repo = hf_repo;
  request.token = args.hf_token;
  request.offline = args.offline;
  return request;
}

// The model request of -m, -hf, -hff and -mu.
hearth::hub::ModelRequest model_request(const ServerArgs& args) {
  hearth::hub::ModelRequest request = repo_request(args, args.hf_repo);
  request.path = args.model_path;
  request.hf_file = args.hf_file;
  request.url = args.model_url;
  return request;
}

// What /health and the other routes add to 503 "Loading model" while files download.
std::function<hearth::server::Json()> download_progress_json(
    std::shared_ptr<const hearth::hub::DownloadProgress> progress) {
  return [progress]() -> hearth::server::Json {
    if (progress->files() == 0) return nullptr;
    const uint64_t total = progress->total_bytes(), done = progress->done_bytes();
    return {
        {"stage", "downloading"},
        {"files", progress->files()},
        {"files_done", progress->files_done()},
        {"downloaded_bytes", done},
        {"total_bytes", total},
        {"fraction",
         total > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 0.0}};
  };
}

// Downloads what the cache lacks for one request (a progress bar on a terminal, log lines
// otherwise) and returns its local paths; nullopt after logging the reason.
std::optional<hearth::hub::ResolvedModel> fetch(const hearth::hub::ModelRequest& request,
                                                hearth::hub::DownloadProgress& progress,
                                                std::string_view what = "model") {
  hearth::hub::DownloadOptions options;
  options.progress = &progress;
  options.cancel = &g_stop_downloads;
  std::unique_ptr<hearth::hub::ProgressReporter> reporter;
  const std::string label =
      !request.hf_repo.empty() ? request.hf_repo : hearth::hub::display_url(request.url);
  if (!request.offline)
    reporter = std::make_unique<hearth::hub::ProgressReporter>(progress, label, isatty(2) != 0);
  auto files = hearth::hub::resolve_model_files(request, options);
  if (reporter) reporter->stop();
  if (!files && g_stop_downloads.load()) {
    hearth::log_info("download of {} stopped; its partial file is kept to resume", label);
    return std::nullopt;
  }
  if (!files) {
    hearth::log_error("failed to get the {} {}: {}", what, label, files.status().message());
    return std::nullopt;
  }
  return std::move(*files);
}

// -mmu: the projector's URL, downloaded like -mu's model (to the -mm path when given, else
// into the llama.cpp cache with its .etag), always as one file.
hearth::hub::ModelRequest projector_url_request(const ServerArgs& args) {
  hearth::hub::ModelRequest request = repo_request(args, "");
  request.path = args.mmproj;
  request.url = args.mmproj_url;
  request.url_may_be_split = false;
  return request;
}

// -hf / -mu / -mmu / --spec-draft-hf: puts the local paths into `args` and tells the server
// where the model is. False after logging the reason.
bool fetch_models(ServerArgs& args, hearth::hub::DownloadProgress& progress,
                  hearth::server::Server& server) {
  hearth::hub::ModelRequest request = model_request(args);
  // As llama-server: -hf brings its repository's projector unless --no-mmproj, -mm or -mmu.
  request.with_projector = args.mmproj_auto && args.mmproj.empty() && args.mmproj_url.empty();
  if (hearth::hub::is_remote(request)) {
    auto files = fetch(request, progress);
    if (!files) return false;
    args.model_path = files->model_path;
    if (!files->projector_path.empty()) args.mmproj = files->projector_path;
    server.set_model_path(args.model_path);
  }
  // Fetched even with --no-mmproj, as llama-server does; load_projector then leaves it.
  if (!args.mmproj_url.empty()) {
    auto projector = fetch(projector_url_request(args), progress, "projector");
    if (!projector) return false;
    args.mmproj = projector->model_path;
  }
  // Only draft-simple reads a draft model: without it the repository is not fetched.
  if (!args.spec_draft_hf.empty() &&
      !hearth::server::options::uses_spec_type(args, "draft-simple")) {
    hearth::log_warn("--spec-draft-hf has no effect without --spec-type draft-simple");
  } else if (!args.spec_draft_hf.empty()) {
    auto draft = fetch(repo_request(args, args.spec_draft_hf), progress, "draft model");
    if (!draft) return false;
    args.spec_draft_model = draft->model_path;
  }
  return true;
}

// -ctk/-ctv names (validated by the option parser: f32, f16, bf16, q8_0).
hearth::TensorType cache_type(const std::string& name) {
  if (name == "f32") return hearth::TensorType::kF32;
  if (name == "bf16") return hearth::TensorType::kBF16;
  if (name == "q8_0") return hearth::TensorType::kQ8_0;
  return hearth::TensorType::kF16;
}

// --pooling, else the model's pooling_type, else none (the reference's resolution).
hearth::scheduler::PoolingType pooling_of(const ServerArgs& args,
                                          hearth::scheduler::PoolingType model_pooling) {
  using hearth::scheduler::PoolingType;
  if (args.pooling >= 0) return static_cast<PoolingType>(args.pooling);
  return model_pooling == PoolingType::kUnspecified ? PoolingType::kNone : model_pooling;
}

// The options the scheduler takes as given are its settings, handed over whole; the rest of
// its configuration is derived here (with the server's -sp and --embedding, which both use).
hearth::scheduler::SchedulerConfig scheduler_config(const ServerArgs& args, int32_t n_ctx_slot,
                                                    hearth::scheduler::PoolingType model_pooling) {
  hearth::scheduler::SchedulerConfig c;
  static_cast<hearth::scheduler::SchedulerSettings&>(c) = args;
  c.n_slots = hearth::server::options::resolved_n_slots(args);
  c.n_ctx_slot = n_ctx_slot;
  c.n_batch = logical_batch(args);
  c.embeddings = args.embeddings;
  c.special = args.special;
  c.pooling = pooling_of(args, model_pooling);
  c.n_threads = args.n_threads.value_or(0) > 0 ? *args.n_threads : 0;
  c.n_threads_batch = args.n_threads_batch.value_or(0) > 0 ? *args.n_threads_batch : c.n_threads;
  c.kv_unified = hearth::server::options::resolved_kv_unified(args);
  c.spec.ngram_simple = hearth::server::options::uses_spec_type(args, "ngram-simple");
  c.spec.ngram_simple_params = {args.spec_ngram_simple_n, args.spec_ngram_simple_m};
  const auto map_params = [](const ServerArgs::NgramMapArgs& m) {
    return hearth::scheduler::NgramMapParams{m.size_n, m.size_m, m.min_hits};
  };
  c.spec.ngram_map_k = hearth::server::options::uses_spec_type(args, "ngram-map-k");
  c.spec.ngram_map_k_params = map_params(args.spec_ngram_map_k);
  c.spec.ngram_map_k4v = hearth::server::options::uses_spec_type(args, "ngram-map-k4v");
  c.spec.ngram_map_k4v_params = map_params(args.spec_ngram_map_k4v);
  c.spec.ngram_mod = hearth::server::options::uses_spec_type(args, "ngram-mod");
  c.spec.ngram_cache = hearth::server::options::uses_spec_type(args, "ngram-cache");
  c.spec.draft_simple = hearth::server::options::uses_spec_type(args, "draft-simple");
  c.spec.draft.n_max = args.spec_draft_n_max;
  c.spec.draft.n_min = args.spec_draft_n_min;
  c.spec.draft.p_min = args.spec_draft_p_min;
  c.spec.draft.type_k = cache_type(args.spec_draft_type_k);
  c.spec.draft.type_v = cache_type(args.spec_draft_type_v);
  c.spec.draft.n_threads = args.spec_draft_threads;
  c.spec.draft.n_threads_batch = args.spec_draft_threads_batch;
  c.spec.ngram_mod_params = {args.spec_ngram_mod_n_match, args.spec_ngram_mod_n_min,
                             args.spec_ngram_mod_n_max};
  c.type_k = cache_type(args.cache_type_k);
  c.type_v = cache_type(args.cache_type_v);
  return c;
}

// How the models are loaded: -nr, -lm (and its aliases), --check-tensors.
hearth::engine::LoadOptions load_options(const ServerArgs& args) {
  hearth::engine::LoadOptions load;
  load.repack = args.repack;
  load.load_mode = args.load_mode;
  load.check_tensors = args.check_tensors;
  return load;
}

// draft-simple's model (-md); without draft-simple the file is not loaded, as the reference
// drops a draft model no speculative type uses.
bool load_draft_model(const ServerArgs& args, hearth::scheduler::SchedulerConfig& config) {
  if (!hearth::server::options::uses_spec_type(args, "draft-simple")) {
    if (!args.spec_draft_model.empty())
      hearth::log_warn("--spec-draft-model has no effect without --spec-type draft-simple");
    return true;
  }
  if (args.spec_draft_model.empty()) {
    hearth::log_error(
        "--spec-type draft-simple needs a draft model (--spec-draft-model / -md, or "
        "--spec-draft-hf)");
    return false;
  }
  auto draft = hearth::models::load_model(args.spec_draft_model, load_options(args));
  if (!draft) {
    hearth::log_error("failed to load the draft model '{}': {}", args.spec_draft_model,
                      draft.status().message());
    return false;
  }
  config.spec.draft.model = *draft;
  return true;
}

// ngram-cache's lookup tables (-lcs, -lcd), read once and shared by the slots. A file that
// cannot be read stops the start with its reason (the reference aborts).
bool load_lookup_caches(const ServerArgs& args, hearth::scheduler::SchedulerConfig& config) {
  const std::pair<const std::string*, std::shared_ptr<const hearth::scheduler::NgramCache>*>
      files[] = {{&args.lookup_cache_static, &config.spec.lookup_static},
                 {&args.lookup_cache_dynamic, &config.spec.lookup_dynamic}};
  for (const auto& [path, table] : files) {
    if (path->empty()) continue;
    if (!config.spec.ngram_cache) {
      hearth::log_warn("'{}' is not read: lookup caches are used by --spec-type ngram-cache",
                       *path);
      continue;
    }
    auto loaded = hearth::scheduler::load_ngram_cache(*path);
    if (!loaded) {
      hearth::log_error("failed to load the lookup cache: {}", loaded.status().message());
      return false;
    }
    *table = std::make_shared<const hearth::scheduler::NgramCache>(std::move(*loaded));
  }
  return true;
}

bool has_windowed_layers(const hearth::engine::Model& model) {
  for (int32_t il = 0; il < model.hparams().n_layer; ++il)
    if (model.attention_window(il) > 0) return true;
  return false;
}

// -mm (unless --no-mmproj): the projector, sized against the text model's width, and the
// options' image token bounds. False after logging the reason.
bool load_projector(const ServerArgs& args, const hearth::engine::Model& model,
                    hearth::scheduler::SchedulerConfig& config) {
  if (args.mmproj.empty()) return true;
  if (!args.mmproj_auto) {
    hearth::log_info("--no-mmproj: the projector '{}' is not loaded", args.mmproj);
    return true;
  }
  auto file = hearth::media::open_clip_file(args.mmproj);
  if (!file) {
    hearth::log_error("failed to load the multimodal projector '{}': {}", args.mmproj,
                      file.status().message());
    return false;
  }
  // The projector's rows are the text model's input width (deepstack models: wider than n_embd).
  const int32_t n_embd = model.hparams().n_embd_inp();
  if (file->has_vision) {
    auto projector = hearth::media::Projector::load(args.mmproj, n_embd, load_options(args));
    if (!projector) {
      hearth::log_error("failed to load the multimodal projector '{}': {}", args.mmproj,
                        projector.status().message());
      return false;
    }
    hearth::log_info("loaded the vision projector '{}' ({}): images are taken", args.mmproj,
                     (*projector)->projector_type());
    config.media.projector = std::move(*projector);
  }
  if (file->has_audio) {
    auto audio = hearth::media::AudioProjector::load(args.mmproj, n_embd, load_options(args));
    if (!audio) {
      hearth::log_error("failed to load the audio projector '{}': {}", args.mmproj,
                        audio.status().message());
      return false;
    }
    hearth::log_info("loaded the audio projector '{}' ({}): audio is taken", args.mmproj,
                     (*audio)->projector_type());
    config.media.audio_projector = std::move(*audio);
  }
  config.media.image_min_tokens = args.image_min_tokens;
  config.media.image_max_tokens = args.image_max_tokens;
  return true;
}

// Loads the model and starts the scheduler; the server then leaves its loading state.
bool load_and_start(ServerArgs args, hearth::hub::DownloadProgress& progress,
                    hearth::server::Server& server) {
  if (!fetch_models(args, progress, server)) return false;
  const std::string& model_path = args.model_path;
  auto model = hearth::models::load_model(model_path, load_options(args));
  if (!model) {
    hearth::log_error("failed to load model '{}': {}", model_path, model.status().message());
    return false;
  }
  auto tok = hearth::tokenizer::Tokenizer::from_gguf((*model)->metadata());
  if (!tok) {
    hearth::log_error("failed to load the vocabulary: {}", tok.status().message());
    return false;
  }
  auto shared_tok = std::make_shared<const hearth::tokenizer::Tokenizer>(std::move(*tok));
  hearth::server::ModelInfo info = hearth::server_tool::describe_model(**model, *shared_tok);
  auto templates = hearth::server_tool::load_model_chat_templates(args, **model, *shared_tok);
  if (!templates) {
    hearth::log_error("failed to load the chat template: {}", templates.status().message());
    return false;
  }
  info.chat_templates = std::move(*templates);
  hearth::server::RequestDefaults defaults = server.defaults();
  hearth::server_tool::apply_model_defaults(args, (*model)->metadata(), *shared_tok, defaults);
  server.set_defaults(std::move(defaults));
  const int32_t n_ctx_slot = slot_context(args, info.n_ctx_train);
  if (args.swa_full && !has_windowed_layers(**model))
    hearth::log_warn("--swa-full has no effect: the model has no sliding-window layers");
  hearth::scheduler::SchedulerConfig config =
      scheduler_config(args, n_ctx_slot, (*model)->hparams().pooling);
  if (!load_draft_model(args, config) || !load_lookup_caches(args, config) ||
      !load_projector(args, **model, config)) {
    return false;
  }
  auto scheduler = hearth::scheduler::Scheduler::create(*model, shared_tok, config);
  if (!scheduler) {
    hearth::log_error("failed to create the scheduler: {}", scheduler.status().message());
    return false;
  }
  std::shared_ptr<hearth::scheduler::Scheduler> running = std::move(*scheduler);
  running->start();
  server.set_ready(std::move(running), std::move(info));
  return true;
}

// The connection limit follows the descriptor limit: take the hard limit, as servers do,
// so thousands of clients fit.
void raise_descriptor_limit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  if (setrlimit(RLIMIT_NOFILE, &limit) != 0) {
    hearth::log_warn("could not raise the open-file limit to {}", limit.rlim_max);
  }
}

int serve(const ServerArgs& args) {
  if (args.model_path.empty() && args.hf_repo.empty() && args.model_url.empty()) {
    hearth::log_error(
        "no model given: hearth-server needs -m, -hf or -mu (router mode is not supported)");
    return 1;
  }
  if (std::error_code ec;
      !args.ui.static_path.empty() && !std::filesystem::is_directory(args.ui.static_path, ec)) {
    hearth::log_error("static assets path not found: {}", args.ui.static_path);
    return 1;
  }
  if (!args.hf_file.empty() && args.hf_repo.empty()) {
    hearth::log_error("-hff names a file of the -hf repository: give -hf too");
    return 1;
  }
  // A CPU mask the process cannot run on is refused before anything is loaded.
  if (auto st =
          hearth::scheduler::check_cpu_masks(args, hearth::scheduler::CpuEnvironment::current());
      !st.is_ok()) {
    hearth::log_error("{}", st.message());
    return 1;
  }
  // SIGINT/SIGTERM are taken by a waiting thread rather than a handler, so shutdown runs as
  // ordinary code. Block them before any thread starts so every thread inherits the mask.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  raise_descriptor_limit();
  if (args.embeddings && args.n_batch > args.n_ubatch) {
    hearth::log_warn("embeddings need each input in one physical batch: -b lowered from {} to {}",
                     args.n_batch, args.n_ubatch);
  }
  hearth::server::ServerConfig config = make_config(args);
  for (auto apply :
       {hearth::server_tool::apply_vertex_env, hearth::server_tool::apply_stream_env}) {
    if (auto st = apply(config); !st.is_ok()) {
      hearth::log_error("{}", st.message());
      return 1;
    }
  }
  auto progress = std::make_shared<hearth::hub::DownloadProgress>();
  config.loading_progress = download_progress_json(progress);
  if (auto st = hearth::server_tool::json_schema_grammar(args, config.defaults); !st.is_ok()) {
    hearth::log_error("{}", st.message());
    return 1;
  }
  auto server = std::make_unique<hearth::server::Server>(config);
  if (auto st = server->listen(); !st.is_ok()) {
    // kInvalidArgument: the TLS files were refused (the message names the option and file).
    if (st.code() == hearth::ErrorCode::kInvalidArgument) {
      hearth::log_error("{}", st.message());
    } else {
      hearth::log_error("couldn't bind HTTP server socket, hostname: {}, port: {}: {}",
                        args.http.host, config.http.port, st.message());
    }
    return 1;
  }
  std::thread http_thread([&] { server->run(); });
  const bool https = !args.http.ssl_cert_file.empty();
  hearth::log_info("server is listening on {}://{}:{}", https ? "https" : "http", args.http.host,
                   server->port());
  const auto http = server->http_stats();
  hearth::log_info("http: {} I/O threads, at most {} open connections", http.io_threads,
                   http.max_connections);
  std::thread signal_thread([&] {
    int received = 0;
    sigwait(&signals, &received);
    hearth::log_info("received signal {}, shutting down", received);
    g_stop_downloads.store(true);
    server->stop();
  });
  if (!config.ui.serving() && args.ui.enabled && args.ui.static_path.empty())
    hearth::log_warn("this build has no web UI (built with -DHEARTH_WEBUI=OFF)");
  if (!args.ui.enabled && !args.ui.static_path.empty())
    hearth::log_warn("--path has no effect with --no-ui: nothing is served at /");
  // --prio, as the reference's set_process_priority: this thread's nice value, which the
  // scheduler's and the pools' threads started from here on inherit (the HTTP threads,
  // already running, keep theirs). Raising it needs privileges: warn and go on.
  if (auto st = hearth::set_process_priority(args.cpu.priority.value_or(0)); !st.is_ok())
    hearth::log_warn("{}", st.message());
  if (!load_and_start(args, *progress, *server)) {
    // Stopped by a signal while downloading: an ordinary shutdown.
    const bool stopped = g_stop_downloads.load();
    if (!stopped) pthread_kill(signal_thread.native_handle(), SIGTERM);
    signal_thread.join();
    http_thread.join();
    return stopped ? 0 : 1;
  }
  hearth::log_info("model loaded, all slots are idle");
  signal_thread.join();
  http_thread.join();
  return 0;
}

// The log options: level, line format and file; false (after saying why) when the log file
// cannot be opened.
bool configure_logging(const ServerArgs& args) {
  hearth::set_log_level(args.log_disable      ? hearth::LogLevel::kOff
                        : args.verbosity >= 5 ? hearth::LogLevel::kDebug
                        : args.verbosity >= 3 ? hearth::LogLevel::kInfo
                        : args.verbosity >= 2 ? hearth::LogLevel::kWarn
                                              : hearth::LogLevel::kError);
  using hearth::server::options::TriState;
  const bool colors = args.log_colors == TriState::kAuto ? hearth::terminal_wants_colors()
                                                         : args.log_colors == TriState::kOn;
  hearth::set_log_format(
      {.prefix = args.log_prefix, .timestamps = args.log_timestamps, .colors = colors});
  if (!args.log_file.empty()) {
    if (auto st = hearth::set_log_file(args.log_file); !st.is_ok()) {
      std::fprintf(stderr, "error: %s\n", st.message().c_str());
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  hearth::hub::init_http();  // before any thread starts
  // A large request's memory goes back to the system when it is freed.
  hearth::return_large_blocks_when_freed();
  auto outcome =
      hearth::server::options::parse_args(argc, argv, hearth::server::options::process_env());
  using hearth::server::options::ParseAction;
  if (outcome.action == ParseAction::kPrintAndExit) {
    std::fputs(outcome.text.c_str(), stdout);
    return outcome.exit_code;
  }
  if (outcome.action == ParseAction::kError) {
    std::fputs(outcome.text.c_str(), stderr);
    return outcome.exit_code;
  }
  const ServerArgs& args = outcome.args;
  if (!configure_logging(args)) return 1;
  for (const std::string& warning : outcome.warnings) hearth::log_warn("{}", warning);
  if (!hearth::server_tool::verify_chat_template_option(args)) return 1;
  return serve(args);
}

#include "server_config.h"

#include <algorithm>
#include <cstdlib>
#include <random>
#include <string>
#include <string_view>

#include "hub/media_fetch.h"
#include "scheduler/scheduler.h"
#include "server/options/parse_args.h"
#include "version/version.h"
#include "webui/embedded_assets.h"

namespace hearth::server_tool {

using server::options::ServerArgs;

namespace {

// LLAMA_MEDIA_MARKER pins the marker (reproducible prompts), as in the reference.
std::string random_media_marker() {
  if (const char* pinned = std::getenv("LLAMA_MEDIA_MARKER"); pinned != nullptr && *pinned) {
    return pinned;
  }
  static const char kChars[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
  std::random_device device;
  std::mt19937 rng(device());
  std::uniform_int_distribution<int> pick(0, 61);
  std::string marker = "<__media_";
  for (int i = 0; i < 32; ++i) marker += kChars[pick(rng)];
  return marker + "__>";
}

// --rerank: embeddings with rank pooling given on the command line.
bool reranking(const ServerArgs& args) {
  return args.embeddings && args.pooling == static_cast<int32_t>(scheduler::PoolingType::kRank);
}

// The reasoning_format requests echo: "auto" is echoed as the format it resolves to.
std::string reasoning_format_echo(const std::string& format) {
  return format == "auto" ? "deepseek" : format;
}

}  // namespace

int32_t logical_batch(const ServerArgs& args) {
  return args.embeddings ? std::min(args.n_batch, args.n_ubatch) : args.n_batch;
}

int32_t slot_context(const ServerArgs& args, int32_t n_ctx_train) {
  const int32_t n_ctx = args.n_ctx > 0 ? args.n_ctx : n_ctx_train;
  const int32_t n_slots = server::options::resolved_n_slots(args);
  int32_t per_slot = n_ctx;
  if (!server::options::resolved_kv_unified(args)) {
    per_slot = (n_ctx / n_slots + 255) / 256 * 256;
  }
  return n_ctx_train > 0 ? std::min(per_slot, n_ctx_train) : per_slot;
}

namespace {

// http(s):// and file:// media URLs through the hub's fetcher: --media-path for files, and
// no addresses of the server's own network unless HEARTH_MEDIA_ALLOW_PRIVATE_URLS=1 (a
// Hearth setting: the reference fetches any address).
server::MediaUrlFetcher media_fetcher(const ServerArgs& args) {
  hub::MediaFetchSettings settings;
  settings.media_path = args.media_path;
  const char* allow = std::getenv("HEARTH_MEDIA_ALLOW_PRIVATE_URLS");
  settings.allow_private_urls = allow != nullptr && std::string_view(allow) == "1";
  return [settings](std::string_view url) { return hub::fetch_media_url(url, settings); };
}

}  // namespace

server::ServerConfig make_config(const ServerArgs& args) {
  server::ServerConfig c;
  static_cast<server::ServerSettings&>(c) = args;
  std::sort(c.aliases.begin(), c.aliases.end());
  c.n_batch = logical_batch(args);
  c.reranking = reranking(args);
  c.media_marker = random_media_marker();
  c.fetch_media_url = media_fetcher(args);
  c.build_info = hearth::build_info();
  c.defaults.spec_types = server::options::spec_type_names(args);
  c.defaults.reasoning_format = reasoning_format_echo(args.chat.reasoning_format);
  c.defaults.n_slots = server::options::resolved_n_slots(args);
  c.defaults.verbose = args.verbosity > 9;
  std::sort(c.tags.begin(), c.tags.end());
  c.http.io_threads = args.threads_http > 0 ? args.threads_http : 0;
  c.ui.assets = webui::embedded_assets();
  return c;
}

}  // namespace hearth::server_tool

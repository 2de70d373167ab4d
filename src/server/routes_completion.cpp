// POST /completion, /completions and /infill (native-completion.md §2, §4, §11-§13).
#include <algorithm>
#include <memory>

#include "server/api_error.h"
#include "server/completion_run.h"
#include "server/completion_sink.h"
#include "server/media/media_input.h"
#include "server/prompt_log.h"
#include "server/request_body.h"
#include "server/server_state.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server {

std::optional<ApiError> check_tokens(const tokenizer::Tokenizer& tok,
                                     const std::vector<std::vector<int32_t>>& prompts,
                                     const std::vector<std::vector<scheduler::MediaChunk>>& media) {
  for (size_t p = 0; p < prompts.size(); ++p) {
    const std::vector<int32_t>& prompt = prompts[p];
    // Media positions hold their chunk's placeholder; every other id is the vocabulary's.
    std::vector<bool> is_media(prompt.size(), false);
    if (p < media.size()) {
      for (const scheduler::MediaChunk& c : media[p]) {
        const auto end = std::min(prompt.size(), static_cast<size_t>(c.begin + c.n_tokens));
        for (auto i = static_cast<size_t>(std::max(c.begin, 0)); i < end; ++i) is_media[i] = true;
      }
    }
    for (size_t i = 0; i < prompt.size(); ++i) {
      const int32_t id = prompt[i];
      if (is_media[i]) continue;
      if (id < 0 || id >= tok.n_vocab()) return invalid_request("Prompt contains invalid tokens");
    }
  }
  return std::nullopt;
}

namespace {

// The native prompts with multimodal_data: tokenized around their media, which are encoded.
std::optional<ApiError> place_media_prompts(
    ServerState& s, const CompletionSettings& settings, std::vector<std::vector<int32_t>>& prompts,
    std::vector<std::vector<scheduler::MediaChunk>>& media) {
  const scheduler::MediaSupport support = s.scheduler->media_support();
  if (!support.vision && !support.audio) {
    return invalid_request(
        "Multimodal data provided, but model does not support multimodal requests.");
  }
  media.resize(prompts.size());
  for (const CompletionSettings::MediaPromptText& entry : settings.media_prompts) {
    MediaPrompt placed;
    if (auto err = build_media_prompt(*s.scheduler, entry.text, s.config.media_marker, entry.files,
                                      nullptr, placed)) {
      return err;
    }
    prompts[entry.index] = std::move(placed.tokens);
    media[entry.index] = std::move(placed.media);
  }
  return std::nullopt;
}

}  // namespace

RequestDefaults request_defaults(const ServerState& s) {
  RequestDefaults defaults = s.config.defaults;
  defaults.n_slots = s.scheduler->config().n_slots;  // the hard limit of n_cmpl
  defaults.max_prompts = s.scheduler->config().max_queued;
  return defaults;
}

http::Response run_completion(ServerState& s, std::shared_ptr<CompletionSettings> settings,
                              std::shared_ptr<ResultFormat> format) {
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  std::vector<std::vector<int32_t>> prompts = std::move(settings->prompts);
  std::vector<std::vector<scheduler::MediaChunk>> media = std::move(settings->prompt_media);
  settings->prompts.clear();
  settings->prompt_media.clear();
  if (!settings->media_prompts.empty()) {
    if (auto err = place_media_prompts(s, *settings, prompts, media)) return error_response(*err);
    settings->media_prompts.clear();
  }
  if (auto err = check_tokens(tok, prompts, media)) return error_response(*err);
  const ResultContext ctx = result_context(s);
  const int32_t n_cmpl = settings->n_cmpl;
  const auto n_results = static_cast<int32_t>(prompts.size()) * n_cmpl;
  auto sink = std::make_shared<CompletionSink>(settings, ctx, n_results, n_cmpl, std::move(format));
  std::vector<scheduler::TaskRequest> tasks(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    scheduler::TaskRequest& task = tasks[i];
    task.prompt = std::move(prompts[i]);
    if (i < media.size()) task.media = std::move(media[i]);
    task.params = settings->task;
    task.id_slot = settings->id_slot;
    task.n_cmpl = n_cmpl;
    task.index = static_cast<int32_t>(i) * n_cmpl;
    task.sink = sink;
    task.echo = settings;
  }
  http::Response response = sink->response();
  if (Status st = s.scheduler->submit_all(std::move(tasks)); !st.is_ok()) {
    sink->cancel();
    return error_response(from_status(st));
  }
  return response;
}

ResultContext result_context(const ServerState& s) {
  return ResultContext{&s.scheduler->tokenizer(), s.config.model_name(), s.config.special};
}

std::optional<ApiError> parse_native_request(const ServerState& s, const http::Request& r,
                                             std::shared_ptr<CompletionSettings>& out) {
  Json body;
  if (auto err = parse_json_object(r.body, body)) return err;
  // Before the fields are checked, as the reference does: a rejected prompt is logged too.
  if (body.contains("prompt")) write_prompt_log(s.config.prompts_log_dir, body.at("prompt"));
  out = std::make_shared<CompletionSettings>();
  return parse_completion_settings(body, request_defaults(s), s.scheduler->tokenizer(), *out,
                                   fields::kCompletion);
}

http::Response handle_completion(ServerState& s, const http::Request& r) {
  std::shared_ptr<CompletionSettings> settings;
  if (auto err = parse_native_request(s, r, settings)) return error_response(*err);
  return run_completion(s, std::move(settings), nullptr);
}

std::vector<int32_t> build_infill_prompt(const ServerState& s, const InfillInputs& in);

http::Response handle_infill(ServerState& s, const http::Request& r) {
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  std::string missing;
  if (tok.fim_pre() < 0) missing += "prefix token is missing. ";
  if (tok.fim_suf() < 0) missing += "suffix token is missing. ";
  if (tok.fim_mid() < 0) missing += "middle token is missing. ";
  if (!missing.empty()) {
    return error_response(
        {ErrorType::kNotSupported, "Infill is not supported by this model: " + missing});
  }
  Json body;
  if (auto err = parse_json_object(r.body, body)) return error_response(*err);
  auto settings = std::make_shared<CompletionSettings>();
  if (auto err =
          parse_completion_settings(body, request_defaults(s), tok, *settings, fields::kInfill)) {
    return error_response(*err);
  }
  settings->prompts = {build_infill_prompt(s, settings->infill)};
  write_prompt_log(s.config.prompts_log_dir, Json(settings->prompts.front()));
  return run_completion(s, std::move(settings), nullptr);
}

}  // namespace hearth::server

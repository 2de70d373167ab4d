// POST /completion, /completions and /infill (native-completion.md §2, §4, §11-§13).
#include <memory>
#include <stdexcept>

#include "server/api_error.h"
#include "server/completion_sink.h"
#include "server/prompt_forms.h"
#include "server/server_state.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server {

namespace {

std::optional<ApiError> check_tokens(const tokenizer::Tokenizer& tok,
                                     const std::vector<std::vector<int32_t>>& prompts) {
  for (const auto& prompt : prompts) {
    for (int32_t id : prompt) {
      if (id < 0 || id >= tok.n_vocab()) return invalid_request("Prompt contains invalid tokens");
    }
  }
  return std::nullopt;
}

// Reads the request's fields, submits every prompt (each n_cmpl times) and answers,
// streaming or not.
http::Response run_completion(ServerState& s, const Json& body,
                              std::vector<std::vector<int32_t>> prompts) {
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  auto settings = std::make_shared<CompletionSettings>();
  RequestDefaults defaults = s.config.defaults;
  defaults.n_slots = s.scheduler->config().n_slots;  // the hard limit of n_cmpl
  if (auto err = parse_completion_settings(body, defaults, tok, *settings)) {
    return error_response(*err);
  }
  if (auto err = check_tokens(tok, prompts)) return error_response(*err);
  ResultContext ctx{&tok, s.config.model_name(), s.config.special};
  const int32_t n_cmpl = settings->n_cmpl;
  const auto n_results = static_cast<int32_t>(prompts.size()) * n_cmpl;
  auto sink = std::make_shared<CompletionSink>(settings, ctx, n_results, n_cmpl);
  std::vector<scheduler::TaskRequest> tasks(prompts.size());
  for (size_t i = 0; i < prompts.size(); ++i) {
    scheduler::TaskRequest& task = tasks[i];
    task.prompt = std::move(prompts[i]);
    task.params = settings->task;
    task.id_slot = settings->id_slot;
    task.n_cmpl = n_cmpl;
    task.index = static_cast<int32_t>(i) * n_cmpl;
    task.sink = sink;
    task.echo = settings;
  }
  if (Status st = s.scheduler->submit_all(std::move(tasks)); !st.is_ok()) {
    sink->cancel();
    return error_response(from_status(st));
  }
  return sink->response();
}

}  // namespace

http::Response handle_completion(ServerState& s, const http::Request& r) {
  const Json body = Json::parse(r.body);  // not JSON: 500 with the parser's message
  if (!body.is_object() || !body.contains("prompt")) {
    return error_response(
        invalid_request("[json.exception.out_of_range.403] key 'prompt' not found"));
  }
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  std::vector<std::vector<int32_t>> prompts;
  if (auto err = parse_prompts(tok, body["prompt"], prompts)) return error_response(*err);
  return run_completion(s, body, std::move(prompts));
}

std::optional<ApiError> build_infill_prompt(const ServerState& s, const Json& body,
                                            std::vector<int32_t>& out);

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
  const Json body = Json::parse(r.body);
  std::vector<int32_t> prompt;
  if (auto err = build_infill_prompt(s, body, prompt)) return error_response(*err);
  std::vector<std::vector<int32_t>> prompts{std::move(prompt)};
  return run_completion(s, body, std::move(prompts));
}

}  // namespace hearth::server

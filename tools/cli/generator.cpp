#include "tools/cli/generator.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/timer.h"
#include "scheduler/stop_funnel.h"

namespace hearth::cli {
namespace {

Status evaluate_prompt(engine::Context& ctx, const std::vector<int32_t>& prompt,
                       engine::SeqId seq) {
  engine::Batch batch;
  for (size_t i = 0; i < prompt.size(); ++i)
    batch.add(prompt[i], static_cast<int32_t>(i), seq, i + 1 == prompt.size());
  return ctx.decode(batch);
}

}  // namespace

Result<GenerationResult> generate(engine::Context& ctx, const tokenizer::Tokenizer& tok,
                                  const GenerationRequest& req, const TextSink& on_text) {
  constexpr engine::SeqId kSeq = 0;
  const int32_t n_ctx = req.n_ctx > 0 ? req.n_ctx : ctx.params().n_ctx;
  GenerationResult res;
  res.n_prompt = static_cast<int32_t>(req.prompt.size());
  if (req.prompt.empty()) return res;
  if (res.n_prompt >= n_ctx)
    return error(ErrorCode::kOutOfRange,
                 fmt::format("request ({} tokens) exceeds the available context size ({} tokens), "
                             "try increasing it",
                             res.n_prompt, n_ctx));
  ctx.kv_cache().clear(kSeq);
  const int64_t t_start = now_us();
  HEARTH_RETURN_IF_ERROR(evaluate_prompt(ctx, req.prompt, kSeq));
  const int64_t t_prompt = now_us();
  sampling::Chain chain = sampling::make_basic_chain(req.sampling);
  for (int32_t t : req.prompt) chain.accept(t);
  const int32_t budget = req.n_predict < 0 ? -1 : std::max(1, req.n_predict);
  // Stop strings and the UTF-8 hold-back go through the scheduler's funnel, as the server's.
  scheduler::StopFunnel funnel(req.stop);
  int32_t last = static_cast<int32_t>(req.prompt.size()) - 1;  // batch index holding the logits
  for (;;) {
    HEARTH_ASSIGN_OR_RETURN(const int32_t token, chain.sample(ctx.logits(last)));
    chain.accept(token);
    res.tokens.push_back(token);
    ++res.n_predicted;
    const bool eog = tok.is_eog(token);
    const std::string piece = eog ? std::string() : tok.token_to_piece(token, /*special=*/false);
    const scheduler::FunnelStep step = funnel.push(piece, /*may_continue=*/!eog);
    bool stop = false;
    if (step.matched) {
      res.stop_type = "word";
      res.stopping_word = funnel.stopping_word();
      stop = true;
    }
    if (res.n_prompt + res.n_predicted >= n_ctx) {
      res.stop_type = res.stop_type == "word" ? res.stop_type : "limit";
      res.truncated = true;
      stop = true;
    }
    if (!stop && budget >= 0 && res.n_predicted >= budget) {
      res.stop_type = "limit";
      stop = true;
    }
    if (eog) {
      res.stop_type = "eos";
      stop = true;
    }
    if (on_text && !step.released.empty()) on_text(step.released);
    if (stop) break;
    engine::Batch next;
    next.add(token, ctx.kv_cache().length(kSeq), kSeq, true);
    HEARTH_RETURN_IF_ERROR(ctx.decode(next));
    last = 0;
  }
  // Text the funnel still held back (a possible stop-string start, a partial character) is
  // final once generation ends; the CLI prints all of its content.
  const std::string& text = funnel.text();
  if (on_text && funnel.n_released() < text.size()) {
    on_text(std::string_view(text).substr(funnel.n_released()));
  }
  const int64_t t_end = now_us();
  res.content = text;
  res.prompt_ms = static_cast<double>(t_prompt - t_start) / 1000.0;
  res.predicted_ms = static_cast<double>(t_end - t_prompt) / 1000.0;
  return res;
}

}  // namespace hearth::cli

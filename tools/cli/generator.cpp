#include "tools/cli/generator.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/timer.h"

namespace hearth::cli {
namespace {

// Earliest occurrence of any stop string in `text` at or after `from`.
bool find_stop(std::string_view text, size_t from, const std::vector<std::string>& stop,
               size_t& pos, std::string& word) {
  bool found = false;
  for (const auto& s : stop) {
    if (s.empty()) continue;
    const size_t p = text.find(s, from);
    if (p != std::string_view::npos && (!found || p < pos)) {
      found = true;
      pos = p;
      word = s;
    }
  }
  return found;
}

Status evaluate_prompt(engine::Context& ctx, const std::vector<int32_t>& prompt,
                       engine::SeqId seq) {
  engine::Batch batch;
  for (size_t i = 0; i < prompt.size(); ++i)
    batch.add(prompt[i], static_cast<int32_t>(i), seq, i + 1 == prompt.size());
  return ctx.decode(batch);
}

}  // namespace

size_t stop_prefix_overlap(std::string_view text, const std::vector<std::string>& stop) {
  size_t best = 0;
  for (const auto& s : stop) {
    for (size_t len = std::min(s.size() - (s.empty() ? 0 : 1), text.size()); len > best; --len) {
      if (text.substr(text.size() - len) == std::string_view(s).substr(0, len)) {
        best = len;
        break;
      }
    }
  }
  return best;
}

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
  size_t max_stop = 1;
  for (const auto& s : req.stop) max_stop = std::max(max_stop, s.size());
  std::string text;    // generated text so far (stop string cut applied at the end)
  size_t emitted = 0;  // bytes of `text` already handed to on_text
  int32_t last = static_cast<int32_t>(req.prompt.size()) - 1;  // batch index holding the logits
  for (;;) {
    HEARTH_ASSIGN_OR_RETURN(const int32_t token, chain.sample(ctx.logits(last)));
    chain.accept(token);
    res.tokens.push_back(token);
    ++res.n_predicted;
    const bool eog = tok.is_eog(token);
    // A match must end inside the new piece, so it starts at most max_stop-1 bytes earlier.
    const size_t search_from = text.size() >= max_stop ? text.size() - max_stop + 1 : 0;
    if (!eog) text += tok.token_to_piece(token, /*special=*/false);
    bool stop = false;
    size_t cut = 0;
    if (find_stop(text, search_from, req.stop, cut, res.stopping_word)) {
      text.resize(cut);
      res.stop_type = "word";
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
    if (on_text) {
      size_t ready = text.size();
      if (!stop)
        ready = std::min(ready - stop_prefix_overlap(text, req.stop),
                         tokenizer::complete_utf8_prefix(text));
      if (ready > emitted) on_text(std::string_view(text).substr(emitted, ready - emitted));
      emitted = std::max(emitted, ready);
    }
    if (stop) break;
    engine::Batch next;
    next.add(token, ctx.kv_cache().length(kSeq), kSeq, true);
    HEARTH_RETURN_IF_ERROR(ctx.decode(next));
    last = 0;
  }
  const int64_t t_end = now_us();
  res.content = std::move(text);
  res.prompt_ms = static_cast<double>(t_prompt - t_start) / 1000.0;
  res.predicted_ms = static_cast<double>(t_end - t_prompt) / 1000.0;
  return res;
}

}  // namespace hearth::cli

#include "server/completion_json.h"

#include <cfloat>
#include <cmath>

#include "tokenizer/tokenizer.h"

namespace hearth::server {

Json timings_json(const scheduler::Timings& t) {
  Json j = Json::object();
  j["cache_n"] = t.cache_n;
  j["prompt_n"] = t.prompt_n;
  j["prompt_ms"] = t.prompt_ms;
  j["prompt_per_token_ms"] = t.prompt_n > 0 ? t.prompt_ms / t.prompt_n : 0.0;
  j["prompt_per_second"] = t.prompt_ms > 0 ? 1e3 / t.prompt_ms * t.prompt_n : 0.0;
  j["predicted_n"] = t.predicted_n;
  j["predicted_ms"] = t.predicted_ms;
  const int32_t steps = t.predicted_n - 1;  // the first token comes from the prompt pass
  j["predicted_per_token_ms"] = steps > 0 ? t.predicted_ms / steps : 0.0;
  j["predicted_per_second"] = t.predicted_ms > 0 ? 1e3 / t.predicted_ms * steps : 0.0;
  // As the reference: only for a request that drafted.
  if (t.draft_n > 0) {
    j["draft_n"] = t.draft_n;
    j["draft_n_accepted"] = t.draft_n_accepted;
  }
  return j;
}

std::string tokens_to_text(const tokenizer::Tokenizer& tok, const std::vector<int32_t>& tokens) {
  std::string text;
  for (int32_t id : tokens) {
    if (!scheduler::is_media_placeholder(id)) text += tok.token_to_piece(id, true);
  }
  return text;
}

namespace {

Json bytes_json(const std::string& text) {
  Json bytes = Json::array();
  for (unsigned char c : text) bytes.push_back(static_cast<int>(c));
  return bytes;
}

std::string valid_prefix(const std::string& text) {
  return text.substr(0, tokenizer::complete_utf8_prefix(text));
}

void add_probability(Json& entry, float p, bool post) {
  if (post) {
    entry["prob"] = static_cast<double>(p);
  } else {
    // ln(0) is reported as the lowest float rather than -inf (JSON has no infinity).
    const float logprob = p > 0.0f ? std::log(p) : -FLT_MAX;
    entry["logprob"] = static_cast<double>(logprob);
  }
}

}  // namespace

Json probs_json(const scheduler::TokenProbs& probs, bool post, const ResultContext& ctx) {
  Json entry = Json::object();
  entry["id"] = probs.id;
  entry["token"] = valid_prefix(probs.text);
  entry["bytes"] = bytes_json(probs.text);
  add_probability(entry, probs.p, post);
  Json top = Json::array();
  for (const scheduler::TokenCandidate& c : probs.top) {
    const std::string piece = ctx.tok->token_to_piece(c.id, ctx.special);
    Json cand = Json::object();
    cand["id"] = c.id;
    cand["token"] = valid_prefix(piece);
    cand["bytes"] = bytes_json(piece);
    add_probability(cand, c.p, post);
    top.push_back(std::move(cand));
  }
  entry[post ? "top_probs" : "top_logprobs"] = std::move(top);
  return entry;
}

Json final_json(const scheduler::FinalResult& r, const CompletionSettings& settings,
                const ResultContext& ctx, bool stream_final) {
  Json j = Json::object();
  j["index"] = r.index;
  j["content"] = stream_final ? std::string() : r.content;
  j["tokens"] = (settings.return_tokens && !stream_final) ? Json(r.generated) : Json::array();
  j["id_slot"] = r.id_slot;
  j["stop"] = true;
  j["model"] = ctx.model_name;
  j["tokens_predicted"] = r.n_predicted;
  j["tokens_evaluated"] = r.n_evaluated;
  Json gs = generation_settings_json(settings, true);
  gs["seed"] = r.seed;
  j["generation_settings"] = std::move(gs);
  j["prompt"] = tokens_to_text(*ctx.tok, r.prompt);
  j["has_new_line"] = r.has_new_line;
  j["truncated"] = r.truncated;
  j["stop_type"] = scheduler::stop_type_name(r.stop_type);
  j["stopping_word"] = r.stopping_word;
  j["tokens_cached"] = r.n_cached;
  j["timings"] = timings_json(r.timings);
  if (settings.task.n_probs > 0 && !stream_final) {
    Json probs = Json::array();
    for (const scheduler::TokenProbs& p : r.probs) {
      probs.push_back(probs_json(p, settings.task.post_sampling_probs, ctx));
    }
    j["completion_probabilities"] = std::move(probs);
  }
  if (settings.response_fields) return project_fields(j, *settings.response_fields);
  return j;
}

Json partial_json(const scheduler::PartialResult& p, const CompletionSettings& settings,
                  const ResultContext& ctx) {
  Json j = Json::object();
  j["index"] = p.index;
  j["content"] = p.content;
  j["tokens"] = Json::array({p.token});
  j["stop"] = false;
  j["id_slot"] = -1;
  j["tokens_predicted"] = p.n_predicted;
  j["tokens_evaluated"] = p.n_evaluated;
  if (settings.timings_per_token || p.after_stop) j["timings"] = timings_json(p.timings);
  if (settings.task.n_probs > 0 && p.probs) {
    j["completion_probabilities"] =
        Json::array({probs_json(*p.probs, settings.task.post_sampling_probs, ctx)});
  }
  return j;
}

Json prompt_progress_json(const scheduler::ProgressInfo& progress) {
  Json pp = Json::object();
  pp["total"] = progress.total;
  pp["cache"] = progress.cache;
  pp["processed"] = progress.processed;
  pp["time_ms"] = progress.time_ms;
  return pp;
}

Json progress_json(int32_t index, const scheduler::ProgressInfo& progress,
                   const CompletionSettings& settings) {
  Json j = Json::object();
  j["index"] = index;
  j["content"] = "";
  j["tokens"] = Json::array({0});
  j["stop"] = false;
  j["id_slot"] = -1;
  j["tokens_predicted"] = 0;
  j["tokens_evaluated"] = progress.total;
  if (settings.timings_per_token) j["timings"] = timings_json(progress.timings);
  j["prompt_progress"] = prompt_progress_json(progress);
  return j;
}

Json project_fields(const Json& result, const std::vector<std::string>& paths) {
  Json out = Json::object();
  for (const std::string& path : paths) {
    const Json* node = &result;
    bool found = !path.empty();
    size_t start = 0;
    while (found && start <= path.size()) {
      const size_t slash = path.find('/', start);
      const std::string key =
          path.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
      if (!node->is_object() || !node->contains(key)) {
        found = false;
        break;
      }
      node = &(*node)[key];
      if (slash == std::string::npos) break;
      start = slash + 1;
    }
    if (found) out[path] = *node;
  }
  return out;
}

}  // namespace hearth::server

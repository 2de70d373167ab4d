#include "sampling/grammar_sampler.h"

#include <algorithm>
#include <limits>

#include "sampling/trigger_patterns.h"

namespace hearth::sampling {

Result<std::unique_ptr<GrammarSampler>> GrammarSampler::create(
    const GrammarConfig& config, std::shared_ptr<const grammar::TokenTable> tokens,
    const VocabView& vocab) {
  if (!config.grammar) return error(ErrorCode::kInvalidArgument, "no grammar");
  auto patterns = TriggerPatterns::create(config.trigger_patterns);
  if (!patterns.is_ok()) return patterns.status();
  std::unique_ptr<GrammarSampler> sampler(
      new GrammarSampler(grammar::Matcher(config.grammar, std::move(tokens)), config, vocab));
  sampler->patterns_ = std::move(patterns.value());
  // A grammar too large for the matcher (thousands of alternatives at its start) allows
  // no token at all: say so now rather than at the first step.
  if (Status st = sampler->matcher_.status(); !st.is_ok()) {
    return error(ErrorCode::kInvalidArgument,
                 "the grammar (the request's grammar, json_schema or response_format) is too "
                 "large for the matcher: " +
                     st.message());
  }
  if (!config.prefill.empty() && !config.lazy) {
    Status st = sampler->matcher_.accept_text(config.prefill);
    if (!st.is_ok()) {
      return error(ErrorCode::kInvalidArgument,
                   "the text being continued does not match the grammar: " + st.message());
    }
  }
  return sampler;
}

GrammarSampler::GrammarSampler(grammar::Matcher matcher, const GrammarConfig& config,
                               const VocabView& vocab)
    : matcher_(std::move(matcher)),
      vocab_(vocab),
      trigger_tokens_(config.trigger_tokens),
      awaiting_trigger_(config.lazy),
      lazy_(config.lazy),
      after_reasoning_(config.after_reasoning) {}

GrammarSampler::~GrammarSampler() = default;

bool GrammarSampler::allows(int32_t token) const {
  return awaiting_trigger_ || matcher_.allows(token);
}

void GrammarSampler::apply(Candidates& candidates) const {
  if (awaiting_trigger_) return;
  std::vector<int32_t> ids(candidates.size());
  for (size_t i = 0; i < candidates.size(); ++i) ids[i] = candidates[i].id;
  std::vector<uint8_t> allowed(ids.size(), 0);
  matcher_.allowed(ids, allowed);
  for (size_t i = 0; i < candidates.size(); ++i) {
    if (!allowed[i]) candidates[i].logit = -std::numeric_limits<float>::infinity();
  }
}

Status GrammarSampler::accept(int32_t token) {
  if (awaiting_trigger_) return accept_awaiting(token);
  return matcher_.accept(token);
}

// The reference keeps the byte span of every buffered token and replays the tokens that
// overlap the trigger position; replaying the text from that position is the same input
// for a character grammar.
Status GrammarSampler::accept_awaiting(int32_t token) {
  if (std::find(trigger_tokens_.begin(), trigger_tokens_.end(), token) != trigger_tokens_.end()) {
    awaiting_trigger_ = false;
    buffer_.clear();
    return matcher_.accept(token);
  }
  buffer_ += vocab_.piece(token);
  if (patterns_->empty()) return Status::ok();
  auto found = patterns_->find(buffer_);
  if (!found.is_ok()) return found.status();
  if (!found->has_value()) return Status::ok();
  const std::string constrained = buffer_.substr(**found);
  awaiting_trigger_ = false;
  buffer_.clear();
  return matcher_.accept_text(constrained);
}

}  // namespace hearth::sampling

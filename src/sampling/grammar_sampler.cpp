#include "sampling/grammar_sampler.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <algorithm>
#include <limits>

namespace hearth::sampling {

namespace {

struct CodeDeleter {
  void operator()(pcre2_code* code) const { pcre2_code_free(code); }
};
using Code = std::unique_ptr<pcre2_code, CodeDeleter>;

Result<Code> compile_pattern(const std::string& pattern) {
  int error_code = 0;
  PCRE2_SIZE offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF, &error_code, &offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error_code, message, sizeof(message));
    return error(ErrorCode::kInvalidArgument, "invalid grammar trigger pattern '" + pattern +
                                                  "' at offset " + std::to_string(offset) + ": " +
                                                  reinterpret_cast<const char*>(message));
  }
  return Code(code);
}

}  // namespace

// A client's pattern may backtrack catastrophically; PCRE2 gives up after this many steps
// (the trigger then simply does not fire for that token).
constexpr uint32_t kMatchLimit = 1000000;

struct GrammarSampler::Patterns {
  std::vector<Code> codes;
  pcre2_match_context* context = nullptr;
  Patterns() : context(pcre2_match_context_create(nullptr)) {
    pcre2_set_match_limit(context, kMatchLimit);
  }
  ~Patterns() { pcre2_match_context_free(context); }
  Patterns(const Patterns&) = delete;
  Patterns& operator=(const Patterns&) = delete;
};

Status check_trigger_patterns(const std::vector<std::string>& patterns) {
  for (const std::string& p : patterns) {
    auto code = compile_pattern(p);
    if (!code.is_ok()) return code.status();
  }
  return Status::ok();
}

Result<std::unique_ptr<GrammarSampler>> GrammarSampler::create(
    const GrammarConfig& config, std::shared_ptr<const grammar::TokenTable> tokens,
    const VocabView& vocab) {
  if (!config.grammar) return error(ErrorCode::kInvalidArgument, "no grammar");
  auto patterns = std::make_unique<Patterns>();
  for (const std::string& p : config.trigger_patterns) {
    auto code = compile_pattern(p);
    if (!code.is_ok()) return code.status();
    patterns->codes.push_back(std::move(code.value()));
  }
  std::unique_ptr<GrammarSampler> sampler(
      new GrammarSampler(grammar::Matcher(config.grammar, std::move(tokens)), config, vocab));
  sampler->patterns_ = std::move(patterns);
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
  for (const Code& code : patterns_->codes) {
    pcre2_match_data* data = pcre2_match_data_create_from_pattern(code.get(), nullptr);
    const int rc = pcre2_match(code.get(), reinterpret_cast<PCRE2_SPTR>(buffer_.data()),
                               buffer_.size(), 0, 0, data, patterns_->context);
    if (rc < 0) {
      pcre2_match_data_free(data);
      continue;
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data);
    size_t start = ovector[0];
    // The constrained text starts at the first non-empty capture group, if any.
    for (int g = 1; g < rc; ++g) {
      if (ovector[2 * g] != PCRE2_UNSET && ovector[2 * g + 1] > ovector[2 * g]) {
        start = ovector[2 * g];
        break;
      }
    }
    pcre2_match_data_free(data);
    const std::string constrained = buffer_.substr(start);
    awaiting_trigger_ = false;
    buffer_.clear();
    return matcher_.accept_text(constrained);
  }
  return Status::ok();
}

}  // namespace hearth::sampling

// Fill-in-the-middle prompt assembly for POST /infill (native-completion.md §13.2).
#include <algorithm>

#include "server/fields/completion_fields.h"
#include "server/server_state.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server {

namespace {

using Tokens = std::vector<int32_t>;

void append(Tokens& to, const Tokens& from) {
  to.insert(to.end(), from.begin(), from.end());
}

Tokens last_n(const Tokens& t, int64_t n) {
  n = std::clamp<int64_t>(n, 0, static_cast<int64_t>(t.size()));
  return Tokens(t.end() - n, t.end());
}

Tokens first_n(const Tokens& t, int64_t n) {
  n = std::clamp<int64_t>(n, 0, static_cast<int64_t>(t.size()));
  return Tokens(t.begin(), t.begin() + n);
}

Tokens extra_block(const tokenizer::Tokenizer& tok, const InfillInputs& in) {
  auto plain = [&](const std::string& text) { return tok.tokenize(text, false, false); };
  Tokens x;
  if (tok.fim_rep() >= 0) {
    x.push_back(tok.fim_rep());
    append(x, plain("myproject\n"));
  }
  for (const auto& [filename, text] : in.extra) {
    if (tok.fim_sep() >= 0) {
      x.push_back(tok.fim_sep());
      append(x, plain(filename + "\n"));
    } else {
      append(x, plain("\n\n--- snippet ---\n\n"));
    }
    append(x, plain(text));
  }
  if (tok.fim_sep() >= 0) {
    x.push_back(tok.fim_sep());
    append(x, plain("filename\n"));
  }
  return x;
}

}  // namespace

std::vector<int32_t> build_infill_prompt(const ServerState& s, const InfillInputs& in) {
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  const Tokens x = extra_block(tok, in);
  const Tokens& pre = in.prefix;
  const Tokens& suf = in.suffix;
  const Tokens& pr = in.prompt;
  const int64_t n_batch = s.config.n_batch;
  const int64_t n_ctx = s.scheduler->config().n_ctx_slot;
  const int64_t n_predict = s.config.defaults.n_predict;
  const Tokens pre_kept = last_n(pre, std::min<int64_t>(pre.size(), 3 * (n_batch / 4)));
  const Tokens suf_kept =
      first_n(suf, std::max<int64_t>(0, n_batch / 4 - (2 + static_cast<int64_t>(pr.size()))));
  const Tokens x_kept = last_n(x, std::max<int64_t>(0, n_ctx - n_batch - 2 * n_predict));
  Tokens a{tok.fim_pre()};
  append(a, pre_kept);
  append(a, pr);
  Tokens b{tok.fim_suf()};
  append(b, suf_kept);
  Tokens& first = s.config.spm_infill ? b : a;
  Tokens& second = s.config.spm_infill ? a : b;
  if (tok.add_bos() && tok.bos() >= 0) first.insert(first.begin(), tok.bos());
  Tokens out = x_kept;
  append(out, first);
  append(out, second);
  out.push_back(tok.fim_mid());
  return out;
}

}  // namespace hearth::server

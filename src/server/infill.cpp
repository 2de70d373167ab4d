// Fill-in-the-middle prompt assembly for POST /infill (native-completion.md §13.2).
#include <algorithm>

#include "server/api_error.h"
#include "server/prompt_forms.h"
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

std::optional<ApiError> extra_block(const tokenizer::Tokenizer& tok, const Json& body, Tokens& x) {
  auto plain = [&](const std::string& text) { return tok.tokenize(text, false, false); };
  if (tok.fim_rep() >= 0) {
    x.push_back(tok.fim_rep());
    append(x, plain("myproject\n"));
  }
  auto extra = body.find("input_extra");
  if (extra != body.end() && !extra->is_null()) {
    if (!extra->is_array()) {
      return invalid_request(
          "\"input_extra\" must be an array of {\"filename\": string, \"text\": string}");
    }
    for (const Json& chunk : *extra) {
      if (!chunk.is_object() || !chunk.contains("text") || !chunk["text"].is_string()) {
        return invalid_request(
            "extra_context chunk must contain a \"text\" field with a string value");
      }
      std::string filename = "tmp";
      if (chunk.contains("filename")) {
        if (!chunk["filename"].is_string()) {
          return invalid_request("extra_context chunk's \"filename\" field must be a string");
        }
        filename = chunk["filename"].get<std::string>();
      }
      if (tok.fim_sep() >= 0) {
        x.push_back(tok.fim_sep());
        append(x, plain(filename + "\n"));
      } else {
        append(x, plain("\n\n--- snippet ---\n\n"));
      }
      append(x, plain(chunk["text"].get<std::string>()));
    }
  }
  if (tok.fim_sep() >= 0) {
    x.push_back(tok.fim_sep());
    append(x, plain("filename\n"));
  }
  return std::nullopt;
}

}  // namespace

std::optional<ApiError> build_infill_prompt(const ServerState& s, const Json& body, Tokens& out) {
  const tokenizer::Tokenizer& tok = s.scheduler->tokenizer();
  // The reference means to answer 400 here but fails later with a 500; Hearth answers the
  // 400 it intended (a recorded difference).
  for (const char* name : {"input_prefix", "input_suffix"}) {
    if (!body.contains(name)) return invalid_request(std::string("\"") + name + "\" is required");
  }
  Tokens x;
  if (auto err = extra_block(tok, body, x)) return err;
  const Tokens pre = tokenize_mixed(tok, body["input_prefix"], false, false);
  const Tokens suf = tokenize_mixed(tok, body["input_suffix"], false, false);
  auto prompt_it = body.find("prompt");
  const Tokens pr = prompt_it != body.end() && prompt_it->is_string()
                        ? tok.tokenize(prompt_it->get<std::string>(), false, true)
                        : Tokens{};
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
  out = x_kept;
  append(out, first);
  append(out, second);
  out.push_back(tok.fim_mid());
  return std::nullopt;
}

}  // namespace hearth::server

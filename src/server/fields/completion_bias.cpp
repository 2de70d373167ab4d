// logit_bias and the ignore_eos bans (native-completion.md §3.8). The reference skips
// malformed entries and ids outside the vocabulary silently; Hearth refuses them, naming the
// entry (a recorded difference).
#include <charconv>
#include <limits>

#include "server/fields/completion_fields.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server::fields {

namespace {

constexpr float kBan = -std::numeric_limits<float>::infinity();
constexpr size_t kMaxBiasEntries = 65536;

// A bias value: a number, or `false` meaning "ban".
std::optional<ApiError> read_bias(const Json& v, float& bias) {
  if (v.is_number()) {
    bias = static_cast<float>(v.get<double>());
    return std::nullopt;
  }
  if (v.is_boolean() && !v.get<bool>()) {
    bias = kBan;
    return std::nullopt;
  }
  return field_error("logit_bias", std::string("a bias must be a number or false, but is ") +
                                       (v.is_boolean() ? "true" : v.type_name()));
}

// Adds the bias for a token given as an id or as text (every token of the text).
std::optional<ApiError> add_bias(const Json& token, float bias, const tokenizer::Tokenizer& tok,
                                 std::vector<std::pair<int32_t, float>>& out) {
  if (token.is_number_integer()) {
    const int64_t id = token.get<int64_t>();
    if (id < 0 || id >= tok.n_vocab()) {
      return field_error("logit_bias", "token id " + std::to_string(id) +
                                           " is outside the vocabulary (0.." +
                                           std::to_string(tok.n_vocab() - 1) + ")");
    }
    out.emplace_back(static_cast<int32_t>(id), bias);
    return std::nullopt;
  }
  if (token.is_string()) {
    for (int32_t id : tok.tokenize(token.get_ref<const std::string&>(), false, false)) {
      out.emplace_back(id, bias);
    }
    return std::nullopt;
  }
  return field_error("logit_bias",
                     std::string("a token must be an id or a string, but is ") + token.type_name());
}

}  // namespace

std::optional<ApiError> parse_logit_bias(const Json& v, const std::string& used,
                                         CompletionSettings& out, const FieldContext& ctx) {
  std::vector<std::pair<int32_t, float>> bias;
  if (v.is_array()) {
    for (const Json& pair : v) {
      if (!pair.is_array() || pair.size() != 2) {
        return field_error(used, "each entry must be a [token, bias] pair");
      }
      float b = 0.0f;
      if (auto err = read_bias(pair[1], b)) return err;
      if (auto err = add_bias(pair[0], b, *ctx.tok, bias)) return err;
    }
  } else if (v.is_object()) {
    if (v.size() > kMaxBiasEntries) {
      return field_error(used, "at most " + std::to_string(kMaxBiasEntries) + " entries");
    }
    for (const auto& [key, value] : v.items()) {
      float b = 0.0f;
      if (auto err = read_bias(value, b)) return err;
      int64_t id = 0;
      auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
      const bool numeric = ec == std::errc() && end == key.data() + key.size() && !key.empty();
      if (auto err = add_bias(numeric ? Json(id) : Json(key), b, *ctx.tok, bias)) return err;
    }
  } else {
    return type_error(used, "array or object", v);
  }
  out.task.sampling.logit_bias = std::move(bias);
  out.logit_bias_sent = true;
  return std::nullopt;
}

std::optional<ApiError> finish_bias(const Json& body, const FieldContext& ctx,
                                    CompletionSettings& out) {
  std::vector<std::pair<int32_t, float>>& bias = out.task.sampling.logit_bias;
  if (!out.logit_bias_sent) bias = ctx.defaults->sampling.logit_bias;  // the server's -l list
  // Only the request's own `ignore_eos: true` adds bans here: the server's --ignore-eos
  // bans live in its -l list, which a request's logit_bias replaces (the reference's quirk).
  auto ignore = body.find("ignore_eos");
  if (ignore != body.end() && *ignore == Json(true)) {
    for (int32_t id : ctx.tok->eog_ids()) bias.emplace_back(id, kBan);
  }
  out.logit_bias_echo = bias;
  return std::nullopt;
}

}  // namespace hearth::server::fields

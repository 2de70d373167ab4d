// logit_bias, ignore_eos and the fields read outside the reference's schema (id_slot, lora,
// message_delimiters).
#include <charconv>
#include <limits>

#include "server/completion_params_internal.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server::detail {

namespace {

constexpr float kBan = -std::numeric_limits<float>::infinity();

// A bias value: a number, or `false` meaning "ban"; anything else is skipped.
bool read_bias(const Json& v, float& bias) {
  if (v.is_number()) {
    bias = static_cast<float>(v.get<double>());
    return true;
  }
  if (v.is_boolean() && !v.get<bool>()) {
    bias = kBan;
    return true;
  }
  return false;
}

// Adds the bias for a token given as an id or as text (every token of the text).
void add_bias(const Json& token, float bias, const tokenizer::Tokenizer& tok,
              std::vector<std::pair<int32_t, float>>& out) {
  if (token.is_number_integer()) {
    const int64_t id = token.get<int64_t>();
    if (id >= 0 && id < tok.n_vocab()) out.emplace_back(static_cast<int32_t>(id), bias);
  } else if (token.is_string()) {
    for (int32_t id : tok.tokenize(token.get<std::string>(), false, false)) {
      out.emplace_back(id, bias);
    }
  }
}

}  // namespace

std::optional<ApiError> parse_bias_fields(const Json& body, const tokenizer::Tokenizer& tok,
                                          CompletionSettings& out) {
  std::vector<std::pair<int32_t, float>> bias;
  auto it = body.find("logit_bias");
  const bool sent = it != body.end() && (it->is_array() || it->is_object());
  if (!sent) bias = out.task.sampling.logit_bias;  // the server's -l list
  if (sent && it->is_array()) {
    for (const Json& pair : *it) {
      float b = 0.0f;
      if (pair.is_array() && pair.size() == 2 && read_bias(pair[1], b))
        add_bias(pair[0], b, tok, bias);
    }
  } else if (sent) {
    for (const auto& [key, value] : it->items()) {
      float b = 0.0f;
      if (!read_bias(value, b)) continue;
      int64_t id = 0;
      auto [end, ec] = std::from_chars(key.data(), key.data() + key.size(), id);
      const bool numeric = ec == std::errc() && end == key.data() + key.size() && !key.empty();
      add_bias(numeric ? Json(id) : Json(key), b, tok, bias);
    }
  }
  // Only the request's own `ignore_eos: true` adds bans here: the server's --ignore-eos
  // bans live in its -l list, which a request's logit_bias replaces (the reference's quirk).
  auto ignore = body.find("ignore_eos");
  if (ignore != body.end() && *ignore == Json(true)) {
    for (int32_t id : tok.eog_ids()) bias.emplace_back(id, kBan);
  }
  out.logit_bias_echo = bias;
  out.task.sampling.logit_bias = std::move(bias);
  return std::nullopt;
}

std::optional<ApiError> parse_misc_fields(const Json& body, CompletionSettings& out) {
  auto slot = body.find("id_slot");
  if (slot != body.end() && slot->is_number_integer()) {
    out.id_slot = static_cast<int32_t>(slot->get<int64_t>());
  }
  auto lora = body.find("lora");
  if (lora != body.end() && !lora->is_null()) {
    if (!lora->is_array()) {
      return invalid_request(
          "Field 'lora': Error: 'lora' must be an array of objects with 'id' and 'scale' fields");
    }
    if (!lora->empty()) return not_honoured("lora");
  }
  return std::nullopt;
}

}  // namespace hearth::server::detail

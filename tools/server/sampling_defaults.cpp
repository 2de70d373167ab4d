#include "sampling_defaults.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <optional>
#include <string>

#include "base/log.h"
#include "json_schema/json_schema.h"
#include "server/options/value_parse.h"

namespace hearth::server_tool {

namespace {

// A metadata value as the reference reads it: rendered as a string, then parsed.
std::optional<double> number_of(const gguf::Value& v) {
  if (auto i = v.as_int()) return static_cast<double>(*i);
  if (auto f = v.as_float()) return *f;
  if (auto s = v.as_string()) {
    const std::string text(*s);
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (end != text.c_str()) return d;
  }
  return std::nullopt;
}

bool user_set(const server::options::ServerArgs& args, std::string_view option) {
  return std::find(args.sampling_set_by_user.begin(), args.sampling_set_by_user.end(), option) !=
         args.sampling_set_by_user.end();
}

template <typename T>
void apply_key(const server::options::ServerArgs& args, const gguf::File& file,
               std::string_view key, std::string_view option, T& out) {
  const gguf::Value* v = file.find(key);
  if (v == nullptr || user_set(args, option)) return;
  if (auto d = number_of(*v)) out = static_cast<T>(*d);
}

}  // namespace

Status json_schema_grammar(const server::options::ServerArgs& args,
                           server::RequestDefaults& defaults) {
  if (args.json_schema.empty()) return Status::ok();
  // Ordered, so properties keep the schema's key order in the grammar.
  auto schema = nlohmann::ordered_json::parse(args.json_schema, nullptr, false);
  if (schema.is_discarded()) {
    return error(ErrorCode::kInvalidArgument, "--json-schema: not valid JSON");
  }
  auto grammar = json_schema::to_gbnf(schema);
  if (!grammar.is_ok()) {
    return error(ErrorCode::kInvalidArgument, "--json-schema: " + grammar.status().message());
  }
  defaults.grammar = std::move(grammar.value());
  return Status::ok();
}

void apply_model_defaults(const server::options::ServerArgs& args, const gguf::File& file,
                          const tokenizer::Tokenizer& tok, server::RequestDefaults& defaults) {
  sampling::SamplerParams& s = defaults.sampling;
  if (const gguf::Value* v = file.find("general.sampling.sequence");
      v != nullptr && !user_set(args, "--samplers")) {
    if (auto text = v->as_string()) {
      const std::vector<std::string> names = server::options::split_any(*text, ";");
      s.samplers = sampling::samplers_from_names(names);
    }
  }
  apply_key(args, file, "general.sampling.top_k", "--top-k", s.top_k);
  apply_key(args, file, "general.sampling.top_p", "--top-p", s.top_p);
  apply_key(args, file, "general.sampling.min_p", "--min-p", s.min_p);
  apply_key(args, file, "general.sampling.xtc_probability", "--xtc-probability", s.xtc_probability);
  apply_key(args, file, "general.sampling.xtc_threshold", "--xtc-threshold", s.xtc_threshold);
  apply_key(args, file, "general.sampling.temp", "--temp", s.temperature);
  apply_key(args, file, "general.sampling.penalty_last_n", "--repeat-last-n", s.repeat_last_n);
  apply_key(args, file, "general.sampling.penalty_repeat", "--repeat-penalty", s.repeat_penalty);
  apply_key(args, file, "general.sampling.mirostat", "--mirostat", s.mirostat);
  apply_key(args, file, "general.sampling.mirostat_tau", "--mirostat-ent", s.mirostat_tau);
  apply_key(args, file, "general.sampling.mirostat_eta", "--mirostat-lr", s.mirostat_eta);
  s.mirostat = std::clamp(s.mirostat, 0, 2);
  if (defaults.ignore_eos) {
    if (tok.eos() < 0) {
      log_warn("--ignore-eos: the vocabulary has no EOS token; the option is dropped");
      defaults.ignore_eos = false;
    } else {
      for (int32_t id : tok.eog_ids()) {
        s.logit_bias.emplace_back(id, -std::numeric_limits<float>::infinity());
      }
    }
  }
}

}  // namespace hearth::server_tool

// Parsing a native generation body with the field table, and its generation_settings echo.
#include <algorithm>
#include <limits>

#include "server/fields/completion_fields.h"
#include "tokenizer/tokenizer.h"

namespace hearth::server {

std::optional<ApiError> parse_completion_settings(const Json& body, const RequestDefaults& defaults,
                                                  const tokenizer::Tokenizer& tok,
                                                  CompletionSettings& out, uint32_t route) {
  out = CompletionSettings{};
  out.task.n_predict = defaults.n_predict;
  out.task.cache_prompt = defaults.cache_prompt;
  out.task.stop = defaults.stop;
  out.task.sampling = defaults.sampling;
  out.ignore_eos = defaults.ignore_eos;
  out.n_keep = defaults.n_keep;
  out.sse_ping_interval = defaults.sse_ping_interval;
  out.reasoning_format = defaults.reasoning_format;
  out.spec_types = defaults.spec_types;
  out.verbose = defaults.verbose;
  if (!body.is_object()) {
    return invalid_request(std::string("the request body must be a JSON object, but is ") +
                           body.type_name());
  }
  const fields::FieldContext ctx{&body, &defaults, &tok, defaults.n_slots, route};
  if (auto err = fields::parse_fields(completion_fields(), body, out, ctx)) return err;
  if (defaults.n_cache_reuse != 0) return fields::not_honoured("n_cache_reuse");
  if (auto err = fields::finish_bias(body, ctx, out)) return err;
  if (auto err = fields::finish_constraints(body, ctx, out)) return err;
  fields::finish_reasoning(out);
  return fields::check_sampler_params(out.task.sampling);
}

namespace {

// A typed target's value, for the rows whose echo is just that value.
Json target_value(const CompletionField& f, const CompletionSettings& s) {
  // The accessors take a mutable object; the value is only read.
  auto& m = const_cast<CompletionSettings&>(s);
  if (auto ref = std::get_if<CompletionField::BoolRef>(&f.target)) return (*ref)(m);
  if (auto ref = std::get_if<CompletionField::IntRef>(&f.target)) return (*ref)(m);
  if (auto ref = std::get_if<CompletionField::Int64Ref>(&f.target)) return (*ref)(m);
  if (auto ref = std::get_if<CompletionField::SeedRef>(&f.target)) return (*ref)(m);
  if (auto ref = std::get_if<CompletionField::FloatRef>(&f.target)) return float_json((*ref)(m));
  return nullptr;
}

struct EchoEntry {
  int order;
  std::string_view key;
  Json value;
};

}  // namespace

Json generation_settings_json(const CompletionSettings& s, bool full) {
  std::vector<EchoEntry> entries;
  for (const CompletionField& f : completion_fields()) {
    if (f.echo_order == 0 || (!full && !f.echo_in_params)) continue;
    entries.push_back({f.echo_order, f.echo_key, f.echo ? f.echo(s) : target_value(f, s)});
  }
  // Echoed values that no request field sets.
  entries.push_back({27, "max_tokens", s.task.n_predict});
  entries.push_back({42, "reasoning_in_content", false});
  entries.push_back({45, "speculative.types", s.spec_types});
  std::sort(entries.begin(), entries.end(),
            [](const EchoEntry& a, const EchoEntry& b) { return a.order < b.order; });
  Json gs = Json::object();
  for (EchoEntry& e : entries) gs[std::string(e.key)] = std::move(e.value);
  return gs;
}

}  // namespace hearth::server

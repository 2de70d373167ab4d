// Helpers shared by the completion field parsers (not part of the server's interface).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "server/completion_params.h"

namespace hearth::server::detail {

// The first present, non-null spelling of a field (primary name, then aliases).
const Json* find_field(const Json& body, std::string_view name, std::string& used);
ApiError type_error(const std::string& used, const char* expected, const Json& value);
std::optional<ApiError> to_int64(const Json& v, const std::string& used, int64_t& out);
std::optional<ApiError> to_int32(const Json& v, const std::string& used, int32_t& out);
std::optional<ApiError> to_float(const Json& v, const std::string& used, float& out);
std::optional<ApiError> to_bool(const Json& v, const std::string& used, bool& out);
std::optional<ApiError> check_range(const std::string& used, int64_t v, int64_t lo, int64_t hi);
std::optional<ApiError> check_range(const std::string& used, float v, float lo, float hi);
// Optional fields: absent/null keeps `out`; ints with a hard range, floats clamped (soft).
std::optional<ApiError> opt_bool(const Json& body, std::string_view name, bool& out);
std::optional<ApiError> opt_int(const Json& body, std::string_view name, int32_t& out, int64_t lo,
                                int64_t hi);
std::optional<ApiError> opt_float(const Json& body, std::string_view name, float& out);
std::optional<ApiError> opt_float_soft(const Json& body, std::string_view name, float& out,
                                       float lo, float hi);
// 400 for a field Hearth does not honour, naming the field and why.
ApiError not_honoured(const std::string& used);

std::optional<ApiError> parse_output_fields(const Json& body, CompletionSettings& out);
std::optional<ApiError> parse_length_fields(const Json& body, const RequestDefaults& defaults,
                                            CompletionSettings& out);
std::optional<ApiError> parse_cache_fields(const Json& body, const RequestDefaults& defaults,
                                           CompletionSettings& out);
std::optional<ApiError> parse_sampling_fields(const Json& body, CompletionSettings& out);
std::optional<ApiError> parse_penalty_fields(const Json& body, const RequestDefaults& defaults,
                                             CompletionSettings& out);
// The checks the reference makes when it builds the sampler chain ("Failed to initialize
// samplers: ..."), made before the task is queued.
std::optional<ApiError> check_sampler_params(const scheduler::SamplingSettings& s);
std::optional<ApiError> parse_grammar_fields(const Json& body, const RequestDefaults& defaults,
                                             const tokenizer::Tokenizer& tok,
                                             CompletionSettings& out);
std::optional<ApiError> parse_deferred_fields(const Json& body);
std::optional<ApiError> parse_bias_fields(const Json& body, const tokenizer::Tokenizer& tok,
                                          CompletionSettings& out);
std::optional<ApiError> parse_misc_fields(const Json& body, CompletionSettings& out);

}  // namespace hearth::server::detail

// The grammar that constrains tool calls (chat-templates.md §8.5): the template family's
// markers around calls whose names are the request's tools and whose arguments follow each
// tool's `parameters` schema. Lazy for tool_choice "auto" (it starts at the family's marker),
// from the first token for "required". Unlike the reference, it is built also when a marker
// is not a single token of the vocabulary (the trigger is then a text pattern), so a
// forced call is always a valid call.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "chat/chat_types.h"
#include "chat/output_parser.h"
#include "server/api_error.h"

namespace hearth::server::openai {

struct ToolGrammar {
  std::string gbnf;
  bool lazy = false;
  std::string trigger;  // the word a lazy grammar starts at
  // Or a regular expression; the grammar starts at its first capture group (Muse Glimmer's
  // header to a tool, which " to=self" and " to=user" must not trigger).
  std::string trigger_pattern;
};

// nullopt in `out` when the family's syntax has no grammar here (its calls are parsed but
// not constrained). `required`: at least one call, from the first generated token.
std::optional<ApiError> build_tool_grammar(const chat::OutputSyntax& syntax,
                                           const std::vector<chat::Tool>& tools, bool required,
                                           std::optional<ToolGrammar>& out);

// Whether the text before the output opened a thinking block it did not close (QwQ's
// generation prompt, or a continued message's reasoning): a grammar for the answer then
// starts after the block.
bool opens_thinking(const chat::OutputSyntax& syntax);

// Renames every rule of `gbnf` (one "name ::= body" per line) to prefix + name, references
// included; string literals and character classes are left alone.
std::string prefix_rules(const std::string& gbnf, const std::string& prefix);

// A converted schema's grammar with exponents of at most two digits: a number the grammar
// lets through always fits a double, so every argument parses (1e400 would not).
std::string bounded_numbers(std::string gbnf);

// A GBNF string literal for `text`.
std::string gbnf_literal(const std::string& text);

// One LFM2 call, f(k=value, ...), of `tool`: its rule body, its value rules in `rules`.
std::optional<ApiError> python_call_rule(const chat::Tool& tool, const std::string& prefix,
                                         std::string& rules, std::string& body);

// One Gemma 4 call, name{k:v,...}, of `tool` (tool_grammar_gemma.cpp): its rule body, its
// value rules in `rules`; they use the shared rules of gemma_value_rules().
std::optional<ApiError> gemma_call_rule(const chat::Tool& tool, const std::string& prefix,
                                        std::string& rules, std::string& body);
std::string gemma_value_rules();

// The families that write parameters in tags (tool_grammar_tags.cpp): `body` receives the
// rule body of one call of `tool` (without the call's markers), its rules go to `rules`.
// One MiniMax M3 call, <invoke name="f"> and an element per argument, of `tool`: its rule
// body with its close, its value rules in `rules`.
std::optional<ApiError> element_call_rule(const chat::ToolCallFormat& f, const chat::Tool& tool,
                                          const std::string& prefix, std::string& rules,
                                          std::string& body);

std::optional<ApiError> tagged_call_rule(const chat::ToolCallFormat& f, const chat::Tool& tool,
                                         const std::string& prefix, std::string& rules,
                                         std::string& body);

}  // namespace hearth::server::openai

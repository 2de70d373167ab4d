// libFuzzer target for tool schemas to grammars: the fuzzer's tools (an OpenAI "tools"
// array, or one tool's "parameters" schema) become the tool-call grammar of each tool-call
// family the shared templates use (JSON arguments, tagged parameters, Python calls, Gemma's
// literals, XML elements...), required or lazy, parallel or not. A tool the server cannot
// turn into a grammar must be a 400; a grammar it builds must parse (short of the parser's
// size limits) and its trigger pattern compile. A crash, hang or leak is a bug too.
//
// Input: byte 0 picks the template's syntax, byte 1 the flags (bit 0 required, bit 1
// parallel calls), then the JSON.
//
//   build-fuzz/bin/tool_schema_fuzz -dict=tests/fuzz/chat.dict -max_total_time=600 \
//     /tmp/tool-schema-corpus tests/fuzz/corpus/tool_schema
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "base/json_parse.h"
#include "chat/chat_templates.h"
#include "chat/openai_messages.h"
#include "fuzz/answer_checks.h"
#include "grammar/grammar.h"
#include "sampling/trigger_patterns.h"
#include "server/openai/tool_grammar.h"
#include "support/fake_scheduler.h"

namespace {

using namespace hearth;
constexpr const char* kTarget = "tool_schema_fuzz";

std::vector<chat::OutputSyntax>* g_syntaxes = nullptr;
std::shared_ptr<const tokenizer::Tokenizer> g_tok;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The template's output syntax, as a request with one tool gets it.
std::optional<chat::OutputSyntax> syntax_of(const std::string& source) {
  chat::TemplateOrigin origin;
  origin.override_text = source;
  auto templates = chat::load_chat_templates(
      origin, true, chat::VocabText{"<s>", "</s>", true, false}, chat::Json::object());
  if (!templates.is_ok()) return std::nullopt;
  chat::ChatInputs inputs;
  chat::Message user;
  user.role = "user";
  user.content = "hi";
  inputs.messages = {user};
  inputs.tools = {{"probe", "a tool",
                   chat::Json::parse(R"({"type":"object","properties":{"a":{"type":"string"}}})")}};
  auto prompt = (*templates)->apply(inputs);
  if (!prompt.is_ok() || prompt->syntax.tools.style == chat::ToolCallStyle::kNone) {
    return std::nullopt;
  }
  chat::OutputSyntax syntax = prompt->syntax;
  syntax.parse_tool_calls = true;
  syntax.extract_reasoning = true;
  return syntax;
}

bool is_limit(const std::string& message) {
  return message.find("limit") != std::string::npos ||
         message.find("too large") != std::string::npos;
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_tok = test::load_tokenizer(fuzz::shared_dir() + "/models/stories260K.gguf");
  if (!g_tok) fuzz::fail(kTarget, "cannot read the stories260K model", "");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(fuzz::shared_dir() + "/templates")) {
    if (entry.path().extension() == ".jinja") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  g_syntaxes = new std::vector<chat::OutputSyntax>();
  for (const auto& file : files) {
    if (auto syntax = syntax_of(read_file(file))) g_syntaxes->push_back(std::move(*syntax));
  }
  if (g_syntaxes->empty()) fuzz::fail(kTarget, "no template with a tool-call syntax", "");
  std::fprintf(stderr, "%s: %zu tool-call syntaxes\n", kTarget, g_syntaxes->size());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  chat::OutputSyntax syntax = (*g_syntaxes)[data[0] % g_syntaxes->size()];
  const bool required = (data[1] & 1) != 0;
  syntax.parallel_tool_calls = (data[1] & 2) != 0;
  auto parsed = parse_json(input.substr(2));
  if (!parsed.is_ok()) return 0;
  chat::Json tools_json = *parsed;
  if (!tools_json.is_array()) {
    tools_json = chat::Json::array(
        {{{"type", "function"}, {"function", {{"name", "f"}, {"parameters", *parsed}}}}});
  }
  auto tools = chat::parse_openai_tools(tools_json);
  if (!tools.is_ok() || tools->empty()) return 0;
  std::optional<server::openai::ToolGrammar> grammar;
  if (auto err = server::openai::build_tool_grammar(syntax, *tools, required, grammar)) {
    if (err->type != server::ErrorType::kInvalidRequest) {
      fuzz::fail(kTarget, "not a 400: " + err->message, input);
    }
    return 0;
  }
  if (!grammar) return 0;
  // As the completion fields parse it: <TEXT> token references through the vocabulary.
  auto compiled = grammar::parse(
      grammar->gbnf, [](std::string_view text) { return g_tok->tokenize(text, false, true); });
  if (!compiled.is_ok() && !is_limit(compiled.status().message())) {
    fuzz::fail(kTarget,
               "the tool grammar does not parse: " + compiled.status().message() + "\n" +
                   grammar->gbnf.substr(0, 2000),
               input);
  }
  if (!grammar->trigger_pattern.empty()) {
    Status st = sampling::check_trigger_patterns({grammar->trigger_pattern});
    if (!st.is_ok()) fuzz::fail(kTarget, "the trigger does not compile: " + st.message(), input);
  }
  return 0;
}

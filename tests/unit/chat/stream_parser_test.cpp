// The streaming parse (StreamParser) against the reference it replaces: the whole output
// parsed again after every piece and diffed with the last parse (reparse_step). Outputs of
// every template in ../shared/templates (the turns it renders with one call, two, reasoning,
// and hand-made text around them) and hand-made syntaxes (schema answers, harmony, Kimi K3's
// closers, continuation, --skip-chat-parsing) are split at every byte and at random piece
// sizes: every delta and every parse in between must be the reference's, byte for byte.
// Then the work: a 20,000-token answer costs a bounded number of characters looked at per
// character, counted (no timing).
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "chat/output_syntax.h"
#include "chat/stream_parser.h"
#include "support/test_paths.h"
#include "unit/chat/chat_test_util.h"

namespace hearth::chat {
namespace {

using test::conversation;
using test::msg;

// The reference: what ChatOutput::step did before streaming parsed incrementally.
MessageDelta reparse_step(const OutputSyntax& syntax, std::string& generated, ParsedMessage& parsed,
                          std::string_view piece) {
  generated += piece;
  ParsedMessage now = parse_output(syntax, generated, true);
  MessageDelta d = diff_messages(parsed, now);
  parsed = std::move(now);
  return d;
}

std::string show(const MessageDelta& d) {
  std::string out = "r[" + d.reasoning + "] c[" + d.content + "]";
  for (const ToolCallDelta& t : d.tool_calls) {
    out += " call" + std::to_string(t.index) + (t.is_new ? " new " : " ") + t.name + "|" + t.id +
           "|" + t.arguments;
  }
  return out;
}

std::string show(const ParsedMessage& m) {
  std::string out = "r[" + m.reasoning + "] c[" + m.content + "]";
  for (const ParsedToolCall& c : m.tool_calls) out += " " + c.name + "|" + c.id + "|" + c.arguments;
  return out;
}

// Streams `generated` in `pieces` both ways; "" when every step agrees, else the first
// difference.
std::string compare_stream(const OutputSyntax& syntax, const std::string& generated,
                           const std::vector<size_t>& pieces, bool primed) {
  StreamParser stream(syntax);
  std::string text;
  ParsedMessage parsed;
  if (primed) {
    stream.step("");
    reparse_step(syntax, text, parsed, "");
    if (show(stream.parsed()) != show(parsed)) return "primed: " + show(stream.parsed());
  }
  size_t at = 0;
  for (size_t n : pieces) {
    const std::string_view piece = std::string_view(generated).substr(at, n);
    at += piece.size();
    const std::string got = show(stream.step(piece));
    const std::string want = show(reparse_step(syntax, text, parsed, piece));
    if (got != want || show(stream.parsed()) != show(parsed)) {
      return "after " + Json(text).dump() + ":\n  delta " + got + "\n  want  " + want +
             "\n  parse " + show(stream.parsed()) + "\n  want  " + show(parsed);
    }
  }
  if (stream.generated() != generated) return "generated differs";
  return "";
}

// Piece sizes: every byte, random sizes (the tokens of a real stream are a few bytes; long
// pieces cross several markers at once), and the whole text at once.
std::vector<std::vector<size_t>> splits(size_t length, std::mt19937& rng) {
  std::vector<std::vector<size_t>> out = {std::vector<size_t>(length, 1), {length}};
  for (size_t longest : {4, 12, 40}) {
    std::uniform_int_distribution<size_t> size(1, longest);
    std::vector<size_t> pieces;
    for (size_t total = 0; total < length;) total += pieces.emplace_back(size(rng));
    out.push_back(std::move(pieces));
  }
  return out;
}

struct Corpus {
  std::vector<std::pair<std::string, OutputSyntax>> syntaxes;  // name, syntax
  std::vector<std::vector<std::string>> outputs;               // per syntax
};

std::vector<Tool> test_tools() {
  return {Tool{"get_weather", "weather",
               Json::parse(R"({"type":"object","properties":{"city":{"type":"string"},)"
                           R"("days":{"type":"integer"}},"required":["city","days"]})")},
          Tool{"get_time", "time",
               Json::parse(R"({"type":"object","properties":{"zone":{"type":"string"}},)"
                           R"("required":["zone"]})")}};
}

// The assistant turns a template renders after its generation prompt (one call, two, with
// reasoning), when its history renders them that way.
std::vector<std::string> rendered_turns(const ChatTemplates& t, const std::string& asked) {
  std::vector<std::string> out;
  std::vector<ToolCall> calls = {{"get_weather", R"({"city": "Paris", "days": 3})", "call00001"},
                                 {"get_time", R"({"zone": "CET"})", "call00002"}};
  for (size_t n : {size_t{0}, size_t{1}, size_t{2}}) {
    for (bool reasoning : {false, true}) {
      Message turn = msg("assistant", n == 0 ? "It is sunny in Paris." : "");
      turn.tool_calls.assign(calls.begin(), calls.begin() + static_cast<long>(n));
      if (reasoning) turn.reasoning_content = "I should look it up.";
      ChatInputs full = conversation({msg("user", "What is the weather?"), turn}, false);
      full.tools = test_tools();
      Result<ChatPrompt> rendered = t.apply(full);
      if (rendered.is_ok() && rendered->prompt.rfind(asked, 0) == 0) {
        out.push_back(rendered->prompt.substr(asked.size()));
      }
    }
  }
  return out;
}

// Text around the turns: content before and after calls, markers written in part or in the
// wrong place, whitespace, a call that is not one.
std::vector<std::string> around(const OutputSyntax& s, const std::vector<std::string>& turns) {
  const ToolCallFormat& f = s.tools;
  std::vector<std::string> out = turns;
  out.push_back("Hello! How can I help?");
  out.push_back("  \n\n  Spaces first, then  text  \n\n");
  out.push_back(s.reasoning_start + "thinking " + s.reasoning_end + " and the answer");
  out.push_back(s.reasoning_end + "answer after a bare end tag");
  out.push_back("a < b and " + f.call_start.substr(0, 3) + " is not a call");
  out.push_back(f.section_start + f.call_start + "not a call at all" + f.call_end);
  out.push_back(R"({"name": "get_weather", "arguments": {"city": "Oslo", "days": 1}} tail)");
  out.push_back("[get_time(zone=\"CET\")] and " + f.name_prefix + "get_time" + f.name_end + "{}");
  for (const std::string& turn : turns) {
    out.push_back("Let me check.\n" + turn);
    out.push_back(turn + "\nDone." + turn);
  }
  return out;
}

// Answers of the message formats and closers, as the real-template tests write them.
std::vector<std::string> known_answers(const std::string& name) {
  if (name == "Kimi-K3.jinja") {
    return {
        "Greet back.<|close|>think<|sep|><|open|>response<|sep|>Hello there!"
        "<|close|>response<|sep|><|close|>message<|sep|><|end_of_msg|>",
        "Hm.<|close|>think<|sep|><|open|>response<|sep|>A<|close|>resp B<|close|>response"
        "<|sep|>C<|close|>message<|sep|>D<|end_of_msg|>E"};
  }
  if (name == "muse-glimmer.jinja") {
    return {
        " to=self<|message|>Greet back.<|eom|><|start|>assistant to=user<|message|>Hello "
        "there!<|eot|>",
        "Once upon a time", " to=self<|message|>a<|eo<|eom|><|start|>assis"};
  }
  if (name == "openai-gpt-oss-120b.jinja") {
    return {
        "<|channel|>analysis<|message|>Think.<|end|><|start|>assistant<|channel|>final"
        "<|message|>Done.<|return|>",
        " to=functions.get_time<|channel|>commentary json<|message|>{\"zone\": \"CET\"} "
        "<|call|><|start|>assistant<|channel|>final<|message|>Thi<|e"};
  }
  return {};
}

void add_templates(Corpus& c) {
  const std::string dir = hearth::test::shared_path("templates");
  if (!std::filesystem::exists(dir)) return;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".jinja") continue;
    TemplateOrigin origin;
    origin.model_default = hearth::test::read_file(entry.path().string());
    auto t = load_chat_templates(origin, true, VocabText{}, Json::object());
    if (!t.is_ok()) continue;
    ChatInputs ask = conversation({msg("user", "What is the weather?")});
    ask.tools = test_tools();
    Result<ChatPrompt> prompt = (*t)->apply(ask);
    if (!prompt.is_ok()) continue;
    OutputSyntax syntax = prompt->syntax;
    syntax.parse_tool_calls = syntax.tools.style != ToolCallStyle::kNone;
    const std::string name = entry.path().filename().string();
    std::vector<std::string> outputs = around(syntax, rendered_turns(**t, prompt->prompt));
    for (std::string& answer : known_answers(name)) outputs.push_back(std::move(answer));
    c.syntaxes.emplace_back(name, syntax);
    c.outputs.push_back(outputs);
    // reasoning_format none, one call at most, tool_choice none.
    OutputSyntax variant = syntax;
    variant.extract_reasoning = false;
    variant.parallel_tool_calls = false;
    c.syntaxes.emplace_back(name + " (no reasoning, one call)", variant);
    c.outputs.push_back(outputs);
    variant = syntax;
    variant.parse_tool_calls = false;
    c.syntaxes.emplace_back(name + " (no tools)", variant);
    c.outputs.push_back(outputs);
    // --skip-chat-parsing (chat_pipeline.cpp): no thinking tags, no call syntax.
    variant = syntax;
    variant.reasoning_start.clear();
    variant.reasoning_end.clear();
    variant.tools = {};
    c.syntaxes.emplace_back(name + " (skip chat parsing)", variant);
    c.outputs.push_back(outputs);
  }
}

void add_hand_made(Corpus& c) {
  OutputSyntax json;
  json.json_output = true;
  c.syntaxes.emplace_back("json_output", json);
  c.outputs.push_back(
      {"```json\n{\"a\": [1, 2, {\"b\": \"x}y\\\"z```\"}]}\n```\n", " {\"a\": [1, 2]} trailing",
       "{ \"name\" : \"It's a spect\", \"age\" : -3000", "[1, 22, 333, true, null, \"s\\\\\"]",
       "\"a string\\\" value\" more", "  -12.5e3 ", "``` not json", "```json   ``` ```", "```jso",
       "tru", "{\"k\": {\"n\": 1, \"m\": \"v v\"}, \"t\": [\"x\", 2]}"});
  OutputSyntax qwen;
  qwen.literal = qwen.prefix = "<|im_start|>assistant\n";
  qwen.reasoning_start = "<think>\n";
  qwen.reasoning_end = "\n</think>\n\n";
  qwen.tools = tool_call_format("{{ '<tool_call>' }}");
  qwen.parse_tool_calls = true;
  OutputSyntax forced = qwen;
  forced.prefix += "<think>\n";
  const std::vector<std::string> qwen_outputs = {
      "\"Here\" she said</think>\n\nSo <tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": 1}}",
      "<think>\n\n</think>\n\n<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>\n"
      "<tool_call>\n{\"name\": \"g\", \"arguments\": {\"b\": [1, 2]}}\n</tool_call>",
      "<think>\nab\n</thi\n</think>x</think>\n\n  hi <tool_c <tool_call>\nnot json"};
  c.syntaxes.emplace_back("qwen", qwen);
  c.outputs.push_back(qwen_outputs);
  c.syntaxes.emplace_back("qwen (forced open)", forced);
  c.outputs.push_back(qwen_outputs);
  // A continued message: the stream starts after text already in the prefix.
  OutputSyntax continued = qwen;
  continued.prefix += "<think>\nSo far I th";
  c.syntaxes.emplace_back("qwen (continued) primed", continued);
  c.outputs.push_back(qwen_outputs);
}

Corpus corpus() {
  Corpus c;
  add_templates(c);
  add_hand_made(c);
  return c;
}

TEST(StreamParser, DeltasAndParsesAreTheWholeReparse) {
  const Corpus c = corpus();
  if (c.syntaxes.size() < 40) GTEST_SKIP() << "no templates in ../shared/templates";
  std::mt19937 rng(33);
  size_t streams = 0, failures = 0;
  for (size_t i = 0; i < c.syntaxes.size(); ++i) {
    const auto& [name, syntax] = c.syntaxes[i];
    const bool primed = name.find("primed") != std::string::npos;
    for (const std::string& output : c.outputs[i]) {
      for (const std::vector<size_t>& pieces : splits(output.size(), rng)) {
        ++streams;
        const std::string problem = compare_stream(syntax, output, pieces, primed);
        if (!problem.empty() && ++failures <= 10) {
          ADD_FAILURE() << name << ", " << pieces.size() << " pieces of " << Json(output).dump()
                        << "\n"
                        << problem;
        }
      }
    }
  }
  std::printf("%zu streams over %zu syntaxes, %zu differ\n", streams, c.syntaxes.size(), failures);
  EXPECT_EQ(failures, 0u);
}

// Answers of about `tokens` tokens of 4 bytes for one syntax family.
std::string long_answer(const std::string& kind, size_t tokens) {
  std::string text;
  auto fill = [&](const std::string& word, size_t n) {
    for (size_t i = 0; i < n; ++i) text += word;
  };
  if (kind == "qwen") {
    text = "<think>\n";
    fill("abc ", tokens * 3 / 10);
    text += "\n</think>\n\n";
    fill("xyz ", tokens * 6 / 10);
    // Then calls, 15 tokens each, up to the length.
    while (text.size() < tokens * 4) {
      text +=
          "<tool_call>\n{\"name\": \"f\", \"arguments\": {\"a\": \"PPPPPPPP\"}}\n</tool_call>\n";
    }
  } else if (kind == "harmony") {
    text = "<|channel|>analysis<|message|>";
    fill("abc ", tokens / 2);
    text += "<|end|><|start|>assistant<|channel|>final<|message|>";
    fill("xyz ", tokens / 2);
  } else if (kind == "recipients") {
    text = " to=self<|message|>";
    fill("abc ", tokens / 2);
    text += "<|eom|><|start|>assistant to=user<|message|>";
    fill("xyz ", tokens / 2);
  } else if (kind == "closers") {
    text = "<|open|>response<|sep|>";
    fill("xyz ", tokens - 12);
    text += "<|close|>response<|sep|><|close|>message<|sep|>";
  } else if (kind == "json") {
    text = "```json\n[";
    fill("{\"k\": 12345, \"s\": \"a b c\"}, ", tokens / 8);
    text += "1]\n```";
  }
  return text;
}

OutputSyntax long_syntax(const std::string& kind) {
  OutputSyntax s;
  if (kind == "qwen") {
    s.literal = s.prefix = "<|im_start|>assistant\n";
    s.reasoning_start = "<think>\n";
    s.reasoning_end = "\n</think>\n\n";
    s.tools = tool_call_format("{{ '<tool_call>' }}");
    s.parse_tool_calls = true;
  } else if (kind == "harmony" || kind == "recipients") {
    s.literal = s.prefix = "<|start|>assistant";
    s.harmony = kind == "harmony";
    s.recipients = kind == "recipients";
    s.parse_tool_calls = true;
  } else if (kind == "closers") {
    // Kimi K3's answer tags (output_syntax.cpp).
    s.content_start = "<|open|>response<|sep|>";
    s.content_end = "<|close|>response<|sep|>";
    s.message_end = {"<|close|>message<|sep|>", "<|end_of_msg|>"};
  } else {
    s.json_output = true;
  }
  return s;
}

// Characters looked at for one answer streamed in 4-byte pieces.
size_t scanned_for(const std::string& kind, size_t tokens, size_t* length) {
  const std::string text = long_answer(kind, tokens);
  StreamParser stream(long_syntax(kind));
  for (size_t i = 0; i < text.size(); i += 4) stream.step(std::string_view(text).substr(i, 4));
  *length = text.size();
  return stream.scanned();
}

TEST(StreamParser, WorkPerTokenDoesNotGrowWithTheAnswer) {
  for (const std::string kind : {"qwen", "harmony", "recipients", "closers", "json"}) {
    SCOPED_TRACE(kind);
    size_t short_length = 0, long_length = 0;
    const size_t short_work = scanned_for(kind, 2000, &short_length);
    const size_t long_work = scanned_for(kind, 20000, &long_length);
    std::printf(
        "%s: %zu characters looked at for 2,000 tokens (%zu bytes), %zu for 20,000 "
        "(%zu bytes)\n",
        kind.c_str(), short_work, short_length, long_work, long_length);
    // A few looks per byte (each marker's search looks again at the marker's length at the
    // end of each piece); whole re-parses would look at about length^2 / 8 (10^9 here).
    EXPECT_LT(long_work, 32 * long_length);
    // Ten times the answer, about ten times the work.
    EXPECT_LT(long_work * short_length, 11 * short_work * long_length);
  }
}

}  // namespace
}  // namespace hearth::chat

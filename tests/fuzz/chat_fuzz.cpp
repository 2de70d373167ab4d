// libFuzzer targets for the chat routes over every shared chat template: a chat body goes
// through the chat checks, the template's rendering, the constraints (tools, schemas,
// reasoning budget) and, with the fuzzer's text as what the model writes, the output
// parser (reasoning, content, tool calls; whole and streamed). chat_fuzz drives the OpenAI
// routes (/v1/chat/completions, its input_tokens, /apply-template); translate_fuzz the
// Anthropic and Responses translators (/v1/messages, count_tokens, /v1/responses,
// input_tokens). A crash, hang, leak, 500 or error outside the envelope is a bug.
//
// Input: byte 0 picks the template, byte 1 the route (bits 0-1) and streaming (bit 2), then
// the body up to the first NUL, then the model's output.
//
//   build-fuzz/bin/chat_fuzz -dict=tests/fuzz/chat.dict -max_total_time=600 \
//     /tmp/chat-corpus tests/fuzz/corpus/chat
//   build-fuzz/bin/translate_fuzz -dict=tests/fuzz/chat.dict -max_total_time=600 \
//     /tmp/translate-corpus tests/fuzz/corpus/translate
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "base/json_parse.h"
#include "fuzz/answer_checks.h"
#include "support/fake_server.h"
#include "support/settle.h"

namespace {

using namespace hearth;

#if defined(HEARTH_TRANSLATE_FUZZ)
constexpr const char* kTarget = "translate_fuzz";
constexpr const char* kRoutes[] = {"/v1/messages", "/v1/messages/count_tokens", "/v1/responses",
                                   "/v1/responses/input_tokens"};
#else
constexpr const char* kTarget = "chat_fuzz";
constexpr const char* kRoutes[] = {"/v1/chat/completions", "/v1/chat/completions/input_tokens",
                                   "/apply-template", "/v1/chat/completions"};
#endif

std::vector<test::FakeServer>* g_servers = nullptr;
std::shared_ptr<const tokenizer::Tokenizer> g_tok;

std::string read_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  const std::string shared = fuzz::shared_dir();
  g_tok = test::load_tokenizer(shared + "/models/stories260K.gguf");
  if (!g_tok) fuzz::fail(kTarget, "cannot read the stories260K model under " + shared, "");
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(shared + "/templates")) {
    if (entry.path().extension() == ".jinja") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  g_servers = new std::vector<test::FakeServer>();
  for (const auto& file : files) {
    server::ServerConfig config;
    config.chat.use_jinja = true;
    config.model_path = "fuzz.gguf";
    test::FakeServer s = test::make_fake_server(config, g_tok, read_file(file), 16384);
    if (s.server) g_servers->push_back(std::move(s));
  }
  if (g_servers->empty()) fuzz::fail(kTarget, "no template loaded", "");
  std::fprintf(stderr, "%s: %zu templates\n", kTarget, g_servers->size());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  test::FakeServer& target = (*g_servers)[data[0] % g_servers->size()];
  const size_t n_routes = std::size(kRoutes);
  const char* route = kRoutes[(data[1] & 3) % n_routes];
  const bool stream = (data[1] & 4) != 0;
  const std::string_view rest = input.substr(2);
  const size_t nul = rest.find('\0');
  std::string body(rest.substr(0, nul));
  const std::string output = nul == std::string_view::npos ? "" : std::string(rest.substr(nul + 1));
  // A body that is a JSON object gets the stream flag; any other is sent as it is.
  if (auto parsed = parse_json(body); parsed.is_ok() && parsed->is_object()) {
    (*parsed)["stream"] = stream;
    body = parsed->dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  }
  target.scheduler->set_output(g_tok->tokenize(output, false, true));
  server::http::Request request;
  request.method = "POST";
  request.path = route;
  request.headers = {{"Content-Type", "application/json"}};
  request.body = body;
  server::http::Response response = target.server->dispatch(request);
  auto settled = test::settle(std::move(response), std::chrono::seconds(20));
  if (!settled) fuzz::fail(kTarget, "the answer did not come within 20 s", input);
  fuzz::check_answer(kTarget, settled->status, settled->content_type, settled->body,
                     settled->streamed, input);
  return 0;
}

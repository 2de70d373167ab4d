// libFuzzer target for the whole request path: raw bytes of an HTTP request go through the
// HTTP layer's parser (with its limits), then hearth-server's pipeline, route table and
// handlers over the in-memory scheduler, and the answer is settled as a client would read
// it (pending answers rendered, streams read to their end). A crash, hang, leak or sanitizer
// report is a bug, and so is any answer that breaks the API's promises: a 500 for a request
// (client mistakes are 4xx), an error that is not the JSON envelope, a JSON body that does
// not parse.
//
//   build-fuzz/bin/request_path_fuzz -dict=tests/fuzz/http.dict -max_total_time=600 \
//     /tmp/request-corpus tests/fuzz/corpus/request
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "server/api_error.h"
#include "server/http/request_reader.h"
#include "support/fake_server.h"
#include "support/settle.h"

namespace {

using namespace hearth;
namespace http = hearth::server::http;

test::FakeServer* g_server = nullptr;
http::ServerOptions g_limits;

[[noreturn]] void fail(const std::string& problem, std::string_view input) {
  std::fprintf(stderr, "request_path_fuzz: %s\ninput: %.*s\n", problem.c_str(),
               static_cast<int>(std::min<size_t>(input.size(), 400)), input.data());
  std::abort();
}

std::string shared_dir() {
  if (const char* dir = std::getenv("HEARTH_SHARED_DIR")) return dir;
  return HEARTH_DEFAULT_SHARED_DIR;
}

void check_answer(int status, const std::string& content_type, const std::string& body,
                  std::string_view input) {
  if (status < 100 || status > 599) fail("status " + std::to_string(status), input);
  if (status == 500) fail("a request was answered 500: " + body, input);
  if (content_type.rfind("application/json", 0) != 0 || body.empty()) return;
  const auto parsed = nlohmann::ordered_json::parse(body, nullptr, false);
  if (parsed.is_discarded()) fail("the JSON body does not parse: " + body, input);
  if (status >= 400 && !(parsed.is_object() && parsed.contains("error"))) {
    fail("an error outside the envelope: " + body, input);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  auto tok = test::load_tokenizer(shared_dir() + "/models/stories260K.gguf");
  if (!tok) {
    std::fprintf(stderr, "request_path_fuzz: cannot read %s/models/stories260K.gguf\n",
                 shared_dir().c_str());
    std::abort();
  }
  server::ServerConfig config;
  config.endpoint_metrics = true;
  config.endpoint_props = true;
  config.model_path = "fuzz.gguf";
  g_server = new test::FakeServer(test::make_fake_server(config, tok));
  if (!g_server->server) std::abort();
  g_limits.max_body_bytes = 1u << 20;
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  http::ParsedRequest parsed = http::parse_request_bytes(input, g_limits);
  if (parsed.error) {
    http::Response r = server::transport_error_response(*parsed.error, "detail");
    if (r.status < 400 || r.status == 500) fail("transport error status", input);
    check_answer(r.status, r.content_type, r.body, input);
    return 0;
  }
  if (!parsed.request) return 0;  // incomplete: the connection would wait for more
  http::Response response = g_server->server->dispatch(*parsed.request);
  auto settled = test::settle(std::move(response), std::chrono::seconds(10));
  if (!settled) fail("the answer did not come within 10 s", input);
  check_answer(settled->status, settled->content_type, settled->body, input);
  return 0;
}

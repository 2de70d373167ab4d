// hearth-loadbench: concurrent clients against a llama-server compatible server. Each client
// is one thread with a blocking Boost.Beast connection; it sends POST <prefix>/completion
// (or, with --embeddings, POST <prefix>/v1/embeddings with several inputs per request),
// streaming by default: the SSE frames are decoded as they arrive and the time of each token
// frame recorded, so the summary can give time to first token, inter-token latency and
// aggregate throughput. The soak mix adds non-streaming requests, stop strings and clients
// that cancel mid-stream.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace hearth::loadbench {

// http://host[:port][/prefix]; only plain HTTP.
struct Url {
  std::string host;
  std::string port = "80";
  std::string prefix;  // "" or "/something" (no trailing slash)
};

// Parses a base URL; nullopt with `error` set when it is not http://host[:port][/prefix].
std::optional<Url> parse_url(std::string_view text, std::string& error);

// Incremental server-sent-events decoder: bytes in, the data payload of every complete
// event out (multi-line data joined with '\n'). Comment lines (":" pings) and other fields
// are dropped; events may be split anywhere across feed() calls.
class SseDecoder {
 public:
  void feed(std::string_view bytes, std::vector<std::string>& payloads);

 private:
  std::string pending_;  // bytes of the event still being received
};

struct RequestSpec {
  std::string prompt;
  int n_predict = 64;
  std::optional<double> temperature;  // unset: the server's default
  bool ignore_eos = false;
  std::string extra_json;  // a JSON object merged into the body (e.g. a json_schema); "" none
  bool stream = true;
  std::vector<std::string> stop;  // sent as "stop" when not empty
  // > 0: the client closes the connection after this many token frames (a cancellation).
  int cancel_after_tokens = 0;
  // Not empty: an embedding request instead, POST /v1/embeddings with these inputs.
  std::vector<std::string> inputs;
  // A raw request instead (the hostile probe, /health): `method` `path` with `raw_body`
  // as it is, the answer read whole; ok whenever an answer came (its status is recorded).
  std::string method;  // "" : not raw
  std::string path;
  std::string raw_body;
};

// The soak mix (--mix): request i is streaming, non-streaming, streaming with stop strings,
// or cancelled mid-stream, in turn.
RequestSpec mixed_request(int i, RequestSpec base);

struct ClientConfig {
  Url url;
  std::string api_key;                   // sent as "Authorization: Bearer <key>" when set
  std::chrono::milliseconds timeout{0};  // whole-request deadline; 0 = none
};

// What one request measured. Times are from the moment the request started (before the
// connection was opened).
struct RequestResult {
  bool ok = false;
  bool cancelled = false;  // the client left on purpose (cancel_after_tokens): not a failure
  std::string error;       // why it failed, when !ok
  int status = 0;          // HTTP status, 0 when none came
  int64_t tokens_predicted = 0;
  int64_t tokens_evaluated = 0;
  int64_t embeddings = 0;         // vectors returned (embedding requests)
  int64_t draft_n = 0;            // speculative decoding: tokens drafted (final timings)
  int64_t draft_accepted = 0;     // and accepted
  double predicted_ms = 0;        // the timings' generation time (prompt excluded)
  std::optional<double> ttft_ms;  // first token frame
  std::vector<double> gaps_ms;    // between consecutive token frames
  double total_ms = 0;
};

// The JSON body sent for one request.
std::string request_body(const RequestSpec& spec);

// Runs one streaming completion to the end on a fresh connection. Never throws.
RequestResult run_request(const ClientConfig& config, const RequestSpec& spec);

// Applies one decoded SSE payload to a result in progress; returns true once the stream's
// final frame (or an error frame) has been seen.
bool apply_frame(std::string_view payload, double at_ms, std::optional<double>& last_token_ms,
                 RequestResult& result);

struct Summary {
  int64_t requests_ok = 0;
  int64_t requests_failed = 0;
  int64_t requests_cancelled = 0;  // by the client, on purpose
  int64_t tokens_predicted = 0;    // over every request that reached its final frame
  int64_t tokens_evaluated = 0;
  int64_t embeddings = 0;
  int64_t draft_n = 0;         // speculative decoding, summed over the requests' timings
  int64_t draft_accepted = 0;  // (absent from the timings when nothing was drafted)
  // Generated tokens per target forward step: each step yields one token plus its accepted
  // draft tokens, so steps = tokens_predicted - draft_accepted.
  double tokens_per_step = 0;
  // Generated tokens over the summed generation times of the requests (timings.predicted_ms,
  // which leaves prompt processing and transport out): one stream's decode speed, equal to
  // the throughput with one client; 0 when the server sent no timings.
  double decode_tokens_per_s = 0;
  double wall_s = 0;
  double embeddings_per_s = 0;  // embeddings / wall_s
  double tokens_per_s = 0;      // tokens_predicted / wall_s
  double requests_per_s = 0;
  double ttft_p50_ms = 0, ttft_p99_ms = 0, ttft_mean_ms = 0;
  double itl_p50_ms = 0, itl_p99_ms = 0;
  double latency_p50_ms = 0, latency_p99_ms = 0;  // whole requests, start to last byte
  std::vector<std::string> errors;                // distinct failure messages, first few
};

Summary summarize(const std::vector<RequestResult>& results, double wall_s);

// Nearest-rank percentile (p in [0, 100]) of `values`; 0 when empty.
double percentile(std::vector<double> values, double p);

}  // namespace hearth::loadbench

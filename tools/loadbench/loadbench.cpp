#include "tools/loadbench/loadbench.h"

#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/connect.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <cmath>
#include <condition_variable>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <numeric>
#include <set>
#include <thread>

namespace hearth::loadbench {
namespace {

namespace beast = boost::beast;
namespace http = beast::http;
namespace net = boost::asio;
using tcp = net::ip::tcp;
using Json = nlohmann::json;

// The final response's timings: generation time, and draft_n and draft_n_accepted when the
// request drafted.
void read_draft_counts(const Json& final_frame, RequestResult& result) {
  const auto timings = final_frame.find("timings");
  if (timings == final_frame.end() || !timings->is_object()) return;
  result.predicted_ms = timings->value("predicted_ms", 0.0);
  result.draft_n = timings->value("draft_n", int64_t{0});
  result.draft_accepted = timings->value("draft_n_accepted", int64_t{0});
}
using Clock = std::chrono::steady_clock;

// Beast's own timeouts apply only to asynchronous operations, and a socket receive timeout
// does not help either (Asio waits again on EAGAIN). So one watchdog thread shuts down the
// sockets of requests that outlive their deadline, which wakes the blocked read with an
// error; the client then reports a timeout.
class Watchdog {
 public:
  static Watchdog& instance() {
    static Watchdog watchdog;
    return watchdog;
  }

  // Watches `fd` until disarm(); `fired` turns true if the deadline passes first.
  uint64_t arm(int fd, Clock::time_point deadline, std::shared_ptr<std::atomic<bool>> fired) {
    std::lock_guard lock(mutex_);
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    const uint64_t id = next_id_++;
    watched_[id] = Watched{fd, deadline, std::move(fired)};
    wake_.notify_one();
    return id;
  }

  // After this returns the watchdog never touches the socket again, so it may be closed.
  void disarm(uint64_t id) {
    std::lock_guard lock(mutex_);
    watched_.erase(id);
  }

  ~Watchdog() {
    {
      std::lock_guard lock(mutex_);
      stop_ = true;
    }
    wake_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

 private:
  struct Watched {
    int fd;
    Clock::time_point deadline;
    std::shared_ptr<std::atomic<bool>> fired;
  };

  void loop() {
    std::unique_lock lock(mutex_);
    while (!stop_) {
      auto next = Clock::time_point::max();
      const auto now = Clock::now();
      for (auto it = watched_.begin(); it != watched_.end();) {
        if (it->second.deadline <= now) {
          it->second.fired->store(true);
          ::shutdown(it->second.fd, SHUT_RDWR);
          it = watched_.erase(it);
        } else {
          next = std::min(next, it->second.deadline);
          ++it;
        }
      }
      if (next == Clock::time_point::max()) {
        wake_.wait(lock);
      } else {
        wake_.wait_until(lock, next);
      }
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_;
  std::map<uint64_t, Watched> watched_;
  uint64_t next_id_ = 1;
  bool stop_ = false;
  std::thread thread_;
};

class DeadlineGuard {
 public:
  DeadlineGuard(int fd, std::chrono::milliseconds timeout, Clock::time_point start)
      : fired_(std::make_shared<std::atomic<bool>>(false)) {
    if (timeout.count() > 0) id_ = Watchdog::instance().arm(fd, start + timeout, fired_);
  }
  ~DeadlineGuard() {
    if (id_ != 0) Watchdog::instance().disarm(id_);
  }
  DeadlineGuard(const DeadlineGuard&) = delete;
  DeadlineGuard& operator=(const DeadlineGuard&) = delete;
  bool fired() const { return fired_->load(); }

 private:
  std::shared_ptr<std::atomic<bool>> fired_;
  uint64_t id_ = 0;
};

std::string error_message_of(const std::string& body) {
  const Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("error") && j["error"].is_object()) {
    return j["error"].value("message", std::string("error"));
  }
  return body.substr(0, 200);
}

using Parser = http::response_parser<http::buffer_body>;

// Reads what comes next of the body into `chunk` (returns as soon as some bytes were
// parsed, so frames are timed on arrival); the number of bytes.
size_t read_chunk(tcp::socket& socket, beast::flat_buffer& buffer, Parser& parser, char* chunk,
                  size_t size) {
  parser.get().body().data = chunk;
  parser.get().body().size = size;
  beast::error_code ec;
  http::read_some(socket, buffer, parser, ec);
  if (ec == http::error::need_buffer) ec = {};
  if (ec) throw beast::system_error(ec);
  return size - parser.get().body().size;
}

// A non-streamed answer: the whole body, then its one JSON object.
void read_whole(tcp::socket& socket, beast::flat_buffer& buffer, Parser& parser,
                Clock::time_point start, RequestResult& result) {
  std::string body;
  char chunk[16384];
  while (!parser.is_done())
    body.append(chunk, read_chunk(socket, buffer, parser, chunk, sizeof chunk));
  if (result.status != 200) {
    result.error = "HTTP " + std::to_string(result.status) + ": " + error_message_of(body);
    return;
  }
  const Json j = Json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (j.is_object() && j.contains("data") && j["data"].is_array()) {  // an embedding list
    result.ttft_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    result.embeddings = static_cast<int64_t>(j["data"].size());
    if (j.contains("usage") && j["usage"].is_object())
      result.tokens_evaluated = j["usage"].value("prompt_tokens", int64_t{0});
    result.ok = true;
    return;
  }
  if (!j.is_object() || !j.contains("tokens_predicted")) {
    result.error = "unexpected body: " + body.substr(0, 120);
    return;
  }
  result.ttft_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  result.tokens_predicted = j.value("tokens_predicted", int64_t{0});
  result.tokens_evaluated = j.value("tokens_evaluated", int64_t{0});
  read_draft_counts(j, result);
  result.ok = true;
}

// A raw request's answer, whatever it is: read to its end.
void read_any(tcp::socket& socket, beast::flat_buffer& buffer, Parser& parser,
              RequestResult& result) {
  char chunk[16384];
  while (!parser.is_done()) read_chunk(socket, buffer, parser, chunk, sizeof chunk);
  result.ok = true;
}

// Everything after the response headers: frames are applied as they arrive.
void read_stream(tcp::socket& socket, beast::flat_buffer& buffer, Parser& parser,
                 Clock::time_point start, int cancel_after_tokens, RequestResult& result) {
  SseDecoder sse;
  std::vector<std::string> payloads;
  std::string error_body;
  std::optional<double> last_token_ms;
  bool finished = false;
  char chunk[16384];
  while (!parser.is_done()) {
    const size_t n = read_chunk(socket, buffer, parser, chunk, sizeof chunk);
    if (result.status != 200) {
      error_body.append(chunk, n);
      continue;
    }
    const double now_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    payloads.clear();
    sse.feed(std::string_view(chunk, n), payloads);
    for (const std::string& p : payloads) {
      if (!finished) finished = apply_frame(p, now_ms, last_token_ms, result);
    }
    const auto tokens = static_cast<int>(result.gaps_ms.size()) + (result.ttft_ms ? 1 : 0);
    if (!finished && cancel_after_tokens > 0 && tokens >= cancel_after_tokens) {
      result.cancelled = true;  // leave mid-stream; the caller closes the connection
      result.tokens_predicted = tokens;
      return;
    }
  }
  if (result.status != 200) {
    result.ok = false;
    result.error = "HTTP " + std::to_string(result.status) + ": " + error_message_of(error_body);
  } else if (!finished) {
    result.error = "the stream ended without a final frame";
  }
}

}  // namespace

std::optional<Url> parse_url(std::string_view text, std::string& error) {
  constexpr std::string_view kScheme = "http://";
  if (text.rfind(kScheme, 0) != 0) {
    error = "the URL must start with http:// (https is not supported)";
    return std::nullopt;
  }
  text.remove_prefix(kScheme.size());
  Url url;
  const size_t slash = text.find('/');
  std::string_view authority = text.substr(0, slash);
  if (slash != std::string_view::npos) {
    url.prefix = std::string(text.substr(slash));
    while (!url.prefix.empty() && url.prefix.back() == '/') url.prefix.pop_back();
  }
  size_t port_colon = std::string_view::npos;
  if (!authority.empty() && authority.front() == '[') {  // [v6 address]:port
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      error = "unterminated IPv6 address in the URL";
      return std::nullopt;
    }
    url.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size() && authority[close + 1] == ':') port_colon = close + 1;
  } else {
    port_colon = authority.rfind(':');
    url.host = std::string(authority.substr(0, port_colon));
  }
  if (port_colon != std::string_view::npos)
    url.port = std::string(authority.substr(port_colon + 1));
  const bool port_ok =
      !url.port.empty() && url.port.size() <= 5 &&
      std::all_of(url.port.begin(), url.port.end(), [](char c) { return c >= '0' && c <= '9'; }) &&
      std::stoi(url.port) > 0 && std::stoi(url.port) < 65536;
  if (url.host.empty() || !port_ok) {
    error = "expected http://host[:port][/prefix]";
    return std::nullopt;
  }
  return url;
}

void SseDecoder::feed(std::string_view bytes, std::vector<std::string>& payloads) {
  pending_.append(bytes);
  size_t event_start = 0;
  while (true) {
    // An event ends at a blank line; servers may use "\n" or "\r\n" line ends.
    size_t end = pending_.find("\n\n", event_start);
    size_t sep = 2;
    const size_t crlf = pending_.find("\r\n\r\n", event_start);
    if (crlf != std::string::npos && (end == std::string::npos || crlf < end)) {
      end = crlf;
      sep = 4;
    }
    if (end == std::string::npos) break;
    std::string data;
    bool has_data = false;
    size_t line_start = event_start;
    while (line_start < end) {
      size_t line_end = pending_.find('\n', line_start);
      if (line_end == std::string::npos || line_end > end) line_end = end;
      std::string_view line(pending_.data() + line_start, line_end - line_start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      if (line.rfind("data:", 0) == 0) {
        line.remove_prefix(5);
        if (!line.empty() && line.front() == ' ') line.remove_prefix(1);
        if (has_data) data += '\n';
        data.append(line);
        has_data = true;
      }
      line_start = line_end + 1;
    }
    if (has_data) payloads.push_back(std::move(data));
    event_start = end + sep;
  }
  pending_.erase(0, event_start);
}

std::string request_body(const RequestSpec& spec) {
  if (!spec.inputs.empty()) return Json{{"input", spec.inputs}}.dump();
  Json body = {{"prompt", spec.prompt}, {"n_predict", spec.n_predict}, {"stream", spec.stream}};
  if (spec.temperature) body["temperature"] = *spec.temperature;
  if (spec.ignore_eos) body["ignore_eos"] = true;
  if (!spec.stop.empty()) body["stop"] = spec.stop;
  if (!spec.extra_json.empty()) body.update(Json::parse(spec.extra_json));
  return body.dump();
}

bool apply_frame(std::string_view payload, double at_ms, std::optional<double>& last_token_ms,
                 RequestResult& result) {
  if (payload == "[DONE]") {  // OpenAI-style terminator; native streams end on "stop": true
    if (result.error.empty()) result.ok = true;
    return true;
  }
  const Json frame = Json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!frame.is_object()) {
    result.error = "unparseable SSE frame: " + std::string(payload.substr(0, 120));
    return true;
  }
  if (frame.contains("error")) {
    const Json& e = frame["error"];
    result.error = "error frame: " + (e.is_object() ? e.value("message", e.dump()) : e.dump());
    return true;
  }
  if (frame.value("stop", false)) {
    result.tokens_predicted = frame.value(
        "tokens_predicted", static_cast<int64_t>(result.gaps_ms.size() + (result.ttft_ms ? 1 : 0)));
    result.tokens_evaluated = frame.value("tokens_evaluated", int64_t{0});
    read_draft_counts(frame, result);
    result.ok = true;
    return true;
  }
  if (frame.contains("prompt_progress")) return false;  // prompt processing, not a token
  if (!result.ttft_ms) {
    result.ttft_ms = at_ms;
  } else if (last_token_ms) {
    result.gaps_ms.push_back(at_ms - *last_token_ms);
  }
  last_token_ms = at_ms;
  return false;
}

RequestResult run_request(const ClientConfig& config, const RequestSpec& spec) {
  RequestResult result;
  const auto start = Clock::now();
  std::unique_ptr<DeadlineGuard> guard;
  try {
    net::io_context ioc;
    tcp::resolver resolver(ioc);
    tcp::socket socket(ioc);
    net::connect(socket, resolver.resolve(config.url.host, config.url.port));
    guard = std::make_unique<DeadlineGuard>(socket.native_handle(), config.timeout, start);

    const bool raw = !spec.method.empty();
    const std::string path =
        raw ? spec.path : (spec.inputs.empty() ? "/completion" : "/v1/embeddings");
    http::request<http::string_body> req{http::string_to_verb(raw ? spec.method : "POST"),
                                         config.url.prefix + path, 11};
    const bool v6 = config.url.host.find(':') != std::string::npos;
    req.set(http::field::host,
            (v6 ? "[" + config.url.host + "]" : config.url.host) + ":" + config.url.port);
    req.set(http::field::user_agent, "hearth-loadbench");
    req.set(http::field::content_type, "application/json");
    req.set(http::field::accept, "text/event-stream");
    if (!config.api_key.empty()) req.set(http::field::authorization, "Bearer " + config.api_key);
    req.body() = raw ? spec.raw_body : request_body(spec);
    req.prepare_payload();
    http::write(socket, req);

    beast::flat_buffer buffer;
    http::response_parser<http::buffer_body> parser;
    // A huge limit rather than boost::none: Boost 1.74 compares a Content-Length against an
    // empty optional as "over the limit".
    parser.body_limit(std::numeric_limits<std::uint64_t>::max());
    http::read_header(socket, buffer, parser);
    result.status = static_cast<int>(parser.get().result_int());
    if (raw) {
      read_any(socket, buffer, parser, result);
    } else if (spec.stream) {
      read_stream(socket, buffer, parser, start, spec.cancel_after_tokens, result);
    } else {
      read_whole(socket, buffer, parser, start, result);
    }
    guard.reset();  // before the socket closes, so the watchdog never sees a reused fd
    beast::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
  } catch (const std::exception& e) {
    result.ok = false;
    const bool timed_out = guard && guard->fired();
    guard.reset();
    result.error = timed_out ? "timed out after " + std::to_string(config.timeout.count()) + " ms"
                             : std::string(e.what());
  }
  if (result.cancelled && result.error.empty()) result.ok = true;
  if (!result.error.empty()) result.ok = false;
  result.total_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  return result;
}

RequestSpec mixed_request(int i, RequestSpec base) {
  switch (i % 4) {
    case 0:
      break;  // streaming, to n_predict or the end of the text
    case 1:
      base.stream = false;
      break;
    case 2:
      base.stop = {" the", ".", "\n"};
      break;
    default:
      base.cancel_after_tokens = 1 + i % 7;  // leave after a few tokens
      break;
  }
  return base;
}

double percentile(std::vector<double> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(p / 100.0 * static_cast<double>(values.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(index, values.size() - 1)];
}

Summary summarize(const std::vector<RequestResult>& results, double wall_s) {
  Summary s;
  s.wall_s = wall_s;
  std::vector<double> ttft;
  std::vector<double> gaps;
  std::vector<double> latency;
  double predicted_ms = 0;
  std::set<std::string> seen_errors;
  for (const RequestResult& r : results) {
    if (r.ok && r.cancelled) {
      ++s.requests_cancelled;
      continue;
    }
    if (!r.ok) {
      ++s.requests_failed;
      if (s.errors.size() < 5 && seen_errors.insert(r.error).second) s.errors.push_back(r.error);
      continue;
    }
    ++s.requests_ok;
    s.tokens_predicted += r.tokens_predicted;
    s.tokens_evaluated += r.tokens_evaluated;
    s.embeddings += r.embeddings;
    s.draft_n += r.draft_n;
    s.draft_accepted += r.draft_accepted;
    predicted_ms += r.predicted_ms;
    if (r.ttft_ms) ttft.push_back(*r.ttft_ms);
    latency.push_back(r.total_ms);
    gaps.insert(gaps.end(), r.gaps_ms.begin(), r.gaps_ms.end());
  }
  if (wall_s > 0) {
    s.tokens_per_s = static_cast<double>(s.tokens_predicted) / wall_s;
    s.requests_per_s = static_cast<double>(s.requests_ok) / wall_s;
    s.embeddings_per_s = static_cast<double>(s.embeddings) / wall_s;
  }
  if (s.tokens_predicted > s.draft_accepted)
    s.tokens_per_step = static_cast<double>(s.tokens_predicted) /
                        static_cast<double>(s.tokens_predicted - s.draft_accepted);
  if (predicted_ms > 0)
    s.decode_tokens_per_s = static_cast<double>(s.tokens_predicted) / (predicted_ms / 1000.0);
  s.ttft_p50_ms = percentile(ttft, 50);
  s.ttft_p99_ms = percentile(ttft, 99);
  s.ttft_mean_ms = ttft.empty() ? 0 : std::accumulate(ttft.begin(), ttft.end(), 0.0) / ttft.size();
  s.itl_p50_ms = percentile(gaps, 50);
  s.itl_p99_ms = percentile(gaps, 99);
  s.latency_p50_ms = percentile(latency, 50);
  s.latency_p99_ms = percentile(latency, 99);
  return s;
}

}  // namespace hearth::loadbench

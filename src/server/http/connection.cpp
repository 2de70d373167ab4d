#include "server/http/connection.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>
#include <optional>
#include <string>
#include <string_view>

#include <boost/asio/buffer.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http.hpp>

#include "base/log.h"
#include "server/http/url.h"

namespace hearth::server::http {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;

// Beast's default (8 KiB) is below what some clients send with long cookies or tokens.
constexpr uint32_t kHeaderLimit = 64 * 1024;
// How often a stream with nothing to send checks that its client is still there; bounds
// how late a disconnect is noticed without busy-waiting.
constexpr std::chrono::milliseconds kStreamPoll{100};
// How long a rejected request's remaining bytes are drained before the socket closes.
constexpr std::chrono::milliseconds kLinger{1000};

bool contains_token(std::string_view value, std::string_view token) {
  for (size_t i = 0; i + token.size() <= value.size(); ++i) {
    if (iequals(value.substr(i, token.size()), token)) return true;
  }
  return false;
}

// Beast 1.74 hands out boost::string_view.
std::string_view sv(beast::string_view s) {
  return {s.data(), s.size()};
}

bool status_has_no_body(unsigned status) {
  return (status >= 100 && status < 200) || status == 204 || status == 304;
}

enum class ReadOutcome { kRequest, kClose, kRejected };

class Connection {
 public:
  Connection(const ServerOptions& options, const Dispatch& dispatch,
             const std::shared_ptr<Socket>& socket, ConnectionOwner& owner, uint64_t id)
      : options_(options),
        dispatch_(dispatch),
        socket_(socket),
        owner_(owner),
        id_(id),
        stream_(socket->fd(), std::chrono::seconds(std::max(1, options.timeout_seconds))) {}

  // Serves requests until the client leaves, keep-alive ends, an error, or stop().
  void serve();

 private:
  ReadOutcome read_request(bhttp::request_parser<bhttp::string_body>& parser);
  ReadOutcome on_read_error(const beast::error_code& ec);
  Request make_request(bhttp::request<bhttp::string_body>&& message) const;
  Response call_dispatch(const Request& request) const;
  template <class Message>
  bool apply_headers(Message& message, const Response& response) const;
  bool write_response(Response& response, unsigned version, bool keep_alive, bool head);
  bool write_stream(Response& response, unsigned version, bool keep_alive);
  // Pumps the stream's chunks to the client; false once the client is gone.
  bool pump_stream(StreamBody& body, const Response& response, bool chunked);
  bool write_chunk(std::string_view data, bool chunked);
  void send_error(int status, std::string_view message, std::string_view type);

  const ServerOptions& options_;
  const Dispatch& dispatch_;
  const std::shared_ptr<Socket>& socket_;
  ConnectionOwner& owner_;
  uint64_t id_;
  FdStream stream_;
  // Kept across requests: it may already hold the start of a pipelined next request.
  beast::flat_buffer buffer_;
};

void Connection::serve() {
  for (;;) {
    if (!owner_.begin_idle(id_)) break;
    bhttp::request_parser<bhttp::string_body> parser;
    parser.header_limit(kHeaderLimit);
    parser.body_limit(static_cast<std::uint64_t>(options_.max_body_bytes));
    ReadOutcome outcome = read_request(parser);
    if (outcome == ReadOutcome::kRejected) {
      socket_->close_gracefully(kLinger);
      return;
    }
    if (outcome == ReadOutcome::kClose) break;

    const unsigned version = parser.get().version();
    const bool head = parser.get().method() == bhttp::verb::head;
    bool keep_alive = parser.get().keep_alive();
    Request request = make_request(parser.release());
    Response response = call_dispatch(request);
    // A stop() that began during the request turns keep-alive off for its response.
    keep_alive = keep_alive && !owner_.stopping();
    bool ok = response.stream ? write_stream(response, version, keep_alive)
                              : write_response(response, version, keep_alive, head);
    if (!ok) break;
  }
  socket_->close();
}

ReadOutcome Connection::read_request(bhttp::request_parser<bhttp::string_body>& parser) {
  beast::error_code ec;
  bhttp::read_header(stream_, buffer_, parser, ec);
  owner_.end_idle(id_);
  if (ec) return on_read_error(ec);
  const auto& header = parser.get();
  std::string_view expect = sv(header[bhttp::field::expect]);
  if (header.version() >= 11 && iequals(expect, "100-continue")) {
    // curl waits a second for this before sending bodies over 1 MiB.
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    asio::write(stream_, asio::buffer(kContinue.data(), kContinue.size()), ec);
    if (ec) return ReadOutcome::kClose;
  }
  bhttp::read(stream_, buffer_, parser, ec);
  if (ec) return on_read_error(ec);
  return ReadOutcome::kRequest;
}

ReadOutcome Connection::on_read_error(const beast::error_code& ec) {
  if (ec == bhttp::error::body_limit) {
    // llama-server's HTTP library resets the connection here; an explicit 413 with the
    // usual error body tells the client why, which is strictly more useful.
    send_error(413, "request body too large", "invalid_request_error");
    return ReadOutcome::kRejected;
  }
  // Clean close between requests, a client gone mid-request, timeouts, resets: nobody to
  // answer.
  if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
      ec.category() != bhttp::make_error_code(bhttp::error::bad_target).category()) {
    return ReadOutcome::kClose;
  }
  log_debug("http: malformed request: {}", ec.message());
  send_error(400, "bad request: " + ec.message(), "invalid_request_error");
  return ReadOutcome::kRejected;
}

Request Connection::make_request(bhttp::request<bhttp::string_body>&& message) const {
  Request request;
  request.method = std::string(sv(message.method_string()));
  Target target = parse_target(sv(message.target()));
  request.path = std::move(target.path);
  request.query = std::move(target.query);
  request.headers.reserve(16);
  for (const auto& field : message) {
    request.headers.emplace_back(sv(field.name_string()), sv(field.value()));
  }
  request.body = std::move(message.body());
  // Holds the Socket (not the descriptor number), which reads as closed once this
  // connection ends, so a handler may keep the closure as long as it likes.
  request.client_connected = [socket = socket_] { return socket->connected(); };
  return request;
}

Response Connection::call_dispatch(const Request& request) const {
  try {
    return dispatch_(request);
  } catch (const std::exception& e) {
    log_error("http: handler for {} {} threw: {}", request.method, request.path, e.what());
    Response response;
    response.status = 500;
    response.body = json_error(500, e.what(), "server_error");
    return response;
  } catch (...) {
    Response response;
    response.status = 500;
    response.body = json_error(500, "unknown error", "server_error");
    return response;
  }
}

// Sets the headers every response carries; returns false when the handler asked for
// "Connection: close".
template <class Message>
bool Connection::apply_headers(Message& message, const Response& response) const {
  unsigned status = response.status >= 100 && response.status <= 999
                        ? static_cast<unsigned>(response.status)
                        : 500u;
  message.result(status);
  message.set(bhttp::field::server, options_.server_header);
  if (!response.content_type.empty() && !status_has_no_body(status)) {
    message.set(bhttp::field::content_type, response.content_type);
  }
  bool close = false;
  for (const auto& [name, value] : response.headers) {
    // Framing is this layer's job, and CR/LF in a value would split the header.
    if (iequals(name, "content-length") || iequals(name, "transfer-encoding")) continue;
    if (name.find_first_of("\r\n:") != std::string::npos ||
        value.find_first_of("\r\n") != std::string::npos) {
      continue;
    }
    if (iequals(name, "connection")) {
      close = close || contains_token(value, "close");
      continue;
    }
    message.insert(beast::string_view(name.data(), name.size()),
                   beast::string_view(value.data(), value.size()));
  }
  return !close;
}

bool Connection::write_response(Response& response, unsigned version, bool keep_alive, bool head) {
  bhttp::response<bhttp::string_body> message;
  message.version(version);
  keep_alive = apply_headers(message, response) && keep_alive;
  message.keep_alive(keep_alive);
  if (!status_has_no_body(message.result_int())) {
    message.body() = std::move(response.body);
    message.prepare_payload();
  }
  bhttp::response_serializer<bhttp::string_body> serializer(message);
  beast::error_code ec;
  // HEAD: the headers a GET would get (Content-Length included), no body.
  if (head) {
    bhttp::write_header(stream_, serializer, ec);
  } else {
    bhttp::write(stream_, serializer, ec);
  }
  return !ec && keep_alive;
}

bool Connection::write_stream(Response& response, unsigned version, bool keep_alive) {
  // HTTP/1.0 has no chunked encoding: stream raw bytes and mark the end by closing.
  const bool chunked = version >= 11;
  bhttp::response<bhttp::empty_body> message;
  message.version(version);
  keep_alive = apply_headers(message, response) && keep_alive && chunked;
  message.keep_alive(keep_alive);
  if (chunked) message.chunked(true);
  bhttp::response_serializer<bhttp::empty_body> serializer(message);
  beast::error_code ec;
  bhttp::write_header(stream_, serializer, ec);
  StreamBody& body = *response.stream;
  bool delivered = false;
  try {
    delivered = !ec && pump_stream(body, response, chunked);
  } catch (...) {
    body.abandon();  // the producer must learn that nobody reads any more
    throw;
  }
  if (!delivered) {
    body.abandon();
    return false;
  }
  if (chunked) {
    static constexpr std::string_view kLastChunk = "0\r\n\r\n";
    asio::write(stream_, asio::buffer(kLastChunk.data(), kLastChunk.size()), ec);
    if (ec) return false;
  }
  return keep_alive;
}

bool Connection::pump_stream(StreamBody& body, const Response& response, bool chunked) {
  using Clock = std::chrono::steady_clock;
  const auto ping_interval = std::chrono::duration_cast<Clock::duration>(response.ping_interval);
  const bool ping = ping_interval.count() > 0 && !response.ping_chunk.empty();
  auto last_write = Clock::now();
  for (;;) {
    auto wait = kStreamPoll;
    if (ping) {
      auto until_ping =
          std::chrono::ceil<std::chrono::milliseconds>(last_write + ping_interval - Clock::now());
      wait = std::clamp(until_ping, std::chrono::milliseconds(0), kStreamPoll);
    }
    bool closed = false;
    std::optional<std::string> chunk = body.next(wait, closed);
    if (chunk) {
      // A write into a socket the peer already closed can still succeed (it only fills
      // the kernel buffer), so check the connection too.
      if (!socket_->connected() || !write_chunk(*chunk, chunked)) return false;
      last_write = Clock::now();
      continue;
    }
    if (closed) return true;
    if (!socket_->connected()) return false;
    if (ping && Clock::now() - last_write >= ping_interval) {
      if (!write_chunk(response.ping_chunk, chunked)) return false;
      last_write = Clock::now();
    }
  }
}

bool Connection::write_chunk(std::string_view data, bool chunked) {
  beast::error_code ec;
  if (!chunked) {
    asio::write(stream_, asio::buffer(data.data(), data.size()), ec);
    return !ec;
  }
  char size_line[24];
  int n = std::snprintf(size_line, sizeof size_line, "%zx\r\n", data.size());
  std::array<asio::const_buffer, 3> buffers{asio::buffer(size_line, static_cast<size_t>(n)),
                                            asio::buffer(data.data(), data.size()),
                                            asio::buffer("\r\n", 2)};
  asio::write(stream_, buffers, ec);
  return !ec;
}

void Connection::send_error(int status, std::string_view message, std::string_view type) {
  Response response;
  response.status = status;
  response.body = json_error(status, message, type);
  write_response(response, 11, false, false);
}

}  // namespace

std::string json_error(int code, std::string_view message, std::string_view type) {
  std::string out = "{\"error\":{\"code\":" + std::to_string(code) + ",\"message\":\"";
  for (char c : message) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escape[8];
          std::snprintf(escape, sizeof escape, "\\u%04x", static_cast<unsigned>(c));
          out += escape;
        } else {
          out += c;
        }
    }
  }
  out += "\",\"type\":\"";
  out += type;
  out += "\"}}";
  return out;
}

void serve_connection(const ServerOptions& options, const Dispatch& dispatch,
                      const std::shared_ptr<Socket>& socket, ConnectionOwner& owner, uint64_t id) {
  // Nothing may escape a connection thread: an uncaught exception would terminate the
  // whole server.
  try {
    Connection(options, dispatch, socket, owner, id).serve();
  } catch (const std::exception& e) {
    log_error("http: connection failed: {}", e.what());
  } catch (...) {
    log_error("http: connection failed with an unknown exception");
  }
  socket->close();
}

}  // namespace hearth::server::http

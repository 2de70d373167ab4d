#include "server/http/connection.h"

#include <algorithm>
#include <array>
#include <cstdio>
#include <exception>

#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>

#include "base/log.h"
#include "base/memory.h"
#include "server/http/url.h"

namespace hearth::server::http {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
using boost::system::error_code;

namespace {

// One streamed chunk carries at most this much of what the producer has ready.
constexpr size_t kMaxChunkBytes = 256 * 1024;
// Pipelined bytes read while a response is prepared are kept up to this much; past it the
// socket is no longer watched until the response is written.
constexpr size_t kMaxPipelinedBytes = 64 * 1024;
// An error answer is followed by draining what the client still sends, for this long at
// most, so the answer is not destroyed by a TCP reset.
constexpr std::chrono::milliseconds kLinger{1000};
constexpr size_t kMaxLingerBytes = 1u << 20;
constexpr size_t kLingerScratch = 4096;
// What the idle wait of a TLS connection reads (the header read takes the rest).
constexpr size_t kIdleReadBytes = 1024;

bool status_has_no_body(unsigned status) {
  return (status >= 100 && status < 200) || status == 204 || status == 304;
}

bool contains_token(std::string_view value, std::string_view token) {
  for (size_t i = 0; i + token.size() <= value.size(); ++i) {
    if (iequals(value.substr(i, token.size()), token)) return true;
  }
  return false;
}

std::string chunk_frame(std::string_view data) {
  char size_line[24];
  const int n = std::snprintf(size_line, sizeof size_line, "%zx\r\n", data.size());
  std::string framed;
  framed.reserve(static_cast<size_t>(n) + data.size() + 2);
  framed.append(size_line, static_cast<size_t>(n));
  framed.append(data);
  framed.append("\r\n");
  return framed;
}

}  // namespace

Connection::Connection(Socket socket, asio::ssl::context* tls, std::shared_ptr<ConnectionHost> host,
                       uint64_t id)
    : transport_(std::move(socket), tls),
      executor_(transport_.get_executor()),
      host_(std::move(host)),
      id_(id),
      options_(host_->options()),
      timeout_(std::chrono::seconds(std::max(1, options_.timeout_seconds))),
      deadline_(executor_),
      ping_timer_(executor_) {}

Connection::~Connection() {
  if (stream_) stream_->abandon();
  if (pending_) pending_->cancel();
  error_code ignored;
  transport_.socket().close(ignored);
}

void Connection::start() {
  asio::post(executor_, [self = shared_from_this()] {
    error_code ignored;
    // Streamed tokens are small writes that must leave at once, not wait for Nagle.
    self->transport_.socket().set_option(asio::ip::tcp::no_delay(true), ignored);
    if (!self->transport_.tls()) {
      self->wait_for_request();
      return;
    }
    self->handshake([self] { self->wait_for_request(); });
  });
}

void Connection::reject(Response response) {
  asio::post(executor_, [self = shared_from_this(), response = std::move(response)]() mutable {
    self->keep_alive_ = false;
    self->linger_after_ = true;
    if (!self->transport_.tls()) {
      self->write_plain(response);
      return;
    }
    self->handshake(
        [self, response = std::move(response)]() mutable { self->write_plain(response); });
  });
}

void Connection::close_soon(bool force) {
  asio::post(executor_, [self = shared_from_this(), force] {
    if (self->phase_ == Phase::kClosed) return;
    if (force || self->phase_ == Phase::kIdle || self->phase_ == Phase::kHandshake) {
      self->abandon_work();
      self->close();
      return;
    }
    self->last_response_ = true;
  });
}

// --- Reading a request -------------------------------------------------------------------

// The whole handshake has the header deadline: a client that connects and stalls (or never
// speaks TLS) is cut as soon as one that stalls in its request headers.
void Connection::handshake(std::function<void()> next) {
  phase_ = Phase::kHandshake;
  arm_deadline(std::min(options_.header_deadline, timeout_));
  transport_.async_handshake(
      [self = shared_from_this(), next = std::move(next)](const error_code& ec) {
        if (self->phase_ != Phase::kHandshake) return;
        self->disarm_deadline();
        if (ec || self->timed_out_) {
          // A plain-HTTP request, a client that distrusts the certificate, or a stall: there
          // is no channel to answer on.
          log_debug("http: connection {}: TLS handshake failed: {}", self->id_,
                    self->timed_out_ ? std::string("timed out") : ec.message());
          self->close();
          return;
        }
        next();
      });
}

void Connection::wait_for_request() {
  if (last_response_ || host_->stopping()) {
    close();
    return;
  }
  phase_ = Phase::kIdle;
  if (buffer_.size() > 0) {  // a pipelined request is already here
    read_header();
    return;
  }
  if (buffer_.capacity() > 16 * 1024) buffer_.shrink_to_fit();
  host_->set_idle(id_, true);
  arm_deadline(timeout_);  // the keep-alive (and first-request) idle timeout
  if (transport_.tls()) {
    wait_for_tls_request();
    return;
  }
  transport_.socket().async_wait(Socket::wait_read,
                                 [self = shared_from_this()](const error_code& ec) {
                                   if (self->phase_ != Phase::kIdle) return;  // closed meanwhile
                                   if (ec || self->timed_out_) {
                                     self->close();
                                     return;
                                   }
                                   self->read_header();
                                 });
}

// Over TLS, decrypted bytes may already wait inside the TLS stream, where the socket's
// readiness does not show them: the idle wait is a small read instead.
void Connection::wait_for_tls_request() {
  transport_.async_read_some(buffer_.prepare(kIdleReadBytes),
                             [self = shared_from_this()](const error_code& ec, size_t n) {
                               if (self->phase_ != Phase::kIdle) return;
                               if (!ec) self->buffer_.commit(n);
                               if (ec || self->timed_out_) {
                                 self->close();
                                 return;
                               }
                               self->read_header();
                             });
}

void Connection::read_header() {
  host_->set_idle(id_, false);
  phase_ = Phase::kHeader;
  parser_.emplace();
  configure_parser(*parser_, options_);
  arm_deadline(std::min(options_.header_deadline, timeout_));
  bhttp::async_read_header(
      transport_, buffer_, *parser_,
      [self = shared_from_this()](const error_code& ec, size_t) { self->on_header(ec); });
}

bool Connection::read_failed(const error_code& ec, std::string_view what) {
  disarm_deadline();
  // A read that completed as the deadline fired is kept.
  if (timed_out_ && ec == asio::error::operation_aborted) {
    fail(TransportError::kRequestTimeout, std::string(what) + " not received in time");
    return true;
  }
  if (!ec) return false;
  if (auto error = classify_read_error(ec)) {
    fail(*error, ec.message());
  } else {
    close();  // nobody to answer
  }
  return true;
}

void Connection::on_header(const error_code& ec) {
  if (phase_ != Phase::kHeader || read_failed(ec, "request headers")) return;
  if (auto error = check_header(*parser_, options_)) {
    fail(*error, "");
    return;
  }
  version_ = parser_->get().version();
  keep_alive_ = parser_->get().keep_alive();
  head_ = parser_->get().method() == bhttp::verb::head;
  if (!expects_continue(*parser_) || parser_->is_done()) {
    read_body();
    return;
  }
  // curl waits a second for this before sending bodies over 1 MiB.
  static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
  arm_deadline(timeout_);
  asio::async_write(transport_, asio::buffer(kContinue.data(), kContinue.size()),
                    [self = shared_from_this()](const error_code& write_ec, size_t) {
                      if (self->phase_ != Phase::kHeader) return;
                      if (write_ec) {
                        self->close();
                        return;
                      }
                      self->read_body();
                    });
}

void Connection::read_body() {
  phase_ = Phase::kBody;
  if (parser_->is_done()) {
    on_body({});
    return;
  }
  arm_deadline(timeout_);
  bhttp::async_read(
      transport_, buffer_, *parser_,
      [self = shared_from_this()](const error_code& ec, size_t) { self->on_body(ec); });
}

void Connection::on_body(const error_code& ec) {
  if (phase_ != Phase::kBody || read_failed(ec, "request body")) return;
  handle();
}

// Requests without a body (health checks, /props, /slots, /metrics) are answered on the
// I/O thread; the others run their handler on the host's workers, so parsing and tokenizing a
// large body never holds an I/O thread (and with it every other client's /health).
void Connection::handle() {
  ++response_id_;
  auto request = std::make_shared<Request>(to_request(*parser_));
  parser_.reset();
  if (request->body.empty()) {
    phase_ = Phase::kDispatching;
    on_dispatched(run_handler(*host_, *request));
    return;
  }
  phase_ = Phase::kDispatching;
  watch_peer();
  const bool large = request->body.size() > kLargeBody;
  asio::post(large ? host_->large_body_workers() : host_->workers(),
             [self = shared_from_this(), request = std::move(request), large]() mutable {
               // Bulk work: the scheduler and the small requests' workers come first.
               if (large) lower_this_thread_priority();
               Response response = run_handler(*self->host_, *request);
               request.reset();
               // Megabytes of parsed body and intermediate values were just freed: hand the
               // pages back, or the process keeps its peak size for good.
               if (large) return_free_memory();
               asio::post(self->executor_, [self, response = std::move(response)]() mutable {
                 self->on_dispatched(std::move(response));
               });
             });
}

Response Connection::run_handler(ConnectionHost& host, const Request& request) {
  try {
    return host.dispatch(request);
  } catch (const std::exception& e) {
    log_error("http: handler for {} {} threw: {}", request.method, request.path, e.what());
    return host.render_error(TransportError::kHandlerFailed, e.what());
  } catch (...) {
    return host.render_error(TransportError::kHandlerFailed, "unknown error");
  }
}

// A response that will not be written: its producer is told.
void Connection::drop(Response& response) {
  if (response.pending) response.pending->cancel();
  if (response.stream) response.stream->abandon();
}

void Connection::on_dispatched(Response response) {
  if (phase_ != Phase::kDispatching) {  // the client left, or the server closed it
    drop(response);
    return;
  }
  if (!response.pending) {
    send(std::move(response));
    return;
  }
  phase_ = Phase::kWaiting;
  pending_ = std::move(response.pending);
  pending_headers_ = std::move(response.headers);
  watch_peer();
  std::weak_ptr<Connection> weak = weak_from_this();
  pending_->on_ready([weak](PendingResponse::Render render) {
    auto self = weak.lock();
    if (!self) return;
    asio::post(self->executor_, [self, render = std::move(render)]() mutable {
      self->on_resolved(std::move(render));
    });
  });
}

// --- Answering it --------------------------------------------------------------------------

// The answer is rendered on the host's workers too: a large body (every token's
// probabilities, say) is JSON that takes a while to write out.
void Connection::on_resolved(PendingResponse::Render render) {
  if (phase_ != Phase::kWaiting) return;
  pending_.reset();
  phase_ = Phase::kRendering;
  asio::post(host_->workers(), [self = shared_from_this(), render = std::move(render)] {
    Response response;
    try {
      response = render ? render() : self->host_->render_error(TransportError::kHandlerFailed, "");
    } catch (const std::exception& e) {
      log_error("http: rendering a response failed: {}", e.what());
      response = self->host_->render_error(TransportError::kHandlerFailed, e.what());
    }
    asio::post(self->executor_, [self, response = std::move(response)]() mutable {
      self->on_rendered(std::move(response));
    });
  });
}

void Connection::on_rendered(Response response) {
  if (phase_ != Phase::kRendering) {
    drop(response);
    return;
  }
  for (auto& header : pending_headers_) response.headers.push_back(std::move(header));
  pending_headers_.clear();
  send(std::move(response));
}

void Connection::send(Response response) {
  if (response.stream && !head_) {
    start_stream(response);
    return;
  }
  if (response.stream) response.stream->abandon();  // HEAD: the headers alone
  write_plain(response);
}

template <class Message>
void Connection::apply_headers(Message& message, const Response& response) {
  const unsigned status = response.status >= 100 && response.status <= 999
                              ? static_cast<unsigned>(response.status)
                              : 500u;
  message.result(status);
  message.set(bhttp::field::server, options_.server_header);
  if (!response.content_type.empty() && !status_has_no_body(status)) {
    message.set(bhttp::field::content_type, response.content_type);
  }
  for (const auto& [name, value] : response.headers) {
    // Framing is this layer's job, and CR/LF in a value would split the header.
    if (iequals(name, "content-length") || iequals(name, "transfer-encoding")) continue;
    if (name.empty() || name.find_first_of("\r\n: ") != std::string::npos ||
        value.find_first_of("\r\n") != std::string::npos) {
      continue;
    }
    if (iequals(name, "connection")) {
      if (contains_token(value, "close")) keep_alive_ = false;
      continue;
    }
    message.insert(beast::string_view(name.data(), name.size()),
                   beast::string_view(value.data(), value.size()));
  }
}

void Connection::write_plain(Response& response) {
  phase_ = Phase::kWriting;
  plain_ = std::make_unique<bhttp::response<bhttp::string_body>>();
  plain_->version(version_);
  apply_headers(*plain_, response);
  keep_alive_ = keep_alive_ && !last_response_ && !host_->stopping();
  plain_->keep_alive(keep_alive_);
  if (!status_has_no_body(plain_->result_int())) {
    plain_->body() = std::move(response.body);
    plain_->prepare_payload();
  }
  plain_serializer_.emplace(*plain_);
  arm_deadline(timeout_);
  const bool large = plain_->body().size() > kLargeBody;
  auto done = [self = shared_from_this(), large](const error_code& ec, size_t) {
    if (self->phase_ != Phase::kWriting) return;
    self->disarm_deadline();
    self->plain_serializer_.reset();
    self->plain_.reset();
    // A multi-megabyte answer was just freed: its pages go back to the system.
    if (large) return_free_memory();
    if (ec || self->timed_out_) {
      self->close();
      return;
    }
    self->finish_response();
  };
  // HEAD: the headers a GET would get (Content-Length included), no body.
  if (head_) {
    bhttp::async_write_header(transport_, *plain_serializer_, std::move(done));
  } else {
    bhttp::async_write(transport_, *plain_serializer_, std::move(done));
  }
}

void Connection::start_stream(Response& response) {
  phase_ = Phase::kStreaming;
  // HTTP/1.0 has no chunked encoding: raw bytes, the end marked by closing.
  chunked_ = version_ >= 11;
  stream_ = std::move(response.stream);
  ping_interval_ = response.ping_chunk.empty() ? std::chrono::seconds(0) : response.ping_interval;
  ping_chunk_ = std::move(response.ping_chunk);
  stream_head_ = std::make_unique<bhttp::response<bhttp::empty_body>>();
  stream_head_->version(version_);
  apply_headers(*stream_head_, response);
  keep_alive_ = keep_alive_ && chunked_ && !last_response_ && !host_->stopping();
  stream_head_->keep_alive(keep_alive_);
  if (chunked_) stream_head_->chunked(true);
  head_serializer_.emplace(*stream_head_);
  std::weak_ptr<Connection> weak = weak_from_this();
  stream_->set_notify([weak, id = response_id_] {
    auto self = weak.lock();
    if (!self) return;
    asio::post(self->executor_, [self, id] {
      if (self->streaming(id) && !self->writing_) self->pump();
    });
  });
  watch_peer();
  writing_ = true;
  arm_deadline(timeout_);
  bhttp::async_write_header(
      transport_, *head_serializer_,
      [self = shared_from_this(), id = response_id_](const error_code& ec, size_t) {
        if (self->stream_write_done(id, ec)) self->pump();
      });
}

bool Connection::stream_write_done(uint64_t id, const error_code& ec) {
  if (!streaming(id)) return false;
  writing_ = false;
  disarm_deadline();
  if (ec || timed_out_) {
    // The client is gone, or stopped reading for longer than the timeout: its work is
    // dropped.
    abandon_work();
    close();
    return false;
  }
  last_write_ = Clock::now();
  return true;
}

bool Connection::streaming(uint64_t id) const {
  return phase_ == Phase::kStreaming && id == response_id_ && stream_ != nullptr;
}

void Connection::pump() {
  if (!streaming(response_id_) || writing_) return;
  std::string data;
  const bool ended = stream_->take(data, kMaxChunkBytes);
  if (!data.empty()) {
    write_stream_bytes(chunked_ ? chunk_frame(data) : std::move(data), false);
    return;
  }
  if (ended) {
    if (chunked_) {
      write_stream_bytes("0\r\n\r\n", true);
    } else {
      keep_alive_ = false;
      stream_.reset();
      finish_response();
    }
    return;
  }
  if (ping_interval_.count() <= 0) return;  // wait for the producer's notify
  ping_timer_.expires_at(last_write_ + ping_interval_);
  ping_timer_.async_wait([self = shared_from_this(), id = response_id_](const error_code& ec) {
    if (!ec && self->streaming(id)) self->on_ping();
  });
}

void Connection::on_ping() {
  if (!streaming(response_id_) || writing_) return;
  if (Clock::now() - last_write_ < ping_interval_) {
    pump();  // data was written since the timer was set: wait again
    return;
  }
  write_stream_bytes(chunked_ ? chunk_frame(ping_chunk_) : ping_chunk_, false);
}

void Connection::write_stream_bytes(std::string bytes, bool last) {
  writing_ = true;
  out_ = std::move(bytes);
  arm_deadline(timeout_);
  asio::async_write(
      transport_, asio::buffer(out_),
      [self = shared_from_this(), last, id = response_id_](const error_code& ec, size_t) {
        if (!self->stream_write_done(id, ec)) return;
        if (!last) {
          self->pump();
          return;
        }
        self->stream_.reset();
        self->finish_response();
      });
}

void Connection::finish_response() {
  phase_ = Phase::kDone;  // late completions of this response's stream find nothing to do
  ping_timer_.cancel();
  if (stream_) stream_->set_notify(nullptr);
  stream_.reset();
  stream_head_.reset();
  head_serializer_.reset();
  out_.clear();
  out_.shrink_to_fit();
  if (linger_after_) {
    close_gracefully();
    return;
  }
  if (!keep_alive_ || last_response_ || host_->stopping()) {
    shut_down();
    return;
  }
  resume_reading();
}

void Connection::fail(TransportError error, std::string_view detail) {
  log_debug("http: connection {}: {} ({})", id_, transport_status(error), detail);
  parser_.reset();
  keep_alive_ = false;
  linger_after_ = true;
  head_ = false;
  Response response = host_->render_error(error, detail);
  write_plain(response);
}

// --- Watching the peer -------------------------------------------------------------------

void Connection::watch_peer() {
  if (watching_ || buffer_.size() >= kMaxPipelinedBytes) return;
  watching_ = true;
  transport_.async_read_some(
      buffer_.prepare(4096),
      [self = shared_from_this()](const error_code& ec, size_t n) { self->on_peer(ec, n); });
}

void Connection::on_peer(const error_code& ec, size_t n) {
  watching_ = false;
  if (!ec) buffer_.commit(n);  // bytes of a pipelined request: kept for later
  if (phase_ == Phase::kClosed) return;
  if (phase_ == Phase::kLinger) {
    if (close_notify_after_watch_) send_close_notify();
    return;
  }
  if (resume_after_watch_) {
    resume_after_watch_ = false;
    wait_for_request();
    return;
  }
  if (ec) {
    // EOF or a reset while the answer is prepared or streamed: the client left.
    abandon_work();
    close();
    return;
  }
  if (phase_ == Phase::kDispatching || phase_ == Phase::kWaiting || phase_ == Phase::kRendering ||
      phase_ == Phase::kStreaming || phase_ == Phase::kWriting || phase_ == Phase::kDone) {
    watch_peer();
  }
}

// After a response: the next request, once the watch read (if any) has given up.
void Connection::resume_reading() {
  if (!watching_) {
    wait_for_request();
    return;
  }
  resume_after_watch_ = true;
  error_code ignored;
  transport_.socket().cancel(ignored);  // only the watch read is outstanding now
}

// --- Deadlines and closing -----------------------------------------------------------------

void Connection::arm_deadline(std::chrono::milliseconds after) {
  timed_out_ = false;
  const uint64_t generation = ++deadline_generation_;
  deadline_.expires_after(after);
  deadline_.async_wait([self = shared_from_this(), generation](const error_code& ec) {
    if (ec || generation != self->deadline_generation_) return;
    self->on_deadline();
  });
}

void Connection::disarm_deadline() {
  ++deadline_generation_;
  deadline_.cancel();
}

void Connection::on_deadline() {
  timed_out_ = true;
  switch (phase_) {
    case Phase::kHandshake:
    case Phase::kHeader:
    case Phase::kBody:
    case Phase::kIdle: {
      // The pending read (or handshake) completes with operation_aborted and sees
      // timed_out_.
      error_code ignored;
      transport_.socket().cancel(ignored);
      break;
    }
    case Phase::kWriting:
    case Phase::kStreaming:
      // A write stayed blocked for the whole timeout: the client stopped reading.
      log_debug("http: connection {}: write timed out", id_);
      abandon_work();
      close();
      break;
    case Phase::kLinger:
      close();
      break;
    case Phase::kDispatching:
    case Phase::kWaiting:
    case Phase::kRendering:
    case Phase::kDone:
    case Phase::kClosed:
      break;
  }
}

void Connection::abandon_work() {
  if (pending_) {
    pending_->cancel();
    pending_.reset();
  }
  if (stream_) {
    stream_->abandon();
    stream_.reset();
  }
}

void Connection::close_gracefully() {
  if (transport_.tls()) {
    // Draining raw bytes would break the TLS stream before its close_notify: the exchange
    // of close_notify (bounded the same way) lets the answer arrive instead.
    shut_down();
    return;
  }
  phase_ = Phase::kLinger;
  error_code ignored;
  transport_.socket().shutdown(Socket::shutdown_send, ignored);
  arm_deadline(kLinger);
  linger_scratch_ = std::make_unique<char[]>(kLingerScratch);
  drain_once();
}

// An orderly end: over TLS the close_notify tells the client the response was not cut
// (an HTTP/1.0 stream ends only by the close); it waits kLinger at most for the client's.
void Connection::shut_down() {
  if (!transport_.tls()) {
    close();
    return;
  }
  phase_ = Phase::kLinger;
  arm_deadline(kLinger);
  if (watching_) {
    // One read at a time through TLS: the watch read ends first, then on_peer goes on.
    close_notify_after_watch_ = true;
    error_code ignored;
    transport_.socket().cancel(ignored);
    return;
  }
  send_close_notify();
}

void Connection::send_close_notify() {
  close_notify_after_watch_ = false;
  transport_.async_shutdown([self = shared_from_this()](const error_code&) {
    if (self->phase_ == Phase::kLinger) self->close();
  });
}

void Connection::drain_once() {
  transport_.socket().async_read_some(asio::buffer(linger_scratch_.get(), kLingerScratch),
                                      [self = shared_from_this()](const error_code& ec, size_t n) {
                                        if (self->phase_ != Phase::kLinger) return;
                                        self->lingered_ += n;
                                        if (ec || self->lingered_ >= kMaxLingerBytes) {
                                          self->close();
                                          return;
                                        }
                                        self->drain_once();
                                      });
}

void Connection::close() {
  if (phase_ == Phase::kClosed) return;
  phase_ = Phase::kClosed;
  disarm_deadline();
  ping_timer_.cancel();
  if (stream_) stream_->set_notify(nullptr);
  error_code ignored;
  transport_.socket().shutdown(Socket::shutdown_both, ignored);
  transport_.socket().close(ignored);
  // Last: the host drops its reference; the handler running this holds another.
  host_->connection_closed(id_);
}

}  // namespace hearth::server::http

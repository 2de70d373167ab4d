// One client connection, driven by asynchronous operations on its own strand: wait for a
// request, read its headers and body under their deadlines, dispatch, then write the
// response (plain, or streamed chunk by chunk as the producer has data), and loop while the
// connection is kept alive. While a handler's answer is pending or a stream is written, the
// socket is watched so a client that leaves is noticed at once. Over TLS the same loop runs
// after a handshake under the header deadline.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/message.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/string_body.hpp>

#include "server/http/http.h"
#include "server/http/request_reader.h"
#include "server/http/transport.h"

namespace hearth::server::http {

// What a connection needs from the server that owns it. Called on the connection's strand.
class ConnectionHost {
 public:
  virtual ~ConnectionHost() = default;
  virtual const ServerOptions& options() const = 0;
  virtual Response dispatch(const Request& request) const = 0;
  virtual Response render_error(TransportError error, std::string_view detail) const = 0;
  // The connection waits for a request's first byte (idle) or works on one (busy).
  virtual void set_idle(uint64_t id, bool idle) = 0;
  // The connection closed its socket: the host drops it (the registry holds each open
  // connection, so one waiting for a producer stays alive with no handler pending).
  virtual void connection_closed(uint64_t id) = 0;
  virtual bool stopping() const = 0;
  // Where handlers and renders run, off the I/O threads.
  virtual boost::asio::any_io_executor workers() = 0;
  // Where the handlers of bodies over kLargeBody run: their own threads, so parsing and
  // tokenizing megabytes never makes a small request wait.
  virtual boost::asio::any_io_executor large_body_workers() = 0;
};

// A body this large goes to the large-body workers (a chat request with tools is a few KiB).
inline constexpr size_t kLargeBody = 256 * 1024;

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  using Socket = boost::asio::ip::tcp::socket;

  // With `tls` (the server's context, which outlives its connections) the connection
  // speaks HTTPS.
  Connection(Socket socket, boost::asio::ssl::context* tls, std::shared_ptr<ConnectionHost> host,
             uint64_t id);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Begins serving (posts to the strand).
  void start();
  // Answers `response` (the connection limit's 503) without reading a request, then closes.
  void reject(Response response);
  // From any thread. Closes the connection if it waits for a request; otherwise its current
  // response is its last. With `force`, closes it whatever it does (abandoning its work).
  void close_soon(bool force);

 private:
  // kDone: a response was written; the next request is read once the peer watch ends.
  // kDispatching: the handler runs; kWaiting: its answer is pending with a producer;
  // kRendering: the answer is being rendered on a worker.
  enum class Phase {
    kHandshake,
    kIdle,
    kHeader,
    kBody,
    kDispatching,
    kWaiting,
    kRendering,
    kWriting,
    kStreaming,
    kDone,
    kLinger,
    kClosed
  };
  using Clock = std::chrono::steady_clock;

  // TLS: the handshake under the header deadline, then `next`; a failure closes.
  void handshake(std::function<void()> next);
  // Reading a request.
  void wait_for_request();
  void wait_for_tls_request();
  void read_header();
  void on_header(const boost::system::error_code& ec);
  void read_body();
  void on_body(const boost::system::error_code& ec);
  // After a header or body read: answers a deadline or a parse error, or closes when there
  // is nobody to answer; false when the read succeeded.
  bool read_failed(const boost::system::error_code& ec, std::string_view what);
  void handle();
  static Response run_handler(ConnectionHost& host, const Request& request);
  void on_dispatched(Response response);
  static void drop(Response& response);
  // Answering it.
  void on_resolved(PendingResponse::Render render);
  void on_rendered(Response response);
  void send(Response response);
  void write_plain(Response& response);
  void start_stream(Response& response);
  // True while response `id`'s stream is being written.
  bool streaming(uint64_t id) const;
  // The common end of a stream write: false when the stream is gone or the write failed
  // (the connection is then closed), true when the caller should continue.
  bool stream_write_done(uint64_t id, const boost::system::error_code& ec);
  void pump();
  void write_stream_bytes(std::string bytes, bool last);
  void on_ping();
  void finish_response();
  void fail(TransportError error, std::string_view detail);
  // Watching the peer while a response is prepared or streamed.
  void watch_peer();
  void on_peer(const boost::system::error_code& ec, size_t n);
  void resume_reading();
  // Deadlines and closing.
  void arm_deadline(std::chrono::milliseconds after);
  void disarm_deadline();
  void on_deadline();
  void abandon_work();
  void close_gracefully();
  // The end of an orderly close: TLS sends its close_notify first (bounded by kLinger).
  void shut_down();
  void send_close_notify();
  void drain_once();
  void close();
  template <class Message>
  void apply_headers(Message& message, const Response& response);

  Transport transport_;
  boost::asio::any_io_executor executor_;  // the connection's strand
  std::shared_ptr<ConnectionHost> host_;
  const uint64_t id_;
  const ServerOptions& options_;
  const std::chrono::milliseconds timeout_;

  Phase phase_ = Phase::kIdle;
  boost::asio::steady_timer deadline_;
  uint64_t deadline_generation_ = 0;
  bool timed_out_ = false;
  boost::asio::steady_timer ping_timer_;
  // Kept across requests: it may already hold the start of a pipelined next request.
  boost::beast::flat_buffer buffer_;
  std::optional<RequestParser> parser_;

  // The request being answered.
  unsigned version_ = 11;
  bool keep_alive_ = false;
  bool head_ = false;
  bool last_response_ = false;  // close after the current response (stop, eviction)
  std::shared_ptr<PendingResponse> pending_;
  std::vector<std::pair<std::string, std::string>> pending_headers_;
  std::unique_ptr<boost::beast::http::response<boost::beast::http::string_body>> plain_;
  std::unique_ptr<boost::beast::http::response<boost::beast::http::empty_body>> stream_head_;
  std::optional<boost::beast::http::response_serializer<boost::beast::http::string_body>>
      plain_serializer_;
  std::optional<boost::beast::http::response_serializer<boost::beast::http::empty_body>>
      head_serializer_;
  bool linger_after_ = false;  // an error answer: drain what the client still sends
  std::unique_ptr<char[]> linger_scratch_;
  size_t lingered_ = 0;

  // Streaming. Completions of the stream's writes, pings and notifications carry the
  // response they belong to; a late one for an earlier response is ignored.
  uint64_t response_id_ = 0;
  std::shared_ptr<StreamSource> stream_;
  bool chunked_ = true;
  bool writing_ = false;
  std::string out_;
  std::chrono::seconds ping_interval_{0};
  std::string ping_chunk_;
  Clock::time_point last_write_;

  // Peer watch.
  bool watching_ = false;
  bool resume_after_watch_ = false;
  bool close_notify_after_watch_ = false;
};

}  // namespace hearth::server::http

// The byte stream under one connection: a TCP socket, or TLS over it. Connection speaks to
// this one type, so plain HTTP and HTTPS share the whole request/response loop; only the
// handshake, the wait for a request and the orderly close differ. It is an AsyncReadStream
// and AsyncWriteStream for Beast's HTTP operations.
#pragma once

#include <memory>
#include <optional>
#include <utility>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/ssl/context.hpp>
#include <boost/beast/ssl/ssl_stream.hpp>

namespace hearth::server::http {

class Transport {
 public:
  using Socket = boost::asio::ip::tcp::socket;
  using TlsStream = boost::beast::ssl_stream<Socket>;
  using executor_type = Socket::executor_type;

  // With a TLS context the connection speaks TLS (after handshake()); without, plain TCP.
  Transport(Socket socket, boost::asio::ssl::context* tls) {
    if (tls != nullptr) {
      tls_.emplace(std::move(socket), *tls);
    } else {
      plain_.emplace(std::move(socket));
    }
  }

  bool tls() const { return tls_.has_value(); }
  // The TCP socket: options, cancel, shutdown and close act on it whatever the transport.
  Socket& socket() { return tls_ ? tls_->next_layer() : *plain_; }
  executor_type get_executor() { return socket().get_executor(); }

  template <class MutableBuffers, class Handler>
  auto async_read_some(const MutableBuffers& buffers, Handler&& handler) {
    if (tls_) return tls_->async_read_some(buffers, std::forward<Handler>(handler));
    return plain_->async_read_some(buffers, std::forward<Handler>(handler));
  }

  template <class ConstBuffers, class Handler>
  auto async_write_some(const ConstBuffers& buffers, Handler&& handler) {
    if (tls_) return tls_->async_write_some(buffers, std::forward<Handler>(handler));
    return plain_->async_write_some(buffers, std::forward<Handler>(handler));
  }

  // TLS only: the server side of the handshake, and the close_notify exchange.
  template <class Handler>
  void async_handshake(Handler&& handler) {
    tls_->async_handshake(boost::asio::ssl::stream_base::server, std::forward<Handler>(handler));
  }
  template <class Handler>
  void async_shutdown(Handler&& handler) {
    tls_->async_shutdown(std::forward<Handler>(handler));
  }

 private:
  std::optional<Socket> plain_;
  std::optional<TlsStream> tls_;
};

}  // namespace hearth::server::http

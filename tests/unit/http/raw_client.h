// A tiny blocking HTTP/1.1 client over a raw socket, so tests see exactly what the server
// puts on the wire (chunk boundaries, headers, when the connection closes). In the binary's
// TLS pass (clients_speak_tls()) the same bytes travel inside TLS.
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hearth::test {
class ClientSocket;
}

namespace hearth::server::http::testing {

using namespace std::chrono_literals;

struct RawResponse {
  int status = 0;
  std::vector<std::pair<std::string, std::string>> headers;
  std::string body;                 // all chunks joined for chunked bodies
  std::vector<std::string> chunks;  // chunked bodies only, in order
  std::optional<std::string> header(std::string_view name) const;
};

// True when $HEARTH_HTTP_TEST_TLS is set (ctest's second pass over these tests): the
// fixture's server speaks HTTPS and every RawClient TLS.
bool clients_speak_tls();

class RawClient {
 public:
  explicit RawClient(int port);
  ~RawClient();
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  bool is_open() const;
  bool send(std::string_view data);
  // Sends "METHOD target HTTP/1.1" with Host and optional extra header lines and body.
  bool send_request(std::string_view method, std::string_view target, std::string_view body = {},
                    std::string_view extra_headers = {});

  // Status line and headers; nullopt on timeout or close.
  std::optional<RawResponse> read_head(std::chrono::milliseconds timeout = 5s);
  // One chunk of a chunked body ("" for the last chunk); nullopt on timeout or close.
  std::optional<std::string> read_chunk(std::chrono::milliseconds timeout = 5s);
  // A complete response: head plus Content-Length or chunked body.
  std::optional<RawResponse> read_response(std::chrono::milliseconds timeout = 5s);
  // Exactly `n` bytes (or nullopt).
  std::optional<std::string> read_exact(size_t n, std::chrono::milliseconds timeout = 5s);
  // True when the server closes the connection (EOF or reset) within `timeout`; bytes
  // that arrive meanwhile are discarded.
  bool wait_closed(std::chrono::milliseconds timeout);
  // Closes; with `reset` the peer sees a TCP RST instead of a FIN.
  void close(bool reset = false);

 private:
  // Reads more bytes into buffer_; false on timeout, EOF or error.
  bool fill(std::chrono::steady_clock::time_point deadline);
  std::optional<std::string> read_line(std::chrono::steady_clock::time_point deadline);

  std::unique_ptr<hearth::test::ClientSocket> socket_;
  std::string buffer_;
};

}  // namespace hearth::server::http::testing

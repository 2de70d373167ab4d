// Starts an HttpServer on 127.0.0.1 with an ephemeral port and a test's dispatch function;
// stops it and joins every helper thread at the end of the test. In the TLS pass
// (clients_speak_tls()) the server has a self-signed certificate and serves HTTPS.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <thread>
#include <vector>

#include "server/http/http.h"
#include "support/tls_files.h"
#include "unit/http/raw_client.h"

namespace hearth::server::http::testing {

class HttpServerTest : public ::testing::Test {
 protected:
  void start(Dispatch dispatch, ServerOptions options = {}) {
    options.host = "127.0.0.1";
    options.port = 0;
    if (clients_speak_tls()) {
      static const hearth::test::TlsFiles files = hearth::test::make_tls_files();
      ASSERT_TRUE(files.error.empty()) << files.error;
      options.ssl_key_file = files.key;
      options.ssl_cert_file = files.cert;
    }
    server_ = std::make_unique<HttpServer>(options, std::move(dispatch));
    Status status = server_->listen();
    ASSERT_TRUE(status.is_ok()) << status.to_string();
    ASSERT_GT(server_->port(), 0);
    run_thread_ = std::thread([this] { server_->run(); });
  }

  void TearDown() override {
    if (server_) server_->stop(std::chrono::milliseconds(1000));
    if (run_thread_.joinable()) run_thread_.join();
    for (auto& thread : helpers_) thread.join();
  }

  int port() const { return server_->port(); }
  // A producer or other helper thread, joined after the server stopped.
  template <class F>
  void spawn(F&& f) {
    std::lock_guard<std::mutex> lock(helpers_mutex_);
    helpers_.emplace_back(std::forward<F>(f));
  }

  std::unique_ptr<HttpServer> server_;
  std::thread run_thread_;
  std::mutex helpers_mutex_;
  std::vector<std::thread> helpers_;
};

inline Response text(std::string body, int status = 200) {
  Response response;
  response.status = status;
  response.content_type = "text/plain";
  response.body = std::move(body);
  return response;
}

// An error renderer whose body names only the status, so tests can tell it was used.
inline Response json_errors(TransportError error, std::string_view) {
  Response response;
  response.status = transport_status(error);
  response.body = "{\"status\":" + std::to_string(response.status) + "}";
  return response;
}

}  // namespace hearth::server::http::testing

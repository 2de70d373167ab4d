#include "server/server.h"

#include <chrono>

#include "server/server_state.h"

namespace hearth::server {

struct Server::Impl {
  ServerState state;
  std::unique_ptr<http::HttpServer> http;
};

Server::Server(ServerConfig config) : impl_(std::make_unique<Impl>()) {
  impl_->state.config = std::move(config);
  impl_->state.start_time_us = std::chrono::duration_cast<std::chrono::microseconds>(
                                   std::chrono::steady_clock::now().time_since_epoch())
                                   .count();
  impl_->state.streams = std::make_unique<streams::StreamStore>(impl_->state.config.stream_limits);
  ServerState* state = &impl_->state;
  http::ServerOptions options = impl_->state.config.http;
  options.render_error = transport_error_response;
  impl_->http = std::make_unique<http::HttpServer>(
      std::move(options),
      [state](const http::Request& request) { return dispatch_request(*state, request); });
}

Server::~Server() {
  stop();
}

Status Server::listen() {
  return impl_->http->listen();
}
int Server::port() const {
  return impl_->http->port();
}

void Server::set_ready(std::shared_ptr<scheduler::Scheduler> scheduler, ModelInfo info) {
  impl_->state.scheduler = std::move(scheduler);
  impl_->state.model = std::move(info);
  impl_->state.ready.store(true);
}

const RequestDefaults& Server::defaults() const {
  return impl_->state.config.defaults;
}

void Server::set_defaults(RequestDefaults defaults) {
  impl_->state.config.defaults = std::move(defaults);
}

void Server::set_model_path(std::string path) {
  impl_->state.config.model_path = std::move(path);
}

http::ServerStats Server::http_stats() const {
  return impl_->http->stats();
}

void Server::run() {
  impl_->http->run();
}

void Server::stop() {
  if (impl_->state.stopping.exchange(true)) return;
  // Running completions are cancelled first so blocked handlers return, then the listener
  // and the connections close.
  if (impl_->state.scheduler) impl_->state.scheduler->stop();
  // Resumable streams end too, so their readers' connections can close.
  impl_->state.streams->shutdown();
  impl_->http->stop(std::chrono::milliseconds(3000));
}

http::Response Server::dispatch(const http::Request& request) {
  return dispatch_request(impl_->state, request);
}

}  // namespace hearth::server

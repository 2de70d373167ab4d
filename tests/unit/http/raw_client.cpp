#include "unit/http/raw_client.h"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "support/client_socket.h"

namespace hearth::server::http::testing {
namespace {

bool iequals(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(a[i])) !=
        std::tolower(static_cast<unsigned char>(b[i]))) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::optional<std::string> RawResponse::header(std::string_view name) const {
  for (const auto& [key, value] : headers) {
    if (iequals(key, name)) return value;
  }
  return std::nullopt;
}

bool clients_speak_tls() {
  const char* value = std::getenv("HEARTH_HTTP_TEST_TLS");
  return value != nullptr && *value != '\0';
}

RawClient::RawClient(int port)
    : socket_(std::make_unique<hearth::test::ClientSocket>(port, clients_speak_tls())) {}

RawClient::~RawClient() {
  close();
}

bool RawClient::is_open() const {
  return socket_->ok();
}

bool RawClient::send(std::string_view data) {
  return socket_->send_all(data);
}

bool RawClient::send_request(std::string_view method, std::string_view target,
                             std::string_view body, std::string_view extra_headers) {
  std::string request = std::string(method) + " " + std::string(target) +
                        " HTTP/1.1\r\nHost: 127.0.0.1\r\n" + std::string(extra_headers);
  if (!body.empty() || method == "POST") {
    request += "Content-Length: " + std::to_string(body.size()) + "\r\n";
  }
  request += "\r\n";
  request += body;
  return send(request);
}

bool RawClient::fill(std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    char data[16384];
    const ssize_t n = socket_->read_some(data, sizeof data, static_cast<int>(left.count()));
    if (n < 0) return false;
    if (n == 0) continue;
    buffer_.append(data, static_cast<size_t>(n));
    return true;
  }
}

std::optional<std::string> RawClient::read_line(std::chrono::steady_clock::time_point deadline) {
  for (;;) {
    size_t end = buffer_.find("\r\n");
    if (end != std::string::npos) {
      std::string line = buffer_.substr(0, end);
      buffer_.erase(0, end + 2);
      return line;
    }
    if (!fill(deadline)) return std::nullopt;
  }
}

std::optional<RawResponse> RawClient::read_head(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto status_line = read_line(deadline);
  // "HTTP/1.1 200 OK"
  if (!status_line || status_line->size() < 12) return std::nullopt;
  RawResponse response;
  response.status = std::atoi(status_line->c_str() + 9);
  for (;;) {
    auto line = read_line(deadline);
    if (!line) return std::nullopt;
    if (line->empty()) break;
    size_t colon = line->find(':');
    if (colon == std::string::npos) return std::nullopt;
    size_t value = line->find_first_not_of(' ', colon + 1);
    response.headers.emplace_back(line->substr(0, colon),
                                  value == std::string::npos ? "" : line->substr(value));
  }
  return response;
}

std::optional<std::string> RawClient::read_exact(size_t n, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (buffer_.size() < n) {
    if (!fill(deadline)) return std::nullopt;
  }
  std::string out = buffer_.substr(0, n);
  buffer_.erase(0, n);
  return out;
}

std::optional<std::string> RawClient::read_chunk(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  auto size_line = read_line(deadline);
  if (!size_line) return std::nullopt;
  size_t size = std::strtoul(size_line->c_str(), nullptr, 16);
  auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
      deadline - std::chrono::steady_clock::now());
  auto data = read_exact(size + 2, std::max(left, std::chrono::milliseconds(1)));
  if (!data || data->substr(size) != "\r\n") return std::nullopt;
  data->resize(size);
  return data;
}

std::optional<RawResponse> RawClient::read_response(std::chrono::milliseconds timeout) {
  auto response = read_head(timeout);
  if (!response) return std::nullopt;
  auto encoding = response->header("Transfer-Encoding");
  if (encoding && iequals(*encoding, "chunked")) {
    for (;;) {
      auto chunk = read_chunk(timeout);
      if (!chunk) return std::nullopt;
      if (chunk->empty()) break;
      response->body += *chunk;
      response->chunks.push_back(std::move(*chunk));
    }
    return response;
  }
  auto length = response->header("Content-Length");
  if (!length) return response;
  auto body = read_exact(std::strtoul(length->c_str(), nullptr, 10), timeout);
  if (!body) return std::nullopt;
  response->body = std::move(*body);
  return response;
}

bool RawClient::wait_closed(std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return false;
    char data[4096];
    if (socket_->read_some(data, sizeof data, static_cast<int>(left.count())) < 0) return true;
  }
}

void RawClient::close(bool reset) {
  socket_->close(reset);
}

}  // namespace hearth::server::http::testing

#include "server/http/request_reader.h"

#include <algorithm>
#include <array>
#include <iterator>

#include <boost/asio/buffer.hpp>
#include <boost/beast/http/error.hpp>

#include "server/http/url.h"

namespace hearth::server::http {

namespace bhttp = boost::beast::http;

namespace {

// The methods an HTTP/1.1 server knows (the reference's HTTP library answers any other
// with 400); those without a route get the layer above's 404.
constexpr std::array<std::string_view, 10> kKnownMethods = {
    "GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS", "TRACE", "PATCH", "PRI"};

std::string_view sv(boost::beast::string_view s) {
  return {s.data(), s.size()};
}

}  // namespace

void configure_parser(RequestParser& parser, const ServerOptions& options) {
  parser.header_limit(static_cast<std::uint32_t>(
      std::min<size_t>(options.max_header_bytes, std::numeric_limits<std::uint32_t>::max())));
  parser.body_limit(static_cast<std::uint64_t>(options.max_body_bytes));
}

std::optional<TransportError> check_header(const RequestParser& parser,
                                           const ServerOptions& options) {
  const auto& header = parser.get();
  const std::string_view method = sv(header.method_string());
  if (std::find(kKnownMethods.begin(), kKnownMethods.end(), method) == kKnownMethods.end()) {
    return TransportError::kUnknownMethod;
  }
  const auto fields = static_cast<size_t>(std::distance(header.begin(), header.end()));
  if (fields > options.max_header_fields) return TransportError::kHeadersTooLarge;
  return std::nullopt;
}

std::optional<TransportError> classify_read_error(const boost::beast::error_code& ec) {
  if (ec == bhttp::error::body_limit) return TransportError::kBodyTooLarge;
  if (ec == bhttp::error::header_limit) return TransportError::kHeadersTooLarge;
  // A clean close between requests, a client gone mid-request, a reset, a cancelled read:
  // nobody to answer.
  if (ec == bhttp::error::end_of_stream || ec == bhttp::error::partial_message ||
      ec.category() != bhttp::make_error_code(bhttp::error::bad_target).category()) {
    return std::nullopt;
  }
  return TransportError::kBadRequest;
}

bool expects_continue(const RequestParser& parser) {
  const auto& header = parser.get();
  return header.version() >= 11 && iequals(sv(header[bhttp::field::expect]), "100-continue");
}

Request to_request(RequestParser& parser) {
  bhttp::request<bhttp::string_body> message = parser.release();
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
  return request;
}

ParsedRequest parse_request_bytes(std::string_view bytes, const ServerOptions& options) {
  ParsedRequest out;
  RequestParser parser;
  configure_parser(parser, options);
  boost::beast::error_code ec;
  bool header_checked = false;
  while (!parser.is_done()) {
    const size_t used = parser.put(
        boost::asio::buffer(bytes.data() + out.consumed, bytes.size() - out.consumed), ec);
    out.consumed += used;
    if (ec == bhttp::error::need_more) {
      if (used == 0) return out;  // the bytes end before the request does
      ec = {};
    }
    if (ec) {
      out.error = classify_read_error(ec).value_or(TransportError::kBadRequest);
      return out;
    }
    if (parser.is_header_done() && !header_checked) {
      header_checked = true;
      out.error = check_header(parser, options);
      if (out.error) return out;
    }
    if (used == 0 && !parser.is_done()) return out;
  }
  out.keep_alive = parser.get().keep_alive();
  out.head = parser.get().method() == bhttp::verb::head;
  out.request = to_request(parser);
  return out;
}

}  // namespace hearth::server::http

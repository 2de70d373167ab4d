// Turning request bytes into a Request, with the server's limits: the parser settings, the
// header checks made once the headers are in, the conversion of a parsed message, and which
// parse failures are answered (and how) and which just end the connection. The connection
// uses these while reading from its socket; parse_request_bytes() runs them over a buffer
// (the request-path fuzz target).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include <boost/beast/core/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "server/http/http.h"

namespace hearth::server::http {

using RequestParser = boost::beast::http::request_parser<boost::beast::http::string_body>;

// Header byte and body byte limits from `options`.
void configure_parser(RequestParser& parser, const ServerOptions& options);

// Checks made once the headers are parsed: a known method, not too many fields. nullopt when
// the request may go on.
std::optional<TransportError> check_header(const RequestParser& parser,
                                           const ServerOptions& options);

// What a read error means: nullopt when there is nobody to answer (clean close, client gone,
// cancelled), else the transport error to answer with.
std::optional<TransportError> classify_read_error(const boost::beast::error_code& ec);

// True when the request asks for "100 Continue" before sending its body.
bool expects_continue(const RequestParser& parser);

// The Request of a complete message (decoded target, headers as received, body moved out).
Request to_request(RequestParser& parser);

// Outcome of parsing one request from a buffer.
struct ParsedRequest {
  std::optional<Request> request;       // a complete request
  std::optional<TransportError> error;  // answered with this instead
  bool keep_alive = false;
  bool head = false;  // HEAD: the response carries no body
  size_t consumed = 0;
};

// Parses the first request of `bytes` as a connection would; neither set when the bytes end
// before the request does.
ParsedRequest parse_request_bytes(std::string_view bytes, const ServerOptions& options);

}  // namespace hearth::server::http

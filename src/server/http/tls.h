// The server's TLS context, built once at startup from --ssl-key-file and --ssl-cert-file.
#pragma once

#include <memory>

#include <boost/asio/ssl/context.hpp>

#include "base/status.h"
#include "server/http/http.h"

namespace hearth::server::http {

// Null without either file (plain HTTP). An error names the option and the file at fault:
// one of the two given alone, a file that cannot be read, one that is not PEM, or a key
// that does not belong to the certificate.
Result<std::shared_ptr<boost::asio::ssl::context>> make_tls_context(const ServerOptions& options);

}  // namespace hearth::server::http

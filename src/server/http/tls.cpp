#include "server/http/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace hearth::server::http {

namespace asio = boost::asio;

namespace {

// The reason OpenSSL gives for the last failure, for the startup message.
std::string openssl_reason() {
  const unsigned long code = ERR_peek_error();  // the first: the root cause
  ERR_clear_error();
  if (code == 0) return "no PEM data";
  const char* reason = ERR_reason_error_string(code);
  return reason != nullptr ? reason : "error " + std::to_string(code);
}

Status check_readable(const char* option, const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return error(ErrorCode::kInvalidArgument,
                 std::string("cannot read ") + option + " '" + path + "': " + std::strerror(errno));
  }
  std::fclose(file);
  return Status::ok();
}

// A passphrase-protected key cannot be used unattended: OpenSSL's default would prompt on the
// terminal, so the callback gives none and the key fails to load.
int no_passphrase(char*, int, int, void*) {
  return 0;
}

// Whether `path` holds a PEM private key at all (to tell "not a key" from "not this
// certificate's key" when the context refuses it).
bool holds_private_key(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return false;
  EVP_PKEY* key = PEM_read_PrivateKey(file, nullptr, no_passphrase, nullptr);
  std::fclose(file);
  ERR_clear_error();
  if (key == nullptr) return false;
  EVP_PKEY_free(key);
  return true;
}

}  // namespace

Result<std::shared_ptr<asio::ssl::context>> make_tls_context(const ServerOptions& options) {
  const std::string& key = options.ssl_key_file;
  const std::string& cert = options.ssl_cert_file;
  if (key.empty() && cert.empty()) return std::shared_ptr<asio::ssl::context>();
  if (key.empty() || cert.empty()) {
    return error(ErrorCode::kInvalidArgument,
                 std::string(key.empty() ? "--ssl-cert-file is given without --ssl-key-file"
                                         : "--ssl-key-file is given without --ssl-cert-file") +
                     ": HTTPS needs both");
  }
  HEARTH_RETURN_IF_ERROR(check_readable("--ssl-cert-file", cert));
  HEARTH_RETURN_IF_ERROR(check_readable("--ssl-key-file", key));
  auto context = std::make_shared<asio::ssl::context>(asio::ssl::context::tls_server);
  // TLS 1.2 and 1.3 only, as current clients and OpenSSL's defaults expect.
  context->set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                       asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 |
                       asio::ssl::context::no_tlsv1_1 | asio::ssl::context::single_dh_use);
  SSL_CTX_set_default_passwd_cb(context->native_handle(), no_passphrase);
  boost::system::error_code ec;
  ERR_clear_error();
  context->use_certificate_chain_file(cert, ec);
  if (ec) {
    return error(ErrorCode::kInvalidArgument,
                 "--ssl-cert-file '" + cert + "' is not a PEM certificate: " + openssl_reason());
  }
  context->use_private_key_file(key, asio::ssl::context::pem, ec);
  if (!ec && SSL_CTX_check_private_key(context->native_handle()) != 1) {
    ec = asio::error::invalid_argument;
  }
  if (ec) {
    const std::string reason = openssl_reason();
    if (!holds_private_key(key)) {
      return error(ErrorCode::kInvalidArgument, "--ssl-key-file '" + key +
                                                    "' is not a PEM private key (or needs a "
                                                    "passphrase): " +
                                                    reason);
    }
    return error(ErrorCode::kInvalidArgument, "the private key in --ssl-key-file '" + key +
                                                  "' does not match the certificate in "
                                                  "--ssl-cert-file '" +
                                                  cert + "'");
  }
  return context;
}

}  // namespace hearth::server::http

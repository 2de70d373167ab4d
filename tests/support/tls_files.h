// A self-signed certificate and its key, made by the test with OpenSSL's API (no `openssl`
// command needed), for starting hearth-server with --ssl-key-file and --ssl-cert-file.
#pragma once

#include <string>

namespace hearth::test {

struct TlsFiles {
  std::string key;        // PEM private key
  std::string cert;       // PEM certificate for CN=localhost, signed by `key`
  std::string other_key;  // another PEM private key: it does not match `cert`
  std::string error;      // why they could not be made (then the paths are empty)
};

// Writes the three files into a fresh temporary directory.
TlsFiles make_tls_files();

}  // namespace hearth::test

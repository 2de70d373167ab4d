#include "support/tls_files.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <cstdio>
#include <memory>

#include "support/test_paths.h"

namespace hearth::test {

namespace {

using KeyPtr = std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)>;
using CertPtr = std::unique_ptr<X509, decltype(&X509_free)>;

KeyPtr make_key() {
  // P-256: fast to generate, accepted by every TLS 1.2/1.3 client.
  return KeyPtr(EVP_EC_gen("P-256"), EVP_PKEY_free);
}

CertPtr make_certificate(EVP_PKEY* key) {
  CertPtr cert(X509_new(), X509_free);
  if (!cert) return cert;
  X509_set_version(cert.get(), 2);
  ASN1_INTEGER_set(X509_get_serialNumber(cert.get()), 1);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 7L * 24 * 3600);
  X509_set_pubkey(cert.get(), key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), name);
  if (X509_sign(cert.get(), key, EVP_sha256()) == 0) cert.reset();
  return cert;
}

bool write_key(const std::string& path, EVP_PKEY* key) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return false;
  const bool ok = PEM_write_PrivateKey(file, key, nullptr, nullptr, 0, nullptr, nullptr) == 1;
  return std::fclose(file) == 0 && ok;
}

bool write_cert(const std::string& path, X509* cert) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (file == nullptr) return false;
  const bool ok = PEM_write_X509(file, cert) == 1;
  return std::fclose(file) == 0 && ok;
}

}  // namespace

TlsFiles make_tls_files() {
  TlsFiles files;
  KeyPtr key = make_key();
  KeyPtr other = make_key();
  if (!key || !other) {
    files.error = "OpenSSL could not generate a P-256 key";
    return files;
  }
  CertPtr cert = make_certificate(key.get());
  if (!cert) {
    files.error = "OpenSSL could not sign a certificate";
    return files;
  }
  const std::string dir = make_temp_dir("tls");
  if (!write_key(dir + "/key.pem", key.get()) || !write_cert(dir + "/cert.pem", cert.get()) ||
      !write_key(dir + "/other_key.pem", other.get())) {
    files.error = "cannot write the PEM files under " + dir;
    return files;
  }
  files.key = dir + "/key.pem";
  files.cert = dir + "/cert.pem";
  files.other_key = dir + "/other_key.pem";
  return files;
}

}  // namespace hearth::test

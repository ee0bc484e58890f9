#include "tests/support/test_pki.h"

#include <sys/stat.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>

namespace hipr::test {
namespace {

struct Issued {
  EVP_PKEY* key = nullptr;
  X509* cert = nullptr;
  ~Issued() {
    EVP_PKEY_free(key);
    X509_free(cert);
  }
};

bool AddExtension(X509* cert, X509* issuer, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value);
  if (ext == nullptr) return false;
  const bool ok = X509_add_ext(cert, ext, -1) == 1;
  X509_EXTENSION_free(ext);
  return ok;
}

// A certificate for `cn`, signed by `issuer` (itself when null: a CA).
bool Issue(const char* cn, const Issued* issuer, bool ca, const char* san, long serial, Issued* out) {
  out->key = EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256");
  out->cert = X509_new();
  if (out->key == nullptr || out->cert == nullptr) return false;
  X509* c = out->cert;
  X509_set_version(c, 2);
  ASN1_INTEGER_set(X509_get_serialNumber(c), serial);
  X509_gmtime_adj(X509_getm_notBefore(c), -3600);
  X509_gmtime_adj(X509_getm_notAfter(c), 7L * 24 * 3600);
  X509_set_pubkey(c, out->key);
  X509_NAME* name = X509_get_subject_name(c);
  // UTF8String set directly: OpenSSL's string table would refuse a common
  // name over X.509's 64 characters, which a CA may still issue.
  if (X509_NAME_add_entry_by_txt(name, "CN", V_ASN1_UTF8STRING, reinterpret_cast<const unsigned char*>(cn), -1, -1,
                                 0) != 1)
    return false;
  X509* issuer_cert = issuer != nullptr ? issuer->cert : c;
  EVP_PKEY* issuer_key = issuer != nullptr ? issuer->key : out->key;
  X509_set_issuer_name(c, X509_get_subject_name(issuer_cert));
  bool ok = AddExtension(c, issuer_cert, NID_basic_constraints, ca ? "critical,CA:TRUE" : "critical,CA:FALSE") &&
            AddExtension(c, issuer_cert, NID_key_usage,
                         ca ? "critical,keyCertSign,cRLSign" : "critical,digitalSignature") &&
            AddExtension(c, issuer_cert, NID_subject_key_identifier, "hash");
  if (ok && issuer != nullptr) ok = AddExtension(c, issuer_cert, NID_authority_key_identifier, "keyid");
  if (ok && !ca) ok = AddExtension(c, issuer_cert, NID_ext_key_usage, "serverAuth,clientAuth");
  if (ok && san != nullptr) ok = AddExtension(c, issuer_cert, NID_subject_alt_name, san);
  return ok && X509_sign(c, issuer_key, EVP_sha256()) > 0;
}

Status Write(const std::string& path, const Issued& what, bool key) {
  FILE* f = std::fopen(path.c_str(), "we");
  if (f == nullptr) return Status(StatusCode::kInternal, "cannot write " + path);
  const int ok = key ? PEM_write_PrivateKey(f, what.key, nullptr, nullptr, 0, nullptr, nullptr)
                     : PEM_write_X509(f, what.cert);
  std::fclose(f);
  if (key) chmod(path.c_str(), 0600);
  return ok == 1 ? Status::Ok() : Status(StatusCode::kInternal, "cannot write PEM to " + path);
}

}  // namespace

Status MakeTestPki(const std::string& dir, TestPki* out) {
  mkdir(dir.c_str(), 0700);
  Issued ca, other_ca, server, client, stranger, long_client;
  if (!Issue("hipr test CA", nullptr, true, nullptr, 1, &ca) ||
      !Issue("another test CA", nullptr, true, nullptr, 2, &other_ca) ||
      !Issue("hipr-worker", &ca, false, "IP:127.0.0.1,IP:::1,DNS:localhost", 3, &server) ||
      !Issue("tenant-a", &ca, false, nullptr, 4, &client) ||
      !Issue("stranger", &other_ca, false, nullptr, 5, &stranger) ||
      !Issue(kLongCommonName, &ca, false, nullptr, 6, &long_client))
    return Status(StatusCode::kInternal, "cannot make the test certificates");
  out->ca = dir + "/ca.pem";
  out->other_ca = dir + "/other-ca.pem";
  out->server_cert = dir + "/server.pem";
  out->server_key = dir + "/server.key";
  out->client_cert = dir + "/client.pem";
  out->client_key = dir + "/client.key";
  out->stranger_cert = dir + "/stranger.pem";
  out->stranger_key = dir + "/stranger.key";
  HIPR_RETURN_IF_ERROR(Write(out->ca, ca, false));
  HIPR_RETURN_IF_ERROR(Write(out->other_ca, other_ca, false));
  HIPR_RETURN_IF_ERROR(Write(out->server_cert, server, false));
  HIPR_RETURN_IF_ERROR(Write(out->server_key, server, true));
  HIPR_RETURN_IF_ERROR(Write(out->client_cert, client, false));
  HIPR_RETURN_IF_ERROR(Write(out->client_key, client, true));
  HIPR_RETURN_IF_ERROR(Write(out->stranger_cert, stranger, false));
  HIPR_RETURN_IF_ERROR(Write(out->stranger_key, stranger, true));
  out->long_client_cert = dir + "/long-client.pem";
  out->long_client_key = dir + "/long-client.key";
  HIPR_RETURN_IF_ERROR(Write(out->long_client_cert, long_client, false));
  HIPR_RETURN_IF_ERROR(Write(out->long_client_key, long_client, true));
  return Status::Ok();
}

}  // namespace hipr::test

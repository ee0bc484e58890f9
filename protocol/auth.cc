#include "protocol/auth.h"

#include <openssl/crypto.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace hipr::auth {
namespace {

void AppendField(std::vector<uint8_t>* out, const void* data, size_t n) {
  const uint32_t len = static_cast<uint32_t>(n);
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<uint8_t>(len >> (8 * i)));
  const uint8_t* p = static_cast<const uint8_t*>(data);
  out->insert(out->end(), p, p + n);
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\n' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\n' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

}  // namespace

Status RandomNonce(std::vector<uint8_t>* out) {
  out->assign(kNonceBytes, 0);
  if (RAND_bytes(out->data(), static_cast<int>(out->size())) != 1)
    return Status(StatusCode::kInternal, "the system's random source failed");
  return Status::Ok();
}

std::vector<uint8_t> Mac(Role role, std::string_view secret, const std::vector<uint8_t>& worker_nonce,
                         const std::vector<uint8_t>& client_nonce, std::string_view tenant) {
  const std::string_view label = role == Role::kClient ? "hipr-auth-v1 client" : "hipr-auth-v1 worker";
  std::vector<uint8_t> input;
  AppendField(&input, label.data(), label.size());
  AppendField(&input, worker_nonce.data(), worker_nonce.size());
  AppendField(&input, client_nonce.data(), client_nonce.size());
  AppendField(&input, tenant.data(), tenant.size());
  std::vector<uint8_t> mac(kMacBytes);
  unsigned int len = 0;
  if (HMAC(EVP_sha256(), secret.data(), static_cast<int>(secret.size()), input.data(), input.size(), mac.data(),
           &len) == nullptr ||
      len != kMacBytes)
    mac.clear();  // Matches nothing: MacEquals refuses an empty MAC.
  return mac;
}

bool MacEquals(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != kMacBytes || b.size() != kMacBytes) return false;
  return CRYPTO_memcmp(a.data(), b.data(), kMacBytes) == 0;
}

bool ValidTenantName(std::string_view name) {
  if (name.empty() || name.size() > kMaxTenantBytes) return false;
  for (char c : name) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
                    c == '_' || c == '-';
    if (!ok) return false;
  }
  return true;
}

Status ParseCredential(std::string_view text, Credential* out) {
  text = Trim(text);
  const size_t colon = text.find(':');
  if (colon == std::string_view::npos)
    return InvalidArgument("expected TENANT:SECRET (the tenant's name, a colon, then its secret)");
  std::string_view tenant = text.substr(0, colon);
  std::string_view secret = text.substr(colon + 1);
  if (!ValidTenantName(tenant))
    return InvalidArgument("the tenant name before the colon must be 1 to 64 of A-Z a-z 0-9 . _ -");
  if (secret.size() < kMinSecretBytes || secret.size() > kMaxSecretBytes)
    return InvalidArgument("the secret after the colon must be " + std::to_string(kMinSecretBytes) + " to " +
                           std::to_string(kMaxSecretBytes) + " characters");
  for (char c : secret)
    if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
      return InvalidArgument("the secret must not contain whitespace");
  out->tenant = std::string(tenant);
  out->secret = std::string(secret);
  return Status::Ok();
}

}  // namespace hipr::auth

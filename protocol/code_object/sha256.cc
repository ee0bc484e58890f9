#include <openssl/evp.h>

#include <cstdlib>

#include "protocol/code_object/code_object.h"

namespace hipr::co {

Sha256Digest Sha256(Bytes data) {
  Sha256Digest digest{};
  unsigned len = 0;
  // EVP_Digest only fails on allocation failure inside OpenSSL; a wrong
  // digest would silently corrupt content addressing, so stop instead.
  if (EVP_Digest(data.data(), data.size(), digest.data(), &len, EVP_sha256(), nullptr) != 1 ||
      len != digest.size()) {
    std::abort();
  }
  return digest;
}

std::string ToHex(const Sha256Digest& digest) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string hex(digest.size() * 2, '0');
  for (size_t i = 0; i < digest.size(); ++i) {
    hex[2 * i] = kDigits[digest[i] >> 4];
    hex[2 * i + 1] = kDigits[digest[i] & 0xf];
  }
  return hex;
}

bool FromHex(std::string_view hex, Sha256Digest* out) {
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  if (hex.size() != out->size() * 2) return false;
  Sha256Digest d{};
  for (size_t i = 0; i < d.size(); ++i) {
    const int hi = nibble(hex[2 * i]), lo = nibble(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return false;
    d[i] = static_cast<uint8_t>(hi << 4 | lo);
  }
  *out = d;
  return true;
}

}  // namespace hipr::co

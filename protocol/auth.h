// Challenge and response in the hello (docs/protocol.md "Authentication").
//
// Each tenant shares a secret with the worker. The secret never crosses the
// wire: the worker sends a fresh random nonce, the client answers with an
// HMAC-SHA256 over both sides' nonces and its tenant name, and the worker
// proves it holds the secret too with a MAC under another label. A recorded
// answer is worth nothing on the next connection, whose nonce differs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "protocol/status.h"

namespace hipr::auth {

inline constexpr size_t kNonceBytes = 32;
inline constexpr size_t kMacBytes = 32;  // HMAC-SHA256.
inline constexpr size_t kMinSecretBytes = 16;
inline constexpr size_t kMaxSecretBytes = 1024;
inline constexpr size_t kMaxTenantBytes = 64;

struct Credential {
  std::string tenant;
  std::string secret;
};

// Who computes a MAC: each side's MAC has its own label, so one side's
// answer can never be replayed as the other's.
enum class Role { kClient, kWorker };

// Fills `out` with kNonceBytes from the system's CSPRNG.
Status RandomNonce(std::vector<uint8_t>* out);

// HMAC-SHA256(secret, label(role) | worker_nonce | client_nonce | tenant),
// each field length-prefixed.
std::vector<uint8_t> Mac(Role role, std::string_view secret, const std::vector<uint8_t>& worker_nonce,
                         const std::vector<uint8_t>& client_nonce, std::string_view tenant);

// Equal in length and bytes, in time that does not depend on where they
// differ.
bool MacEquals(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b);

// A tenant name: 1..64 of [A-Za-z0-9._-].
bool ValidTenantName(std::string_view name);

// Parses "TENANT:SECRET" (the client's HIPR_TOKEN, or the content of
// HIPR_TOKEN_FILE; surrounding whitespace is ignored).
Status ParseCredential(std::string_view text, Credential* out);

}  // namespace hipr::auth

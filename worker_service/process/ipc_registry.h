// IpcRegistry: the IPC handles (memory, events, shareable physical memory)
// that sessions of one worker have exported, in memory every process of the
// worker shares (a MAP_SHARED anonymous mapping made before the zygote
// forks, as the Ledger's).
//
// A client never sees a device's own handle. What it gets is a token that
// names an entry of this registry and carries an HMAC-SHA256, under a key
// drawn when the worker starts, over the entry's index, generation, kind,
// the exporting tenant and the device's handle. So a token
//  - opens only on the worker that made it (another worker has another key
//    and another registry),
//  - cannot be forged or altered (the MAC), and
//  - says which tenant exported it, so the opening session can refuse a
//    tenant the exporter has not allowed (the session decides; tenants.h).
// The device's handle stays in the worker's processes.
//
// Entries live until their session's slot closes (the zygote reaps it) or
// the session drops them. Each session may hold kMaxPerSession; the whole
// registry kEntries.
//
// Thread and process safety: every method may be called from any thread of
// any process of the worker. An entry is written only by the session that
// claimed it (or by CloseSlot once that session is gone); readers copy an
// entry and check its generation again afterwards.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "protocol/messages.h"
#include "protocol/status.h"

namespace hipr::worker {

class IpcRegistry {
 public:
  enum class Kind : uint8_t { kMemory = 1, kEvent = 2, kPhysical = 3 };
  static constexpr size_t kTokenBytes = msg::kIpcMemHandleBytes;
  static_assert(msg::kIpcEventHandleBytes == kTokenBytes, "one token size for every kind");
  using Token = std::array<uint8_t, kTokenBytes>;
  using DeviceHandle = std::array<uint8_t, kTokenBytes>;
  using TenantDigest = std::array<uint8_t, 32>;
  static constexpr int kEntries = 8192;
  static constexpr int kMaxPerSession = 1024;

  static Status Create(std::unique_ptr<IpcRegistry>* out);
  ~IpcRegistry();
  IpcRegistry(const IpcRegistry&) = delete;
  IpcRegistry& operator=(const IpcRegistry&) = delete;

  // Session `slot` (of the ledger), whose tenant is `tenant` (empty: the
  // worker has no tenants), exports `handle` of `kind`: the token to give
  // the client. Exporting the same handle again gives the same token.
  // kResourceExhausted past kMaxPerSession or kEntries.
  Status Export(int slot, uint64_t session_id, const std::string& tenant, Kind kind, const DeviceHandle& handle,
                Token* out);

  // A tenant's identity in the registry: SHA-256 of its whole name, however
  // long (a client certificate's common name may be).
  static TenantDigest Digest(const std::string& tenant);

  // What a token names, once its MAC checks out.
  struct Opened {
    DeviceHandle handle{};
    TenantDigest tenant_digest{};  // The exporter's tenant.
    std::string tenant;            // Its name, cut to 96 bytes, for logs.
    uint64_t session_id = 0;       // The exporter's.
  };
  // kInvalidArgument for a token that is not one of this worker's live
  // exports of `kind` (another worker's, forged, altered, or its session
  // gone); the message says which where the token tells.
  Status Open(Kind kind, const Token& token, Opened* out) const;

  // Drops every entry of `slot` (its session has ended).
  void CloseSlot(int slot);

  // Live entries of `slot` (tests, logs).
  int Held(int slot) const;

 private:
  struct Entry;
  IpcRegistry() = default;
  void Seal(const Entry& e, uint32_t index, uint32_t generation, uint8_t mac[32]) const;

  void* base_ = nullptr;
  size_t bytes_ = 0;
  std::array<uint8_t, 32> key_{};
  Entry* entries_ = nullptr;
};

}  // namespace hipr::worker

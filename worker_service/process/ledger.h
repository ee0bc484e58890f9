// Ledger: the accounts every process of one worker shares. One MAP_SHARED
// anonymous mapping, made in main() before the zygote forks, so the
// acceptor, the zygote and every session process see the same counters
// (lock-free std::atomic, which is address-free across processes).
//
// - A slot per live session. The acceptor opens a free one for each
//   connection it hands over (state kHandshake) and counts, per peer, the
//   slots still in the handshake. The session process marks its slot
//   admitted once the client is authenticated, joining its tenant, and
//   charges the device memory it allocates to it. The zygote closes the
//   slot after reaping the process, returning whatever it still held: a
//   session that crashes leaks nothing.
// - Per tenant: live sessions (against its `sessions=` or
//   --max-sessions-per-tenant) and device memory (against `memory=` or
//   --tenant-memory).
// - The worker: device memory of every session against --memory-budget.
// - Counters the metrics endpoint reads (metrics.h): sessions by how they
//   ended, refusals by why, authentication failures, deferred errors, the
//   code cache, calls by op and their time on the replay thread.
// - The IPC handles sessions have exported (ipc_registry.h), dropped with
//   their session's slot.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/status.h"
#include "worker_service/process/ipc_registry.h"
#include "worker_service/device/memory_account.h"

namespace hipr::worker {

class Ledger {
 public:
  // kRelay: a process that carries a resumed TLS session's bytes to the
  // session's own process (tls_relay.h).
  enum SlotState : uint32_t { kFree = 0, kHandshake = 1, kAdmitted = 2, kRelay = 3 };
  // Tenants the ledger remembers at once: at least this many, and never
  // fewer than the slots, so a new tenant always finds a free or idle entry
  // (one with no live session and no memory), which it takes over.
  static constexpr int kMinTenants = 1024;
  // Calls are counted by op code modulo this (every Op is below it).
  static constexpr int kOpSlots = 4096;

  // `memory_budget`: bytes of device memory all sessions together may hold
  // (0: no limit beyond each device's).
  static Status Create(int slots, uint64_t memory_budget, std::unique_ptr<Ledger>* out);
  ~Ledger();
  Ledger(const Ledger&) = delete;
  Ledger& operator=(const Ledger&) = delete;

  int slots() const { return slot_count_; }

  // Acceptor: a connection handed over in `slot` (free until then).
  void OpenSlot(int slot, uint64_t session_id);
  SlotState State(int slot) const;

  // Session process, after the handshake: joins `tenant` (empty: none),
  // whose live sessions may number `max_sessions` (0: no limit) and whose
  // sessions may hold `memory_cap` bytes (0: no limit). kResourceExhausted
  // when the tenant is at its limit. A tenant is its whole name, however
  // long (a client certificate's common name may be): names are compared by
  // SHA-256.
  Status Admit(int slot, const std::string& tenant, int max_sessions, uint64_t memory_cap);
  // Session process: the slot now relays a resumed session (no tenant, no
  // memory of its own).
  void MarkRelay(int slot);
  // Session process: device memory taken and given back (MemoryAccount).
  Status Charge(int slot, uint64_t bytes);
  void Refund(int slot, uint64_t bytes);
  // Of the slot's memory, what a lease holds ahead of allocation.
  void Leased(int slot, int64_t delta);

  // Session process: a stream made and destroyed, against `cap` streams
  // for the whole worker (each sim stream is a thread).
  Status TakeStream(int slot, int cap);
  void ReturnStream(int slot);

  // Counted events, bumped by whichever process sees one.
  enum Event : int {
    kSessionsStarted,      // Handed to a session process.
    kSessionsEndedClean,   // Goodbye, a closed connection, or a reported error.
    kSessionsCrashed,      // The session process died (signal, unexpected exit).
    kRefusedAtLimit,       // --max-sessions.
    kRefusedPerPeer,       // --max-sessions-per-peer.
    kRefusedHandshakes,    // --max-handshakes-per-peer.
    kEvictedHandshakes,    // Ended in the hello to make room.
    kRefusedTenantLimit,   // A tenant's sessions=.
    kRefusedHello,         // Version, protocol or timeout at the hello.
    kAuthFailures,         // Wrong, unknown or missing credential.
    kTlsFailures,          // A tcp connection whose TLS handshake failed.
    kIdleEnded,            // --idle-timeout-s.
    kDeferredErrors,       // Errors of fire-and-forget calls.
    kCodeCacheHits,        // Module loads served without the client's bytes.
    kCodeCacheMisses,      // ... that needed them.
    kCodeCacheWriteFailures,  // Code objects the cache could not store (full disk, unusable directory).
    kIpcRefusedTenant,     // IPC handles another tenant was not allowed to open.
    kIpcRefusedInvalid,    // IPC handles that named nothing live here (another worker's, forged, gone).
    kBytesToDevice,        // Bulk copied to device memory.
    kBytesFromDevice,      // Bulk copied from device memory.
    kResumes,              // Sessions whose client resumed them over a new connection.
    kResumesRefused,       // Resuming hellos refused (no such session, another tenant, a spent secret).
    kEventCount
  };
  void Count(Event event, uint64_t n = 1);
  uint64_t Counted(Event event) const;

  // One request handled by a session: its op and its time on the replay
  // thread (histogram bounds: kDurationBounds, in seconds).
  static constexpr int kDurationBuckets = 12;
  static constexpr double kDurationBounds[kDurationBuckets] = {1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3,
                                                               1e-2, 3e-2, 0.1,  0.3,  1.0,  10.0};
  void CountCall(uint16_t op, uint64_t ns);
  uint64_t Calls(uint16_t op) const;
  struct Durations {
    uint64_t buckets[kDurationBuckets + 1] = {};  // Not cumulative; the last is +Inf.
    uint64_t count = 0;
    uint64_t sum_ns = 0;
  };
  Durations CallDurations() const;

  // Live sessions: their id, state and device memory.
  struct SessionUsage {
    uint64_t session_id = 0;
    SlotState state = kFree;
    uint64_t memory = 0;
    uint64_t leased = 0;  // Of memory: leased ahead, not allocated yet.
  };
  std::vector<SessionUsage> Sessions() const;
  // The admitted sessions of `slot`'s tenant, `slot`'s own included; of
  // every tenant-less session when `slot` has none (a worker without
  // --auth-file). `tenant`, when given: the tenant's shown name (empty for
  // none).
  std::vector<SessionUsage> SessionsOfTenant(int slot, std::string* tenant = nullptr) const;

  // Zygote, once the slot's process has been reaped (its IPC exports go too).
  void CloseSlot(int slot);

  // Every session's IPC exports.
  IpcRegistry& ipc() { return *ipc_; }

  // Session process: a line to report should it die (a fault in twin code,
  // twin_fault.h), at most kLastWordsBytes. Async-signal-safe. The zygote
  // reads it (LastWords) when it reaps a process that did not end cleanly;
  // opening and closing the slot clear it.
  static constexpr size_t kLastWordsBytes = 512;
  static constexpr size_t kShownTenantBytes = 64;
  void SetLastWords(int slot, const char* text, size_t size);
  std::string LastWords(int slot) const;

  // Reads, for logs, metrics and tests.
  uint64_t memory_used() const;
  int64_t streams() const;
  uint64_t memory_budget() const;
  uint64_t SlotMemory(int slot) const;
  struct TenantUsage {
    // The whole name, or one over kShownTenantBytes cut to its first 48
    // bytes, "...#" and 12 hex digits of its SHA-256.
    std::string name;
    int sessions = 0;
    uint64_t memory = 0;
  };
  std::vector<TenantUsage> Tenants() const;

 private:
  struct Header;
  struct Slot;
  struct TenantEntry;
  Ledger() = default;
  // Under the tenant lock: the tenant's entry, claimed on first use (or an
  // idle one taken over); -1 only when every entry is busy, which
  // kMinTenants >= slots rules out.
  int TenantIndexLocked(const std::string& name);
  class TenantLock;

  void* base_ = nullptr;
  size_t bytes_ = 0;
  int slot_count_ = 0;
  int tenant_count_ = 0;
  Header* header_ = nullptr;
  Slot* slots_ = nullptr;
  TenantEntry* tenants_ = nullptr;
  std::unique_ptr<IpcRegistry> ipc_;
};

// A session's MemoryAccount: its slot of the ledger.
class SlotAccount : public MemoryAccount {
 public:
  SlotAccount(Ledger* ledger, int slot) : ledger_(ledger), slot_(slot) {}
  Status Charge(uint64_t bytes) override { return ledger_->Charge(slot_, bytes); }
  void Refund(uint64_t bytes) override { ledger_->Refund(slot_, bytes); }
  void Leased(int64_t delta) override { ledger_->Leased(slot_, delta); }

 private:
  Ledger* ledger_;
  int slot_;
};

}  // namespace hipr::worker

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
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "protocol/status.h"
#include "worker_service/memory_account.h"

namespace hipr::worker {

class Ledger {
 public:
  enum SlotState : uint32_t { kFree = 0, kHandshake = 1, kAdmitted = 2 };
  static constexpr int kMaxTenants = 1024;

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
  // when the tenant is at its limit.
  Status Admit(int slot, const std::string& tenant, int max_sessions, uint64_t memory_cap);
  // Session process: device memory taken and given back (MemoryAccount).
  Status Charge(int slot, uint64_t bytes);
  void Refund(int slot, uint64_t bytes);

  // Zygote, once the slot's process has been reaped.
  void CloseSlot(int slot);

  // Reads, for logs, metrics and tests.
  uint64_t memory_used() const;
  uint64_t memory_budget() const;
  uint64_t SlotMemory(int slot) const;
  struct TenantUsage {
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
  // The tenant's entry, claimed on first use; -1 when the table is full.
  int TenantIndex(const std::string& name);

  void* base_ = nullptr;
  size_t bytes_ = 0;
  int slot_count_ = 0;
  Header* header_ = nullptr;
  Slot* slots_ = nullptr;
  TenantEntry* tenants_ = nullptr;
};

// A session's MemoryAccount: its slot of the ledger.
class SlotAccount : public MemoryAccount {
 public:
  SlotAccount(Ledger* ledger, int slot) : ledger_(ledger), slot_(slot) {}
  Status Charge(uint64_t bytes) override { return ledger_->Charge(slot_, bytes); }
  void Refund(uint64_t bytes) override { ledger_->Refund(slot_, bytes); }

 private:
  Ledger* ledger_;
  int slot_;
};

}  // namespace hipr::worker

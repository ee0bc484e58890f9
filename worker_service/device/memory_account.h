// MemoryAccount: where a device charges the device memory it allocates for
// its session, beyond its own capacity: the worker-wide budget and the
// tenant's cap (ledger.h). Thread-safe.
#pragma once

#include <cstdint>

#include "protocol/status.h"

namespace hipr::worker {

class MemoryAccount {
 public:
  virtual ~MemoryAccount() = default;
  // Takes `bytes`, or returns kResourceExhausted naming the limit reached
  // (and takes nothing).
  virtual Status Charge(uint64_t bytes) = 0;
  // Gives back bytes an earlier Charge took.
  virtual void Refund(uint64_t bytes) = 0;
  // Of the bytes charged, how many a lease holds ahead of allocation
  // changed by `delta` (MemoryLeaseFacet): for what is shown, not limits.
  virtual void Leased(int64_t delta) { (void)delta; }
};

}  // namespace hipr::worker

// MemoryLeases: device memory the worker has taken for this session ahead
// of use (capability memory-lease, msg::MemLeaseRequest), from which
// hipMalloc places its allocations itself with no round trip. Far from the
// GPU each hipMalloc that asks the worker costs a round trip; a program's
// first steps allocate dozens of buffers (docs/performance.md, "Over
// distance").
//
// What keeps HIP's semantics:
//  * An allocation is real before hipMalloc returns. The worker charged the
//    lease as allocated memory (the device's, the session's, the tenant's
//    and the worker's) when it granted it, so placing part of it cannot run
//    out of memory; the placement (MemLeasePlace) is queued before any call
//    that could use the address, and the worker applies requests in order.
//  * Out of memory stays exact. A lease is one range per device of at most
//    HIPR_MALLOC_LEASE_BYTES (default 64 MiB; 0: none), of which the worker
//    grants what fits, down to the allocation that asked for it. When the
//    worker answers any allocation with out-of-memory while a lease is held,
//    the caller returns the lease's unplaced rest and asks again, so that a
//    program sees hipErrorOutOfMemory only when its live memory leaves no
//    room, as natively. hipMemGetInfo returns the rest first, so the answer
//    is the worker's own.
//  * Ordering between threads: placing and renewing happen under one lock
//    held across the request that carries them, so a placement never
//    reaches the worker after the lease it belongs to was replaced or
//    returned.
// Only plain hipMalloc memory uses a lease (as memory/free_blocks.h), and
// not in a forked child.
//
// Thread-safety: all methods may be called from any thread (one mutex).
#pragma once

#include <cstdint>
#include <functional>
#include <map>

#include "protocol/thread_annotations.h"

namespace hipr::client {

struct LeaseGrant {
  uint64_t base = 0;
  uint64_t size = 0;
  uint64_t granularity = 0;
};

class MemoryLeases {
 public:
  explicit MemoryLeases(uint64_t lease_bytes) : lease_bytes_(lease_bytes) {}

  // Asks the worker for a lease of `device`: at least `need` bytes, up to
  // `want`; false when it refused (the caller knows why).
  using Ask = std::function<bool(uint64_t need, uint64_t want, LeaseGrant* grant)>;
  // Sends the placement of [address, address + size) in the lease; false
  // when it could not be sent.
  using Place = std::function<bool(uint64_t address, uint64_t size)>;

  // hipMalloc of `size` (> 0) bytes on `device`: carved from the device's
  // lease when it has room, else (when `size` is under the lease size) from
  // a new lease that `ask` obtains, which replaces the old one; `place` is
  // called, under the lock, with the address. False when no lease is used
  // (the device's first allocation, too large, leases off, `ask` or `place`
  // failed): the caller allocates through the worker. A device's first
  // allocation takes no lease, so that a process that allocates once holds
  // no more memory than it asked for.
  bool Allocate(int device, uint64_t size, const Ask& ask, const Place& place, uint64_t* address);

  // Forgets the lease of `device` (every device when < 0), calling
  // `give_back(device)` (when set) for each that has unplaced bytes, under
  // the lock; returns those bytes. hipMemGetInfo and out-of-memory give the
  // rest back; a device reset already did (no give_back).
  uint64_t Forget(int device, const std::function<void(int device)>& give_back);

  // Whether an unplaced part of some lease overlaps [address, address +
  // size): address space hipMemAddressReserve may be asked for at a hint.
  bool Holds(uint64_t address, uint64_t size) const;

  uint64_t lease_bytes() const { return lease_bytes_; }

  // fork() (client.cc): the lock is held across it. In the child the
  // leases are the parent session's: forgotten, and none is taken there.
  void LockForFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.lock(); }
  void UnlockInParent() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.unlock(); }
  void ResetInChild() HIPR_NO_THREAD_SAFETY_ANALYSIS;

 private:
  struct Lease {
    uint64_t next = 0;  // Where the next placement goes.
    uint64_t end = 0;
    uint64_t granularity = 1;
  };
  // Carves `size` bytes off `l` when they fit.
  static bool Carve(Lease& l, uint64_t size, uint64_t* address, uint64_t* rounded);

  const uint64_t lease_bytes_;
  mutable Mutex mu_;
  std::map<int, Lease> leases_ HIPR_GUARDED_BY(mu_);
  std::map<int, uint64_t> asked_ HIPR_GUARDED_BY(mu_);  // Allocations asked for, per device.
  bool disabled_ HIPR_GUARDED_BY(mu_) = false;
};

}  // namespace hipr::client

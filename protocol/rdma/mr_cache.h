// MrCache: memory registrations of pinned host memory, kept for the
// memory's lifetime, so copies from or to it go by RDMA with no user-space
// copy and no per-copy registration (which costs a system call and a page
// pin on real hardware).
//
// A lookup that hits returns the cached region; a miss registers the
// page-rounded range and keeps it. A region stays registered until
// Invalidate() drops it: whoever frees or unpins that memory must call it
// first (the client's hipHostFree, the worker's staging pool). A region whose
// memory goes away without that is the classic stale-registration hazard:
// the NIC would keep writing to the old pages.
//
// Thread-safety: every method may be called from any thread. A region
// returned by Find() stays valid until Invalidate() of a range overlapping
// it, or a Find() miss that overlaps it (the two are merged into one new
// region). One returned by Hold() stays registered until its Release(),
// whatever happens meanwhile: Invalidate() or a merging miss only take it
// out of the cache (later lookups register anew), and the last Release()
// deregisters it. The transport holds what the NIC may still touch (an
// offered source, a READ's destination), so invalidating other memory that
// shares its pages never pulls a registration from under a transfer.
#pragma once

#include <infiniband/verbs.h>

#include <cstdint>
#include <map>
#include <mutex>

#include "protocol/status.h"
#include "protocol/thread_annotations.h"

namespace hipr::rdma {

class MrCache {
 public:
  // `pd` outlives the cache; `access`: the ibv_access_flags of every region.
  MrCache(ibv_pd* pd, int access) : pd_(pd), access_(access) {}
  ~MrCache();
  MrCache(const MrCache&) = delete;
  MrCache& operator=(const MrCache&) = delete;

  // The region holding [addr, addr + len), registered now if none does.
  Status Find(const void* addr, size_t len, ibv_mr** out);

  // Find(), and keeps the region registered until Release(*out).
  Status Hold(const void* addr, size_t len, ibv_mr** out);
  void Release(ibv_mr* mr);

  // Drops every region overlapping [addr, addr + len) from the cache,
  // deregistering those not held (held ones at their last Release()).
  void Invalidate(const void* addr, size_t len);

  struct Stats {
    uint64_t hits = 0;
    uint64_t misses = 0;         // Each registered a region.
    uint64_t invalidations = 0;  // Regions dropped by Invalidate().
    size_t regions = 0;
  };
  Stats stats() const;

 private:
  ibv_pd* const pd_;
  const int access_;
  mutable Mutex mu_;
  struct Region {
    ibv_mr* mr;
    int holds;
  };
  Status FindLocked(const void* addr, size_t len, Region** out) HIPR_REQUIRES(mu_);
  // Takes `r` out of the cache: deregistered now, or when its holds end.
  void Drop(const Region& r) HIPR_REQUIRES(mu_);
  // By start address; regions never overlap.
  std::map<uintptr_t, Region> regions_ HIPR_GUARDED_BY(mu_);
  // Dropped from the cache while held: their outstanding holds.
  std::map<ibv_mr*, int> retired_ HIPR_GUARDED_BY(mu_);
  Stats stats_ HIPR_GUARDED_BY(mu_);
};

}  // namespace hipr::rdma

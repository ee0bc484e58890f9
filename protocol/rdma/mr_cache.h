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
// region): so misses come from the one thread that sends, between its
// sends, and nobody invalidates memory still being sent from.
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

  // Deregisters every region overlapping [addr, addr + len).
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
  // By start address; regions never overlap.
  std::map<uintptr_t, ibv_mr*> regions_ HIPR_GUARDED_BY(mu_);
  Stats stats_ HIPR_GUARDED_BY(mu_);
};

}  // namespace hipr::rdma

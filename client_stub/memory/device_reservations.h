// DeviceReservations: the pages the client reserves (PROT_NONE) under device
// allocations that lie outside the session window. A `hip` worker cannot
// choose device addresses (it answers the hello with an empty window), so the
// client reserves each allocation's pages as it learns them, and a host
// object can never later appear at a device address.
//
// The runtime may place two small allocations in one page, so the first and
// last page of an allocation are reference-counted; its interior pages are
// its own. Reserve() fails with kFailedPrecondition when a page it needs is
// already host memory (the caller keeps that allocation aside and asks for
// another one).
//
// Thread-safety: all methods may be called from any thread (one mutex).
#pragma once

#include <cstdint>
#include <new>
#include <map>
#include <mutex>

#include "protocol/thread_annotations.h"
#include "protocol/status.h"

namespace hipr::client {

class DeviceReservations {
 public:
  // Reserves the pages of [addr, addr + size) this object does not hold yet.
  // On failure nothing is held for this range.
  Status Reserve(uint64_t addr, uint64_t size);
  // Undoes one successful Reserve of the same range.
  void Release(uint64_t addr, uint64_t size);
  // True when [addr, addr + len) touches a page held here.
  bool Overlaps(uint64_t addr, uint64_t len) const;

  size_t shared_page_count() const;

  // fork() support (client.cc): the lock is held across fork() so the child
  // inherits consistent contents; the parent then unlocks it, the child
  // re-creates it (its copy is owned by a thread that does not exist there,
  // and a glibc rwlock cannot be unlocked by another thread id).
  void LockForFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.lock(); }
  void UnlockInParent() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.unlock(); }
  void ResetLockInChild() HIPR_NO_THREAD_SAFETY_ANALYSIS { new (&mu_) decltype(mu_)(); }

 private:
  struct Span {
    uint64_t first_page = 0;
    uint64_t last_page = 0;  // Inclusive.
    uint64_t interior_begin = 0;
    uint64_t interior_end = 0;  // Empty when begin == end.
  };
  static Span SpanOf(uint64_t addr, uint64_t size);
  void UnrefPageLocked(uint64_t page) HIPR_REQUIRES(mu_);

  mutable Mutex mu_;
  std::map<uint64_t, uint32_t> edge_pages_ HIPR_GUARDED_BY(mu_);  // page -> allocations using it.
  std::map<uint64_t, uint64_t> interiors_ HIPR_GUARDED_BY(mu_);  // begin -> end.
};

}  // namespace hipr::client

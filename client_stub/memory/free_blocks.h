// FreeBlocks: device memory the program freed, kept on the worker for the
// next hipMalloc of the same size on the same device, which then needs no
// round trip. Far from the GPU a hipMalloc costs a round trip, and programs
// that allocate and free scratch memory every step (the training loop of
// bench/distance_loop.hip) pay it per step (docs/performance.md, "Over
// distance").
//
// What it keeps HIP's semantics by:
//  * Reuse never races earlier work. hipFree waits for the device in HIP,
//    so work queued before a free never touches the next allocation. A kept
//    block is handed out again only once a synchronisation of every stream
//    of its device that was sent after the free has succeeded:
//    hipDeviceSynchronize, or (where the device has no non-blocking
//    stream, so the legacy null stream waits for every other) a
//    synchronising call on the null stream, a blocking copy included.
//  * Out of memory stays exact. A block is kept only while the device's
//    kept bytes stay under HIPR_FREE_BLOCK_BYTES (default 64 MiB, 0: keep
//    nothing). When the worker answers hipMalloc with out-of-memory, the
//    caller frees every kept block there and asks again, so a program sees
//    hipErrorOutOfMemory only when its live memory leaves no room, as
//    natively (frameworks free their caches and retry on it).
//    hipMemGetInfo frees every kept block on the worker first, so its
//    answer is the worker's own, as after any hipFree.
//  * Only plain hipMalloc memory of this session: not managed memory,
//    arrays, module globals, graph memory or IPC mappings; not in a forked
//    child (its frees go to the worker at once).
// The worker still counts kept blocks against the session's (and its
// tenant's) memory: that is the lease.
//
// Thread-safety: all methods may be called from any thread (one mutex).
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "protocol/thread_annotations.h"

namespace hipr::client {

struct KeptBlock {
  uint64_t base = 0;
  uint64_t size = 0;
  int device = 0;  // Set by Keep.
};

class FreeBlocks {
 public:
  explicit FreeBlocks(uint64_t limit_per_device) : limit_(limit_per_device) {}

  // hipFree of a plain allocation on `device`: true when it is kept (the
  // caller then frees nothing on the worker).
  bool Keep(int device, const KeptBlock& block);
  // hipMalloc of exactly `size` bytes on `device`: a kept block that no
  // work queued before its free can still touch.
  bool Take(int device, uint64_t size, KeptBlock* out);

  // A synchronisation of every stream of `device` is about to be sent: its
  // ticket. EndSync(ticket) once it succeeded: the blocks kept before the
  // ticket may be handed out again.
  uint64_t BeginSync(int device);
  void EndSync(int device, uint64_t ticket);

  // Forgets every block kept for `device` (all when < 0) and returns them:
  // to free on the worker (out of memory), or to drop (hipDeviceReset
  // freed them).
  std::vector<KeptBlock> TakeAll(int device);

  // fork() (client.cc): the lock is held across it. In the child the
  // blocks are the parent session's: forgotten, and nothing is kept from
  // then on (only this thread exists there).
  void LockForFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.lock(); }
  void UnlockInParent() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.unlock(); }
  void ResetInChild() HIPR_NO_THREAD_SAFETY_ANALYSIS;

 private:
  struct Kept {
    KeptBlock block;
    uint64_t ticket = 0;  // The device's free count when it was kept.
  };
  struct Device {
    std::multimap<uint64_t, Kept> by_size;
    uint64_t bytes = 0;
    uint64_t frees = 0;     // Blocks kept so far.
    uint64_t settled = 0;   // Blocks kept up to this count may be reused.
  };

  uint64_t limit_;
  mutable Mutex mu_;
  std::map<int, Device> devices_ HIPR_GUARDED_BY(mu_);
  bool disabled_ HIPR_GUARDED_BY(mu_) = false;
};

}  // namespace hipr::client

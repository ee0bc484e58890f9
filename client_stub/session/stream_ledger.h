// StreamLedger: whether a wait would guard anything the host can observe.
//
// A blocking call that waits for a stream (hipStreamSynchronize, a
// blocking hipMemset) need not wait when nothing the host can observe
// depends on it, and the later work that could observe it is ordered after
// it by a stream fence (stream_fences.h). The ledger keeps, per stream, the
// last host-visible work queued on it and the last point at which the host
// saw it complete; work is host-visible unless the call that queued it says
// otherwise (Invisible): kernels (they may write host memory, poll memory
// the host writes, or fail), copies into host memory and from pinned host
// memory (the host may reuse the source once the stream is done), host
// callbacks, event records (the host may time or query the event), waits
// on events and stream memory operations are; fills of plain device memory
// and copies into it from pageable memory (consumed before the call
// returned) or from device memory are not.
//
// The rule is process-wide, not per stream: a wait is skipped only while no
// stream, of any device, has host-visible work not seen complete. Work
// already queued on another stream may be held by something the host does
// next (a callback waiting for the host, a kernel polling a flag the host
// writes), and no fence orders work queued before it; natively the host
// would do that only after the wait returned. (hipr's own hip device, on
// hipr's stub in the worker chain, copies on a side stream, synchronizes it
// and then releases the stream its callback holds: per-stream rules broke
// that.)
//
// Exactness across threads: a call's work counts once its frames are
// queued, not when it resolves its stream. Notes made while a call resolves
// its streams stay with the calling thread and are committed when the
// outermost API call returns (ApiCall: Enter, Leave), and a synchronisation
// takes its ticket after committing its own thread's notes. So work another
// thread queued after a synchronisation was sent is never counted as seen
// complete by it.
//
// Thread-safety: all methods may be called from any thread (one mutex; the
// notes are the calling thread's own).
#pragma once

#include <cstdint>
#include <unordered_map>

#include "protocol/thread_annotations.h"

namespace hipr::client {

class StreamLedger {
 public:
  static constexpr uint64_t kWholeDevice = ~uint64_t{0};

  // ---- The calling thread's notes ----------------------------------------
  // Work is about to be queued on (device, stream) by this call.
  static void Note(int device, uint64_t stream);
  // The work this call queues on the stream it noted last is host-invisible.
  static void Invisible();

  // The extent of an API call (ApiCall): Leave() is true when the outermost
  // one ends with notes to commit (then Commit()).
  static void Enter();
  static bool Leave();

  // Commits the calling thread's notes (their frames are queued).
  void Commit();

  // ---- Synchronisations -------------------------------------------------
  // Before a synchronisation is sent: commits the calling thread's notes and
  // returns the ticket Completed() takes once it succeeded.
  uint64_t Ticket();
  // A synchronisation of (device, stream) (kWholeDevice: the device) that
  // took `ticket` succeeded: the work committed before the ticket is done.
  void Completed(int device, uint64_t stream, uint64_t ticket);

  // Whether all host-visible work queued on any stream has been seen
  // complete.
  bool Clean();

  // The worker dropped the device's work (hipDeviceReset; < 0: all, a forked
  // child).
  void Forget(int device);

  void LockForFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.lock(); }
  void UnlockInParent() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.unlock(); }
  void ResetInChild() HIPR_NO_THREAD_SAFETY_ANALYSIS;

 private:
  struct Entry {
    int device = 0;
    uint64_t last_visible = 0;  // Sequence of the last host-visible work.
    uint64_t done = 0;          // Everything up to here was seen complete.
  };
  static uint64_t KeyOf(int device, uint64_t stream) {
    return stream != 0 ? stream : (uint64_t{1} << 63) | static_cast<uint32_t>(device);
  }
  bool CleanLocked(const Entry& e) const HIPR_REQUIRES(mu_);

  Mutex mu_;
  uint64_t sequence_ HIPR_GUARDED_BY(mu_) = 0;
  std::unordered_map<uint64_t, Entry> streams_ HIPR_GUARDED_BY(mu_);
  std::unordered_map<int, uint64_t> device_done_ HIPR_GUARDED_BY(mu_);
};

}  // namespace hipr::client

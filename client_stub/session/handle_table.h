// HandleTable: streams and events named by the client. Each handle is a small
// record allocated once and never freed; its address is the hipStream_t /
// hipEvent_t the application holds, and it carries the 64-bit id the
// protocol uses. Never freeing means a destroyed handle's address is never
// reused, so a stale handle is always "unknown", never someone else's.
//
// Handles are validated against the set of live ones before any record is
// read: a garbage pointer from the application is never dereferenced.
//
// Thread-safety: all methods may be called from any thread (one
// shared_mutex). Records are immutable once created, except an event's
// record/completion counters (NoteEventRecorded / NoteEventDone).
#pragma once

#include <cstdint>
#include <new>
#include <set>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

#include <hip/hip_runtime_api.h>

#include "protocol/thread_annotations.h"

namespace hipr::client {

// Where a stream operation goes: the protocol id and the device it runs on.
struct StreamTarget {
  uint64_t id = 0;  // 0: the null stream.
  int device = 0;
};

struct StreamRecord {
  uint64_t id = 0;
  int device = 0;
  unsigned flags = 0;
  int priority = 0;
};

struct EventRecord {
  uint64_t id = 0;
  int device = 0;
  unsigned flags = 0;
  // How often it was recorded, and the highest such count a successful
  // synchronize or query has seen complete. Equal: the client knows the
  // event is complete (as is an event never recorded) and answers
  // hipEventQuery/hipEventSynchronize itself.
  uint64_t recorded = 0;
  uint64_t known_done = 0;
};

class HandleTable {
 public:
  // Creates a live stream/event with a fresh id (ids start at 1; stream id 0
  // is the null stream).
  hipStream_t NewStream(int device, unsigned flags, int priority, StreamRecord* out);
  hipEvent_t NewEvent(int device, unsigned flags, EventRecord* out);

  // False for null and for anything not live.
  bool FindStream(hipStream_t stream, StreamRecord* out) const;
  bool FindEvent(hipEvent_t event, EventRecord* out) const;

  // An event record was posted: returns the new record count (0 when the
  // event is not live).
  uint64_t NoteEventRecorded(hipEvent_t event);
  // A synchronize or query that read record count `recorded` saw it
  // complete.
  void NoteEventDone(hipEvent_t event, uint64_t recorded);
  // Forgets a live handle; false when it was not live.
  bool RemoveStream(hipStream_t stream, StreamRecord* out);
  bool RemoveEvent(hipEvent_t event, EventRecord* out);

  // Whether a stream created with hipStreamNonBlocking ever lived on
  // `device` (the null stream does not wait for it, nor for the work a
  // destroyed one still runs).
  bool EverNonBlockingStream(int device) const;

  // Forgets every handle of `device`, or all when device < 0 (fork child).
  void RemoveAllOf(int device);

  // The ids of `device`'s live streams (not the null stream).
  std::vector<uint64_t> StreamIdsOf(int device) const;
  // Whether a stream of `device` was destroyed since the last
  // hipDeviceSynchronize that succeeded (SettledDevice): the work it still
  // runs is on no stream a fence can be recorded on.
  bool StreamDestroyedSinceSync(int device) const;
  void SettledDevice(int device);

  // fork() support (client.cc): the lock is held across fork() so the child
  // inherits consistent contents; the parent then unlocks it, the child
  // re-creates it (its copy is owned by a thread that does not exist there,
  // and a glibc rwlock cannot be unlocked by another thread id).
  void LockForFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.lock(); }
  void UnlockInParent() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.unlock(); }
  void ResetLockInChild() HIPR_NO_THREAD_SAFETY_ANALYSIS { new (&mu_) decltype(mu_)(); }

 private:
  uint64_t NextId() HIPR_REQUIRES(mu_);

  mutable SharedMutex mu_;
  uint64_t next_id_ HIPR_GUARDED_BY(mu_) = 1;
  std::unordered_map<const void*, StreamRecord*> streams_ HIPR_GUARDED_BY(mu_);
  std::unordered_map<const void*, EventRecord*> events_ HIPR_GUARDED_BY(mu_);
  std::set<int> nonblocking_devices_ HIPR_GUARDED_BY(mu_);  // EverNonBlockingStream.
  std::set<int> destroyed_since_sync_ HIPR_GUARDED_BY(mu_);  // StreamDestroyedSinceSync.
};

}  // namespace hipr::client

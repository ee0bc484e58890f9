// StreamFences: later work ordered after a blocking call that returned
// before the worker ran it.
//
// A blocking call that the host cannot observe except through later device
// work (a blocking memset of plain device memory: docs/architecture.md,
// "Which calls wait") does not need its round trip, provided every call
// issued after it returns, from any thread and on any stream of its
// device, runs after it on the worker. Work on the same stream is ordered
// already (and, for the legacy null stream, work on blocking streams);
// work on other streams is ordered here: Raise() records the device's
// fence event (hidden from the program) on the call's stream, and Order(),
// called on every stream a later call resolves (ResolveStream), makes that
// stream wait for the fence once. A fence lasts until a synchronisation
// that covers its stream succeeds (Settled) or the device is reset; while
// none is in force, Order() is one atomic load.
//
// A call on another device may touch the fenced memory as well (a peer
// copy, peer access); as a wait cannot name another device's null stream
// on the wire, Order() waits there, polling the fence event, until the
// fence is reached (Drain), which ends it.
//
// Thread-safety: all methods may be called from any thread (one mutex, held
// while the fence's frames are queued, so that a wait is never queued
// before the record it waits for).
#pragma once

#include <atomic>
#include <cstdint>
#include <unordered_map>
#include <unordered_set>

#include "client_stub/session/remote.h"
#include "protocol/status.h"
#include "protocol/thread_annotations.h"

namespace hipr::client {

class StreamFences {
 public:
  // A synchronisation of a whole device (Settled).
  static constexpr uint64_t kWholeDevice = ~uint64_t{0};

  // Fence events are kEventIdBase + n, ids HandleTable never hands out (its
  // ids count up from 1); one is made at the device's first fence, and again
  // after a reset, with a fresh n.
  static constexpr uint64_t kEventIdBase = uint64_t{1} << 62;

  // Work queued on (device, stream) returned to the host without waiting:
  // records the device's fence on `stream`. A fence still in force on
  // another stream is waited for by `stream` first, so the new fence covers
  // both.
  Status Raise(Remote& s, int device, uint64_t stream);

  // Work is about to be queued on (device, stream): makes the stream wait
  // for the device's fence in force, once per stream and fence, and waits
  // for the fences of other devices to be reached (Drain).
  Status Order(Remote& s, int device, uint64_t stream) {
    if (!AnyInForce()) return Status::Ok();
    return OrderSlow(s, device, stream);
  }
  bool AnyInForce() const { return active_.load(std::memory_order_acquire) != 0; }

  // Waits (polling the fence event; a query collects no deferred error)
  // until the fence in force on `device`, if any, has been reached on the
  // worker, and ends it: before memory is handed to another process
  // (hipIpcGetMemHandle), whose work no fence here orders, and before work
  // on another device. Not ok: the session is dead.
  Status Drain(Remote& s, int device);

  // The fence generation before a synchronisation is sent; Settled(device,
  // stream, ticket) once it succeeded ends the fence it covers: one raised
  // on `stream` (or on any stream when stream is kWholeDevice) before the
  // ticket, with none raised since.
  uint64_t Ticket(int device);
  void Settled(int device, uint64_t stream, uint64_t ticket);

  // The worker dropped the device's state (hipDeviceReset; < 0: every
  // device, a forked child): the fences and their events are gone.
  void Forget(int device);

  // Whether a fence is in force on `device` (tests, logs).
  bool InForce(int device);

  // fork() support, as HandleTable's (client.cc); the child keeps no fence.
  void LockForFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.lock(); }
  void UnlockInParent() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.unlock(); }
  void ResetInChild() HIPR_NO_THREAD_SAFETY_ANALYSIS;

 private:
  struct Fence {
    uint64_t event = 0;       // The fence event's id; 0 until made.
    uint64_t stream = 0;      // Where it was last recorded.
    uint64_t generation = 0;  // Raised so often.
    bool in_force = false;
    std::unordered_set<uint64_t> waited;  // Streams that wait for this generation.
  };

  Status OrderSlow(Remote& s, int device, uint64_t stream);
  // Queues stream's wait for `f` unless it has one (or is f's own stream).
  Status WaitLocked(Remote& s, int device, Fence& f, uint64_t stream) HIPR_REQUIRES(mu_);
  void EndLocked(Fence& f) HIPR_REQUIRES(mu_);

  Mutex mu_;
  std::unordered_map<int, Fence> fences_ HIPR_GUARDED_BY(mu_);
  uint64_t next_event_ HIPR_GUARDED_BY(mu_) = 0;
  std::atomic<int> active_{0};  // Fences in force.
};

}  // namespace hipr::client

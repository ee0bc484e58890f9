// What a session's device work asks of managed memory (hipMallocManaged,
// __managed__ variables: managed/managed_vars.h): launches, copies and graph
// launches push the host's changes before work that may read them and mark
// what the work may write, and a synchronising call reads written copies
// back. ManagedVars implements it; the API edge hands it to the engines, so
// that kernels/, copies/ and graphs/ do not reach the managed registry (and
// managed/, which loads modules, stays above them).
//
// Thread-safety: as ManagedVars; any thread.
#pragma once

#include <cstdint>
#include <vector>

#include <hip/hip_runtime_api.h>

#include "protocol/status.h"

namespace hipr::client {

class Client;
class Remote;

// How a read-back (ManagedHooks::AfterSync) is ordered.
enum class ReadBack {
  kAfterSync,      // The stream is synchronised: at once, on the exchange stream.
  kInStreamOrder,  // On the stream itself, after its earlier work: the read-back is the synchronisation.
};

class ManagedHooks {
 public:
  virtual ~ManagedHooks() = default;
  // No managed memory at all: every hook is a no-op.
  virtual bool empty() const = 0;
  // Before a launch on (device, stream): pushes changed mirrors, marks every
  // mirror written from that stream, and rewrites explicit pointer
  // arguments (at `pointer_offsets` of `kernarg`) that point into a mirror.
  virtual Status BeforeLaunch(Client& client, Remote& session, int device, uint64_t stream,
                              const std::vector<uint32_t>& pointer_offsets, std::vector<uint8_t>* kernarg) = 0;
  // Device work on (device, stream) is about to read [p, p + n) (p nullptr:
  // anything): the changed spans concerned reach the device first.
  virtual Status Push(Client& client, Remote& session, int device, uint64_t stream, const void* p = nullptr,
                      uint64_t n = 0) = 0;
  // Device work on (device, stream) may write [p, p + n) (p nullptr:
  // anything): read back at the next synchronisation covering the stream.
  virtual void MarkWritten(const Remote& session, int device, uint64_t stream, const void* p = nullptr,
                           uint64_t n = 0) = 0;
  // After a synchronising call on (device, stream) succeeded: reads back
  // what was written from it.
  virtual Status AfterSync(Client& client, Remote& session, int device, uint64_t stream,
                           ReadBack order = ReadBack::kAfterSync) = 0;
  // Whether [p, p + n) shares a byte with any managed memory.
  virtual bool Touches(const void* p, uint64_t n) const = 0;
};

// The end of a synchronising call on (device, stream) that returned
// `result`: when it succeeded, reports a failed async copy into pinned
// memory (Remote::TakeAsyncError) as the call's deferred error, else brings
// managed memory's mirrors up to date (`managed`). Returns `result`, or the
// read-back's error. `order`: ReadBack::kInStreamOrder when the read-back
// itself is the synchronisation (before a blocking copy).
hipError_t AfterSync(Client& c, Remote& s, ManagedHooks& managed, int device, uint64_t stream, hipError_t result,
                     ReadBack order = ReadBack::kAfterSync);

}  // namespace hipr::client

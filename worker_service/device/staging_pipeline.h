// StagingPipeline: a bulk copy between the network and device memory in
// pieces, through a bounded pool of host buffers, with the two halves
// overlapped:
//
//   to the device:    network --fill--> buffer i    | buffer i-1 --put--> device
//   from the device:  device  --get---> buffer i+1  | buffer i  --send--> network
//
// The calling thread does the network half, a thread of the pipeline's own
// the device half (the `hip` device: hipMemcpyAsync + synchronize from
// pinned buffers; the sim with --sim-force-staging: memcpy from plain
// ones). Memory is bounded by the pool, whatever the copy's size. Several
// copies may run at once (one per stream thread); each takes buffers from
// the shared pool one at a time and gives each back as soon as its piece
// is through, so none can starve another for good.
//
// Pieces are `piece_bytes` long (the last one shorter) and addressed by
// their offset in the copy's packed bytes; ForPackedRange maps such a
// range onto a region's rows.
//
// Thread-safety: In and Out may be called from any threads at once.
#pragma once

#include <sys/uio.h>

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <vector>

#include "protocol/messages.h"
#include "protocol/status.h"
#include "protocol/thread_annotations.h"

namespace hipr::worker {

class StagingPipeline {
 public:
  using Io = std::function<Status(const iovec* iov, int count)>;
  // Moves `len` bytes at packed offset `offset` of the copy between `buffer`
  // and the device (put: buffer -> device; get: device -> buffer).
  using Piece = std::function<Status(uint8_t* buffer, uint64_t offset, size_t len)>;

  // `buffers` buffers of `piece_bytes` each, owned by the caller (pinned
  // memory on the hip device), alive as long as the pipeline.
  StagingPipeline(std::vector<uint8_t*> buffers, size_t piece_bytes);

  size_t piece_bytes() const { return piece_bytes_; }
  size_t buffer_count() const { return buffer_count_; }
  // Whether [p, p + n) lies inside one of the pool's buffers (which stay
  // put for the pipeline's life).
  bool Owns(const void* p, size_t n) const;

  // `total` bytes from the network (fill) to the device (put). The first
  // error wins; after a device error no more is read from the network (the
  // caller discards the rest of the transfer).
  Status In(uint64_t total, const Io& fill, const Piece& put);
  // `total` bytes from the device (get) to the network (send).
  Status Out(uint64_t total, const Piece& get, const Io& send);

 private:
  uint8_t* Acquire();
  void Release(uint8_t* buffer);

  const size_t piece_bytes_;
  const size_t buffer_count_;
  std::vector<uint8_t*> all_;  // Every buffer, sorted; immutable.
  Mutex mu_;
  std::condition_variable cv_;
  std::vector<uint8_t*> free_ HIPR_GUARDED_BY(mu_);
};

// Calls fn(device address, offset in the packed bytes, length) for the rows
// of `region` that packed bytes [offset, offset + len) cover, in order.
Status ForPackedRange(const msg::Region& region, uint64_t offset, uint64_t len,
                      const std::function<Status(uint64_t address, uint64_t packed, uint64_t n)>& fn);

}  // namespace hipr::worker

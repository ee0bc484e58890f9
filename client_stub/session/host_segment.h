// HostSegment: the client's allocator over the shm transport's host segment
// (Connection::SharedHostRegion), memory the session process maps too.
// hipHostMalloc places pinned memory here when it fits, so a copy to or from
// it names an offset and moves no bytes through the rings: the worker copies
// straight between the segment and device memory (one memcpy on the sim).
//
// Allocations are whole pages, first fit; a freed range gives its pages
// back to the system (MADV_REMOVE) so the segment only holds memory in use.
// Thread-safe.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>

#include "protocol/thread_annotations.h"

namespace hipr::client {

class HostSegment {
 public:
  HostSegment(uint8_t* base, uint64_t bytes);

  // The address of `bytes` (rounded up to pages) of the segment, or null
  // when no free range is large enough.
  void* Allocate(uint64_t bytes);
  // REQUIRES: `p` came from Allocate(bytes) and was not freed.
  void Free(void* p, uint64_t bytes);
  // True (with the offset of `p`) when [p, p + extent) lies in the segment.
  bool Contains(const void* p, uint64_t extent, uint64_t* offset) const;

  uint64_t bytes() const { return bytes_; }

 private:
  uint8_t* const base_;
  const uint64_t bytes_;
  Mutex mu_;
  std::map<uint64_t, uint64_t> free_ HIPR_GUARDED_BY(mu_);  // offset -> length, coalesced.
};

}  // namespace hipr::client

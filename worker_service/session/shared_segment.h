// SharedSegment: the session's view of the connection's shared host segment
// (shm): the ranges the client registered as holding pinned memory
// (kHostRegister), and the host rows of copies that name the segment
// (msg::SharedHost) instead of carrying bytes.
//
// The client maps the same pages and may write them at any time, but it
// cannot move them: every range and every row is checked against the
// segment and the registered ranges once, when it arrives, and what is
// handed to the device lies inside them whatever the pages hold.
#pragma once

#include <cstdint>
#include <map>

#include "protocol/messages.h"
#include "protocol/status.h"
#include "protocol/transport.h"

namespace hipr::worker {

// The host side of one copy: `height` rows of `width` bytes, `pitch` apart,
// from `base` (null when the copy is empty).
struct HostRows {
  uint8_t* base = nullptr;
  uint64_t pitch = 0;
};

class SharedSegment {
 public:
  static constexpr uint64_t kPage = 4096;

  explicit SharedSegment(Connection::SharedRegion segment) : segment_(segment) {}

  // kInvalidArgument unless [offset, offset + bytes) is non-empty, whole
  // pages, inside the segment and overlaps no registered range. On success
  // `*at` is where the range lies in this process; Add records it.
  Status CheckNew(uint64_t offset, uint64_t bytes, uint8_t** at) const;
  void Add(uint64_t offset, uint64_t bytes) { ranges_[offset] = bytes; }
  // kInvalidArgument unless the range is exactly one registered range;
  // forgets it on success.
  Status Remove(uint64_t offset, uint64_t bytes, uint8_t** at);

  // The rows of a copy whose host side is `host` and whose device side is
  // `device` (its width and height): kInvalidArgument unless they lie
  // inside one registered range.
  Status Rows(const msg::SharedHost& host, const msg::Region& device, HostRows* out) const;

  size_t registered_ranges() const { return ranges_.size(); }

 private:
  const Connection::SharedRegion segment_;
  std::map<uint64_t, uint64_t> ranges_;  // Offset -> bytes; disjoint.
};

}  // namespace hipr::worker

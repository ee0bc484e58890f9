// SharedRows: the host side of a copy that lives in the connection's shared
// host segment (shm): `height` rows of `width` bytes, `pitch` apart, from an
// offset the client chose. The device moves a copy's bytes packed, in
// pieces of any size (BulkIo); this walks the rows in step with it.
//
// The client maps the same pages and may write them at any time: the rows
// are checked to lie inside the segment once, and every access stays inside
// them whatever the pages hold.
#pragma once

#include <sys/uio.h>

#include <cstdint>

#include "protocol/messages.h"
#include "protocol/status.h"
#include "protocol/transport.h"

namespace hipr::worker {

class SharedRows {
 public:
  // kInvalidArgument when the connection has no shared segment or the rows
  // (`host`, as wide and high as `device`) do not lie inside it.
  static Status Make(Connection::SharedRegion segment, const msg::SharedHost& host, const msg::Region& device,
                     SharedRows* out);

  bool used() const { return base_ != nullptr; }
  // The next IovBytes(iov) bytes of the rows, into iov / from iov.
  Status CopyOut(const iovec* iov, int count);
  Status CopyIn(const iovec* iov, int count);

 private:
  template <bool kOut>
  Status Walk(const iovec* iov, int count);

  uint8_t* base_ = nullptr;  // First row.
  uint64_t pitch_ = 0;
  uint64_t width_ = 0;
  uint64_t height_ = 0;
  uint64_t row_ = 0;  // Position of the next byte.
  uint64_t col_ = 0;
};

}  // namespace hipr::worker

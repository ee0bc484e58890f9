// Connection: the narrow interface every transport implements (tcp now; shm
// and rdma later). A connection is a reliable, ordered byte stream carrying
// HIPR frames; framing lives above it (frame_io.h).
//
// Thread-safety: one sender and one receiver may use a connection at once;
// callers serialize senders among themselves and receivers among
// themselves. Shutdown() may be called from any thread at any time.
#pragma once

#include <sys/uio.h>

#include <memory>
#include <string>

#include "protocol/status.h"

namespace hipr {

class Connection {
 public:
  virtual ~Connection() = default;

  // Writes every byte described by iov[0..count) straight from those buffers
  // (no intermediate copy), or fails with kLinkDown. Blocks while the peer
  // does not read.
  virtual Status SendV(const iovec* iov, int count) = 0;

  // Fills every byte of iov[0..count) straight from the stream, or fails with
  // kLinkDown (peer closed, reset, or timed out by keepalive).
  virtual Status RecvV(const iovec* iov, int count) = 0;

  // Waits until bytes are readable: Ok, kTimeout after `timeout_ms` (-1 waits
  // forever), or kLinkDown.
  virtual Status WaitReadable(int timeout_ms) = 0;

  // Wakes any blocked SendV/RecvV/WaitReadable with kLinkDown. Idempotent.
  virtual void Shutdown() = 0;

  // For logs: "tcp:1.2.3.4:5678".
  virtual std::string PeerName() const = 0;

  // True when the peer is on this host (tcp over loopback; same-node
  // transports): where bulk compression's "auto" leaves it off.
  virtual bool PeerIsLocal() const = 0;

  Status RecvExact(void* buf, size_t len) {
    iovec iov{buf, len};
    return RecvV(&iov, 1);
  }
  Status SendAll(const void* buf, size_t len) {
    iovec iov{const_cast<void*>(buf), len};
    return SendV(&iov, 1);
  }
};

}  // namespace hipr

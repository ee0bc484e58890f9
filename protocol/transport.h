// Connection: the narrow interface every transport implements (tcp, shm;
// rdma later). A connection is a reliable, ordered byte stream carrying
// HIPR frames; framing lives above it (frame_io.h). Implementations:
// tcp/ (any network) and shm/ (a client on the worker's node).
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

  // SendV for bytes the caller keeps unchanged until this returns and that
  // it knows stay put (pinned memory): a transport may send them without
  // copying (tcp: MSG_ZEROCOPY for large sends), returning once the peer
  // has them. The default is SendV.
  virtual Status SendVZeroCopy(const iovec* iov, int count) { return SendV(iov, count); }

  // Fills every byte of iov[0..count) straight from the stream, or fails with
  // kLinkDown (peer closed, reset, or timed out by keepalive).
  virtual Status RecvV(const iovec* iov, int count) = 0;

  // RecvV that also says how many bytes, from the start of iov, it placed
  // before it failed (*filled; all of them when ok). The default knows only
  // all or nothing, which is exact for a connection that never fails part
  // way; tcp counts. A ResumableLink needs the exact count.
  virtual Status RecvVCounted(const iovec* iov, int count, size_t* filled) {
    Status st = RecvV(iov, count);
    *filled = 0;
    if (st.ok())
      for (int i = 0; i < count; ++i) *filled += iov[i].iov_len;
    return st;
  }

  // RecvV into memory the caller knows stays put (pinned host memory,
  // device memory the worker owns) until it calls ForgetMemory for it: a
  // transport may place the bytes there without copying them through its
  // own buffers (rdma: an RDMA READ straight into it). The default is RecvV.
  virtual Status RecvVZeroCopy(const iovec* iov, int count) { return RecvV(iov, count); }

  // Memory once passed to SendVZeroCopy or RecvVZeroCopy is about to be
  // freed, unmapped or remapped: the transport drops what it keeps for it
  // (rdma: memory registrations, which would otherwise pin the old pages).
  // Any thread, any time; a range it never saw is fine.
  virtual void ForgetMemory(const void* addr, size_t bytes) {
    (void)addr;
    (void)bytes;
  }

  // Waits until bytes are readable: Ok, kTimeout after `timeout_ms` (-1 waits
  // forever), or kLinkDown.
  virtual Status WaitReadable(int timeout_ms) = 0;

  // Whether bytes that arrived wait to be read (tcp: its read-ahead, or
  // the socket's queue). Only while no receiver uses it. False where
  // unknown.
  virtual bool Unread() const { return false; }

  // Whether the peer has reset or closed the connection and nothing is left
  // to read, found without reading (tcp: poll's POLLHUP, POLLERR,
  // POLLRDHUP, and no unread byte). Only for a caller that neither reads
  // nor writes it meanwhile. False where unknown.
  virtual bool Hung() const { return false; }

  // Wakes any blocked SendV/RecvV/WaitReadable with kLinkDown. Idempotent.
  virtual void Shutdown() = 0;

  // For logs: "tcp:1.2.3.4:5678".
  virtual std::string PeerName() const = 0;

  // In a forked child, the parent's connection: drops this process's
  // descriptors without telling the peer (the parent goes on using it).
  // Every later call fails with kLinkDown.
  virtual void Abandon() = 0;

  // Host memory both ends map (shm: the host segment), or an empty range.
  // Host buffers placed there cross with no copy through the stream: a
  // frame names them by their offset in it. The peer may write into it at
  // any time: copy out before trusting what it holds.
  struct SharedRegion {
    uint8_t* base = nullptr;
    uint64_t bytes = 0;
  };
  virtual SharedRegion SharedHostRegion() const { return {}; }

  // For the log at a session's end: what the connection did with bulk
  // bytes, where it has more to say than the byte counts (rdma: how many
  // moved by WRITE and READ and how many were copied in user space). Empty
  // by default.
  virtual std::string BulkSummary() const { return {}; }

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

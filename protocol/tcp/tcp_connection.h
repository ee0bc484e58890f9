// TCP implementation of Connection: blocking I/O on the calling thread.
// Every socket is CLOEXEC, TCP_NODELAY, with keepalive and a user timeout
// tuned so that a vanished peer is noticed within seconds.
//
// Receiving: small reads (frame headers and bodies) are served from a
// read-ahead buffer filled by one recv() of whatever has arrived, so a batch
// of small frames costs one system call, not two per frame. A read of at
// least kDirectBytes still lands straight in the caller's buffers (after
// any bytes already read ahead): bulk data is never copied.
//
// Waiting: with set_spin_us(N), a receiver that finds nothing to read polls
// for up to N microseconds before it sleeps in the kernel. A reply that comes
// back within that time then costs no wake-up of a sleeping thread, which on
// virtual machines costs tens of microseconds when the peer runs on another
// CPU; after N microseconds of nothing the receiver sleeps and an idle
// connection uses no CPU.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "protocol/transport.h"

namespace hipr::tcp {

struct Endpoint {
  std::string host;
  uint16_t port = 0;
};

// Parses "host:port" or "[v6]:port".
Status ParseEndpoint(const std::string& text, Endpoint* out);

// Tunes an accepted or connected socket as described above.
Status TuneSocket(int fd);

class TcpConnection final : public Connection {
 public:
  // Takes ownership of a connected socket.
  explicit TcpConnection(int fd);
  ~TcpConnection() override;

  // Connects within `timeout_ms`.
  static Status Connect(const Endpoint& ep, int timeout_ms, std::unique_ptr<TcpConnection>* out);

  Status SendV(const iovec* iov, int count) override;
  // MSG_ZEROCOPY for sends of at least zero_copy_min_bytes(); waits for the
  // kernel's completion notices before it returns. Where the kernel copied
  // anyway (loopback, a device without scatter-gather) it says so in its
  // notice, and the connection goes back to plain sends for good, unless
  // `keep_when_copied` (tests).
  Status RecvV(const iovec* iov, int count) override;
  Status RecvVCounted(const iovec* iov, int count, size_t* filled) override;
  bool Hung() const override;
  bool Unread() const override;
  Status SendVZeroCopy(const iovec* iov, int count) override;
  Status WaitReadable(int timeout_ms) override;
  void Shutdown() override;
  std::string PeerName() const override;
  void Abandon() override;
  // A loopback peer: 127.0.0.0/8, ::1, or ::ffff:127.0.0.0/104; any
  // address family but IPv4/IPv6 (a unix socket) counts as local too.
  bool PeerIsLocal() const override;

  int fd() const { return fd_; }

  // Spin before sleeping in a receive or WaitReadable (0: sleep at once).
  void set_spin_us(int us) { spin_us_ = us; }
  // Sends through SendVZeroCopy of at least this many bytes use
  // MSG_ZEROCOPY (0: never).
  void set_zero_copy_min_bytes(uint64_t n, bool keep_when_copied = false) {
    zero_copy_min_bytes_ = n;
    keep_when_copied_ = keep_when_copied;
  }
  struct ZeroCopyStats {
    uint64_t sends = 0;   // sendmsg calls with MSG_ZEROCOPY.
    uint64_t copied = 0;  // Of those, completions that say the kernel copied.
    bool off = false;     // Gone back to plain sends (unavailable, or the kernel copies).
  };
  ZeroCopyStats zero_copy_stats() const { return zc_; }

  static constexpr size_t kReadAheadBytes = 64u << 10;
  static constexpr size_t kDirectBytes = 16u << 10;

 private:
  // Copies read-ahead bytes into v[*first..count), advancing it; returns
  // how many bytes are still wanted.
  size_t TakeBuffered(iovec* v, int count, int* first);
  Status RecvDirect(iovec* v, int count, int* first);
  // REQUIRES: nothing read ahead. Tries a non-blocking read into the
  // read-ahead buffer for up to spin_us_; true when bytes came (now read
  // ahead) or the stream ended or failed (the next call says so).
  bool SpinUntilReadable();

  int fd_;
  // Read ahead of the (single) receiver: bytes [rpos_, rend_) of rbuf_.
  std::unique_ptr<uint8_t[]> rbuf_;
  size_t rpos_ = 0;
  size_t rend_ = 0;
  int spin_us_ = 0;
  uint64_t zero_copy_min_bytes_ = 0;
  bool keep_when_copied_ = false;
  bool zc_enabled_ = false;  // SO_ZEROCOPY set on the socket.
  uint32_t zc_next_id_ = 0;  // The kernel numbers MSG_ZEROCOPY sends from 0.
  uint32_t zc_done_ = 0;     // Sends below this have completed.
  ZeroCopyStats zc_;         // Sender's.
  // Reads completion notices until every send below `upto` has completed.
  Status AwaitZeroCopy(uint32_t upto);
  // Set by Shutdown(): after it, WaitReadable() reports kLinkDown even though
  // poll() sees the shut-down socket as readable.
  std::atomic<bool> shut_down_{false};
};

}  // namespace hipr::tcp

// ResumableLink: a Connection that outlives the connections under it.
//
// A session whose hello agreed `resume` (wire.h kFeatureResume) runs its
// frames over a ResumableLink on both sides. The link numbers the bytes of
// each direction from 0 (the first byte after the hello) and keeps a copy of
// every byte it sent until the peer acknowledges it (Acknowledge: the
// count of bytes the peer has received, which the session learns from
// frames: the client's kLinkAck, and on the client any reply, which the
// worker sends only after reading its whole request). When the connection
// under it fails, the first thread that sees it calls `relink`, which makes
// a new connection to the same peer session and trades counts with it (the
// resume hello, docs/protocol.md "Resuming sessions"). The link then sends
// again every byte the peer has not received, before anything new, from a
// short-lived thread (so that both sides resending at once cannot fill
// both sockets with nobody reading), and the SendV, RecvV or WaitReadable
// that met the failure goes on as if nothing had happened. Bytes the
// connection under it had read ahead and not delivered count as not
// received, so the peer sends them again. Every byte, so every frame,
// arrives exactly once and in order.
//
// A relink that fails (the grace period over, the session gone, a refused
// credential) ends the link: every call then fails with kLinkDown and its
// reason.
//
// A send that fails while the receiver is on the connection, or while bytes
// wait to be read there, leaves the relink to the receiver: what the peer
// sent before it went (its last replies, or why it ended the session) is
// read first. Until then sends only go to the log.
//
// Only a connection whose RecvVCounted is exact (tcp, tls) can be resumed:
// the link must know, after a failure, how many bytes it delivered.
//
// Thread-safety: as Connection (one sender and one receiver at once);
// Acknowledge, sent(), received(), kept() and Shutdown from any thread.
// Abandon only in a forked child (it takes no lock).
#pragma once

#include <sys/uio.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "protocol/status.h"
#include "protocol/thread_annotations.h"
#include "protocol/transport.h"

namespace hipr {

class ResumableLink final : public Connection {
 public:
  struct Relinked {
    std::unique_ptr<Connection> conn;  // To the same peer session, past its resume hello.
    uint64_t peer_received = 0;        // Bytes of this side's stream the peer has.
  };
  // Called by the first thread that finds the link down, with no lock held:
  // `received` is this side's count of the peer's bytes, `why` what failed.
  // It should give up soon once `closed` turns true.
  using Relink = std::function<Status(uint64_t received, const Status& why, const std::atomic<bool>& closed,
                                      Relinked* out)>;

  // Bytes of the sent stream are kept in blocks of this size.
  static constexpr size_t kBlockBytes = size_t{1} << 20;

  ResumableLink(std::unique_ptr<Connection> conn, Relink relink);
  ~ResumableLink() override;
  ResumableLink(const ResumableLink&) = delete;
  ResumableLink& operator=(const ResumableLink&) = delete;

  Status SendV(const iovec* iov, int count) override;
  Status RecvV(const iovec* iov, int count) override;
  Status RecvVCounted(const iovec* iov, int count, size_t* filled) override;
  Status WaitReadable(int timeout_ms) override;
  void Shutdown() override;
  std::string PeerName() const override;
  void Abandon() override;
  bool PeerIsLocal() const override;

  // The peer has received the first `count` bytes this side sent: their
  // copies may go. A count past what was sent is a protocol error.
  Status Acknowledge(uint64_t count);
  // Treats the connection under it as failed (a peer silent too long): the
  // calling thread relinks. Ok when the link was resumed.
  Status Break(const Status& why);

  // Bytes inside the ranges of `iov` that SendV sends from now until
  // Lend(nullptr, 0) are kept by reference, not copied: the sender keeps
  // them unchanged until they are acknowledged (a synchronous call's bulk,
  // which its reply acknowledges before the caller may touch it again).
  // Sender only.
  void Lend(const iovec* iov, int count);

  // Shuts the connection under it down (not the link): the call on it, or
  // the next, relinks. For a side that learns of a new connection first.
  void Interrupt();

  // For a thread that is neither the sender nor the receiver, now and then:
  // when no call is on the connection and the peer has hung up, relinks
  // now (Ok: up, or nothing to do), so that a side that is idle resumes
  // within the peer's grace period instead of at its next call.
  Status CheckIdle();

  uint64_t sent() const { return sent_.load(std::memory_order_acquire); }
  uint64_t received() const { return received_.load(std::memory_order_acquire); }
  // Bytes sent and not yet acknowledged (what a relink may send again).
  uint64_t kept() const { return sent() - acked_.load(std::memory_order_acquire); }
  int resumes() const { return resumes_.load(std::memory_order_acquire); }
  // Whether a relink is under way (or the link is down for good).
  bool down() const {
    MutexLock lock(mu_);
    return relinking_ || dead_ || closed_.load();
  }

 private:
  // A run of the stream: bytes [begin, begin + used), in a block of
  // kBlockBytes this link owns, or in the sender's memory (lent).
  struct Block {
    uint64_t begin = 0;
    std::unique_ptr<uint8_t[]> bytes;
    const uint8_t* lent = nullptr;
    size_t used = 0;
    const uint8_t* data() const { return lent != nullptr ? lent : bytes.get(); }
  };

  // Copies iov into the log; advances sent_.
  void Append(const iovec* iov, int count) HIPR_REQUIRES(mu_);
  // Frees the blocks every byte of which the peer has.
  void DropAcknowledged() HIPR_REQUIRES(mu_);
  // Called after an operation begun on generation `gen` failed with `why`:
  // relinks (or waits for the thread that does). Ok: the link is up again.
  Status Recover(MutexLock& lock, uint64_t gen, const Status& why) HIPR_REQUIRES(mu_);
  // Sends the log's bytes [from, to) on `conn` (the resend thread).
  void Resend(Connection* conn, uint64_t gen, uint64_t from, uint64_t to);
  Status DeadStatus() const HIPR_REQUIRES(mu_);

  const Relink relink_;
  mutable Mutex mu_;
  std::condition_variable cv_;  // A flag below changed.
  std::unique_ptr<Connection> conn_ HIPR_GUARDED_BY(mu_);
  std::atomic<Connection*> raw_conn_{nullptr};  // conn_, for Abandon (which takes no lock).
  uint64_t gen_ HIPR_GUARDED_BY(mu_) = 0;   // Connections so far, less one.
  bool writing_ HIPR_GUARDED_BY(mu_) = false;  // A SendV is on conn_.
  bool reading_ HIPR_GUARDED_BY(mu_) = false;  // A RecvV or WaitReadable is on conn_.
  bool relinking_ HIPR_GUARDED_BY(mu_) = false;
  bool resending_ HIPR_GUARDED_BY(mu_) = false;  // The resend thread runs.
  bool dead_ HIPR_GUARDED_BY(mu_) = false;       // A relink failed.
  // A send on connection gen_ failed while bytes were left to read: sends
  // only go to the log until the receiver, having read them, relinks.
  bool send_broken_ HIPR_GUARDED_BY(mu_) = false;
  Status dead_status_ HIPR_GUARDED_BY(mu_);
  std::atomic<bool> closed_{false};  // Shutdown or Abandon.
  std::thread resender_ HIPR_GUARDED_BY(mu_);

  // The log: bytes [log_base_, sent_) in runs, in order.
  std::deque<Block> log_ HIPR_GUARDED_BY(mu_);
  std::vector<std::unique_ptr<uint8_t[]>> spare_ HIPR_GUARDED_BY(mu_);  // Freed blocks, for reuse.
  uint64_t log_base_ HIPR_GUARDED_BY(mu_) = 0;
  std::vector<iovec> lent_;  // Lend(): sender only.
  std::atomic<uint64_t> sent_{0};
  std::atomic<uint64_t> acked_{0};
  std::atomic<uint64_t> received_{0};
  std::atomic<int> resumes_{0};
};

}  // namespace hipr

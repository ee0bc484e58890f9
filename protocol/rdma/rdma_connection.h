// RDMA implementation of Connection over one libibverbs Reliable Connection
// queue pair. Built against the real verbs API; on our machines (no RDMA
// device) tested only against the verbs double (verbs_double/), never on
// hardware.
//
// Set-up: Create() opens the device and makes the QP (INIT, receives
// posted); the caller sends local_info() to the peer and calls Connect()
// with the peer's, along with the socket that carried the exchange (the
// hello's tcp connection; ConnectOverSocket() does the exchange itself).
// That socket stays open and carries nothing more: its end is the peer's
// death, as the unix socket is for shm. A pure receiver on RC otherwise
// never learns that its peer is gone.
//
// The byte stream:
//  - Small pieces (frame headers, bodies, slices under bulk_min_bytes) are
//    gathered into messages of at most buffer_bytes and go as SENDs (inline
//    when they fit max_inline) into the peer's pre-posted receive buffers.
//  - Bulk slices go by RDMA WRITE into the peer's receive ring (ring_bytes,
//    registered for remote write), in chunks of chunk_bytes, each followed
//    by a small SEND naming where it landed (RC executes in order, so the
//    bytes are there when the notice is seen). Chunks are pipelined: a
//    sender waits only for credits and ring space, never for a round trip.
//    From SendV the source is first copied into a registered staging slot
//    (the caller may reuse its buffer on return); from SendVZeroCopy it is
//    written straight from the caller's memory through the registration
//    cache (registrations()), and the call returns once every WRITE has
//    completed, i.e. the bytes are in the peer's memory.
//  - The receiver copies out of its ring or buffer into the caller's
//    buffers (one copy; receiving straight into registered user memory
//    needs the peer to know the destination, a later step).
// Flow control: a sender holds one credit per receive the peer has posted,
// and learns of reposted receives and freed ring bytes from the grant every
// message carries. Data needs two credits (the last one is kept for a
// grant), so two sides that both send can never run each other out.
// Grants go back when the receiving application consumes: a peer that does
// not read blocks its sender, as on tcp.
//
// Errors: an error completion, a QP in the error state, or a peer that
// violates the stream's rules ends the connection: kLinkDown (kProtocolError
// where the peer broke the rules: out-of-bounds or wrong-key RDMA into our
// memory, which the NIC refuses with IBV_EVENT_QP_ACCESS_ERR, or a notice
// naming bytes outside our ring), with one log line naming the verbs status.
//
// Thread-safety: as transport.h: one sender and one receiver at once,
// Shutdown() from any thread. Whichever of them waits polls the shared
// completion queue for both.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "protocol/rdma/mr_cache.h"
#include "protocol/thread_annotations.h"
#include "protocol/transport.h"

namespace hipr::rdma {

struct Options {
  std::string device;  // Empty: the first device.
  uint8_t port = 1;
  int gid_index = 0;
  uint32_t recv_buffers = 64;  // Receives posted: the peer's credits.
  uint32_t buffer_bytes = 8192;  // Largest SEND message.
  uint64_t ring_bytes = uint64_t{8} << 20;  // Receive ring for the peer's WRITEs.
  uint64_t chunk_bytes = uint64_t{1} << 20;  // Largest WRITE; at most ring_bytes / 4.
  uint32_t staging_slots = 8;  // Send staging for SendV's bulk, chunk_bytes each.
  uint64_t bulk_min_bytes = uint64_t{16} << 10;  // Slices this large go by WRITE.
  uint32_t max_inline = 128;  // At least 32: grants always go inline.
  // RC timers: ACK timeout 4.096 us * 2^timeout, retried retry_cnt times;
  // RNR retries (7: for ever; credits mean none happen) and timer code.
  uint8_t timeout = 16;
  uint8_t retry_cnt = 7;
  uint8_t rnr_retry = 7;
  uint8_t min_rnr_timer = 12;
  // How long the destructor lets sends already posted finish.
  int linger_ms = 2000;
  // RecvV gives up with kLinkDown after this long with no byte arriving
  // (as SO_RCVTIMEO does for tcp); -1: waits for ever.
  int recv_timeout_ms = -1;
  // Where the one line about an error goes (default: stderr).
  std::function<void(const std::string&)> log;
};

// What the two ends exchange to connect (the hello carries it later).
struct QpInfo {
  uint32_t qpn = 0;
  uint32_t psn = 0;
  uint8_t gid[16] = {};
  uint64_t ring_addr = 0;
  uint32_t ring_rkey = 0;
  uint64_t ring_bytes = 0;
  uint32_t recv_buffers = 0;
  uint32_t buffer_bytes = 0;
};
inline constexpr size_t kQpInfoBytes = 64;
// Fixed little-endian layout with a magic and a version.
void EncodeQpInfo(const QpInfo& info, uint8_t out[kQpInfoBytes]);
Status DecodeQpInfo(const uint8_t* in, size_t len, QpInfo* out);

class RdmaConnection final : public Connection {
 public:
  ~RdmaConnection() override;

  // Opens the device and prepares the QP. kNotSupported when there is no
  // usable device (none, not the one named, or its port is down).
  static Status Create(const Options& options, std::unique_ptr<RdmaConnection>* out);
  const QpInfo& local_info() const { return local_; }
  // The device's name (as ibv_get_device_name gives it), for logs.
  std::string device_name() const { return ibv_get_device_name(ctx_->device); }
  // Connects to the peer. `liveness_fd`, a connected socket to the peer,
  // is owned from now on. REQUIRES: called once, before any I/O.
  Status Connect(const QpInfo& peer, int liveness_fd);

  // Create, then exchange QpInfo over `fd` (ownership taken; closed on
  // failure) within `timeout_ms`, then Connect.
  static Status ConnectOverSocket(int fd, const Options& options, int timeout_ms,
                                  std::unique_ptr<RdmaConnection>* out);

  Status SendV(const iovec* iov, int count) override;
  Status SendVZeroCopy(const iovec* iov, int count) override;
  Status RecvV(const iovec* iov, int count) override;
  Status WaitReadable(int timeout_ms) override;
  void Shutdown() override;
  std::string PeerName() const override;
  void Abandon() override;
  // By the liveness socket's peer: loopback or a unix socket.
  bool PeerIsLocal() const override;

  // Registrations of pinned memory SendVZeroCopy sends from. Invalidate a
  // range before that memory is freed.
  MrCache& registrations() { return *mr_cache_; }

  struct Stats {
    uint64_t messages = 0;  // SENDs of data and notices.
    uint64_t credit_messages = 0;  // SENDs that only grant.
    uint64_t writes = 0;
    uint64_t bulk_bytes = 0;  // Written by RDMA WRITE.
    uint64_t bulk_bytes_copied_on_send = 0;  // Of those, staged by a user-space copy.
    uint64_t bytes_copied_on_receive = 0;  // Out of the ring or receive buffers.
  };
  Stats stats() const;

 private:
  explicit RdmaConnection(const Options& options);
  // Received bytes not yet read: in receive buffer `buffer` (after the
  // message header), or at `pos` in our ring.
  struct Item {
    bool in_ring;
    uint32_t buffer;
    uint64_t pos;
    uint64_t len;
    uint64_t done;  // Bytes already read.
  };

  Status Init();
  Status SendImpl(const iovec* iov, int count, bool zero_copy);
  // REQUIRES: mu_ held. Each may wait (giving up mu_ meanwhile).
  Status FlushSmall(MutexLock& lock) HIPR_REQUIRES(mu_);
  Status WriteBulk(MutexLock& lock, const uint8_t* src, size_t len, bool zero_copy) HIPR_REQUIRES(mu_);
  // Waits until ready() holds (Ok), an error, or timeout_ms (kTimeout).
  // While waiting, this thread or the other one polls the CQ.
  template <class Ready>
  Status WaitFor(MutexLock& lock, Ready ready, int timeout_ms) HIPR_REQUIRES(mu_);
  // Polls the CQ and handles what it finds; true if it found anything.
  bool Progress() HIPR_REQUIRES(mu_);
  void HandleMessage(uint32_t buffer, uint32_t byte_len) HIPR_REQUIRES(mu_);
  void Repost(uint32_t buffer) HIPR_REQUIRES(mu_);
  // Sends a grant-only message when enough is owed and a credit is left.
  void MaybeGrant() HIPR_REQUIRES(mu_);
  // Posts a message: `header` (its grant fields filled in here) followed by
  // `body` of `body_len` bytes from `buffer` (or inline), and before it,
  // when `write` is set, that WRITE.
  Status PostMessage(uint8_t type, uint64_t pos, uint64_t len, int slot, uint32_t body_len,
                     ibv_send_wr* write) HIPR_REQUIRES(mu_);
  void Fail(Status st) HIPR_REQUIRES(mu_);
  // The reason behind a QP in the error state, from the async events
  // (waiting up to wait_ms for one): an access violation by the peer?
  Status ErrorStateReason(int wait_ms);
  void CheckPeerSocket() HIPR_REQUIRES(mu_);
  uint8_t* Buffer(uint32_t i) const { return recv_mem_ + uint64_t{i} * options_.buffer_bytes; }
  uint8_t* Slot(uint32_t i) const { return slot_mem_ + uint64_t{i} * options_.buffer_bytes; }

  const Options options_;
  QpInfo local_;
  QpInfo peer_;
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  uint32_t sq_depth_ = 0;
  uint32_t send_slots_ = 0;
  // Registered memory: receive buffers, send slots, our ring, send staging.
  uint8_t* recv_mem_ = nullptr;
  uint8_t* slot_mem_ = nullptr;
  uint8_t* ring_ = nullptr;
  uint8_t* staging_ = nullptr;
  size_t recv_mem_bytes_ = 0;
  size_t slot_mem_bytes_ = 0;
  size_t staging_bytes_ = 0;
  ibv_mr* recv_mr_ = nullptr;
  ibv_mr* slot_mr_ = nullptr;
  ibv_mr* ring_mr_ = nullptr;
  ibv_mr* staging_mr_ = nullptr;
  std::unique_ptr<MrCache> mr_cache_;
  int sock_ = -1;
  int wake_fd_ = -1;  // Shutdown() wakes a thread polling the channel.
  bool connected_ = false;
  bool closing_ HIPR_GUARDED_BY(mu_) = false;  // In the destructor: errors are not news.
  std::atomic<bool> shut_down_{false};
  std::atomic<bool> abandoned_{false};

  mutable Mutex mu_;
  std::condition_variable cv_;  // Progress was made or the poller left.
  bool poller_active_ HIPR_GUARDED_BY(mu_) = false;
  Status error_ HIPR_GUARDED_BY(mu_);
  bool peer_gone_ HIPR_GUARDED_BY(mu_) = false;
  // Sending.
  uint32_t credits_ HIPR_GUARDED_BY(mu_) = 0;
  uint32_t sq_outstanding_ HIPR_GUARDED_BY(mu_) = 0;
  std::vector<uint32_t> free_slots_ HIPR_GUARDED_BY(mu_);
  int fill_slot_ HIPR_GUARDED_BY(mu_) = -1;  // The slot small pieces gather in.
  uint32_t fill_bytes_ HIPR_GUARDED_BY(mu_) = 0;
  uint64_t peer_ring_head_ HIPR_GUARDED_BY(mu_) = 0;  // Bytes written into the peer's ring.
  uint64_t peer_ring_tail_ HIPR_GUARDED_BY(mu_) = 0;  // Of those, freed by the peer.
  uint64_t staging_head_ HIPR_GUARDED_BY(mu_) = 0;  // Staging slots taken / released (FIFO).
  uint64_t staging_tail_ HIPR_GUARDED_BY(mu_) = 0;
  uint64_t zc_posted_ HIPR_GUARDED_BY(mu_) = 0;  // Zero-copy WRITEs posted / completed.
  uint64_t zc_done_ HIPR_GUARDED_BY(mu_) = 0;
  // Receiving.
  std::deque<Item> inbox_ HIPR_GUARDED_BY(mu_);
  uint32_t owed_ HIPR_GUARDED_BY(mu_) = 0;  // Receives reposted, not yet granted.
  uint64_t ring_expected_ HIPR_GUARDED_BY(mu_) = 0;  // Where the next notice must point.
  uint64_t ring_tail_ HIPR_GUARDED_BY(mu_) = 0;  // Ring bytes read.
  uint64_t ring_reported_ HIPR_GUARDED_BY(mu_) = 0;  // ring_tail_ as last granted.
  Stats stats_ HIPR_GUARDED_BY(mu_);
};

}  // namespace hipr::rdma

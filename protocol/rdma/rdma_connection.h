// RDMA implementation of Connection over one libibverbs Reliable Connection
// queue pair. Built against the real verbs API; on our machines (no RDMA
// device) tested only against the verbs double (verbs_double/), never on
// hardware.
//
// Set-up: Create() opens the device and makes the QP (INIT, receives
// posted); the caller sends local_info() to the peer and calls Connect()
// with the peer's, along with the socket that carried the exchange (the
// hello's tcp connection; ConnectOverSocket() does the exchange itself).
// That socket stays open and carries nothing but grant records (see "Flow
// control"): its end is the peer's death, as the unix socket is for shm. A
// pure receiver on RC otherwise never learns that its peer is gone.
//
// The byte stream:
//  - Small pieces (frame headers, bodies, slices under bulk_min_bytes) are
//    gathered into messages of at most buffer_bytes and go as SENDs (inline
//    when they fit max_inline) into the peer's pre-posted receive buffers.
//  - Bulk slices from SendV go by RDMA WRITE into the peer's receive ring
//    (ring_bytes, registered for remote write), in chunks of chunk_bytes,
//    each followed by a small SEND naming where it landed (RC executes in
//    order, so the bytes are there when the notice is seen). The source is
//    first copied into a registered staging slot (the caller may reuse its
//    buffer on return). Chunks are pipelined: a sender waits only for
//    credits, staging and ring space, never for the reader.
//  - Bulk slices from SendVZeroCopy are pulled by the receiver. The sender
//    registers the caller's memory (registrations(): remote read) and sends
//    one offer per chunk naming its address, key and length; up to
//    kOfferWindow offers are outstanding. The receiver RDMA READs each one
//    and, once a chunk's READ completed, says so in the "taken" count every
//    message carries. SendVZeroCopy returns when every chunk it offered is
//    taken: the caller may then free or change its buffer.
//  - The receiver copies ring and SEND bytes into the caller's buffers (one
//    copy). Offered bytes: RecvVZeroCopy READs them straight into the
//    caller's memory (registered for local write through
//    receive_registrations()), pipelined in chunk pieces: no copy at all.
//    RecvV READs them into a registered pull buffer and copies out (one
//    copy, counted in bytes_copied_on_receive).
// Pull policy: offers are read in stream order. A receiver in RecvV or
// RecvVZeroCopy reads them as it reaches them. When no receive call is in
// progress, a thread that waits inside the connection for anything else (a
// sender out of credits, ring space or untaken offers; WaitReadable) pulls
// offers that have been waiting idle_pull_ms or longer into the pull buffer
// (at most pull_buffer_bytes of it), to be copied out later: so two sides
// that both SendVZeroCopy before receiving cannot wait on each other, while
// a receiver that calls RecvVZeroCopy soon after the offer arrives (the
// common case: it has just read the frame header) still reads with no copy.
// With no thread in the connection, an untaken offer waits for the
// application, as a tcp sender waits for a reader.
// Flow control: a sender holds one credit per receive the peer has posted,
// and learns of reposted receives, freed ring bytes and taken offers from
// the grant every message carries (cumulative counts, so a grant older
// than one already seen changes nothing). Data (offers included) needs two
// credits (the last one is kept for a grant), so two sides that both send
// can never run each other out. Grants go back when the receiving
// application consumes, at once when an offer was taken (its sender waits
// for that), and when the peer is down to its last credit and is owed two
// or more: a peer that does not read blocks its sender, as on tcp.
// A grant that falls due when this side has no credit left (it spent the
// last on a grant, and the peer's next grant is not yet here, or the peer
// holds its other receives with bytes its application has not read) goes
// as a 32-byte GrantRecord on the set-up socket instead, which the peer's
// waiting thread polls. It needs no receive, and no thread of ours to stay
// behind: a receiver that READ an offer's last bytes may return at once,
// and the offer's sender still learns it was taken.
//
// Errors: an error completion, a QP in the error state, or a peer that
// violates the stream's rules ends the connection: kLinkDown (kProtocolError
// where the peer broke the rules: out-of-bounds or wrong-key RDMA into our
// memory, which the NIC refuses with IBV_EVENT_QP_ACCESS_ERR; an offer our
// READ may not read, IBV_WC_REM_ACCESS_ERR; a notice naming bytes outside
// our ring; an offer out of order, empty, longer than the peer's chunk or
// beyond kMaxOffers outstanding), with one log line naming the verbs status.
//
// Thread-safety: as transport.h: one sender and one receiver at once,
// Shutdown() and ForgetMemory() from any thread. Whichever of them waits
// polls the shared completion queue for both.
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
  uint32_t max_inline = 128;  // At least 48: grants always go inline.
  // Offers nobody is receiving are pulled into the pull buffer after this
  // long when a thread waits in the connection (see "Pull policy").
  int idle_pull_ms = 5;
  // Most bytes such pulls may hold before the application reads them.
  uint64_t pull_buffer_bytes = uint64_t{128} << 20;
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

// Offers a sender keeps outstanding, and the most a receiver accepts.
inline constexpr uint32_t kOfferWindow = 16;
inline constexpr uint32_t kMaxOffers = 64;

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
  uint8_t rd_atomic = 0;  // RDMA READs we serve at once (our max_dest_rd_atomic).
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
  Status RecvVZeroCopy(const iovec* iov, int count) override;
  void ForgetMemory(const void* addr, size_t bytes) override;
  Status WaitReadable(int timeout_ms) override;
  void Shutdown() override;
  std::string PeerName() const override;
  void Abandon() override;
  // By the liveness socket's peer: loopback or a unix socket.
  bool PeerIsLocal() const override;
  // "rdma bulk: ..." from stats(): bytes by WRITE (and how many were staged
  // by a copy), by READ straight into place or through the pull buffer,
  // and copied out of this side's buffers.
  std::string BulkSummary() const override;

  // Registrations of pinned memory SendVZeroCopy offers (remote read) and
  // RecvVZeroCopy reads into (local write). ForgetMemory() invalidates both.
  MrCache& registrations() { return *send_mrs_; }
  MrCache& receive_registrations() { return *recv_mrs_; }

  struct Stats {
    uint64_t messages = 0;  // SENDs of data and notices.
    uint64_t credit_messages = 0;  // SENDs that only grant.
    uint64_t writes = 0;
    uint64_t bulk_bytes = 0;  // Written by RDMA WRITE.
    uint64_t bulk_bytes_copied_on_send = 0;  // Of those, staged by a user-space copy.
    uint64_t offers = 0;  // Chunks offered for the peer to READ.
    uint64_t bulk_bytes_offered = 0;
    uint64_t reads = 0;  // RDMA READs of the peer's offers.
    uint64_t bulk_bytes_read = 0;
    uint64_t bulk_bytes_pulled = 0;  // Of those, READ into the pull buffer (copied out later).
    uint64_t bytes_copied_on_receive = 0;  // Out of the ring, receive buffers or pull buffer.
    uint64_t socket_grants = 0;  // Grants sent as a GrantRecord on the set-up socket.
  };
  Stats stats() const;

 private:
  friend class RdmaConnectionTestPeer;
  explicit RdmaConnection(const Options& options);
  // Registered memory offered bytes are pulled into.
  struct PullBlock {
    uint8_t* mem;
    size_t bytes;
    ibv_mr* mr;
  };
  // Received bytes not yet read: in receive buffer `buffer` (after the
  // message header), at `pos` in our ring, or offered by the peer.
  struct Item {
    enum Kind : uint8_t { kBuffer, kRing, kOffer } kind = kBuffer;
    uint32_t buffer = 0;
    uint64_t pos = 0;  // kRing: where in the ring stream; kOffer: the peer's address.
    uint64_t len = 0;
    uint64_t done = 0;  // Bytes already read (kOffer: copied out or READ straight into the caller's memory).
    // kOffer only:
    uint32_t rkey = 0;
    uint64_t posted = 0;  // Bytes READs were posted for (in order).
    int64_t since_ms = 0;  // When it arrived or was last read from.
    PullBlock* pull = nullptr;  // When pulled: holds its bytes [pull_from, len).
    uint64_t pull_from = 0;
    uint64_t pull_end = 0;  // The pull is complete once reads_done_ reaches this.
  };
  static Item MakeItem(Item::Kind kind, uint32_t buffer, uint64_t pos, uint64_t len) {
    Item it;
    it.kind = kind;
    it.buffer = buffer;
    it.pos = pos;
    it.len = len;
    return it;
  }
  // Tests only: posts an offer as given, registering nothing.
  Status SendRawOffer(uint64_t addr, uint32_t rkey, uint32_t len);
  Status Init();
  Status SendImpl(const iovec* iov, int count, bool zero_copy);
  // REQUIRES: mu_ held. Each may wait (giving up mu_ meanwhile).
  Status FlushSmall(MutexLock& lock) HIPR_REQUIRES(mu_);
  Status WriteBulk(MutexLock& lock, const uint8_t* src, size_t len) HIPR_REQUIRES(mu_);
  // Offers [src, src + len) from `mr` in chunks.
  Status OfferBulk(MutexLock& lock, const uint8_t* src, size_t len, ibv_mr* mr) HIPR_REQUIRES(mu_);
  Status RecvImpl(const iovec* iov, int count, bool zero_copy);
  // Waits for the next item (kLinkDown after recv_timeout_ms).
  Status WaitForItem(MutexLock& lock) HIPR_REQUIRES(mu_);
  // READ support. PostRead reads the next n bytes of offer `it` to `dst`.
  bool ReadRoom() const HIPR_REQUIRES(mu_);
  void PostRead(Item& it, uint64_t n, uint8_t* dst, uint32_t lkey) HIPR_REQUIRES(mu_);
  // Gives `it` a pull block (false: none, or over pull_buffer_bytes unless `force`).
  bool StartPull(Item& it, bool force) HIPR_REQUIRES(mu_);
  void ReleasePull(Item& it) HIPR_REQUIRES(mu_);
  bool PullComplete(const Item& it) const HIPR_REQUIRES(mu_);
  // Posts what READs the pulls in progress still need and room allows, and
  // (when no receive is in progress) starts pulls of idle offers. Returns
  // when the next idle offer becomes due (-1: none).
  int64_t PumpReads() HIPR_REQUIRES(mu_);
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
  // `addr` and `rkey`: kOffer's.
  Status PostMessage(uint8_t type, uint64_t pos, uint64_t len, int slot, uint32_t body_len, ibv_send_wr* write,
                     uint64_t addr = 0, uint32_t rkey = 0) HIPR_REQUIRES(mu_);
  void Fail(Status st) HIPR_REQUIRES(mu_);
  // A zero-copy call fails while the NIC may still touch the caller's
  // memory (READs into it, the peer's READs of it): the QP goes to the
  // error state, so nothing touches it after the call returns.
  void StopQp() HIPR_REQUIRES(mu_);
  // The reason behind a QP in the error state, from the async events
  // (waiting up to wait_ms for one): an access violation by the peer?
  Status ErrorStateReason(int wait_ms);
  // Reads what the set-up socket holds: grant records, or its end.
  void CheckPeerSocket() HIPR_REQUIRES(mu_);
  // Takes a grant (cumulative values, from a message or a record); false
  // when it grants what the peer cannot have.
  bool ApplyGrant(uint64_t granted, uint64_t ring_tail, uint64_t taken) HIPR_REQUIRES(mu_);
  // After a message or record carried the grant: nothing is owed.
  void GrantSent() HIPR_REQUIRES(mu_);
  // Sends the grant as a GrantRecord on the set-up socket (no credit left).
  void SendGrantRecord() HIPR_REQUIRES(mu_);
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
  std::unique_ptr<MrCache> send_mrs_;
  std::unique_ptr<MrCache> recv_mrs_;
  uint8_t rd_init_ = 1;  // Our max_rd_atomic (set at Connect).
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
  uint32_t credits_ HIPR_GUARDED_BY(mu_) = 0;  // peer_granted_ less the messages sent.
  uint64_t peer_granted_ HIPR_GUARDED_BY(mu_) = 0;  // Receives the peer ever posted for us.
  uint64_t messages_sent_ HIPR_GUARDED_BY(mu_) = 0;
  uint32_t sq_outstanding_ HIPR_GUARDED_BY(mu_) = 0;
  std::vector<uint32_t> free_slots_ HIPR_GUARDED_BY(mu_);
  int fill_slot_ HIPR_GUARDED_BY(mu_) = -1;  // The slot small pieces gather in.
  uint32_t fill_bytes_ HIPR_GUARDED_BY(mu_) = 0;
  uint64_t peer_ring_head_ HIPR_GUARDED_BY(mu_) = 0;  // Bytes written into the peer's ring.
  uint64_t peer_ring_tail_ HIPR_GUARDED_BY(mu_) = 0;  // Of those, freed by the peer.
  uint64_t staging_head_ HIPR_GUARDED_BY(mu_) = 0;  // Staging slots taken / released (FIFO).
  uint64_t staging_tail_ HIPR_GUARDED_BY(mu_) = 0;
  uint64_t offered_ HIPR_GUARDED_BY(mu_) = 0;  // Offers sent.
  uint64_t peer_taken_ HIPR_GUARDED_BY(mu_) = 0;  // Of those, read by the peer.
  uint64_t granted_total_ HIPR_GUARDED_BY(mu_) = 0;  // Receives the peer was ever granted.
  uint64_t received_total_ HIPR_GUARDED_BY(mu_) = 0;  // Messages received from it.
  // A grant record (32 bytes) partly read from the set-up socket.
  uint8_t record_in_[32] HIPR_GUARDED_BY(mu_) = {};
  size_t record_have_ HIPR_GUARDED_BY(mu_) = 0;
  // Receiving.
  std::deque<Item> inbox_ HIPR_GUARDED_BY(mu_);
  uint32_t owed_ HIPR_GUARDED_BY(mu_) = 0;  // Receives reposted, not yet granted.
  uint64_t ring_expected_ HIPR_GUARDED_BY(mu_) = 0;  // Where the next notice must point.
  uint64_t ring_tail_ HIPR_GUARDED_BY(mu_) = 0;  // Ring bytes read.
  uint64_t ring_reported_ HIPR_GUARDED_BY(mu_) = 0;  // ring_tail_ as last granted.
  int receivers_ HIPR_GUARDED_BY(mu_) = 0;  // Threads in RecvV / RecvVZeroCopy.
  uint64_t offers_received_ HIPR_GUARDED_BY(mu_) = 0;
  uint64_t taken_ HIPR_GUARDED_BY(mu_) = 0;  // Offers whose every READ completed.
  uint64_t taken_reported_ HIPR_GUARDED_BY(mu_) = 0;  // taken_ as last granted.
  uint64_t reads_posted_ HIPR_GUARDED_BY(mu_) = 0;  // READs posted / completed.
  uint64_t reads_done_ HIPR_GUARDED_BY(mu_) = 0;
  std::deque<uint64_t> offer_ends_ HIPR_GUARDED_BY(mu_);  // reads_posted_ after each offer's last READ.
  std::vector<std::unique_ptr<PullBlock>> pull_blocks_ HIPR_GUARDED_BY(mu_);  // All of them.
  std::vector<PullBlock*> free_pulls_ HIPR_GUARDED_BY(mu_);
  uint64_t pull_bytes_ HIPR_GUARDED_BY(mu_) = 0;  // In blocks attached to items.
  Stats stats_ HIPR_GUARDED_BY(mu_);
};

}  // namespace hipr::rdma

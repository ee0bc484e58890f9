// Internals of RdmaConnection shared by its .cc files (rdma_connection.cc:
// set-up, completions and sending; rdma_receive.cc: receiving, offers'
// READs and the pull buffer): the stream's message header (its wire
// format), work-request ids, and WaitFor(). Nothing else includes this.
#pragma once

#include <infiniband/verbs.h>
#include <poll.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include "protocol/rdma/rdma_connection.h"

namespace hipr::rdma {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "the rdma stream's headers are little-endian host structs");

// Access flags as ints: verbs.h's ibv_reg_mr macro masks them with another
// enum type, which C++20 deprecates for enum operands.
constexpr int kLocalWrite = IBV_ACCESS_LOCAL_WRITE;
constexpr int kRemoteWrite = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
// Offered memory: the peer READs it; we never write it (it may be read-only).
constexpr int kRemoteRead = IBV_ACCESS_REMOTE_READ;
// READs posted and not yet completed, at most (ReadRoom() also leaves a
// quarter of the send queue to SENDs).
constexpr uint64_t kMaxReadsInFlight = 32;

// Message types (first byte of every SEND).
enum MsgType : uint8_t { kInline = 1, kRing = 2, kCredit = 3, kOffer = 4 };

// Every SEND starts with this; kInline's bytes follow it. Every message
// carries the grant (granted, ring_tail, taken); kCredit carries nothing
// else. Protocol version: QpInfo's (rdma_qp_info.cc), 2 since offers, 3
// since grants are cumulative and may come as a GrantRecord.
struct MsgHeader {
  uint8_t type;
  uint8_t reserved[3];
  uint32_t granted;    // Grant: receives ever posted for the peer (cumulative, mod 2^32).
  uint64_t ring_tail;  // Grant: bytes of the receiver's ring it has read (cumulative).
  uint64_t taken;      // Grant: the receiver's offers it has READ completely (cumulative).
  uint64_t pos;        // kRing: where in the stream of ring bytes the chunk is; kOffer: its number.
  uint64_t addr;       // kOffer: where its bytes are in the sender's memory.
  uint32_t len;        // kRing, kOffer: the chunk's length.
  uint32_t rkey;       // kOffer: the key to READ it with.
};
static_assert(sizeof(MsgHeader) == 48);

// A grant sent on the set-up socket by a side with no credit left (see
// "Flow control" in rdma_connection.h): the same cumulative values as a
// message's grant, in full. Its first byte can never start a HIPR frame.
struct GrantRecord {
  uint8_t marker;  // kGrantRecordMarker
  uint8_t reserved[7];  // Zero.
  uint64_t granted;
  uint64_t ring_tail;
  uint64_t taken;
};
static_assert(sizeof(GrantRecord) == 32);  // RdmaConnection::record_in_ holds one.
constexpr uint8_t kGrantRecordMarker = 0xC7;

// Work request ids: kind in the top byte.
enum WrKind : uint64_t { kWrRecv = 1, kWrSlot = 2, kWrInline = 3, kWrStaging = 4, kWrRead = 5 };
inline uint64_t WrId(WrKind kind, uint64_t value) { return (uint64_t{kind} << 56) | value; }
inline WrKind KindOf(uint64_t wr_id) { return static_cast<WrKind>(wr_id >> 56); }
inline uint32_t ValueOf(uint64_t wr_id) { return static_cast<uint32_t>(wr_id & 0xFFFFFFFF); }

inline std::string ErrnoText(const char* what, int err) { return std::string(what) + ": " + std::strerror(err); }

inline void* MapBytes(size_t n) {
  void* p = mmap(nullptr, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  return p == MAP_FAILED ? nullptr : p;
}

inline int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Defined here so both .cc files instantiate it.
template <class Ready>
Status RdmaConnection::WaitFor(MutexLock& lock, Ready ready, int timeout_ms) {
  const int64_t deadline = timeout_ms < 0 ? -1 : NowMs() + timeout_ms;
  for (;;) {
    Progress();
    const int64_t pull_due = error_.ok() && !closing_ ? PumpReads() : -1;
    if (shut_down_.load()) return LinkDown("connection shut down");
    if (ready()) return Status::Ok();
    if (!error_.ok()) return error_;
    if (peer_gone_) {
      // The peer's ordinary end (as a tcp EOF): the session above decides
      // whether that is news, so no log line here.
      if (error_.ok()) {
        error_ = LinkDown("rdma: the peer closed the connection");
        cv_.notify_all();
      }
      return error_;
    }
    int wait_ms = -1;
    if (deadline >= 0) {
      const int64_t left = deadline - NowMs();
      if (left <= 0) return Status(StatusCode::kTimeout, "no progress for " + std::to_string(timeout_ms) + " ms");
      wait_ms = static_cast<int>(left);
    }
    if (pull_due >= 0) {
      const int until = static_cast<int>(std::max<int64_t>(1, pull_due - NowMs()));
      wait_ms = wait_ms < 0 ? until : std::min(wait_ms, until);
    }
    if (poller_active_) {
      // The other thread sleeps on the channel; it wakes us when it saw something.
      cv_.wait_for(lock.native(), std::chrono::milliseconds(wait_ms < 0 ? 100 : std::min(wait_ms, 100)));
      continue;
    }
    // Arm, then look once more: a completion that came before arming is in
    // the queue now, one after it rings the channel.
    ibv_req_notify_cq(cq_, 0);
    if (Progress()) continue;
    poller_active_ = true;
    mu_.unlock();  // (The scoped lock is held again before it ends.)
    pollfd pfds[3] = {{channel_->fd, POLLIN, 0}, {wake_fd_, POLLIN, 0}, {sock_, POLLIN | POLLRDHUP, 0}};
    int rc = poll(pfds, sock_ >= 0 ? 3 : 2, wait_ms);
    const int poll_errno = errno;
    if (pfds[0].revents & POLLIN) {
      ibv_cq* ev_cq;
      void* ev_ctx;
      unsigned events = 0;
      while (ibv_get_cq_event(channel_, &ev_cq, &ev_ctx) == 0) ++events;
      if (events > 0) ibv_ack_cq_events(cq_, events);
    }
    if (pfds[1].revents & POLLIN) {
      uint64_t v;
      (void)!read(wake_fd_, &v, sizeof v);
    }
    mu_.lock();
    poller_active_ = false;
    cv_.notify_all();
    if (rc < 0 && poll_errno != EINTR) {
      Fail(LinkDown(ErrnoText("rdma: poll", poll_errno)));
      return error_;
    }
    if (sock_ >= 0 && pfds[2].revents != 0) CheckPeerSocket();
  }
}

}  // namespace hipr::rdma

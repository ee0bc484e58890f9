// Internals of the verbs double (verbs_double.h): the objects behind the
// ibv_* handles, the shared-memory "wire" between two queue pairs, and the
// per-QP engine that plays the NIC. Only the double's own .cc files include
// this.
//
// The wire. Every QP owns one file, <fabric dir>/qp-<qpn>: a header and a
// ring of packets that its connected peer produces into and it consumes.
// When a QP moves to RTR it maps its peer's file (found by dest_qp_num; the
// header's GID must match the address vector's) and claims it as the one
// producer. Responses never take ring space: the owner publishes what a NIC
// would send back (ACK count, a fatal NAK, an RNR stall) in its header, which
// the requester reads through its mapping. So two engines can never
// deadlock on each other's full rings.
//
// The engine. A thread per QP, in the QP's own process, does what the NIC
// does: it reads the sources of posted sends (checking their lkeys) and
// writes packets into the peer's ring; it executes the packets in its own
// ring against its own process's memory (RDMA WRITE and READ: the rkey,
// bounds and access of the target region are checked here, on the target
// side, as the responder NIC does); it turns ACKs, NAKs, RNR stalls and
// silence into completions. Threads sleep on a futex word in their own wire
// header, which the peer and local posts bump.
//
// RDMA READ. The requester cuts a READ into segments of at most kMaxSegment
// and sends one request packet per segment, each naming a slot of the read
// response area that follows the ring in the requester's own wire file (the
// requester reserves it before sending, so responses never wait for ring
// space either). The responder copies the bytes from its memory into that
// slot, then ACKs the packet; the requester, seeing the ACK, scatters the
// slot into the READ's local SGEs (checked for LOCAL_WRITE) and frees it.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

namespace hipr::verbs_double {

inline constexpr uint32_t kWireMagic = 0x4C424456;  // "VDBL"
inline constexpr uint32_t kWireVersion = 2;
inline constexpr uint64_t kWireHeaderBytes = 4096;
inline constexpr uint64_t kWireRingBytes = uint64_t{4} << 20;
// Largest payload of one packet (a message is cut into packets, as into MTUs).
inline constexpr uint32_t kMaxSegment = 64u << 10;
inline constexpr uint64_t kPacketAlign = 64;
// The read response area after the ring: this many slots of kMaxSegment.
inline constexpr uint32_t kReadSlots = 64;
inline constexpr uint64_t kWireReadBytes = uint64_t{kReadSlots} * kMaxSegment;
inline constexpr uint64_t kWireFileBytes = kWireHeaderBytes + kWireRingBytes + kWireReadBytes;
// The QP number a closed wire's producer slot holds: no one may claim it.
inline constexpr uint32_t kClosedQpn = 0xFFFFFFFFu;

// Limits the device reports (ibv_query_device) and enforces.
inline constexpr uint32_t kMaxQpWr = 4096;
inline constexpr uint32_t kMaxSge = 16;
inline constexpr uint32_t kMaxInline = 512;
inline constexpr int kMaxCqe = 1 << 16;
inline constexpr uint64_t kMaxMrBytes = uint64_t{1} << 40;
// RDMA READs a QP may have outstanding as requester / responder.
inline constexpr int kMaxRdAtomic = 16;

struct WireHeader {
  uint32_t magic;
  uint32_t version;
  uint32_t qpn;
  int32_t owner_pid;
  uint8_t gid[16];
  uint64_t ring_bytes;
  // Producer (the peer's engine): bytes written into the ring.
  alignas(64) std::atomic<uint64_t> head;
  // Owner: bytes consumed.
  alignas(64) std::atomic<uint64_t> tail;
  // The owner's engine sleeps on this futex word; whoever wants it to look
  // again increments it and wakes it.
  alignas(64) std::atomic<uint32_t> bell;
  // The QP number of the one QP that produces into this ring (0: unclaimed,
  // kClosedQpn: the owner is gone).
  std::atomic<uint32_t> producer_qpn;
  // Owner -> producer, what a responder NIC answers: packets executed (an
  // ACK up to there), a fatal NAK ((wc_status << 48) | (seq + 1)), the seq+1
  // of a SEND stalled for want of a receive (RNR), and the RNR timer the
  // responder asks for.
  std::atomic<uint64_t> acked;
  std::atomic<uint64_t> nak;
  std::atomic<uint64_t> rnr;
  std::atomic<uint32_t> min_rnr_timer;
  // Producer -> owner: its QP failed; discard packets with seq + 1 >= this.
  std::atomic<uint64_t> abort_from;
};
static_assert(sizeof(WireHeader) <= kWireHeaderBytes);
static_assert(std::atomic<uint64_t>::is_always_lock_free && std::atomic<uint32_t>::is_always_lock_free);

enum PacketOp : uint32_t { kPad = 1, kSend = 2, kWrite = 3, kReadReq = 4 };
enum PacketFlags : uint32_t { kFirst = 1, kLast = 2 };

// A packet in the ring: this header, then `payload` bytes, padded to
// kPacketAlign. A message (one work request) is one or more packets. A
// kReadReq carries no bytes: `payload` is the length it asks for.
struct Packet {
  uint32_t op;
  uint32_t bytes;  // Header + payload + padding.
  uint64_t seq;    // Packets of this connection, from 0.
  uint32_t psn;    // (sq_psn + seq) mod 2^24: the responder expects rq_psn + seq.
  uint32_t src_qpn;
  uint64_t raddr;  // kWrite, kReadReq: where the message starts.
  uint32_t rkey;   // kWrite, kReadReq.
  uint32_t payload;
  uint64_t msg_offset;  // Of this packet's payload within its message.
  uint64_t msg_len;
  uint32_t flags;
  uint32_t resp_slot;  // kReadReq: the requester's response slot.
};
static_assert(sizeof(Packet) <= kPacketAlign);

struct Context;

struct Pd {
  ibv_pd pd;
  Context* ctx;
  std::atomic<int> users{0};  // MRs and QPs.
};

struct Mr {
  ibv_mr mr;
  Pd* pd;
  uintptr_t start;
  uint64_t length;
  int access;
};

// Every MR of this process, by key (lkey == rkey). Engines hold `mu` shared
// while they copy into or out of a region, so a region is never
// deregistered under a copy.
struct Registry {
  std::shared_mutex mu;
  std::vector<Mr*> mrs;  // GUARDED_BY(mu)
  Mr* Find(uint32_t key) const;  // REQUIRES: mu held.
};
Registry& GlobalRegistry();
// A fresh, unused key. REQUIRES: registry mu held exclusively.
uint32_t NewKey(const Registry& r);

struct Channel {
  ibv_comp_channel ch;
  std::mutex mu;
  std::deque<struct Cq*> fired;  // GUARDED_BY(mu)
};

struct Cq {
  ibv_cq cq;
  Channel* channel;
  std::atomic<int> users{0};  // QPs.
  std::mutex mu;
  std::deque<ibv_wc> q;  // GUARDED_BY(mu)
  int capacity;
  bool armed = false;    // GUARDED_BY(mu)
  bool overrun = false;  // GUARDED_BY(mu)
  void Push(const ibv_wc& wc);
};

struct Context {
  ibv_context ctx;
  std::string dir;
  uint8_t gid[16];
  std::atomic<int> users{0};  // PDs, CQs, channels.
  std::mutex async_mu;
  std::deque<ibv_async_event> async_events;  // GUARDED_BY(async_mu)
  void RaiseAsync(const ibv_async_event& e);
};

struct SendWqe {
  uint64_t wr_id;
  ibv_wr_opcode opcode;
  bool signaled;
  bool is_inline;
  std::vector<ibv_sge> sge;
  std::vector<uint8_t> inline_data;
  uint64_t raddr;
  uint32_t rkey;
  uint64_t length;
  // Engine: bytes turned into packets, and the seq of its last packet.
  uint64_t pushed = 0;
  bool all_pushed = false;
  uint64_t first_seq = 0;
  uint64_t last_seq = 0;
};

// A READ segment requested and not yet scattered: its packet's seq, its
// response slot (cumulative; % kReadSlots), and which bytes of which READ.
struct ReadSeg {
  uint64_t seq;
  uint64_t slot;
  uint64_t msg_offset;
  uint64_t bytes;
  const SendWqe* w;
};

struct RecvWqe {
  uint64_t wr_id;
  std::vector<ibv_sge> sge;
};

struct Qp {
  ibv_qp qp;
  Context* ctx;
  Pd* pd;
  Cq* scq;
  Cq* rcq;
  ibv_qp_cap cap;
  bool sq_sig_all;

  std::mutex mu;  // Guards everything below, and qp.state.
  std::deque<SendWqe> sq;
  std::deque<RecvWqe> rq;
  unsigned access_flags = 0;
  uint32_t sq_psn = 0;
  uint32_t rq_psn = 0;
  uint32_t dest_qpn = 0;
  ibv_gid dgid{};
  uint8_t timeout = 0;
  uint8_t retry_cnt = 0;
  uint8_t rnr_retry = 0;
  uint8_t min_rnr_timer = 0;
  uint8_t max_rd_atomic = 0;
  uint8_t max_dest_rd_atomic = 0;

  // Wires: ours (we consume) and the peer's (we produce), mapped.
  std::string path;
  WireHeader* my = nullptr;
  WireHeader* peer = nullptr;
  uint8_t* my_ring = nullptr;
  uint8_t* peer_ring = nullptr;
  uint64_t next_seq = 0;  // Requester: the next packet's seq.
  uint64_t recv_seq = 0;  // Responder: the next packet's expected seq.
  // Requester: READs started and not completed, their segments awaiting
  // scatter (in seq order), and response slots taken / freed.
  int reads_active = 0;
  std::deque<ReadSeg> read_segs;
  uint64_t slots_taken = 0;
  uint64_t slots_freed = 0;
  // Responder: the receive a multi-packet SEND is landing in.
  bool in_send = false;
  RecvWqe cur_recv;
  // Requester timers (steady clock, ns): since when we wait for an ACK with
  // nothing acknowledged, and since when the peer has reported RNR.
  int64_t waiting_since = 0;
  uint64_t last_acked = 0;
  int64_t rnr_since = 0;

  std::thread engine;
  std::atomic<bool> stop{false};

  // Engine steps, REQUIRES: mu held. Each returns true when it made progress.
  bool Respond();
  bool Request();
  bool Acknowledge();
  // Scatters the acknowledged segments of `w` (the oldest request); false
  // when its local SGEs no longer hold (IBV_WC_LOC_PROT_ERR).
  bool ScatterReads(const SendWqe& w, uint64_t acked);
  // Moves to the error state: every outstanding request completes with
  // IBV_WC_WR_FLUSH_ERR and the peer is told to drop what we sent.
  void EnterError();
  void Complete(const SendWqe& w, ibv_wc_status status);
  void Ring();  // Wakes our own engine.
  void RingPeer();
  void Run();
};

int64_t NowNs();

}  // namespace hipr::verbs_double

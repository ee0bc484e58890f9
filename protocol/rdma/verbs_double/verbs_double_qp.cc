// The verbs double's RC queue pairs: creation and the state machine, posting,
// and the engine that plays the NIC (verbs_double_internal.h).
#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <new>
#include <random>

#include "protocol/rdma/verbs_double/verbs_double_internal.h"

namespace hipr::verbs_double {
namespace {

constexpr uint32_t kPsnMask = 0xFFFFFF;
constexpr uint64_t kNakSeqMask = (uint64_t{1} << 48) - 1;

uint32_t* FutexWord(std::atomic<uint32_t>* a) { return reinterpret_cast<uint32_t*>(a); }

void FutexWait(std::atomic<uint32_t>* word, uint32_t seen, int timeout_ms) {
  timespec ts{timeout_ms / 1000, (timeout_ms % 1000) * 1000000L};
  syscall(SYS_futex, FutexWord(word), FUTEX_WAIT, seen, &ts, nullptr, 0);
}

void FutexWake(std::atomic<uint32_t>* word) {
  syscall(SYS_futex, FutexWord(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

void Bump(WireHeader* h) {
  h->bell.fetch_add(1, std::memory_order_seq_cst);
  FutexWake(&h->bell);
}

uint64_t Align(uint64_t n) { return (n + kPacketAlign - 1) & ~(kPacketAlign - 1); }

// IB's RNR NAK timer encoding, in microseconds (0 means the longest).
int64_t RnrTimerNs(uint32_t code) {
  static constexpr int64_t kUs[32] = {655360, 10,    20,    30,    40,    60,     80,     120,   160,   240,   320,
                                      480,    640,   960,   1280,  1920,  2560,   3840,   5120,  7680,  10240, 15360,
                                      20480,  30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520};
  return kUs[code & 31] * 1000;
}

// The local ACK timeout: 4.096 us * 2^timeout (0: infinite).
int64_t AckTimeoutNs(uint8_t timeout) { return timeout == 0 ? -1 : int64_t{4096} << std::min<int>(timeout, 31); }

ibv_wc Wc(uint64_t wr_id, ibv_wc_status status, ibv_wc_opcode opcode, uint32_t qpn) {
  ibv_wc wc;
  std::memset(&wc, 0, sizeof wc);
  wc.wr_id = wr_id;
  wc.status = status;
  wc.opcode = opcode;
  wc.qp_num = qpn;
  return wc;
}

// Validates every SGE against the registry: the key names a region of this
// PD holding [addr, addr + length) with `need` access. REQUIRES: registry mu held.
bool SgesValid(const Registry& r, const Pd* pd, const std::vector<ibv_sge>& sge, int need) {
  for (const ibv_sge& s : sge) {
    if (s.length == 0) continue;
    const Mr* m = r.Find(s.lkey);
    if (m == nullptr || m->pd != pd || (m->access & need) != need || s.addr < m->start ||
        s.addr - m->start > m->length || s.length > m->length - (s.addr - m->start))
      return false;
  }
  return true;
}

// Copies between a message's bytes [offset, offset + n) and the SGEs that
// hold it. REQUIRES: the SGEs were validated under the registry lock held now.
void Scatter(const std::vector<ibv_sge>& sge, uint64_t offset, const uint8_t* src, uint64_t n) {
  for (const ibv_sge& s : sge) {
    if (n == 0) return;
    if (offset >= s.length) {
      offset -= s.length;
      continue;
    }
    const uint64_t k = std::min<uint64_t>(n, s.length - offset);
    std::memcpy(reinterpret_cast<uint8_t*>(s.addr) + offset, src, k);
    src += k;
    n -= k;
    offset = 0;
  }
}

void Gather(const std::vector<ibv_sge>& sge, uint64_t offset, uint8_t* dst, uint64_t n) {
  for (const ibv_sge& s : sge) {
    if (n == 0) return;
    if (offset >= s.length) {
      offset -= s.length;
      continue;
    }
    const uint64_t k = std::min<uint64_t>(n, s.length - offset);
    std::memcpy(dst, reinterpret_cast<const uint8_t*>(s.addr) + offset, k);
    dst += k;
    n -= k;
    offset = 0;
  }
}

std::string WirePath(const std::string& dir, uint32_t qpn) { return dir + "/qp-" + std::to_string(qpn); }

// Maps a wire file; nullptr when it is not one.
WireHeader* MapWire(int fd) {
  void* p = mmap(nullptr, kWireFileBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  return p == MAP_FAILED ? nullptr : static_cast<WireHeader*>(p);
}

void UnmapWire(WireHeader* h) {
  if (h != nullptr) munmap(h, kWireFileBytes);
}

uint8_t* RingOf(WireHeader* h) { return reinterpret_cast<uint8_t*>(h) + kWireHeaderBytes; }

// A read response slot of a wire.
uint8_t* ReadSlot(WireHeader* h, uint64_t slot) {
  return RingOf(h) + kWireRingBytes + (slot % kReadSlots) * uint64_t{kMaxSegment};
}

ibv_wc_opcode WcOpcode(ibv_wr_opcode op) {
  switch (op) {
    case IBV_WR_RDMA_WRITE: return IBV_WC_RDMA_WRITE;
    case IBV_WR_RDMA_READ: return IBV_WC_RDMA_READ;
    default: return IBV_WC_SEND;
  }
}

}  // namespace

void Qp::Ring() { Bump(my); }

void Qp::RingPeer() {
  if (peer != nullptr) Bump(peer);
}

void Qp::Complete(const SendWqe& w, ibv_wc_status status) {
  if (status == IBV_WC_SUCCESS && !w.signaled) return;
  ibv_wc wc = Wc(w.wr_id, status, WcOpcode(w.opcode), qp.qp_num);
  if (status == IBV_WC_SUCCESS && w.opcode == IBV_WR_RDMA_READ) wc.byte_len = static_cast<uint32_t>(w.length);
  scq->Push(wc);
}

void Qp::EnterError() {
  if (qp.state == IBV_QPS_ERR) return;
  qp.state = IBV_QPS_ERR;
  for (const SendWqe& w : sq) Complete(w, IBV_WC_WR_FLUSH_ERR);
  sq.clear();
  read_segs.clear();
  reads_active = 0;
  slots_freed = slots_taken;
  if (in_send) rcq->Push(Wc(cur_recv.wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, qp.qp_num));
  in_send = false;
  for (const RecvWqe& r : rq) rcq->Push(Wc(r.wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, qp.qp_num));
  rq.clear();
  if (peer != nullptr) {
    // The responder drops what it has not executed yet.
    peer->abort_from.store(peer->acked.load(std::memory_order_acquire) + 1, std::memory_order_release);
    RingPeer();
  }
}

bool Qp::Respond() {
  bool progress = false;
  const uint64_t cap = kWireRingBytes;
  Registry& reg = GlobalRegistry();
  for (int budget = 0; budget < 256; ++budget) {
    const uint64_t head = my->head.load(std::memory_order_acquire);
    const uint64_t tail = my->tail.load(std::memory_order_relaxed);
    if (head == tail) break;
    const uint64_t off = tail % cap;
    Packet p;
    std::memcpy(&p, my_ring + off, sizeof p);
    if (head - tail > cap || p.bytes < kPacketAlign || p.bytes % kPacketAlign != 0 || p.bytes > cap - off ||
        p.bytes > head - tail ||
        (p.op != kPad && ((p.op == kReadReq ? p.payload > kMaxSegment || p.resp_slot >= kReadSlots
                                            : p.payload > p.bytes - sizeof(Packet)) ||
                          p.msg_offset > p.msg_len || p.payload > p.msg_len - p.msg_offset))) {
      // Only a broken peer engine writes this; drop the connection.
      my->tail.store(head, std::memory_order_release);
      EnterError();
      ctx->RaiseAsync(ibv_async_event{{.qp = &qp}, IBV_EVENT_QP_FATAL});
      return true;
    }
    auto consume = [&] {
      my->tail.store(tail + p.bytes, std::memory_order_release);
      RingPeer();  // The producer may wait for space.
      progress = true;
    };
    if (p.op == kPad) {
      consume();
      continue;
    }
    // Before RTR a NIC drops requests and the requester retransmits them;
    // leaving them in the ring until then is the same.
    if (qp.state == IBV_QPS_RESET || qp.state == IBV_QPS_INIT) return progress;
    const uint64_t abort = my->abort_from.load(std::memory_order_acquire);
    const bool live = qp.state == IBV_QPS_RTR || qp.state == IBV_QPS_RTS;
    if (!live || p.src_qpn != dest_qpn || p.seq != recv_seq || p.psn != ((rq_psn + p.seq) & kPsnMask) ||
        (abort != 0 && p.seq + 1 >= abort) || (p.op == kSend && !(p.flags & kFirst) && !in_send)) {
      // Not for us, out of sequence, or aborted: a NIC drops it unanswered.
      consume();
      continue;
    }
    const uint8_t* payload = my_ring + off + sizeof(Packet);
    auto nak = [&](ibv_wc_status status) {
      my->nak.store((uint64_t{status} << 48) | (p.seq + 1), std::memory_order_release);
      consume();
      EnterError();
    };
    if (p.op == kWrite) {
      std::shared_lock<std::shared_mutex> lock(reg.mu);
      const Mr* m = reg.Find(p.rkey);
      const bool ok = m != nullptr && m->pd == pd && (m->access & IBV_ACCESS_REMOTE_WRITE) &&
                      (access_flags & IBV_ACCESS_REMOTE_WRITE) && p.raddr >= m->start && p.msg_len <= m->length &&
                      p.raddr - m->start <= m->length - p.msg_len;
      if (!ok) {
        lock.unlock();
        ctx->RaiseAsync(ibv_async_event{{.qp = &qp}, IBV_EVENT_QP_ACCESS_ERR});
        nak(IBV_WC_REM_ACCESS_ERR);
        return true;
      }
      std::memcpy(reinterpret_cast<uint8_t*>(p.raddr + p.msg_offset), payload, p.payload);
    } else if (p.op == kReadReq) {
      // Both the region and this QP must allow remote reads.
      std::shared_lock<std::shared_mutex> lock(reg.mu);
      const Mr* m = reg.Find(p.rkey);
      const bool ok = m != nullptr && m->pd == pd && (m->access & IBV_ACCESS_REMOTE_READ) &&
                      (access_flags & IBV_ACCESS_REMOTE_READ) && p.raddr >= m->start && p.msg_len <= m->length &&
                      p.raddr - m->start <= m->length - p.msg_len;
      if (!ok) {
        lock.unlock();
        ctx->RaiseAsync(ibv_async_event{{.qp = &qp}, IBV_EVENT_QP_ACCESS_ERR});
        nak(IBV_WC_REM_ACCESS_ERR);
        return true;
      }
      // The response goes to the requester's slot; without a path back the
      // requester hears nothing and times out.
      if (peer == nullptr) return progress;
      std::memcpy(ReadSlot(peer, p.resp_slot), reinterpret_cast<const uint8_t*>(p.raddr + p.msg_offset), p.payload);
    } else if (p.op == kSend) {
      if (p.flags & kFirst) {
        if (rq.empty()) {
          // Receiver not ready: the packet stays until a receive is posted
          // or the requester gives up.
          my->rnr.store(p.seq + 1, std::memory_order_release);
          RingPeer();
          return progress;
        }
        my->rnr.store(0, std::memory_order_release);
        cur_recv = std::move(rq.front());
        rq.pop_front();
        in_send = true;
        uint64_t capacity = 0;
        for (const ibv_sge& s : cur_recv.sge) capacity += s.length;
        if (p.msg_len > capacity) {
          in_send = false;
          rcq->Push(Wc(cur_recv.wr_id, IBV_WC_LOC_LEN_ERR, IBV_WC_RECV, qp.qp_num));
          nak(IBV_WC_REM_INV_REQ_ERR);
          return true;
        }
      }
      std::shared_lock<std::shared_mutex> lock(reg.mu);
      if (!SgesValid(reg, pd, cur_recv.sge, IBV_ACCESS_LOCAL_WRITE)) {
        lock.unlock();
        in_send = false;
        rcq->Push(Wc(cur_recv.wr_id, IBV_WC_LOC_PROT_ERR, IBV_WC_RECV, qp.qp_num));
        nak(IBV_WC_REM_OP_ERR);
        return true;
      }
      Scatter(cur_recv.sge, p.msg_offset, payload, p.payload);
      lock.unlock();
      if (p.flags & kLast) {
        ibv_wc wc = Wc(cur_recv.wr_id, IBV_WC_SUCCESS, IBV_WC_RECV, qp.qp_num);
        wc.byte_len = static_cast<uint32_t>(p.msg_len);
        wc.src_qp = dest_qpn;
        rcq->Push(wc);
        in_send = false;
      }
    } else {
      consume();
      continue;
    }
    ++recv_seq;
    // ACK: the data is placed (and a SEND's completion queued) before it.
    my->acked.store(p.seq + 1, std::memory_order_release);
    consume();
  }
  return progress;
}

bool Qp::Request() {
  if (qp.state != IBV_QPS_RTS || peer == nullptr) return false;
  bool progress = false;
  const uint64_t cap = kWireRingBytes;
  Registry& reg = GlobalRegistry();
  for (SendWqe& w : sq) {
    if (w.all_pushed) {
      if (w.first_seq == UINT64_MAX) return progress;  // Failed locally: nothing after it goes out.
      continue;
    }
    const bool read = w.opcode == IBV_WR_RDMA_READ;
    // At most max_rd_atomic READs in flight; later requests wait behind.
    if (read && w.pushed == 0 && reads_active >= max_rd_atomic) return progress;
    if (w.pushed == 0 && !w.is_inline) {
      std::shared_lock<std::shared_mutex> lock(reg.mu);
      if (!SgesValid(reg, pd, w.sge, read ? IBV_ACCESS_LOCAL_WRITE : 0)) {
        // Completed, in order, by Acknowledge().
        w.all_pushed = true;
        w.first_seq = w.last_seq = UINT64_MAX;
        return true;
      }
    }
    for (;;) {
      const uint64_t seg = std::min<uint64_t>(kMaxSegment, w.length - w.pushed);
      const uint64_t need = Align(sizeof(Packet) + (read ? 0 : seg));
      if (read && slots_taken - slots_freed >= kReadSlots) return progress;  // Scatter frees slots.
      uint64_t head = peer->head.load(std::memory_order_relaxed);  // Ours alone to write.
      const uint64_t used = head - peer->tail.load(std::memory_order_acquire);
      if (used > cap) return progress;  // A broken peer; its timeout ends this.
      const uint64_t off = head % cap;
      if (need > cap - off) {
        if (cap - used < cap - off) return progress;
        Packet pad{};
        pad.op = kPad;
        pad.bytes = static_cast<uint32_t>(cap - off);
        std::memcpy(peer_ring + off, &pad, sizeof pad);
        peer->head.store(head + (cap - off), std::memory_order_release);
        continue;
      }
      if (cap - used < need) return progress;  // The peer's engine wakes us when it consumes.
      Packet p{};
      p.op = read ? kReadReq : w.opcode == IBV_WR_RDMA_WRITE ? kWrite : kSend;
      p.bytes = static_cast<uint32_t>(need);
      p.seq = next_seq;
      p.psn = (sq_psn + static_cast<uint32_t>(next_seq)) & kPsnMask;
      p.src_qpn = qp.qp_num;
      p.raddr = w.raddr;
      p.rkey = w.rkey;
      p.payload = static_cast<uint32_t>(seg);
      p.msg_offset = w.pushed;
      p.msg_len = w.length;
      p.flags = (w.pushed == 0 ? uint32_t{kFirst} : 0u) | (w.pushed + seg == w.length ? uint32_t{kLast} : 0u);
      uint8_t* dst = peer_ring + off + sizeof(Packet);
      if (read) {
        p.resp_slot = static_cast<uint32_t>(slots_taken % kReadSlots);
        read_segs.push_back(ReadSeg{next_seq, slots_taken, w.pushed, seg, &w});
        ++slots_taken;
        if (w.pushed == 0) ++reads_active;
      } else if (w.is_inline) {
        std::memcpy(dst, w.inline_data.data() + w.pushed, seg);
      } else {
        std::shared_lock<std::shared_mutex> lock(reg.mu);
        if (!SgesValid(reg, pd, w.sge, 0)) {  // Deregistered while being sent.
          w.all_pushed = true;
          w.first_seq = w.last_seq = UINT64_MAX;
          return true;
        }
        Gather(w.sge, w.pushed, dst, seg);
      }
      std::memcpy(peer_ring + off, &p, sizeof p);
      peer->head.store(head + need, std::memory_order_release);
      RingPeer();
      if (w.pushed == 0) w.first_seq = next_seq;
      ++next_seq;
      w.pushed += seg;
      progress = true;
      if (w.pushed == w.length) {
        w.all_pushed = true;
        w.last_seq = next_seq - 1;
        break;
      }
    }
  }
  return progress;
}

bool Qp::Acknowledge() {
  if (sq.empty() || qp.state != IBV_QPS_RTS) {
    waiting_since = rnr_since = 0;
    return false;
  }
  bool progress = false;
  const uint64_t acked = peer != nullptr ? peer->acked.load(std::memory_order_acquire) : 0;
  const uint64_t nak = peer != nullptr ? peer->nak.load(std::memory_order_acquire) : 0;
  const uint64_t rnr = peer != nullptr ? peer->rnr.load(std::memory_order_acquire) : 0;
  auto fail = [&](ibv_wc_status status) {
    Complete(sq.front(), status);
    sq.pop_front();
    EnterError();
    return true;
  };
  while (!sq.empty() && (sq.front().all_pushed || sq.front().pushed > 0)) {
    const SendWqe& w = sq.front();
    if (w.first_seq == UINT64_MAX) return fail(IBV_WC_LOC_PROT_ERR);
    const uint64_t nak_seq = (nak & kNakSeqMask);
    if (nak != 0 && nak_seq - 1 >= w.first_seq && (!w.all_pushed || nak_seq - 1 <= w.last_seq))
      return fail(static_cast<ibv_wc_status>(nak >> 48));
    if (w.opcode == IBV_WR_RDMA_READ) {
      const size_t before = read_segs.size();
      if (!ScatterReads(w, acked)) return fail(IBV_WC_LOC_PROT_ERR);
      if (read_segs.size() != before) progress = true;
    }
    if (!w.all_pushed || acked <= w.last_seq) break;
    if (w.opcode == IBV_WR_RDMA_READ) --reads_active;
    Complete(w, IBV_WC_SUCCESS);
    sq.pop_front();
    progress = true;
  }
  const int64_t now = NowNs();
  if (acked != last_acked) {
    last_acked = acked;
    waiting_since = now;
  }
  const bool outstanding = !sq.empty() && (peer == nullptr || next_seq > acked);
  if (!outstanding) {
    waiting_since = rnr_since = 0;
    return progress;
  }
  if (rnr != 0 && rnr - 1 >= acked) {
    // The responder has no receive for our SEND: retry after its RNR timer,
    // rnr_retry times (7: for ever).
    if (rnr_since == 0) rnr_since = now;
    waiting_since = now;  // It answers, so the transport timer does not run.
    const int64_t budget = RnrTimerNs(peer->min_rnr_timer.load()) * (rnr_retry + 1);
    if (rnr_retry != 7 && now - rnr_since > budget) return fail(IBV_WC_RNR_RETRY_EXC_ERR);
    return progress;
  }
  rnr_since = 0;
  if (waiting_since == 0) waiting_since = now;
  const int64_t t = AckTimeoutNs(timeout);
  if (t > 0 && now - waiting_since > t * (retry_cnt + 1)) return fail(IBV_WC_RETRY_EXC_ERR);
  return progress;
}

bool Qp::ScatterReads(const SendWqe& w, uint64_t acked) {
  Registry& reg = GlobalRegistry();
  while (!read_segs.empty() && read_segs.front().w == &w && read_segs.front().seq < acked) {
    const ReadSeg& s = read_segs.front();
    {
      std::shared_lock<std::shared_mutex> lock(reg.mu);
      if (!SgesValid(reg, pd, w.sge, IBV_ACCESS_LOCAL_WRITE)) return false;  // Deregistered meanwhile.
      Scatter(w.sge, s.msg_offset, ReadSlot(my, s.slot), s.bytes);
    }
    ++slots_freed;
    read_segs.pop_front();
  }
  return true;
}

void Qp::Run() {
  while (!stop.load(std::memory_order_acquire)) {
    const uint32_t seen = my->bell.load(std::memory_order_acquire);
    bool progress;
    bool pending;
    {
      std::lock_guard<std::mutex> lock(mu);
      progress = Respond();
      progress |= Request();
      progress |= Acknowledge();
      pending = !sq.empty() || in_send || my->rnr.load(std::memory_order_relaxed) != 0;
    }
    if (progress) continue;
    // Timers need a tick while requests are outstanding.
    FutexWait(&my->bell, seen, pending ? 1 : 50);
  }
}

int PostSend(ibv_qp* ibqp, ibv_send_wr* wr, ibv_send_wr** bad) {
  auto* q = reinterpret_cast<Qp*>(ibqp);
  int rc = 0;
  {
    std::lock_guard<std::mutex> lock(q->mu);
    for (; wr != nullptr; wr = wr->next) {
      const ibv_qp_state state = q->qp.state;
      if (state != IBV_QPS_RTS && state != IBV_QPS_ERR && state != IBV_QPS_SQD) rc = EINVAL;
      if (wr->opcode != IBV_WR_SEND && wr->opcode != IBV_WR_RDMA_WRITE && wr->opcode != IBV_WR_RDMA_READ) rc = EINVAL;
      // A READ returns data into its SGEs: never inline. The double also
      // refuses one on a QP allowed no outstanding READs (max_rd_atomic 0).
      if (wr->opcode == IBV_WR_RDMA_READ && ((wr->send_flags & IBV_SEND_INLINE) || q->max_rd_atomic == 0)) rc = EINVAL;
      if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > q->cap.max_send_sge) rc = EINVAL;
      if (rc == 0 && q->sq.size() >= q->cap.max_send_wr) rc = ENOMEM;
      SendWqe w;
      if (rc == 0) {
        try {
          w.wr_id = wr->wr_id;
          w.opcode = wr->opcode;
          w.signaled = q->sq_sig_all || (wr->send_flags & IBV_SEND_SIGNALED);
          w.is_inline = (wr->send_flags & IBV_SEND_INLINE) != 0;
          w.sge.assign(wr->sg_list, wr->sg_list + wr->num_sge);
          w.length = 0;
          for (const ibv_sge& s : w.sge) w.length += s.length;
          const bool rdma = wr->opcode == IBV_WR_RDMA_WRITE || wr->opcode == IBV_WR_RDMA_READ;
          w.raddr = rdma ? wr->wr.rdma.remote_addr : 0;
          w.rkey = rdma ? wr->wr.rdma.rkey : 0;
          if (w.is_inline) {
            if (w.length > q->cap.max_inline_data) {
              rc = EINVAL;
            } else {
              // Inline data is copied now: the caller may reuse its buffer at once.
              w.inline_data.resize(w.length);
              Gather(w.sge, 0, w.inline_data.data(), w.length);
            }
          }
        } catch (...) {
          rc = ENOMEM;
        }
      }
      if (rc != 0) break;
      if (state == IBV_QPS_ERR) {
        q->Complete(w, IBV_WC_WR_FLUSH_ERR);
        continue;
      }
      q->sq.push_back(std::move(w));
    }
  }
  if (rc != 0 && bad != nullptr) *bad = wr;
  q->Ring();
  return rc;
}

int PostRecv(ibv_qp* ibqp, ibv_recv_wr* wr, ibv_recv_wr** bad) {
  auto* q = reinterpret_cast<Qp*>(ibqp);
  int rc = 0;
  {
    std::lock_guard<std::mutex> lock(q->mu);
    for (; wr != nullptr; wr = wr->next) {
      if (q->qp.state == IBV_QPS_RESET) rc = EINVAL;
      if (wr->num_sge < 0 || static_cast<uint32_t>(wr->num_sge) > q->cap.max_recv_sge) rc = EINVAL;
      if (rc == 0 && q->rq.size() >= q->cap.max_recv_wr) rc = ENOMEM;
      if (rc != 0) break;
      if (q->qp.state == IBV_QPS_ERR) {
        q->rcq->Push(Wc(wr->wr_id, IBV_WC_WR_FLUSH_ERR, IBV_WC_RECV, q->qp.qp_num));
        continue;
      }
      try {
        q->rq.push_back(RecvWqe{wr->wr_id, std::vector<ibv_sge>(wr->sg_list, wr->sg_list + wr->num_sge)});
      } catch (...) {
        rc = ENOMEM;
        break;
      }
    }
  }
  if (rc != 0 && bad != nullptr) *bad = wr;
  q->Ring();
  return rc;
}

}  // namespace hipr::verbs_double

using namespace hipr::verbs_double;

ibv_qp* ibv_create_qp(ibv_pd* pd, ibv_qp_init_attr* init) {
  ibv_qp_cap& c = init->cap;
  if (init->qp_type != IBV_QPT_RC || init->send_cq == nullptr || init->recv_cq == nullptr || init->srq != nullptr ||
      c.max_send_wr == 0 || c.max_send_wr > kMaxQpWr || c.max_recv_wr > kMaxQpWr || c.max_send_sge > kMaxSge ||
      c.max_recv_sge > kMaxSge || c.max_inline_data > kMaxInline) {
    errno = EINVAL;
    return nullptr;
  }
  auto* pdi = reinterpret_cast<Pd*>(pd);
  Qp* q = new (std::nothrow) Qp;
  if (q == nullptr) {
    errno = ENOMEM;
    return nullptr;
  }
  std::memset(&q->qp, 0, sizeof q->qp);
  q->ctx = pdi->ctx;
  q->pd = pdi;
  q->scq = reinterpret_cast<Cq*>(init->send_cq);
  q->rcq = reinterpret_cast<Cq*>(init->recv_cq);
  q->cap = c;
  q->sq_sig_all = init->sq_sig_all != 0;
  // A QP number nobody in the fabric has: the wire's name.
  static std::mt19937 rng(static_cast<uint32_t>(NowNs() ^ (getpid() << 8)));
  int fd = -1;
  uint32_t qpn = 0;
  for (int tries = 0; fd < 0 && tries < 64; ++tries) {
    qpn = 1 + rng() % (kPsnMask - 1);
    try {
      q->path = WirePath(q->ctx->dir, qpn);
    } catch (...) {
      break;
    }
    fd = open(q->path.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0 && errno != EEXIST) break;
  }
  if (fd < 0 || ftruncate(fd, static_cast<off_t>(kWireFileBytes)) != 0 ||
      (q->my = MapWire(fd)) == nullptr) {
    const int err = errno;
    if (fd >= 0) {
      close(fd);
      unlink(q->path.c_str());
    }
    delete q;
    errno = err != 0 ? err : ENOMEM;
    return nullptr;
  }
  close(fd);
  WireHeader* h = q->my;
  h->magic = kWireMagic;
  h->version = kWireVersion;
  h->qpn = qpn;
  h->owner_pid = getpid();
  std::memcpy(h->gid, q->ctx->gid, 16);
  h->ring_bytes = kWireRingBytes;
  q->my_ring = RingOf(h);
  q->qp.context = pd->context;
  q->qp.qp_context = init->qp_context;
  q->qp.pd = pd;
  q->qp.send_cq = init->send_cq;
  q->qp.recv_cq = init->recv_cq;
  q->qp.qp_num = qpn;
  q->qp.state = IBV_QPS_RESET;
  q->qp.qp_type = IBV_QPT_RC;
  pthread_mutex_init(&q->qp.mutex, nullptr);
  pthread_cond_init(&q->qp.cond, nullptr);
  try {
    q->engine = std::thread([q] { q->Run(); });
  } catch (...) {
    unlink(q->path.c_str());
    UnmapWire(q->my);
    delete q;
    errno = EAGAIN;
    return nullptr;
  }
  ++pdi->users;
  ++q->scq->users;
  ++q->rcq->users;
  return &q->qp;
}

int ibv_modify_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int mask) {
  auto* q = reinterpret_cast<Qp*>(ibqp);
  if (!(mask & IBV_QP_STATE)) return EINVAL;  // The double changes attributes only with a transition.
  {
    std::lock_guard<std::mutex> lock(q->mu);
    const ibv_qp_state from = q->qp.state;
    const ibv_qp_state to = attr->qp_state;
    auto has = [&](int required) { return (mask & required) == required; };
    if (to == IBV_QPS_ERR) {
      q->EnterError();
    } else if (to == IBV_QPS_RESET) {
      q->sq.clear();
      q->rq.clear();
      q->read_segs.clear();
      q->reads_active = 0;
      q->slots_freed = q->slots_taken;
      q->in_send = false;
      q->qp.state = IBV_QPS_RESET;
    } else if (from == IBV_QPS_RESET && to == IBV_QPS_INIT) {
      if (!has(IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) || attr->port_num != 1 ||
          attr->pkey_index != 0)
        return EINVAL;
      q->access_flags = attr->qp_access_flags;
      q->qp.state = IBV_QPS_INIT;
    } else if (from == IBV_QPS_INIT && to == IBV_QPS_RTR) {
      if (!has(IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
               IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) ||
          attr->ah_attr.port_num != 1 || !attr->ah_attr.is_global || attr->path_mtu > IBV_MTU_4096 ||
          attr->min_rnr_timer > 31 || attr->dest_qp_num == 0 || attr->dest_qp_num > kPsnMask ||
          attr->max_dest_rd_atomic > kMaxRdAtomic)
        return EINVAL;
      q->max_dest_rd_atomic = attr->max_dest_rd_atomic;
      q->dest_qpn = attr->dest_qp_num;
      q->dgid = attr->ah_attr.grh.dgid;
      q->rq_psn = attr->rq_psn & kPsnMask;
      q->min_rnr_timer = attr->min_rnr_timer;
      q->my->min_rnr_timer.store(attr->min_rnr_timer);
      // Reach the peer's wire. A NIC does not know at this point whether
      // the peer exists: where it does not, requests time out.
      std::string path;
      try {
        path = WirePath(q->ctx->dir, q->dest_qpn);
      } catch (...) {
        return ENOMEM;
      }
      const int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
      WireHeader* p = fd >= 0 ? MapWire(fd) : nullptr;
      if (fd >= 0) close(fd);
      uint32_t unclaimed = 0;
      if (p != nullptr && p->magic == kWireMagic && p->version == kWireVersion && p->qpn == q->dest_qpn &&
          std::memcmp(p->gid, q->dgid.raw, 16) == 0 && p->producer_qpn.compare_exchange_strong(unclaimed, q->qp.qp_num)) {
        unlink(path.c_str());  // Mapped by both ends now: nothing to leave behind.
        q->peer = p;
        q->peer_ring = RingOf(p);
      } else {
        UnmapWire(p);
      }
      q->qp.state = IBV_QPS_RTR;
    } else if (from == IBV_QPS_RTR && to == IBV_QPS_RTS) {
      if (!has(IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
               IBV_QP_MAX_QP_RD_ATOMIC) ||
          attr->retry_cnt > 7 || attr->rnr_retry > 7 || attr->timeout > 31 || attr->max_rd_atomic > kMaxRdAtomic)
        return EINVAL;
      q->max_rd_atomic = attr->max_rd_atomic;
      q->sq_psn = attr->sq_psn & kPsnMask;
      q->timeout = attr->timeout;
      q->retry_cnt = attr->retry_cnt;
      q->rnr_retry = attr->rnr_retry;
      q->qp.state = IBV_QPS_RTS;
    } else if (from == to && (to == IBV_QPS_INIT || to == IBV_QPS_RTS)) {
      if (to == IBV_QPS_INIT && (mask & IBV_QP_ACCESS_FLAGS)) q->access_flags = attr->qp_access_flags;
    } else {
      return EINVAL;
    }
  }
  q->Ring();
  return 0;
}

int ibv_query_qp(ibv_qp* ibqp, ibv_qp_attr* attr, int mask, ibv_qp_init_attr* init) {
  auto* q = reinterpret_cast<Qp*>(ibqp);
  std::lock_guard<std::mutex> lock(q->mu);
  std::memset(attr, 0, sizeof *attr);
  attr->qp_state = attr->cur_qp_state = q->qp.state;
  attr->path_mtu = IBV_MTU_4096;
  attr->rq_psn = q->rq_psn;
  attr->sq_psn = q->sq_psn;
  attr->dest_qp_num = q->dest_qpn;
  attr->qp_access_flags = q->access_flags;
  attr->cap = q->cap;
  attr->ah_attr.is_global = 1;
  attr->ah_attr.grh.dgid = q->dgid;
  attr->ah_attr.port_num = 1;
  attr->min_rnr_timer = q->min_rnr_timer;
  attr->port_num = 1;
  attr->timeout = q->timeout;
  attr->retry_cnt = q->retry_cnt;
  attr->rnr_retry = q->rnr_retry;
  attr->max_rd_atomic = q->max_rd_atomic;
  attr->max_dest_rd_atomic = q->max_dest_rd_atomic;
  if (init != nullptr) {
    std::memset(init, 0, sizeof *init);
    init->qp_context = q->qp.qp_context;
    init->send_cq = q->qp.send_cq;
    init->recv_cq = q->qp.recv_cq;
    init->cap = q->cap;
    init->qp_type = IBV_QPT_RC;
    init->sq_sig_all = q->sq_sig_all;
  }
  return 0;
}

int ibv_destroy_qp(ibv_qp* ibqp) {
  auto* q = reinterpret_cast<Qp*>(ibqp);
  q->stop.store(true, std::memory_order_release);
  q->Ring();
  if (q->engine.joinable()) q->engine.join();
  // Nobody may claim our wire from now on; if nobody did, its name goes.
  uint32_t unclaimed = 0;
  if (q->my->producer_qpn.compare_exchange_strong(unclaimed, kClosedQpn)) unlink(q->path.c_str());
  UnmapWire(q->my);
  UnmapWire(q->peer);
  --q->pd->users;
  --q->scq->users;
  --q->rcq->users;
  pthread_mutex_destroy(&q->qp.mutex);
  pthread_cond_destroy(&q->qp.cond);
  delete q;
  return 0;
}

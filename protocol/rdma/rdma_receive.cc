// RdmaConnection's receiving side (rdma_connection.h): ring and SEND bytes
// copied out, offered bytes READ straight into the caller's memory or into
// the pull buffer, and the pull policy.
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "protocol/rdma/rdma_connection.h"
#include "protocol/rdma/rdma_connection_internal.h"

namespace hipr::rdma {

bool RdmaConnection::ReadRoom() const {
  return reads_posted_ - reads_done_ < kMaxReadsInFlight && sq_outstanding_ + 1 + sq_depth_ / 4 <= sq_depth_;
}

void RdmaConnection::PostRead(Item& it, uint64_t n, uint8_t* dst, uint32_t lkey) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(dst), static_cast<uint32_t>(n), lkey};
  ibv_send_wr wr{};
  wr.wr_id = WrId(kWrRead, 0);
  wr.sg_list = &sge;
  wr.num_sge = 1;
  wr.opcode = IBV_WR_RDMA_READ;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.rdma.remote_addr = it.pos + it.posted;
  wr.wr.rdma.rkey = it.rkey;
  ibv_send_wr* bad = nullptr;
  if (int rc = ibv_post_send(qp_, &wr, &bad)) {
    Fail(LinkDown(ErrnoText("rdma: ibv_post_send (RDMA READ)", rc)));
    return;
  }
  ++sq_outstanding_;
  ++reads_posted_;
  it.posted += n;
  if (it.posted == it.len) offer_ends_.push_back(reads_posted_);
  ++stats_.reads;
  stats_.bulk_bytes_read += n;
  if (it.pull != nullptr) stats_.bulk_bytes_pulled += n;
}

bool RdmaConnection::StartPull(Item& it, bool force) {
  const uint64_t bytes = it.len - it.posted;
  if (!force && pull_bytes_ + bytes > options_.pull_buffer_bytes) return false;
  PullBlock* block = nullptr;
  for (size_t i = 0; i < free_pulls_.size(); ++i) {
    if (free_pulls_[i]->bytes >= bytes) {
      block = free_pulls_[i];
      free_pulls_.erase(free_pulls_.begin() + static_cast<ptrdiff_t>(i));
      break;
    }
  }
  if (block == nullptr) {
    const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    const size_t size = (std::max<uint64_t>(bytes, options_.chunk_bytes) + page - 1) / page * page;
    auto b = std::make_unique<PullBlock>(PullBlock{static_cast<uint8_t*>(MapBytes(size)), size, nullptr});
    if (b->mem == nullptr) return false;
    b->mr = ibv_reg_mr(pd_, b->mem, size, kLocalWrite);
    if (b->mr == nullptr) {
      munmap(b->mem, size);
      return false;
    }
    block = b.get();
    pull_blocks_.push_back(std::move(b));
  }
  pull_bytes_ += block->bytes;
  it.pull = block;
  it.pull_from = it.posted;
  return true;
}

void RdmaConnection::ReleasePull(Item& it) {
  PullBlock* block = it.pull;
  it.pull = nullptr;
  pull_bytes_ -= block->bytes;
  // Keep a couple for the next pulls; give the rest back.
  if (free_pulls_.size() < 2) {
    free_pulls_.push_back(block);
    return;
  }
  ibv_dereg_mr(block->mr);
  munmap(block->mem, block->bytes);
  for (auto b = pull_blocks_.begin(); b != pull_blocks_.end(); ++b) {
    if (b->get() == block) {
      pull_blocks_.erase(b);
      break;
    }
  }
}

bool RdmaConnection::PullComplete(const Item& it) const {
  return it.pull != nullptr && it.posted == it.len && reads_done_ >= it.pull_end;
}

int64_t RdmaConnection::PumpReads() {
  int64_t due = -1;
  const int64_t now = NowMs();
  // Offers are read in stream order: stop at the first one that cannot go on.
  for (Item& it : inbox_) {
    if (it.kind != Item::kOffer || it.posted == it.len) continue;
    if (it.pull == nullptr) {
      // A receiver in progress reads it itself.
      if (receivers_ > 0) break;
      if (now - it.since_ms < options_.idle_pull_ms) {
        due = it.since_ms + options_.idle_pull_ms;
        break;
      }
      if (!StartPull(it, false)) break;
    }
    while (it.posted < it.len && ReadRoom() && error_.ok()) {
      const uint64_t n = std::min<uint64_t>(it.len - it.posted, options_.chunk_bytes);
      PostRead(it, n, it.pull->mem + (it.posted - it.pull_from), it.pull->mr->lkey);
    }
    if (it.posted < it.len) break;
    it.pull_end = reads_posted_;
  }
  return due;
}

Status RdmaConnection::RecvV(const iovec* iov, int count) { return RecvImpl(iov, count, false); }

Status RdmaConnection::RecvVZeroCopy(const iovec* iov, int count) { return RecvImpl(iov, count, true); }

Status RdmaConnection::WaitForItem(MutexLock& lock) {
  Status st = WaitFor(lock, [&]() HIPR_REQUIRES(mu_) { return !inbox_.empty(); }, options_.recv_timeout_ms);
  if (st.code() == StatusCode::kTimeout)
    return LinkDown("rdma: nothing received for " + std::to_string(options_.recv_timeout_ms) + " ms");
  return st;
}

Status RdmaConnection::RecvImpl(const iovec* iov, int count, bool zero_copy) {
  if (shut_down_.load()) return LinkDown("connection shut down");
  MutexLock lock(mu_);
  if (!connected_) return Status(StatusCode::kFailedPrecondition, "rdma: not connected");
  // Destinations READ straight into stay registered until their READs end.
  std::vector<ibv_mr*> held;
  uint64_t last_read = 0;  // reads_posted_ after our last READ straight into the caller's memory.
  struct Leave {
    RdmaConnection* c;
    std::vector<ibv_mr*>& mrs;
    const uint64_t& last_read;
    ~Leave() HIPR_NO_THREAD_SAFETY_ANALYSIS {
      --c->receivers_;
      // Failed with READs into the caller's memory in flight: it may free it now.
      if (c->reads_done_ < last_read) c->StopQp();
      for (ibv_mr* mr : mrs) c->recv_mrs_->Release(mr);
    }
  } leave{this, held, last_read};
  ++receivers_;
  uint64_t total = 0;
  for (int i = 0; i < count; ++i) total += iov[i].iov_len;
  for (int i = 0; i < count; ++i) {
    uint8_t* dst = static_cast<uint8_t*>(iov[i].iov_base);
    size_t left = iov[i].iov_len;
    ibv_mr* dst_mr = nullptr;
    bool dst_tried = !zero_copy;
    while (left > 0) {
      if (inbox_.empty()) HIPR_RETURN_IF_ERROR(WaitForItem(lock));
      if (!error_.ok()) return error_;
      Item& it = inbox_.front();  // Only this receiver pops or changes the front.
      if (it.kind == Item::kOffer && it.pull == nullptr) {
        if (!dst_tried) {
          dst_tried = true;
          if (recv_mrs_->Hold(dst, left, &dst_mr).ok())
            held.push_back(dst_mr);
          else
            dst_mr = nullptr;  // Not registrable: read through the pull buffer.
        }
        if (dst_mr != nullptr) {
          // Straight into the caller's memory, pipelined.
          HIPR_RETURN_IF_ERROR(WaitFor(lock, [&]() HIPR_REQUIRES(mu_) { return ReadRoom(); }, -1));
          Item& front = inbox_.front();
          const uint64_t n = std::min<uint64_t>({left, front.len - front.posted, options_.chunk_bytes});
          PostRead(front, n, dst, dst_mr->lkey);
          if (!error_.ok()) return error_;
          last_read = reads_posted_;
          front.done += n;
          front.since_ms = NowMs();
          dst += n;
          left -= n;
          total -= n;
          if (front.done == front.len) inbox_.pop_front();
          continue;
        }
        // Into the pull buffer: this offer, and those after it this call
        // needs too, so that their READs overlap.
        StartPull(it, true);
        if (it.pull == nullptr) {
          Fail(Status(StatusCode::kResourceExhausted, "rdma: cannot allocate a pull buffer"));
          return error_;
        }
        uint64_t want = total > it.len - it.done ? total - (it.len - it.done) : 0;
        for (size_t k = 1; k < inbox_.size() && want > 0; ++k) {
          Item& next = inbox_[k];
          if (next.kind != Item::kOffer) {
            want -= std::min<uint64_t>(want, next.len - next.done);
            continue;
          }
          if (next.pull == nullptr && !StartPull(next, false)) break;
          want -= std::min<uint64_t>(want, next.len - next.done);
        }
      }
      if (it.kind == Item::kOffer) {
        HIPR_RETURN_IF_ERROR(
            WaitFor(lock, [&]() HIPR_REQUIRES(mu_) { return PullComplete(inbox_.front()); }, -1));
      }
      const Item item = inbox_.front();
      const size_t n = static_cast<size_t>(std::min<uint64_t>(left, item.len - item.done));
      const uint8_t* src = item.kind == Item::kRing     ? ring_ + item.pos % local_.ring_bytes + item.done
                           : item.kind == Item::kBuffer ? Buffer(item.buffer) + sizeof(MsgHeader) + item.done
                                                        : item.pull->mem + (item.done - item.pull_from);
      mu_.unlock();  // (The scoped lock is held again before it ends.)
      std::memcpy(dst, src, n);
      mu_.lock();
      stats_.bytes_copied_on_receive += n;
      dst += n;
      left -= n;
      total -= n;
      Item& front = inbox_.front();
      front.done += n;
      front.since_ms = NowMs();
      if (front.done == front.len) {
        if (front.kind == Item::kRing)
          ring_tail_ += front.len;
        else if (front.kind == Item::kBuffer)
          Repost(front.buffer);
        else
          ReleasePull(front);
        inbox_.pop_front();
        if (error_.ok()) MaybeGrant();
      }
    }
  }
  if (last_read > 0) {
    // The bytes are the caller's once its READs have completed.
    HIPR_RETURN_IF_ERROR(WaitFor(lock, [&]() HIPR_REQUIRES(mu_) { return reads_done_ >= last_read; }, -1));
  }
  return Status::Ok();
}

void RdmaConnection::StopQp() {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_ERR;
  (void)ibv_modify_qp(qp_, &a, IBV_QP_STATE);
  if (!error_.ok()) return;
  if (shut_down_.load()) {
    error_ = LinkDown("connection shut down");
    cv_.notify_all();
  } else {
    Fail(LinkDown("rdma: a zero-copy transfer was cut short: the queue pair is stopped"));
  }
}

void RdmaConnection::ForgetMemory(const void* addr, size_t bytes) {
  send_mrs_->Invalidate(addr, bytes);
  recv_mrs_->Invalidate(addr, bytes);
}

Status RdmaConnection::WaitReadable(int timeout_ms) {
  if (shut_down_.load()) return LinkDown("connection shut down");
  MutexLock lock(mu_);
  if (!connected_) return Status(StatusCode::kFailedPrecondition, "rdma: not connected");
  Status st = WaitFor(lock, [&]() HIPR_REQUIRES(mu_) { return !inbox_.empty(); }, timeout_ms);
  if (st.code() == StatusCode::kTimeout) return Status(StatusCode::kTimeout, "no data");
  return st;
}

}  // namespace hipr::rdma

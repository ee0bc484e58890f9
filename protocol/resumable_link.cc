#include "protocol/resumable_link.h"

#include <algorithm>
#include <cstring>

namespace hipr {
namespace {

constexpr size_t kSpareBlocks = 32;

}  // namespace

ResumableLink::ResumableLink(std::unique_ptr<Connection> conn, Relink relink) : relink_(std::move(relink)) {
  MutexLock lock(mu_);
  raw_conn_ = conn.get();
  conn_ = std::move(conn);
}

ResumableLink::~ResumableLink() {
  Shutdown();
  std::thread resender;
  {
    MutexLock lock(mu_);
    resender = std::move(resender_);
  }
  if (resender.joinable()) resender.join();
}

Status ResumableLink::DeadStatus() const {
  if (dead_) return dead_status_;
  return LinkDown("connection shut down");
}

void ResumableLink::Lend(const iovec* iov, int count) {
  lent_.assign(iov, iov + (iov != nullptr ? count : 0));
}

namespace {

// Whether [p, p + n) lies inside one of `ranges`.
bool Inside(const std::vector<iovec>& ranges, const uint8_t* p, size_t n) {
  for (const iovec& r : ranges) {
    const uint8_t* base = static_cast<const uint8_t*>(r.iov_base);
    if (p >= base && n <= r.iov_len && static_cast<size_t>(p - base) <= r.iov_len - n) return true;
  }
  return false;
}

}  // namespace

void ResumableLink::Append(const iovec* iov, int count) {
  uint64_t at = sent_.load(std::memory_order_acquire);
  for (int i = 0; i < count; ++i) {
    const uint8_t* p = static_cast<const uint8_t*>(iov[i].iov_base);
    size_t left = iov[i].iov_len;
    if (left == 0) continue;
    if (!lent_.empty() && Inside(lent_, p, left)) {
      Block b;
      b.begin = at;
      b.lent = p;
      b.used = left;
      log_.push_back(std::move(b));
      at += left;
      continue;
    }
    while (left > 0) {
      if (log_.empty() || log_.back().lent != nullptr || log_.back().used == kBlockBytes) {
        Block b;
        b.begin = at;
        if (!spare_.empty()) {
          b.bytes = std::move(spare_.back());
          spare_.pop_back();
        } else {
          b.bytes = std::make_unique_for_overwrite<uint8_t[]>(kBlockBytes);
        }
        log_.push_back(std::move(b));
      }
      Block& last = log_.back();
      const size_t n = std::min(left, kBlockBytes - last.used);
      std::memcpy(last.bytes.get() + last.used, p, n);
      last.used += n;
      p += n;
      left -= n;
      at += n;
    }
  }
  sent_.store(at, std::memory_order_release);
}

void ResumableLink::DropAcknowledged() {
  const uint64_t acked = acked_.load(std::memory_order_acquire);
  while (!log_.empty() && log_.front().begin + log_.front().used <= acked &&
         (log_.size() > 1 || log_.front().lent != nullptr || log_.front().used == kBlockBytes)) {
    Block& front = log_.front();
    if (front.bytes != nullptr && spare_.size() < kSpareBlocks) spare_.push_back(std::move(front.bytes));
    log_base_ = front.begin + front.used;
    log_.pop_front();
  }
}

Status ResumableLink::Acknowledge(uint64_t count) {
  MutexLock lock(mu_);
  if (count > sent_.load(std::memory_order_acquire))
    return ProtocolError("the peer acknowledged " + std::to_string(count) + " bytes of a link that sent " +
                         std::to_string(sent_.load()));
  uint64_t acked = acked_.load(std::memory_order_acquire);
  if (count <= acked) return Status::Ok();
  acked_.store(count, std::memory_order_release);
  if (!resending_) DropAcknowledged();  // The resend thread reads the log unlocked.
  return Status::Ok();
}

Status ResumableLink::SendV(const iovec* iov, int count) {
  MutexLock lock(mu_);
  while ((resending_ || relinking_) && !dead_ && !closed_.load()) cv_.wait(lock.native());
  if (dead_ || closed_.load()) return DeadStatus();
  // Kept before it is sent: whatever the connection does with it, a
  // relink sends it again unless the peer has it.
  Append(iov, count);
  if (send_broken_) return Status::Ok();  // The receiver's relink sends it.
  const uint64_t gen = gen_;
  Connection* conn = conn_.get();
  writing_ = true;
  lock.Unlock();
  Status st = conn->SendV(iov, count);
  lock.Lock();
  writing_ = false;
  cv_.notify_all();
  if (st.ok()) return st;
  if (gen == gen_ && !relinking_ && !dead_ && !closed_.load() && (reading_ || conn->Unread())) {
    // What the peer sent before it went is read first; the receiver meets
    // the failure then, and relinks.
    send_broken_ = true;
    return Status::Ok();
  }
  return Recover(lock, gen, st);
}

Status ResumableLink::RecvV(const iovec* iov, int count) {
  size_t filled = 0;
  return RecvVCounted(iov, count, &filled);
}

Status ResumableLink::RecvVCounted(const iovec* iov, int count, size_t* filled) {
  *filled = 0;
  std::vector<iovec> v(iov, iov + count);
  size_t first = 0;
  MutexLock lock(mu_);
  for (;;) {
    while (relinking_ && !dead_ && !closed_.load()) cv_.wait(lock.native());
    if (dead_ || closed_.load()) return DeadStatus();
    const uint64_t gen = gen_;
    Connection* conn = conn_.get();
    reading_ = true;
    lock.Unlock();
    size_t got = 0;
    Status st = conn->RecvVCounted(v.data() + first, static_cast<int>(v.size() - first), &got);
    lock.Lock();
    reading_ = false;
    cv_.notify_all();
    received_.fetch_add(got, std::memory_order_acq_rel);
    *filled += got;
    if (st.ok()) return st;
    // Past what arrived: the peer sends the rest again after the relink.
    while (got > 0 && first < v.size()) {
      const size_t n = std::min(got, v[first].iov_len);
      v[first].iov_base = static_cast<uint8_t*>(v[first].iov_base) + n;
      v[first].iov_len -= n;
      got -= n;
      if (v[first].iov_len == 0) ++first;
    }
    while (first < v.size() && v[first].iov_len == 0) ++first;
    HIPR_RETURN_IF_ERROR(Recover(lock, gen, st));
    if (first == v.size()) return Status::Ok();
  }
}

Status ResumableLink::WaitReadable(int timeout_ms) {
  MutexLock lock(mu_);
  for (;;) {
    while (relinking_ && !dead_ && !closed_.load()) cv_.wait(lock.native());
    if (dead_ || closed_.load()) return DeadStatus();
    const uint64_t gen = gen_;
    Connection* conn = conn_.get();
    reading_ = true;
    lock.Unlock();
    Status st = conn->WaitReadable(timeout_ms);
    lock.Lock();
    reading_ = false;
    cv_.notify_all();
    if (st.ok() || st.code() == StatusCode::kTimeout) return st;
    HIPR_RETURN_IF_ERROR(Recover(lock, gen, st));
  }
}

Status ResumableLink::Break(const Status& why) {
  MutexLock lock(mu_);
  return Recover(lock, gen_, why);
}

void ResumableLink::Interrupt() {
  MutexLock lock(mu_);
  if (conn_ != nullptr) conn_->Shutdown();
}

Status ResumableLink::CheckIdle() {
  MutexLock lock(mu_);
  if (dead_ || closed_.load()) return DeadStatus();
  if (writing_ || reading_ || relinking_ || resending_ || !conn_->Hung()) return Status::Ok();
  return Recover(lock, gen_, LinkDown("the peer hung up"));
}

Status ResumableLink::Recover(MutexLock& lock, uint64_t gen, const Status& why) {
  for (;;) {
    if (dead_ || closed_.load()) return DeadStatus();
    if (gen_ != gen) return Status::Ok();  // Another thread relinked.
    if (!relinking_) break;
    cv_.wait(lock.native());
  }
  relinking_ = true;
  Connection* old = conn_.get();
  lock.Unlock();
  old->Shutdown();  // Wakes the other side's call on it, which then waits for us.
  lock.Lock();
  while (writing_ || reading_) cv_.wait(lock.native());
  std::thread resender = std::move(resender_);
  lock.Unlock();
  if (resender.joinable()) resender.join();  // It ends: its connection is shut down.
  Relinked r;
  Status st = relink_(received_.load(std::memory_order_acquire), why, closed_, &r);
  lock.Lock();
  relinking_ = false;
  cv_.notify_all();
  if (st.ok() && closed_.load()) st = LinkDown("connection shut down");
  if (st.ok() && r.conn == nullptr) st = LinkDown("no connection to resume on");
  const uint64_t sent = sent_.load(std::memory_order_acquire);
  if (st.ok() && (r.peer_received < acked_.load(std::memory_order_acquire) || r.peer_received < log_base_ ||
                  r.peer_received > sent))
    st = ProtocolError("the peer resumed at byte " + std::to_string(r.peer_received) + " of a link that kept bytes " +
                       std::to_string(log_base_) + ".." + std::to_string(sent));
  if (!st.ok()) {
    dead_ = true;
    dead_status_ = st.code() == StatusCode::kLinkDown ? st : LinkDown(st.message());
    if (r.conn != nullptr) r.conn->Shutdown();
    return dead_status_;
  }
  if (r.peer_received > acked_.load(std::memory_order_acquire)) acked_.store(r.peer_received);
  conn_ = std::move(r.conn);
  raw_conn_ = conn_.get();
  ++gen_;
  send_broken_ = false;
  resumes_.fetch_add(1, std::memory_order_acq_rel);
  if (r.peer_received < sent) {
    resending_ = true;
    resender_ = std::thread(&ResumableLink::Resend, this, conn_.get(), gen_, r.peer_received, sent);
  } else {
    DropAcknowledged();
  }
  return Status::Ok();
}

void ResumableLink::Resend(Connection* conn, uint64_t gen, uint64_t from, uint64_t to) {
  std::vector<iovec> iov;
  {
    // The log cannot change meanwhile: SendV waits while resending_, and
    // Acknowledge leaves the blocks alone.
    MutexLock lock(mu_);
    for (const Block& b : log_) {
      const uint64_t end = b.begin + b.used;
      if (end <= from || b.begin >= to) continue;
      const uint64_t first = std::max(from, b.begin);
      const uint64_t last = std::min(to, end);
      iov.push_back(iovec{const_cast<uint8_t*>(b.data()) + (first - b.begin), static_cast<size_t>(last - first)});
    }
  }
  Status st;
  for (size_t i = 0; i < iov.size() && st.ok(); i += 64)
    st = conn->SendV(iov.data() + i, static_cast<int>(std::min<size_t>(64, iov.size() - i)));
  MutexLock lock(mu_);
  resending_ = false;
  DropAcknowledged();
  // A failure here is met again by the next call on this connection.
  if (!st.ok() && gen == gen_) conn->Shutdown();
  cv_.notify_all();
}

void ResumableLink::Shutdown() {
  closed_.store(true);
  MutexLock lock(mu_);
  if (conn_ != nullptr) conn_->Shutdown();
  cv_.notify_all();
}

std::string ResumableLink::PeerName() const {
  MutexLock lock(mu_);
  return conn_ != nullptr ? conn_->PeerName() : std::string("(gone)");
}

bool ResumableLink::PeerIsLocal() const {
  MutexLock lock(mu_);
  return conn_ != nullptr && conn_->PeerIsLocal();
}

void ResumableLink::Abandon() {
  closed_.store(true);
  if (Connection* c = raw_conn_.load(); c != nullptr) c->Abandon();
}

}  // namespace hipr

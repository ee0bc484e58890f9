// MemoryConnection: a Connection whose peer is a fixed run of bytes (a fuzz
// input). Receives take the bytes in order and fail with kLinkDown at their
// end, as a socket the peer closed does; sends are counted and dropped. No
// socket and no thread, so a fuzz input runs the same way every time.
//
// Thread-safety: as Connection's: one receiver at a time and senders
// serialized by the caller; a sender and the receiver may run at once, and
// Shutdown() may come from any thread.
// Lifetime: borrows `input`, which must outlive the connection.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <span>
#include <string>

#include "protocol/transport.h"

namespace hipr::fuzz {

class MemoryConnection final : public Connection {
 public:
  explicit MemoryConnection(std::span<const uint8_t> input) : input_(input) {}

  Status SendV(const iovec* iov, int count) override {
    if (shut_down_) return Ended();
    uint64_t n = 0;
    for (int i = 0; i < count; ++i) n += iov[i].iov_len;
    bytes_sent_ += n;
    return Status::Ok();
  }

  Status RecvV(const iovec* iov, int count) override {
    for (int i = 0; i < count; ++i) {
      if (shut_down_ || input_.size() - pos_ < iov[i].iov_len) {
        pos_ = input_.size();  // A short read leaves nothing readable, as a reset would.
        return Ended();
      }
      if (iov[i].iov_len != 0) std::memcpy(iov[i].iov_base, input_.data() + pos_, iov[i].iov_len);
      pos_ += iov[i].iov_len;
    }
    return Status::Ok();
  }

  Status WaitReadable(int timeout_ms) override { return shut_down_ || pos_ == input_.size() ? Ended() : Status::Ok(); }

  void Shutdown() override { shut_down_ = true; }
  std::string PeerName() const override { return "memory"; }
  void Abandon() override { shut_down_ = true; }
  bool PeerIsLocal() const override { return true; }

  uint64_t bytes_sent() const { return bytes_sent_; }
  size_t bytes_left() const { return input_.size() - pos_; }

 private:
  static Status Ended() { return LinkDown("the fuzz input ended"); }

  const std::span<const uint8_t> input_;
  size_t pos_ = 0;  // Receiver's.
  std::atomic<uint64_t> bytes_sent_{0};
  std::atomic<bool> shut_down_{false};
};

}  // namespace hipr::fuzz

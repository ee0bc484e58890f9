// AcceptBackoff: what an accept loop does when accept() fails. Out of
// descriptors or kernel memory (EMFILE, ENFILE, ENOBUFS, ENOMEM) the pending
// connection stays in the backlog and the listener stays readable, so
// accepting again at once spins the loop and floods the log: instead the
// loop pauses (100 ms at a time, as nginx's accept_mutex_delay and Go's
// net/http back off), logs once when the shortage starts and once when it
// ends, and the connections wait in the backlog meanwhile. Other errors
// (a connection reset before it was accepted) pause 10 ms and are logged at
// most once a second.
//
// Not thread-safe: one per accept loop, used on its io_context's thread.
#pragma once

#include <spdlog/spdlog.h>

#include <asio.hpp>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <string>

namespace hipr::worker {

class AcceptBackoff {
 public:
  // `what` names the listener in logs ("--metrics-listen 127.0.0.1:9400").
  explicit AcceptBackoff(std::string what) : what_(std::move(what)) {}

  // After a failed accept: how long to wait before the next one.
  std::chrono::milliseconds Failed(const asio::error_code& ec) {
    ++failures_;
    const int e = ec.value();
    if (ec.category() == asio::system_category() && (e == EMFILE || e == ENFILE || e == ENOBUFS || e == ENOMEM)) {
      if (!starved_)
        spdlog::warn("accepting on {}: {}; pausing accepts 100 ms at a time until descriptors free up (connections "
                     "wait in the backlog; raise the open-file limit, LimitNOFILE= in the systemd unit)",
                     what_, ec.message());
      starved_ = true;
      return std::chrono::milliseconds(100);
    }
    const auto now = std::chrono::steady_clock::now();
    if (now - last_logged_ >= std::chrono::seconds(1)) {
      spdlog::warn("accepting on {} failed: {} ({} failures so far)", what_, ec.message(), failures_);
      last_logged_ = now;
    }
    return std::chrono::milliseconds(10);
  }

  // After an accept that succeeded.
  void Succeeded() {
    if (starved_) spdlog::info("accepting on {} again, after {} failed accepts", what_, failures_);
    starved_ = false;
    failures_ = 0;
  }

 private:
  std::string what_;
  bool starved_ = false;
  uint64_t failures_ = 0;
  std::chrono::steady_clock::time_point last_logged_{};
};

}  // namespace hipr::worker

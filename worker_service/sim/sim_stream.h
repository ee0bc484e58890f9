// SimStream: an in-order queue of device work run by its own thread, like a
// hardware queue. Work items run one at a time in submission order.
//
// Thread-safety: Submit/WaitIdle/Idle may be called from any thread. The
// destructor drains the queue and joins the thread.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace hipr::worker::sim {

class SimStream {
 public:
  SimStream(int device, uint32_t flags, int32_t priority);
  ~SimStream();
  SimStream(const SimStream&) = delete;
  SimStream& operator=(const SimStream&) = delete;

  void Submit(std::function<void()> work);
  // Blocks until every submitted item has run.
  void WaitIdle();
  bool Idle();

  int device() const { return device_; }
  uint32_t flags() const { return flags_; }
  bool non_blocking() const { return (flags_ & 0x1) != 0; }  // hipStreamNonBlocking.

 private:
  void Run();

  const int device_;
  const uint32_t flags_;
  const int32_t priority_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> queue_;  // GUARDED_BY(mu_)
  bool running_item_ = false;                // GUARDED_BY(mu_)
  bool stopping_ = false;                    // GUARDED_BY(mu_)
  std::thread thread_;
};

}  // namespace hipr::worker::sim

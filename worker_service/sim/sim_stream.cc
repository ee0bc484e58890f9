#include "worker_service/sim/sim_stream.h"

namespace hipr::worker::sim {

SimStream::SimStream(int device, uint32_t flags, int32_t priority)
    : device_(device), flags_(flags), priority_(priority), thread_([this] { Run(); }) {}

SimStream::~SimStream() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void SimStream::Submit(std::function<void()> work) {
  {
    std::lock_guard lock(mu_);
    queue_.push_back(std::move(work));
  }
  cv_.notify_all();
}

void SimStream::WaitIdle() {
  std::unique_lock lock(mu_);
  cv_.wait(lock, [&] { return queue_.empty() && !running_item_; });
}

bool SimStream::Idle() {
  std::lock_guard lock(mu_);
  return queue_.empty() && !running_item_;
}

void SimStream::Run() {
  std::unique_lock lock(mu_);
  for (;;) {
    cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
    if (queue_.empty()) return;  // Stopping, and everything has run.
    std::function<void()> work = std::move(queue_.front());
    queue_.pop_front();
    running_item_ = true;
    lock.unlock();
    work();
    lock.lock();
    running_item_ = false;
    cv_.notify_all();
  }
}

}  // namespace hipr::worker::sim

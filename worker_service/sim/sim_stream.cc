#include "worker_service/sim/sim_stream.h"

#include <sched.h>

#include <algorithm>
#include <chrono>

namespace hipr::worker::sim {

namespace {

constexpr int64_t kMinSpinNs = 2'000;
constexpr int64_t kMaxSpinNs = 50'000;

int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

SimStream::SimStream(int device, uint32_t flags, int32_t priority)
    : device_(device), flags_(flags), priority_(priority), thread_([this] { Run(); }) {}

SimStream::~SimStream() {
  {
    MutexLock lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void SimStream::Push(Item item) {
  {
    MutexLock lock(mu_);
    if (item.work) ++queued_work_;
    if (item.busy) ++queued_busy_;
    queue_.push_back(std::move(item));
    pushed_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_all();  // No system call unless a thread waits.
}

void SimStream::Submit(std::function<void()> work) { Push(Item{std::move(work), true}); }

void SimStream::SubmitParking(std::function<void()> work) {
  Item item{std::move(work), true};
  item.parks = true;
  Push(std::move(item));
}

void SimStream::SubmitMarker(std::function<void()> marker, bool parks) {
  Item item{std::move(marker), false, false};
  item.parks = parks;
  Push(std::move(item));
}

uint64_t SimStream::Completed() {
  MutexLock lock(mu_);
  return completed_;
}

void SimStream::SubmitRecord(std::function<void()> record) { Push(Item{std::move(record), true, false}); }

std::shared_ptr<Latch> SimStream::Mark() {
  auto latch = std::make_shared<Latch>();
  {
    MutexLock lock(mu_);
    if (queued_work_ == 0 && !running_work_) return nullptr;
    queue_.push_back(Item{[latch] { latch->Open(); }, false, false});
    pushed_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_all();
  return latch;
}

void SimStream::WaitIdle() {
  MutexLock lock(mu_);
  while (!(queue_.empty() && !running_item_)) cv_.wait(lock.native());
}

void SimStream::WaitIdleOrParked() {
  MutexLock lock(mu_);
  while (!(queue_.empty() && !running_item_) && !running_parks_) cv_.wait(lock.native());
}

bool SimStream::Empty() {
  MutexLock lock(mu_);
  return queue_.empty() && !running_item_;
}

bool SimStream::Idle() {
  MutexLock lock(mu_);
  return queued_work_ == 0 && !running_work_;
}

bool SimStream::IdleForQuery() {
  MutexLock lock(mu_);
  return queued_busy_ == 0 && !running_busy_;
}

bool SimStream::SpinForWork() {
  const uint64_t seen = pushed_.load(std::memory_order_acquire);
  const int64_t until = NowNs() + spin_ns_;
  do {
    // Yielding, not pausing: on a node with few cores the thread that will
    // push may be waiting for this very CPU.
    sched_yield();
    if (pushed_.load(std::memory_order_acquire) != seen) {
      spin_ns_ = std::min(kMaxSpinNs, std::max(spin_ns_ * 2, kMinSpinNs));
      return true;
    }
  } while (NowNs() < until);
  spin_ns_ /= 2;
  if (spin_ns_ < kMinSpinNs) spin_ns_ = 0;
  return false;
}

void SimStream::Run() {
  MutexLock lock(mu_);
  bool spun = false;
  for (;;) {
    if (queue_.empty() && !stopping_) {
      // Idle after work: look for more before sleeping (SpinForWork).
      if (spin_ns_ > 0 && !spun) {
        lock.Unlock();
        SpinForWork();
        lock.Lock();
        spun = true;
        continue;
      }
      if (spin_ns_ == 0 && !spun) spin_ns_ = kMinSpinNs;  // Spinning may pay next time.
    }
    while (!(stopping_ || !queue_.empty())) cv_.wait(lock.native());
    spun = false;
    if (queue_.empty()) return;  // Stopping, and everything has run.
    Item item = std::move(queue_.front());
    queue_.pop_front();
    if (item.work) --queued_work_;
    if (item.busy) --queued_busy_;
    running_item_ = true;
    running_work_ = item.work;
    running_busy_ = item.busy;
    running_parks_ = item.parks;
    if (item.parks) cv_.notify_all();  // Parked: a WaitIdleOrParked may go on.
    lock.Unlock();
    item.run();
    lock.Lock();
    running_item_ = false;
    running_work_ = false;
    running_busy_ = false;
    running_parks_ = false;
    ++completed_;
    cv_.notify_all();
  }
}

}  // namespace hipr::worker::sim

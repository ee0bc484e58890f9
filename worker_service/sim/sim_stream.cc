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
  work_cv_.notify_all();
  thread_.join();
}

void SimStream::Push(Item item) {
  {
    MutexLock lock(mu_);
    if (item.work) unfinished_work_.fetch_add(1);
    if (item.busy) unfinished_busy_.fetch_add(1);
    unfinished_.fetch_add(1);
    queue_.push_back(std::move(item));
    pushed_.fetch_add(1, std::memory_order_release);
  }
  work_cv_.notify_one();  // No system call unless the stream's thread sleeps.
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

void SimStream::SubmitRecord(std::function<void()> record) { Push(Item{std::move(record), true, false}); }

uint64_t SimStream::Completed() { return completed_.load(); }

std::shared_ptr<Latch> SimStream::Mark() {
  auto latch = std::make_shared<Latch>();
  {
    MutexLock lock(mu_);
    // Work that ends meanwhile only opens the latch sooner than needed.
    if (unfinished_work_.load() == 0) return nullptr;
    unfinished_.fetch_add(1);
    queue_.push_back(Item{[latch] { latch->Open(); }, false, false});
    pushed_.fetch_add(1, std::memory_order_release);
  }
  work_cv_.notify_one();
  return latch;
}

void SimStream::WaitIdle() {
  MutexLock lock(mu_);
  waiters_.fetch_add(1);
  while (unfinished_.load() != 0) idle_cv_.wait(lock.native());
  waiters_.fetch_sub(1);
}

void SimStream::WaitIdleOrParked() {
  MutexLock lock(mu_);
  waiters_.fetch_add(1);
  while (unfinished_.load() != 0 && !running_parks_) idle_cv_.wait(lock.native());
  waiters_.fetch_sub(1);
}

bool SimStream::Empty() { return unfinished_.load() == 0; }

bool SimStream::Idle() { return unfinished_work_.load() == 0; }

bool SimStream::IdleForQuery() { return unfinished_busy_.load() == 0; }

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

void SimStream::Finish(const Item& item) {
  completed_.fetch_add(1);
  if (item.work) unfinished_work_.fetch_sub(1);
  if (item.busy) unfinished_busy_.fetch_sub(1);
  if (unfinished_.fetch_sub(1) == 1 && waiters_.load() > 0) {
    MutexLock lock(mu_);  // A waiter between its check and its sleep holds mu_.
    idle_cv_.notify_all();
  }
}

void SimStream::Run() {
  // Swapped with queue_: the two vectors keep their capacity, so the hand-off
  // allocates nothing once warm (and frees nothing another thread allocated).
  std::vector<Item> batch;
  for (;;) {
    {
      MutexLock lock(mu_);
      if (queue_.empty() && !stopping_) {
        // Idle after work: look for more before sleeping (SpinForWork).
        if (spin_ns_ > 0) {
          lock.Unlock();
          SpinForWork();
          lock.Lock();
        } else {
          spin_ns_ = kMinSpinNs;  // Spinning may pay next time.
        }
      }
      while (!(stopping_ || !queue_.empty())) work_cv_.wait(lock.native());
      if (queue_.empty()) return;  // Stopping, and everything has run.
      batch.swap(queue_);
    }
    for (Item& item : batch) {
      if (item.parks) {
        MutexLock lock(mu_);
        running_parks_ = true;
        idle_cv_.notify_all();  // Parked: a WaitIdleOrParked may go on.
      }
      item.run();
      item.run = nullptr;  // What the work held goes before anyone sees it finished.
      if (item.parks) {
        MutexLock lock(mu_);
        running_parks_ = false;
      }
      Finish(item);
    }
    batch.clear();
  }
}

}  // namespace hipr::worker::sim

// Waiters: blocking waits taken off the replay thread. A device whose
// runtime only offers blocking synchronization (the `hip` device:
// hipStreamSynchronize, hipEventSynchronize, hipDeviceSynchronize) hands
// each wait to Run(), which starts a thread for it, so the replay thread goes
// on replaying other client threads' work while one of them waits (a wait
// can last forever: a kernel spinning on a flag another thread will set).
// Waits in flight are few (at most one per waiting client thread), so one
// thread each is cheap; finished threads are joined at the next Run() and
// at destruction.
//
// Thread-safety: Run() from one thread (the replay thread); the destructor
// joins every wait, so the waits must be able to finish by then (the
// device's own teardown must come after).
#pragma once

#include <atomic>
#include <functional>
#include <list>
#include <memory>
#include <thread>

namespace hipr::worker {

class Waiters {
 public:
  Waiters() = default;
  Waiters(const Waiters&) = delete;
  Waiters& operator=(const Waiters&) = delete;
  ~Waiters() {
    for (Entry& e : running_) e.thread.join();
  }

  void Run(std::function<void()> wait) {
    Reap();
    running_.emplace_back();
    Entry& e = running_.back();
    e.done = std::make_shared<std::atomic<bool>>(false);
    e.thread = std::thread([wait = std::move(wait), done = e.done] {
      wait();
      done->store(true, std::memory_order_release);
    });
  }

  // Waits started and not yet joined (for tests).
  size_t in_flight() const { return running_.size(); }

 private:
  struct Entry {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };

  void Reap() {
    for (auto it = running_.begin(); it != running_.end();) {
      if (it->done->load(std::memory_order_acquire)) {
        it->thread.join();
        it = running_.erase(it);
      } else {
        ++it;
      }
    }
  }

  std::list<Entry> running_;
};

}  // namespace hipr::worker

// SimStream: an in-order queue of device work run by its own thread, like a
// hardware queue. Work items run one at a time in submission order.
//
// Thread-safety: Submit/Mark/WaitIdle/Idle may be called from any thread.
// The destructor drains the queue and joins the thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "protocol/thread_annotations.h"

namespace hipr::worker::sim {

// Opened once; Wait() returns from then on. How one stream's work waits for
// a point in another's queue without any thread but the waiting stream's
// blocking.
class Latch {
 public:
  void Open() {
    {
      MutexLock lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void Wait() {
    MutexLock lock(mu_);
    while (!open_) cv_.wait(lock.native());
  }

 private:
  Mutex mu_;
  std::condition_variable cv_;
  bool open_ HIPR_GUARDED_BY(mu_) = false;
};

class SimStream {
 public:
  SimStream(int device, uint32_t flags, int32_t priority);
  ~SimStream();
  SimStream(const SimStream&) = delete;
  SimStream& operator=(const SimStream&) = delete;

  void Submit(std::function<void()> work);
  // Bookkeeping in stream order (a wait for another stream, a completion
  // of a synchronization): runs like work but does not make the stream
  // busy for Idle(), so a query right after a synchronization that ended
  // with such an item says idle, as HIP's does.
  void SubmitMarker(std::function<void()> marker, bool parks = false);
  // An event record: work that synchronizations wait for, but that does not
  // make the stream busy for IdleForQuery(), since it completes the waits
  // for its event from inside the stream: a query right after such a wait
  // says idle, as HIP's does.
  void SubmitRecord(std::function<void()> record);
  // A latch opened once the stream has run everything submitted so far;
  // nullptr when it has no work queued or running now.
  std::shared_ptr<Latch> Mark();
  // Work that may block for something outside the device: a value wait, a
  // host callback. While it runs, the stream is parked: it touches no
  // memory until it is released.
  void SubmitParking(std::function<void()> work);
  // Blocks until every submitted item, markers included, has run.
  void WaitIdle();
  // Blocks until the stream is idle, or parked with nothing else running
  // (WaitIdle, less what only a later frame or nothing may release).
  void WaitIdleOrParked();
  // Items run to their end so far.
  uint64_t Completed();
  // No work (markers aside) queued or running.
  bool Idle();
  // What hipStreamQuery says: no work but event records queued or running.
  bool IdleForQuery();
  // Nothing at all queued or running, markers included.
  bool Empty();

  int device() const { return device_; }
  uint32_t flags() const { return flags_; }
  bool non_blocking() const { return (flags_ & 0x1) != 0; }  // hipStreamNonBlocking.

 private:
  void Run();

  const int device_;
  const uint32_t flags_;
  const int32_t priority_;
  struct Item {
    std::function<void()> run;
    bool work = true;  // False for markers.
    bool busy = true;  // Counts for Idle(): work other than event records.
    bool parks = false;  // Blocks for something outside the device (SubmitParking).
  };
  void Push(Item item);
  // Counts an item taken off the queue and run to its end; wakes WaitIdle's
  // waiters once the stream has nothing left.
  void Finish(const Item& item);
  // Before it sleeps, the stream's thread looks for more work for up to
  // this long: a replay thread decoding a batch of launches hands each one
  // over within microseconds, and a wake-up per launch costs more than the
  // launch (a futex wake and a context switch on each side). Adaptive, as
  // the shm transport's spin: doubled when a spin finds work, halved when
  // it does not, so a stream fed once in a while spends nearly nothing.
  bool SpinForWork();
  int64_t spin_ns_ = 0;  // Only the stream's thread.
  std::atomic<uint64_t> pushed_{0};  // Items pushed so far; read without mu_ while spinning.

  // The hand-off is by batch: the stream's thread takes everything queued
  // under one lock and runs it without the lock, so a replay thread pushing
  // launches one by one seldom finds the mutex held (each contended lock
  // cost a futex wait and a wake, more than an empty kernel). What Idle(),
  // Empty() and the waits ask about is kept item by item in the counters
  // below: an item counts from its push to the end of its run, wherever it
  // sits meanwhile (queue_ or the thread's batch).
  Mutex mu_;
  std::condition_variable work_cv_;  // The stream's thread waits here for work.
  std::condition_variable idle_cv_;  // WaitIdle and WaitIdleOrParked wait here.
  std::vector<Item> queue_ HIPR_GUARDED_BY(mu_);  // Pushed, not yet taken by the stream's thread.
  bool running_parks_ HIPR_GUARDED_BY(mu_) = false;
  bool stopping_ HIPR_GUARDED_BY(mu_) = false;
  // Items pushed and not yet run to their end: all of them, work (markers
  // aside), busy (event records aside). Raised under mu_ at the push,
  // lowered by the stream's thread after the run; `unfinished_` last, so
  // a wait that sees it at zero sees the others at zero too.
  std::atomic<uint64_t> unfinished_{0};
  std::atomic<uint64_t> unfinished_work_{0};
  std::atomic<uint64_t> unfinished_busy_{0};
  std::atomic<uint64_t> completed_{0};
  // Threads in WaitIdle or WaitIdleOrParked. Raised under mu_ before the
  // wait reads `unfinished_`; the stream's thread reads it after lowering
  // `unfinished_` (both sequentially consistent), so one of the two sees
  // the other and no wake-up is lost.
  std::atomic<int> waiters_{0};
  std::thread thread_;
};

}  // namespace hipr::worker::sim

// SimStream: an in-order queue of device work run by its own thread, like a
// hardware queue. Work items run one at a time in submission order.
//
// Thread-safety: Submit/Mark/WaitIdle/Idle may be called from any thread.
// The destructor drains the queue and joins the thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>

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
  Mutex mu_;
  std::condition_variable cv_;
  struct Item {
    std::function<void()> run;
    bool work = true;  // False for markers.
    bool busy = true;  // Counts for Idle(): work other than event records.
    bool parks = false;  // Blocks for something outside the device (SubmitParking).
  };
  void Push(Item item);
  // Before it sleeps, the stream's thread looks for more work for up to
  // this long: a replay thread decoding a batch of launches hands each one
  // over within microseconds, and a wake-up per launch costs more than the
  // launch (a futex wake and a context switch on each side). Adaptive, as
  // the shm transport's spin: doubled when a spin finds work, halved when
  // it does not, so a stream fed once in a while spends nearly nothing.
  bool SpinForWork();
  int64_t spin_ns_ = 0;  // Only the stream's thread.
  std::atomic<uint64_t> pushed_{0};  // Items pushed so far; read without mu_ while spinning.
  std::deque<Item> queue_ HIPR_GUARDED_BY(mu_);
  size_t queued_work_ HIPR_GUARDED_BY(mu_) = 0;  // items in queue_ that are work.
  bool running_item_ HIPR_GUARDED_BY(mu_) = false;
  bool running_work_ HIPR_GUARDED_BY(mu_) = false;
  size_t queued_busy_ HIPR_GUARDED_BY(mu_) = 0;  // items in queue_ that are busy.
  bool running_busy_ HIPR_GUARDED_BY(mu_) = false;
  bool running_parks_ HIPR_GUARDED_BY(mu_) = false;
  uint64_t completed_ HIPR_GUARDED_BY(mu_) = 0;
  bool stopping_ HIPR_GUARDED_BY(mu_) = false;
  std::thread thread_;
};

}  // namespace hipr::worker::sim

// Waiters (waiters.h): a wait handed to Run() blocks its own thread, never
// the caller's; finished waits are joined at the next Run(); destruction
// joins the rest.
#include "worker_service/device/waiters.h"

#include <gtest/gtest.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace hipr::worker {
namespace {

// A gate a wait blocks on until the test opens it.
class Gate {
 public:
  void Open() {
    {
      std::lock_guard lock(mu_);
      open_ = true;
    }
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock lock(mu_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool open_ = false;
};

TEST(WaitersTest, AWaitNeverBlocksTheCaller) {
  Gate first;
  Gate second;
  std::atomic<int> finished{0};
  {
    Waiters waiters;
    const auto t0 = std::chrono::steady_clock::now();
    waiters.Run([&] {
      first.Wait();
      finished.fetch_add(1);
    });
    waiters.Run([&] {
      second.Wait();
      finished.fetch_add(1);
    });
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
    EXPECT_EQ(waiters.in_flight(), 2u);
    // The second wait ends first: waits do not queue behind one another.
    second.Open();
    while (finished.load() < 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    waiters.Run([&] { finished.fetch_add(1); });
    EXPECT_LE(waiters.in_flight(), 2u) << "a finished wait was not joined";
    first.Open();
  }  // Joins what is left.
  EXPECT_EQ(finished.load(), 3);
}

}  // namespace
}  // namespace hipr::worker

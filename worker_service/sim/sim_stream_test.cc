// Tests of SimStream's bookkeeping: its thread takes queued items in
// batches, but what Idle(), IdleForQuery(), Empty(), Mark() and the waits
// report stays exact item by item, wherever an item sits (queued, in the
// thread's batch, running).
#include "worker_service/sim/sim_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <thread>
#include <vector>

namespace hipr::worker::sim {
namespace {

using std::chrono::milliseconds;

// A gate a stream item blocks on until the test opens it, so the test holds
// the stream's thread at a known item; Reached() says the item has begun.
class Gate {
 public:
  std::function<void()> Item() {
    return [this] {
      reached_.Open();
      open_.Wait();
    };
  }
  void AwaitReached() { reached_.Wait(); }
  void Open() { open_.Open(); }

 private:
  Latch reached_;
  Latch open_;
};

// True if what `done` waits for finished within `ms`.
bool ReturnsWithin(std::future<void>& done, int ms) {
  return done.wait_for(milliseconds(ms)) == std::future_status::ready;
}

TEST(SimStreamTest, RunsItemsInOrderAndCountsThem) {
  SimStream s(0, 0, 0);
  std::vector<int> order;
  for (int i = 0; i < 1000; ++i) s.Submit([&order, i] { order.push_back(i); });
  s.WaitIdle();
  ASSERT_EQ(order.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(order[static_cast<size_t>(i)], i);
  EXPECT_EQ(s.Completed(), 1000u);
  EXPECT_TRUE(s.Idle());
  EXPECT_TRUE(s.IdleForQuery());
  EXPECT_TRUE(s.Empty());
}

// Items queued behind a running one (so in the thread's batch, or still
// queued) count until each has run.
TEST(SimStreamTest, CountsItemsBehindARunningOneUntilTheyRun) {
  SimStream s(0, 0, 0);
  Gate gate;
  s.Submit(gate.Item());
  gate.AwaitReached();
  Gate second;
  s.Submit(second.Item());
  s.Submit([] {});
  EXPECT_FALSE(s.Idle());
  EXPECT_FALSE(s.IdleForQuery());
  EXPECT_FALSE(s.Empty());
  EXPECT_EQ(s.Completed(), 0u);
  gate.Open();
  second.AwaitReached();
  // The first has run; the second runs; the third waits behind it.
  EXPECT_FALSE(s.Idle());
  EXPECT_FALSE(s.Empty());
  second.Open();
  s.WaitIdle();
  EXPECT_EQ(s.Completed(), 3u);
  EXPECT_TRUE(s.Idle());
}

// A marker is not work: a stream whose work has run but whose marker still
// runs is Idle() but not Empty(); an event record is work for Idle() but not
// for IdleForQuery().
TEST(SimStreamTest, MarkersAndRecordsCountAsHipDoes) {
  SimStream s(0, 0, 0);
  Gate marker;
  s.Submit([] {});
  s.SubmitMarker(marker.Item());
  marker.AwaitReached();
  EXPECT_TRUE(s.Idle());
  EXPECT_TRUE(s.IdleForQuery());
  EXPECT_FALSE(s.Empty());
  marker.Open();
  s.WaitIdle();
  EXPECT_TRUE(s.Empty());

  Gate record;
  s.SubmitRecord(record.Item());
  record.AwaitReached();
  EXPECT_FALSE(s.Idle());
  EXPECT_TRUE(s.IdleForQuery());
  EXPECT_FALSE(s.Empty());
  record.Open();
  s.WaitIdle();
  EXPECT_TRUE(s.Idle());
}

TEST(SimStreamTest, MarkOpensOnceTheWorkBeforeItHasRun) {
  SimStream s(0, 0, 0);
  EXPECT_EQ(s.Mark(), nullptr);  // Nothing queued: nothing to wait for.
  Gate gate;
  s.Submit(gate.Item());
  std::atomic<bool> after{false};
  s.Submit([&after] { after = true; });
  std::shared_ptr<Latch> mark = s.Mark();
  ASSERT_NE(mark, nullptr);
  auto opened = std::async(std::launch::async, [&mark] { mark->Wait(); });
  EXPECT_FALSE(ReturnsWithin(opened, 50));
  gate.Open();
  EXPECT_TRUE(ReturnsWithin(opened, 10000));
  EXPECT_TRUE(after.load());
  s.WaitIdle();
  EXPECT_EQ(s.Mark(), nullptr);
}

// WaitIdleOrParked returns while a parking item blocks, with work queued
// behind it; WaitIdle does not return until that work has run.
TEST(SimStreamTest, WaitIdleOrParkedReturnsAtAParkedItem) {
  SimStream s(0, 0, 0);
  Gate park;
  s.Submit([] {});
  s.SubmitParking(park.Item());
  std::atomic<bool> behind{false};
  s.Submit([&behind] { behind = true; });
  auto parked = std::async(std::launch::async, [&s] { s.WaitIdleOrParked(); });
  EXPECT_TRUE(ReturnsWithin(parked, 10000));
  EXPECT_FALSE(s.Idle());
  auto idle = std::async(std::launch::async, [&s] { s.WaitIdle(); });
  EXPECT_FALSE(ReturnsWithin(idle, 50));
  park.Open();
  EXPECT_TRUE(ReturnsWithin(idle, 10000));
  EXPECT_TRUE(behind.load());
}

// Several threads push while others wait: each wait returns (no wake-up is
// lost) and only once everything pushed before it has run.
TEST(SimStreamTest, WaitsSeeEverythingPushedBeforeThem) {
  SimStream s(0, 0, 0);
  constexpr int kThreads = 3;
  constexpr int kRounds = 2000;
  std::atomic<uint64_t> ran[kThreads] = {};  // Items of each pushing thread run so far.
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      uint64_t pushed = 0;
      for (int r = 0; r < kRounds; ++r) {
        const int n = 1 + r % 7;
        for (int i = 0; i < n; ++i) s.Submit([&ran, t] { ran[t].fetch_add(1); });
        pushed += static_cast<uint64_t>(n);
        if (r % 3 == 0) {
          s.WaitIdle();
        } else if (r % 3 == 1) {
          s.WaitIdleOrParked();  // Nothing parks here: the same as WaitIdle.
        } else {
          continue;
        }
        // Everything this thread pushed has run, whatever the others push.
        if (ran[t].load() != pushed) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  s.WaitIdle();
  EXPECT_EQ(wrong.load(), 0);
  uint64_t per_thread = 0;
  for (int r = 0; r < kRounds; ++r) per_thread += static_cast<uint64_t>(1 + r % 7);
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(ran[t].load(), per_thread);
  EXPECT_EQ(s.Completed(), per_thread * kThreads);
}

// What an item holds (a launch's twin, say) is released before anyone sees
// the item finished.
TEST(SimStreamTest, AnItemsCaptureIsGoneOnceItCountsAsRun) {
  SimStream s(0, 0, 0);
  auto held = std::make_shared<int>(7);
  std::weak_ptr<int> watch = held;
  s.Submit([held = std::move(held)] { (void)*held; });
  s.WaitIdle();
  EXPECT_TRUE(watch.expired());
}

}  // namespace
}  // namespace hipr::worker::sim

#include "worker_service/sim/twin/grid_barrier.h"

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace hipr::worker::sim {
namespace {

// Each member writes its own slot of a phase with plain stores, then reads
// every slot of it after the barrier: the barrier orders them (no data
// race, which a sanitizer build would catch), and no member runs ahead.
TEST(GridBarrierTest, EveryMemberSeesEveryWriteOfThePhaseBefore) {
  constexpr int kMembers = 8;
  constexpr int kPhases = 50;
  GridBarrier barrier(kMembers);
  std::vector<std::vector<int>> slots(kPhases, std::vector<int>(kMembers, -1));
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int m = 0; m < kMembers; ++m) {
    threads.emplace_back([&, m] {
      for (int p = 0; p < kPhases; ++p) {
        slots[p][m] = p * 1000 + m;
        EXPECT_EQ(barrier.ArriveAndWait(), static_cast<uint64_t>(p));
        for (int other = 0; other < kMembers; ++other)
          if (slots[p][other] != p * 1000 + other) wrong.fetch_add(1);
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(barrier.members(), static_cast<uint64_t>(kMembers));
}

// A member that leaves (a block whose threads all exited) no longer holds
// the others back, whether it leaves before or while they wait.
TEST(GridBarrierTest, AMemberThatLeavesNoLongerCounts) {
  GridBarrier barrier(3);
  barrier.Leave();
  EXPECT_EQ(barrier.members(), 2u);
  std::atomic<int> passed{0};
  std::thread a([&] {
    barrier.ArriveAndWait();
    passed.fetch_add(1);
  });
  std::thread b([&] {
    barrier.ArriveAndWait();
    passed.fetch_add(1);
  });
  a.join();
  b.join();
  EXPECT_EQ(passed.load(), 2);

  // Two wait; the third leaves instead of arriving: they go on.
  std::atomic<int> arrived{0};
  std::thread c([&] {
    arrived.fetch_add(1);
    barrier.ArriveAndWait();
  });
  barrier.Leave();  // Now a single member: c's arrival opens it alone.
  c.join();
  EXPECT_EQ(arrived.load(), 1);
  EXPECT_EQ(barrier.members(), 1u);
}

TEST(GridBarrierTest, TheLastLeaverOpensForTheWaiters) {
  GridBarrier barrier(3);
  std::atomic<int> passed{0};
  std::vector<std::thread> waiters;
  for (int i = 0; i < 2; ++i) {
    waiters.emplace_back([&] {
      barrier.ArriveAndWait();
      passed.fetch_add(1);
    });
  }
  // Two of three never open it.
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(passed.load(), 0);
  barrier.Leave();
  for (std::thread& t : waiters) t.join();
  EXPECT_EQ(passed.load(), 2);
}

}  // namespace
}  // namespace hipr::worker::sim

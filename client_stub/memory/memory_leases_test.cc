#include "client_stub/memory/memory_leases.h"

#include <gtest/gtest.h>

#include <vector>

namespace hipr::client {
namespace {

// A worker double: grants leases from a bump pointer, counts the asks and
// records placements and give-backs.
struct FakeWorker {
  uint64_t next_base = 0x100000;
  uint64_t free_bytes = 1 << 20;
  int asks = 0;
  std::vector<std::pair<uint64_t, uint64_t>> placed;
  std::vector<int> returned;

  MemoryLeases::Ask ask() {
    return [this](uint64_t need, uint64_t want, LeaseGrant* g) {
      ++asks;
      if (need > free_bytes) return false;
      g->base = next_base;
      g->size = std::min(want, free_bytes);
      g->granularity = 4096;
      next_base += g->size;
      return true;
    };
  }
  MemoryLeases::Place place() {
    return [this](uint64_t address, uint64_t size) {
      placed.emplace_back(address, size);
      return true;
    };
  }
};

// A device's first allocation goes to the worker, with no lease.
void First(MemoryLeases& leases, FakeWorker& w, int device) {
  uint64_t a = 0;
  EXPECT_FALSE(leases.Allocate(device, 4096, w.ask(), w.place(), &a));
}

TEST(MemoryLeases, TheFirstAllocationOfADeviceTakesNoLease) {
  MemoryLeases leases(64 << 10);
  FakeWorker w;
  First(leases, w, 0);
  EXPECT_EQ(w.asks, 0);
  uint64_t a = 0;
  ASSERT_TRUE(leases.Allocate(0, 4096, w.ask(), w.place(), &a));
  EXPECT_EQ(w.asks, 1);
  First(leases, w, 1);
  EXPECT_EQ(w.asks, 1);
}

TEST(MemoryLeases, AllocationsAfterTheFirstAskNothing) {
  MemoryLeases leases(64 << 10);
  FakeWorker w;
  First(leases, w, 0);
  uint64_t a = 0, b = 0, c = 0;
  ASSERT_TRUE(leases.Allocate(0, 100, w.ask(), w.place(), &a));
  ASSERT_TRUE(leases.Allocate(0, 5000, w.ask(), w.place(), &b));
  ASSERT_TRUE(leases.Allocate(0, 4096, w.ask(), w.place(), &c));
  EXPECT_EQ(w.asks, 1);
  EXPECT_EQ(a, 0x100000u);
  EXPECT_EQ(b, a + 4096) << "rounded to the worker's granularity";
  EXPECT_EQ(c, b + 8192);
  ASSERT_EQ(w.placed.size(), 3u);
  EXPECT_EQ(w.placed[1], std::make_pair(b, uint64_t{5000})) << "the worker is told the size asked for";
}

TEST(MemoryLeases, AFullLeaseIsReplacedAndLargeAllocationsAskTheWorker) {
  MemoryLeases leases(16 << 10);
  FakeWorker w;
  First(leases, w, 1);
  First(leases, w, 2);
  uint64_t a = 0;
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(leases.Allocate(1, 4096, w.ask(), w.place(), &a));
  EXPECT_EQ(w.asks, 1);
  ASSERT_TRUE(leases.Allocate(1, 4096, w.ask(), w.place(), &a));
  EXPECT_EQ(w.asks, 2) << "the lease was used up";
  EXPECT_FALSE(leases.Allocate(1, 16 << 10, w.ask(), w.place(), &a)) << "as large as a lease: the worker's";
  EXPECT_EQ(w.asks, 2);
  ASSERT_TRUE(leases.Allocate(2, 100, w.ask(), w.place(), &a)) << "each device has its own";
  EXPECT_EQ(w.asks, 3);
}

TEST(MemoryLeases, ARefusedLeaseFallsBackAndForgetGivesTheRestBack) {
  MemoryLeases leases(64 << 10);
  FakeWorker w;
  w.free_bytes = 2048;
  First(leases, w, 0);
  First(leases, w, 3);
  uint64_t a = 0;
  EXPECT_FALSE(leases.Allocate(0, 4096, w.ask(), w.place(), &a)) << "out of memory: the caller asks the worker";
  w.free_bytes = 1 << 20;
  ASSERT_TRUE(leases.Allocate(0, 4096, w.ask(), w.place(), &a));
  ASSERT_TRUE(leases.Allocate(3, 4096, w.ask(), w.place(), &a));
  const auto give_back = [&](int d) { w.returned.push_back(d); };
  EXPECT_TRUE(leases.Holds(a + 4096, 1)) << "device 3's unplaced rest";
  EXPECT_FALSE(leases.Holds(a, 4096)) << "placed already";
  EXPECT_EQ(leases.Forget(0, give_back), (64u << 10) - 4096);
  EXPECT_EQ(w.returned, std::vector<int>{0});
  EXPECT_EQ(leases.Forget(0, give_back), 0u) << "forgotten once";
  EXPECT_EQ(leases.Forget(-1, nullptr), (64u << 10) - 4096) << "device 3's, without telling the worker";
  EXPECT_EQ(w.returned.size(), 1u);
  const int asks = w.asks;
  ASSERT_TRUE(leases.Allocate(0, 4096, w.ask(), w.place(), &a));
  EXPECT_EQ(w.asks, asks + 1) << "a forgotten lease is asked for again";
}

TEST(MemoryLeases, OffWhenZeroAndInAForkedChild) {
  FakeWorker w;
  uint64_t a = 0;
  MemoryLeases off(0);
  EXPECT_FALSE(off.Allocate(0, 4096, w.ask(), w.place(), &a));
  MemoryLeases leases(64 << 10);
  First(leases, w, 0);
  ASSERT_TRUE(leases.Allocate(0, 4096, w.ask(), w.place(), &a));
  leases.LockForFork();
  leases.ResetInChild();
  EXPECT_FALSE(leases.Allocate(0, 4096, w.ask(), w.place(), &a)) << "the parent's lease, and none of its own";
  EXPECT_EQ(w.asks, 1);
}

TEST(MemoryLeases, APlacementThatCannotBeSentDropsTheLease) {
  MemoryLeases leases(64 << 10);
  FakeWorker w;
  First(leases, w, 0);
  uint64_t a = 0;
  EXPECT_FALSE(leases.Allocate(0, 4096, w.ask(), [](uint64_t, uint64_t) { return false; }, &a));
  EXPECT_EQ(leases.Forget(0, nullptr), 0u);
}

}  // namespace
}  // namespace hipr::client

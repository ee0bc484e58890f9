#include "client_stub/memory/allocation_map.h"

#include <thread>
#include <vector>

#include <gtest/gtest.h>

namespace hipr::client {
namespace {

DeviceAllocation Dev(uint64_t base, uint64_t size, int device = 0) {
  DeviceAllocation a;
  a.base = base;
  a.size = size;
  a.device = device;
  return a;
}

TEST(AllocationMapTest, FindsTheAllocationHoldingARange) {
  AllocationMap m;
  ASSERT_TRUE(m.AddDevice(Dev(0x1000, 0x100)));
  ASSERT_TRUE(m.AddDevice(Dev(0x2000, 0x1000, 1)));
  DeviceAllocation a;
  EXPECT_TRUE(m.FindDevice(0x1000, 0x100, &a));
  EXPECT_EQ(a.base, 0x1000u);
  EXPECT_TRUE(m.FindDevice(0x10ff, 1, &a));
  EXPECT_TRUE(m.FindDevice(0x2800, 0x800, &a));
  EXPECT_EQ(a.device, 1);
  EXPECT_TRUE(m.FindDevice(0x1080, 0, &a));  // n == 0: the pointer alone.
}

TEST(AllocationMapTest, RejectsRangesNotWhollyInsideOneAllocation) {
  AllocationMap m;
  ASSERT_TRUE(m.AddDevice(Dev(0x1000, 0x100)));
  ASSERT_TRUE(m.AddDevice(Dev(0x1100, 0x100)));  // Adjacent.
  DeviceAllocation a;
  EXPECT_FALSE(m.FindDevice(0x0fff, 1, &a));
  EXPECT_FALSE(m.FindDevice(0x1000, 0x101, &a));  // Spills into the neighbour.
  EXPECT_FALSE(m.FindDevice(0x1200, 0, &a));      // One past the end.
  EXPECT_FALSE(m.FindDevice(0x10ff, UINT64_MAX, &a));
  EXPECT_FALSE(m.FindDevice(0, 0, &a));
}

TEST(AllocationMapTest, OverlappingAllocationsAreRefused) {
  AllocationMap m;
  ASSERT_TRUE(m.AddDevice(Dev(0x1000, 0x100)));
  EXPECT_FALSE(m.AddDevice(Dev(0x10ff, 0x10)));
  EXPECT_FALSE(m.AddDevice(Dev(0x0f00, 0x101)));
  EXPECT_FALSE(m.AddDevice(Dev(0x0f00, 0x1000)));  // Covers it.
  EXPECT_FALSE(m.AddDevice(Dev(0x5000, 0)));
  EXPECT_TRUE(m.AddDevice(Dev(0x0f00, 0x100)));  // Ends exactly at its base.
  EXPECT_EQ(m.device_count(), 2u);
}

TEST(AllocationMapTest, RemoveByInteriorPointerRemovesTheAllocation) {
  AllocationMap m;
  ASSERT_TRUE(m.AddDevice(Dev(0x1000, 0x100)));
  DeviceAllocation a;
  EXPECT_FALSE(m.RemoveDevice(0x1100, &a));
  EXPECT_TRUE(m.RemoveDevice(0x1010, &a));
  EXPECT_EQ(a.base, 0x1000u);
  EXPECT_FALSE(m.FindDevice(0x1000, 1, &a));
}

TEST(AllocationMapTest, TouchesDeviceSeesAnyOverlap) {
  AllocationMap m;
  ASSERT_TRUE(m.AddDevice(Dev(0x1000, 0x100)));
  EXPECT_TRUE(m.TouchesDevice(0x0f00, 0x101));
  EXPECT_TRUE(m.TouchesDevice(0x10ff, 0x1000));
  EXPECT_FALSE(m.TouchesDevice(0x0f00, 0x100));
  EXPECT_FALSE(m.TouchesDevice(0x1100, 0x100));
  EXPECT_TRUE(m.TouchesDevice(0x1050, 0));
}

TEST(AllocationMapTest, RemoveDevicesOfOneDeviceOrAll) {
  AllocationMap m;
  ASSERT_TRUE(m.AddDevice(Dev(0x1000, 0x100, 0)));
  ASSERT_TRUE(m.AddDevice(Dev(0x2000, 0x100, 1)));
  ASSERT_TRUE(m.AddDevice(Dev(0x3000, 0x100, 1)));
  EXPECT_EQ(m.RemoveDevicesOf(1).size(), 2u);
  EXPECT_EQ(m.device_count(), 1u);
  EXPECT_EQ(m.RemoveDevicesOf(-1).size(), 1u);
  EXPECT_EQ(m.device_count(), 0u);
}

DeviceAllocation Mapping(uint64_t base, uint64_t size, int device = 0) {
  DeviceAllocation a = Dev(base, size, device);
  a.vmm = true;
  return a;
}

TEST(AllocationMapTest, RangesRunOnThroughAdjacentMappingsOnly) {
  AllocationMap m;
  ASSERT_TRUE(m.AddDevice(Mapping(0x10000, 0x1000)));
  ASSERT_TRUE(m.AddDevice(Mapping(0x11000, 0x2000)));
  ASSERT_TRUE(m.AddDevice(Mapping(0x14000, 0x1000)));  // A hole at 0x13000.
  ASSERT_TRUE(m.AddDevice(Dev(0x15000, 0x1000)));      // Adjacent, but hipMalloc'd.
  DeviceAllocation a;
  ASSERT_TRUE(m.FindDevice(0x10800, 0x2000, &a));
  EXPECT_EQ(a.base, 0x10000u);
  EXPECT_EQ(a.size, 0x3000u);
  ASSERT_TRUE(m.FindDevice(0x10000, 0x3000, &a));
  EXPECT_FALSE(m.FindDevice(0x10000, 0x3001, &a)) << "runs into the hole";
  EXPECT_FALSE(m.FindDevice(0x14800, 0x1000, &a)) << "a mapping does not run into a plain allocation";
  EXPECT_FALSE(m.FindDevice(0x15800, 0x1000, &a));
  ASSERT_TRUE(m.FindDevice(0x11800, 0, &a));
  EXPECT_EQ(a.base, 0x11000u);
  EXPECT_EQ(a.size, 0x2000u) << "a pointer alone names its own mapping";
}

TEST(AllocationMapTest, DeviceResetKeepsMappings) {
  AllocationMap m;
  ASSERT_TRUE(m.AddDevice(Mapping(0x10000, 0x1000, 1)));
  ASSERT_TRUE(m.AddDevice(Dev(0x20000, 0x1000, 1)));
  EXPECT_EQ(m.RemoveDevicesOf(1).size(), 1u);
  DeviceAllocation a;
  EXPECT_TRUE(m.FindDevice(0x10000, 1, &a));
  EXPECT_EQ(m.RemoveDevicesOf(-1).size(), 1u) << "a forked child abandons mappings too";
}

TEST(AllocationMapTest, PinnedAllocationsAreSeparate) {
  AllocationMap m;
  PinnedAllocation p;
  p.base = 0x10000;
  p.size = 100;
  p.mapped_size = 4096;
  p.flags = 2;
  ASSERT_TRUE(m.AddPinned(p));
  PinnedAllocation q;
  EXPECT_TRUE(m.FindPinned(0x10000 + 99, 1, &q));
  EXPECT_EQ(q.flags, 2u);
  EXPECT_FALSE(m.FindPinned(0x10000 + 100, 1, &q));  // Past the requested size.
  DeviceAllocation d;
  EXPECT_FALSE(m.FindDevice(0x10000, 1, &d));
  EXPECT_TRUE(m.RemovePinned(0x10010, &q));
  EXPECT_EQ(m.pinned_count(), 0u);
}

TEST(AllocationMapTest, ConcurrentUse) {
  AllocationMap m;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&m, t] {
      for (uint64_t i = 0; i < 2000; ++i) {
        const uint64_t base = (uint64_t(t) << 32) + i * 0x100;
        ASSERT_TRUE(m.AddDevice(Dev(base, 0x80)));
        DeviceAllocation a;
        ASSERT_TRUE(m.FindDevice(base + 0x10, 0x10, &a));
        if (i % 2 == 0) {
          ASSERT_TRUE(m.RemoveDevice(base, &a));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(m.device_count(), 4u * 1000u);
}

}  // namespace
}  // namespace hipr::client

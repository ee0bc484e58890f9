#include "client_stub/memory/device_reservations.h"

#include <sys/mman.h>

#include <gtest/gtest.h>

#include "client_stub/memory/address_window.h"

namespace hipr::client {
namespace {

// A free, page-aligned stretch of address space to play in.
AddressRange FreeRange(uint64_t pages) {
  AddressRange r;
  EXPECT_TRUE(ReserveAnywhere(pages * PageSize(), &r).ok());
  ReleaseRange(r);
  return r;
}

bool IsReserved(uint64_t page) {
  AddressRange r;
  Status st = ReserveAt(page, PageSize(), &r);
  if (st.ok()) ReleaseRange(r);
  return !st.ok();
}

TEST(DeviceReservationsTest, ReservesAndReleasesAnAllocationsPages) {
  const uint64_t page = PageSize();
  AddressRange area = FreeRange(16);
  DeviceReservations d;
  ASSERT_TRUE(d.Reserve(area.base + 100, 5 * page).ok());
  for (uint64_t i = 0; i <= 5; ++i) EXPECT_TRUE(IsReserved(area.base + i * page)) << i;
  EXPECT_FALSE(IsReserved(area.base + 6 * page));
  EXPECT_TRUE(d.Overlaps(area.base + 3 * page, 1));
  EXPECT_TRUE(d.Overlaps(area.base + 5 * page + page - 1, 1));  // Slack of the last page.
  EXPECT_FALSE(d.Overlaps(area.base + 6 * page, page));
  d.Release(area.base + 100, 5 * page);
  for (uint64_t i = 0; i <= 6; ++i) EXPECT_FALSE(IsReserved(area.base + i * page)) << i;
  EXPECT_FALSE(d.Overlaps(area.base, 6 * page));
}

TEST(DeviceReservationsTest, AllocationsSharingAPageKeepItUntilTheLastGoes) {
  const uint64_t page = PageSize();
  AddressRange area = FreeRange(4);
  DeviceReservations d;
  ASSERT_TRUE(d.Reserve(area.base, 256).ok());
  ASSERT_TRUE(d.Reserve(area.base + 256, 256).ok());
  ASSERT_TRUE(d.Reserve(area.base + 512, page).ok());  // First page shared, second its own.
  EXPECT_EQ(d.shared_page_count(), 2u);
  d.Release(area.base, 256);
  EXPECT_TRUE(IsReserved(area.base));
  d.Release(area.base + 256, 256);
  EXPECT_TRUE(IsReserved(area.base));
  d.Release(area.base + 512, page);
  EXPECT_FALSE(IsReserved(area.base));
  EXPECT_FALSE(IsReserved(area.base + page));
  EXPECT_EQ(d.shared_page_count(), 0u);
}

TEST(DeviceReservationsTest, CollisionWithHostMemoryHoldsNothing) {
  const uint64_t page = PageSize();
  AddressRange area = FreeRange(8);
  void* host = mmap(reinterpret_cast<void*>(area.base + 4 * page), page, PROT_READ | PROT_WRITE,
                    MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  ASSERT_EQ(host, reinterpret_cast<void*>(area.base + 4 * page));
  DeviceReservations d;
  EXPECT_EQ(d.Reserve(area.base, 6 * page).code(), StatusCode::kFailedPrecondition);
  EXPECT_EQ(d.shared_page_count(), 0u);
  EXPECT_FALSE(IsReserved(area.base));
  EXPECT_FALSE(d.Overlaps(area.base, 8 * page));
  munmap(host, page);
}

}  // namespace
}  // namespace hipr::client

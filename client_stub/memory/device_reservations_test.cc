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

// Host mappings as /proc/self/maps lists them: the one a device range
// lands on, and the run of them a range of some size cannot fit between.
TEST(HostMappingTest, NamesTheMappingARangeLandsOn) {
  const uint64_t page = PageSize();
  AddressRange area = FreeRange(8);
  AddressRange held;
  ASSERT_TRUE(ReserveAt(area.base + 2 * page, 3 * page, &held).ok());
  HostMapping m;
  ASSERT_TRUE(FindHostMapping(area.base + 3 * page + 17, 1, &m));
  EXPECT_EQ(m.range.base, held.base);
  EXPECT_EQ(m.range.size, held.size);
  EXPECT_EQ(m.perms, "---p");
  EXPECT_NE(m.Describe().find("anonymous"), std::string::npos) << m.Describe();
  EXPECT_FALSE(FindHostMapping(area.base, 2 * page, &m));  // Free below it.
  EXPECT_TRUE(FindHostMapping(area.base, 2 * page + 1, &m));  // One byte reaches it.
  ReleaseRange(held);
  EXPECT_FALSE(FindHostMapping(area.base + 3 * page, 1, &m));
}

TEST(HostMappingTest, ASpanRunsOverGapsTooSmallForTheRange) {
  const uint64_t page = PageSize();
  AddressRange area = FreeRange(32);
  // Mapped: pages 2-3, 5, 8-9; free: 4, 6-7, 10 and up.
  AddressRange a, b, c;
  ASSERT_TRUE(ReserveAt(area.base + 2 * page, 2 * page, &a).ok());
  ASSERT_TRUE(ReserveAt(area.base + 5 * page, page, &b).ok());
  ASSERT_TRUE(ReserveAt(area.base + 8 * page, 2 * page, &c).ok());
  AddressRange span;
  // A range needing 3 pages fits in none of the gaps before page 10.
  ASSERT_TRUE(FindHostSpan(area.base + 3 * page, page, 3 * page, &span));
  EXPECT_EQ(span.base, area.base + 2 * page);
  EXPECT_EQ(span.end(), area.base + 10 * page);
  // One needing 2 pages fits at 6-7: the span stops at page 6.
  ASSERT_TRUE(FindHostSpan(area.base + 3 * page, page, 2 * page, &span));
  EXPECT_EQ(span.end(), area.base + 6 * page);
  // Nothing mapped where the range is.
  EXPECT_FALSE(FindHostSpan(area.base + 10 * page, 4 * page, page, &span));
  ReleaseRange(a);
  ReleaseRange(b);
  ReleaseRange(c);
}

}  // namespace
}  // namespace hipr::client

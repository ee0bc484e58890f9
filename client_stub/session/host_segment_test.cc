#include "client_stub/session/host_segment.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

namespace hipr::client {
namespace {

TEST(HostSegment, AllocatesWholePagesFirstFitAndCoalescesFrees) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t bytes = 16 * page;
  auto* base = static_cast<uint8_t*>(mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  ASSERT_NE(base, MAP_FAILED);
  HostSegment seg(base, bytes);
  void* a = seg.Allocate(1);
  void* b = seg.Allocate(page + 1);  // Two pages.
  void* c = seg.Allocate(page);
  EXPECT_EQ(a, base);
  EXPECT_EQ(b, base + page);
  EXPECT_EQ(c, base + 3 * page);
  uint64_t off = 0;
  EXPECT_TRUE(seg.Contains(static_cast<uint8_t*>(b) + 5, page, &off));
  EXPECT_EQ(off, page + 5);
  EXPECT_FALSE(seg.Contains(base + bytes - 1, 2, &off)) << "runs past the end";
  EXPECT_FALSE(seg.Contains(base - 1, 1, &off));
  EXPECT_EQ(seg.Allocate(13 * page), nullptr) << "only 12 pages are free";
  std::memset(b, 0x5A, 2 * page);
  seg.Free(b, page + 1);
  EXPECT_EQ(static_cast<uint8_t*>(b)[0], 0) << "freed pages go back to the system";
  seg.Free(a, 1);
  seg.Free(c, page);
  // Everything coalesced again: the whole segment fits.
  void* all = seg.Allocate(bytes);
  EXPECT_EQ(all, base);
  EXPECT_EQ(seg.Allocate(1), nullptr);
  munmap(base, bytes);
}

}  // namespace
}  // namespace hipr::client

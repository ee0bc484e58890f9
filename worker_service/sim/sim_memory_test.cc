// Tests of SimMemory: the window is mapped where agreed, allocations are
// carved out of it with real page protections, and Check() is the bounds
// check every copy of a session relies on.
#include "worker_service/sim/sim_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <limits>
#include <ostream>
#include <span>
#include <sstream>
#include <string>
#include <vector>

namespace hipr {
// Readable StatusCode values in failure messages (found by ADL).
static void PrintTo(StatusCode code, std::ostream* os) { *os << StatusCodeName(code); }
}  // namespace hipr

namespace hipr::worker::sim {
namespace {

constexpr uint64_t kPage = SimMemory::kGranularity;
constexpr uint64_t kMiB = 1ull << 20;

// An address range of `size` bytes that nothing in this process maps right
// now (found by mapping and unmapping it).
uint64_t FreeRange(uint64_t size) {
  void* p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  EXPECT_NE(p, MAP_FAILED);
  munmap(p, size);
  return reinterpret_cast<uint64_t>(p);
}

// The permissions ("rw-p", "---p") of the mapping containing `addr` in
// /proc/self/maps, or "" when nothing maps it.
std::string PermissionsAt(uint64_t addr) {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line)) {
    std::istringstream in(line);
    std::string range;
    std::string perms;
    in >> range >> perms;
    size_t dash = range.find('-');
    uint64_t lo = std::stoull(range.substr(0, dash), nullptr, 16);
    uint64_t hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (addr >= lo && addr < hi) return perms;
  }
  return "";
}

// True when mmap(MAP_FIXED_NOREPLACE) finds [addr, addr+size) already
// (partly) mapped; leaves the range as it was.
bool IsMapped(uint64_t addr, uint64_t size) {
  void* want = reinterpret_cast<void*>(addr);
  void* p = mmap(want, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
  if (p == MAP_FAILED) return errno == EEXIST;
  munmap(p, size);
  return p != want;  // A kernel that ignored the flag placed it elsewhere.
}

// Number of resident pages in [addr, addr+size).
size_t ResidentPages(uint64_t addr, uint64_t size) {
  std::vector<unsigned char> vec((size + kPage - 1) / kPage);
  EXPECT_EQ(mincore(reinterpret_cast<void*>(addr), size, vec.data()), 0) << std::strerror(errno);
  return static_cast<size_t>(std::count_if(vec.begin(), vec.end(), [](unsigned char v) { return v & 1; }));
}

class SimMemoryTest : public ::testing::Test {
 protected:
  // Attaches `memory` at a free window of `size` bytes.
  static msg::AddressWindow AttachFresh(SimMemory& memory, uint64_t size) {
    msg::AddressWindow offer{FreeRange(size), size};
    msg::AddressWindow used;
    EXPECT_TRUE(memory.Attach(offer, &used).ok());
    EXPECT_EQ(used.base, offer.base);
    return used;
  }
};

TEST_F(SimMemoryTest, AttachMapsExactlyTheOfferedWindow) {
  const uint64_t size = 64 * kMiB;
  msg::AddressWindow offer{FreeRange(size), size};
  ASSERT_FALSE(IsMapped(offer.base, size));
  {
    SimMemory memory(1, 16 * kMiB);
    msg::AddressWindow used;
    ASSERT_TRUE(memory.Attach(offer, &used).ok());
    EXPECT_EQ(used.base, offer.base);
    EXPECT_EQ(used.size, offer.size);
    // The whole window is reserved, inaccessible until allocated.
    EXPECT_TRUE(IsMapped(offer.base, kPage));
    EXPECT_TRUE(IsMapped(offer.base + size - kPage, kPage));
    EXPECT_EQ(PermissionsAt(offer.base), "---p");
    EXPECT_EQ(PermissionsAt(offer.base + size - 1), "---p");
    // Only once.
    msg::AddressWindow again;
    EXPECT_EQ(memory.Attach(offer, &again).code(), StatusCode::kFailedPrecondition);
  }
  // The destructor gives the window back.
  EXPECT_FALSE(IsMapped(offer.base, size));
}

TEST_F(SimMemoryTest, AttachNeverTakesAWindowAtOrNearZero) {
  for (uint64_t base : {uint64_t{0}, uint64_t{1} << 16, (uint64_t{1} << 32) - (uint64_t{16} << 20),
                        (uint64_t{1} << 47) - (uint64_t{8} << 20)}) {
    SimMemory memory(1, 16 * kMiB);
    msg::AddressWindow used;
    ASSERT_TRUE(memory.Attach(msg::AddressWindow{base, 16 * kMiB}, &used).ok()) << base;
    EXPECT_NE(used.base, base) << "the offer at " << base << " was taken";
    EXPECT_GE(used.base, SimMemory::kMinWindowBase);
    EXPECT_LE(used.base + used.size, SimMemory::kMaxWindowEnd);
  }
}

TEST_F(SimMemoryTest, AttachCounterOffersWhereSomethingIsMapped) {
  const uint64_t size = 16 * kMiB;
  void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  auto* host = static_cast<uint8_t*>(p);
  std::memset(host, 0x5a, size);
  // Overlaps the host mapping in its second half only.
  msg::AddressWindow offer{reinterpret_cast<uint64_t>(p) + size / 2, size};
  SimMemory memory(1, 16 * kMiB);
  msg::AddressWindow used;
  ASSERT_TRUE(memory.Attach(offer, &used).ok());
  EXPECT_EQ(used.size, offer.size);
  EXPECT_NE(used.base, offer.base);
  EXPECT_EQ(used.base % kPage, 0u);
  // The counter-offer does not overlap the host mapping, which is untouched.
  EXPECT_TRUE(used.base + used.size <= reinterpret_cast<uint64_t>(p) ||
              used.base >= reinterpret_cast<uint64_t>(p) + size);
  EXPECT_EQ(PermissionsAt(reinterpret_cast<uint64_t>(p) + size - 1), "rw-p");
  EXPECT_EQ(host[size - 1], 0x5a);
  EXPECT_EQ(host[size / 2], 0x5a);
  // Allocations come from the counter-offer.
  uint64_t a = 0;
  ASSERT_TRUE(memory.Allocate(0, kPage, &a).ok());
  EXPECT_TRUE(used.Contains(a, kPage));
  munmap(p, size);
}

TEST_F(SimMemoryTest, AttachRejectsMalformedWindows) {
  uint64_t base = FreeRange(kMiB);
  msg::AddressWindow used;
  const msg::AddressWindow bad[] = {
      {base, 0},                                             // Empty.
      {base + 1, kMiB},                                      // Unaligned base.
      {base, kMiB + 1},                                      // Unaligned size.
      {std::numeric_limits<uint64_t>::max() - kPage + 1, 2 * kPage},  // Wraps around.
  };
  for (const auto& w : bad) {
    SimMemory memory(1, kMiB);
    EXPECT_EQ(memory.Attach(w, &used).code(), StatusCode::kInvalidArgument) << std::hex << w.base << "+" << w.size;
  }
}

TEST_F(SimMemoryTest, AllocateNeedsAWindowAndAValidDevice) {
  SimMemory memory(2, kMiB);
  uint64_t a = 0;
  EXPECT_EQ(memory.Allocate(0, kPage, &a).code(), StatusCode::kFailedPrecondition);
  AttachFresh(memory, 16 * kMiB);
  EXPECT_EQ(memory.Allocate(-1, kPage, &a).code(), StatusCode::kInvalidDevice);
  EXPECT_EQ(memory.Allocate(2, kPage, &a).code(), StatusCode::kInvalidDevice);
  EXPECT_TRUE(memory.Allocate(1, kPage, &a).ok());
}

TEST_F(SimMemoryTest, AllocationsAreAlignedInsideTheWindowAndDisjoint) {
  SimMemory memory(1, 16 * kMiB);
  msg::AddressWindow w = AttachFresh(memory, 64 * kMiB);
  struct Block {
    uint64_t address;
    uint64_t size;
  };
  std::vector<Block> blocks;
  for (uint64_t size : std::vector<uint64_t>{1, 255, 4095, 4096, 4097, 100000, 3 * kMiB + 5}) {
    uint64_t a = 0;
    ASSERT_TRUE(memory.Allocate(0, size, &a).ok()) << size;
    EXPECT_EQ(a % kPage, 0u) << size;
    EXPECT_TRUE(w.Contains(a, size)) << size;
    for (const Block& b : blocks) EXPECT_TRUE(a + size <= b.address || a >= b.address + b.size) << size;
    blocks.push_back({a, size});
  }
}

TEST_F(SimMemoryTest, BudgetExhaustionAndUsedAccounting) {
  const uint64_t budget = 1 * kMiB;
  SimMemory memory(1, budget);
  AttachFresh(memory, 64 * kMiB);  // The window is larger than the budget.
  EXPECT_EQ(memory.budget(), budget);
  EXPECT_EQ(memory.Used(0), 0u);
  uint64_t a = 0;
  uint64_t b = 0;
  uint64_t c = 0;
  EXPECT_EQ(memory.Allocate(0, budget + 1, &a).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(memory.Allocate(0, std::numeric_limits<uint64_t>::max(), &a).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(memory.Allocate(0, 0, &a).code(), StatusCode::kResourceExhausted);
  ASSERT_TRUE(memory.Allocate(0, 1, &a).ok());
  EXPECT_EQ(memory.Used(0), kPage);  // Rounded to the granularity.
  ASSERT_TRUE(memory.Allocate(0, budget - 2 * kPage, &b).ok());
  EXPECT_EQ(memory.Used(0), budget - kPage);
  // One page left: a page fits, a page and a byte do not.
  EXPECT_EQ(memory.Allocate(0, kPage + 1, &c).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(memory.Used(0), budget - kPage);
  ASSERT_TRUE(memory.Allocate(0, kPage, &c).ok());
  EXPECT_EQ(memory.Used(0), budget);
  uint64_t d = 0;
  EXPECT_EQ(memory.Allocate(0, 1, &d).code(), StatusCode::kResourceExhausted);
  int device = -1;
  ASSERT_TRUE(memory.Release(b, &device).ok());
  EXPECT_EQ(device, 0);
  EXPECT_EQ(memory.Used(0), 2 * kPage);
  ASSERT_TRUE(memory.Release(a, &device).ok());
  ASSERT_TRUE(memory.Release(c, &device).ok());
  EXPECT_EQ(memory.Used(0), 0u);
  // Everything is usable again.
  ASSERT_TRUE(memory.Allocate(0, budget, &a).ok());
  EXPECT_EQ(memory.Used(0), budget);
}

TEST_F(SimMemoryTest, BudgetsArePerDevice) {
  SimMemory memory(2, kMiB);
  AttachFresh(memory, 64 * kMiB);
  uint64_t a = 0;
  uint64_t b = 0;
  ASSERT_TRUE(memory.Allocate(0, kMiB, &a).ok());
  ASSERT_TRUE(memory.Allocate(1, kMiB, &b).ok());
  EXPECT_EQ(memory.Used(0), kMiB);
  EXPECT_EQ(memory.Used(1), kMiB);
  int device = -1;
  EXPECT_TRUE(memory.Check({b, 0, 16, 1}, &device).ok());
  EXPECT_EQ(device, 1);
  memory.ReleaseAll(1);
  EXPECT_EQ(memory.Used(1), 0u);
  EXPECT_EQ(memory.Used(0), kMiB);
  EXPECT_FALSE(memory.Check({b, 0, 16, 1}, nullptr).ok());
  EXPECT_TRUE(memory.Check({a, 0, 16, 1}, nullptr).ok());
}

TEST_F(SimMemoryTest, WindowExhaustionIsReported) {
  SimMemory memory(1, 64 * kMiB);
  AttachFresh(memory, 4 * kPage);  // Smaller than the budget.
  uint64_t a = 0;
  EXPECT_EQ(memory.Allocate(0, 5 * kPage, &a).code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(memory.Allocate(0, 4 * kPage, &a).ok());
  EXPECT_EQ(memory.Allocate(0, 1, &a).code(), StatusCode::kResourceExhausted);
}

// Fills the window with three allocations, frees them in every order, and
// checks that the free ranges merge back into one window-sized range.
TEST_F(SimMemoryTest, FreeRangesCoalesceInEveryOrder) {
  const uint64_t part = 4 * kPage;
  std::vector<int> order = {0, 1, 2};
  do {
    SimMemory memory(1, 3 * part);
    msg::AddressWindow w = AttachFresh(memory, 3 * part);
    uint64_t addr[3];
    for (uint64_t& a : addr) ASSERT_TRUE(memory.Allocate(0, part, &a).ok());
    EXPECT_EQ(addr[0], w.base);
    EXPECT_EQ(addr[1], w.base + part);
    EXPECT_EQ(addr[2], w.base + 2 * part);
    int device;
    for (int i : order) ASSERT_TRUE(memory.Release(addr[i], &device).ok());
    EXPECT_EQ(memory.Used(0), 0u);
    uint64_t whole = 0;
    ASSERT_TRUE(memory.Allocate(0, 3 * part, &whole).ok())
        << "freeing in order " << order[0] << order[1] << order[2] << " left the window fragmented";
    EXPECT_EQ(whole, w.base);
  } while (std::next_permutation(order.begin(), order.end()));
}

TEST_F(SimMemoryTest, ReleaseAcceptsOnlyTheStartOfALiveAllocation) {
  SimMemory memory(1, 16 * kMiB);
  msg::AddressWindow w = AttachFresh(memory, 64 * kMiB);
  uint64_t a = 0;
  ASSERT_TRUE(memory.Allocate(0, 4 * kPage, &a).ok());
  int device = -1;
  EXPECT_EQ(memory.Release(a + 1, &device).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(memory.Release(a + kPage, &device).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(memory.Release(a + 4 * kPage, &device).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(memory.Release(w.base + 32 * kMiB, &device).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(memory.Release(0, &device).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(memory.Used(0), 4 * kPage);  // Failed releases change nothing.
  EXPECT_TRUE(memory.Check({a, 0, 4 * kPage, 1}, nullptr).ok());
  ASSERT_TRUE(memory.Release(a, &device).ok());
  EXPECT_EQ(memory.Release(a, &device).code(), StatusCode::kInvalidDevicePointer);  // Double free.
  EXPECT_EQ(memory.Used(0), 0u);
}

// IPC: an export moves the allocation into a memfd, keeping its bytes; an
// import (another session's SimMemory, here a second instance) maps the same
// pages; each side lets go on its own terms.
TEST_F(SimMemoryTest, ExportedMemoryIsSharedWithAnImportUntilBothLetGo) {
  SimMemory exporter(1, 16 * kMiB);
  SimMemory importer(1, 16 * kMiB);
  AttachFresh(exporter, 64 * kMiB);
  AttachFresh(importer, 64 * kMiB);
  const uint64_t size = 3 * kPage;
  uint64_t a = 0;
  ASSERT_TRUE(exporter.Allocate(0, size, &a).ok());
  auto* p = reinterpret_cast<uint8_t*>(a);
  for (uint64_t i = 0; i < size; ++i) p[i] = static_cast<uint8_t>(i * 7 + 1);

  SimMemory::Exported e;
  ASSERT_TRUE(exporter.Export(a + kPage + 5, &e).ok());  // An interior pointer names the allocation.
  EXPECT_EQ(e.base, a);
  EXPECT_EQ(e.size, size);
  EXPECT_EQ(PermissionsAt(a), "rw-s");
  for (uint64_t i = 0; i < size; ++i) ASSERT_EQ(p[i], static_cast<uint8_t>(i * 7 + 1)) << "byte " << i;
  SimMemory::Exported again;
  ASSERT_TRUE(exporter.Export(a, &again).ok());
  EXPECT_EQ(again.fd, e.fd) << "exported once";
  EXPECT_EQ(again.secret, e.secret);
  char name[128] = {};
  const std::string link = "/proc/self/fd/" + std::to_string(e.fd);
  ASSERT_GT(readlink(link.c_str(), name, sizeof name - 1), 0);
  EXPECT_EQ(std::string(name), "/memfd:" + SimMemory::IpcName(e.secret) + " (deleted)");
  SimMemory::Exported none;
  EXPECT_EQ(exporter.Export(a + size, &none).code(), StatusCode::kInvalidDevicePointer);

  uint64_t b = 0;
  ASSERT_TRUE(importer.Import(0, e.fd, size, &b).ok());
  EXPECT_EQ(importer.Used(0), size) << "an import keeps the exporter's pages alive: it counts against the importer";
  auto* q = reinterpret_cast<uint8_t*>(b);
  EXPECT_EQ(q[kPage + 5], p[kPage + 5]);
  q[10] = 0xEE;
  EXPECT_EQ(p[10], 0xEE) << "one set of pages";
  EXPECT_TRUE(importer.Check({b, 0, size, 1}, nullptr).ok());
  EXPECT_EQ(importer.Export(b, &again).code(), StatusCode::kInvalidArgument) << "no re-export";
  EXPECT_EQ(importer.Retire(b).code(), StatusCode::kInvalidDevicePointer) << "closed, not freed";
  EXPECT_EQ(importer.CloseImport(b + kPage).code(), StatusCode::kInvalidArgument) << "not its start";

  SimMemory small(1, kPage);
  AttachFresh(small, 64 * kMiB);
  uint64_t c = 0;
  EXPECT_EQ(small.Import(0, e.fd, size, &c).code(), StatusCode::kResourceExhausted)
      << "an import past the device's memory";
  EXPECT_EQ(small.Used(0), 0u);

  // The exporter frees: the importer still holds the pages; the memfd closes.
  int device = -1;
  const int fd = e.fd;
  ASSERT_TRUE(exporter.Release(a, &device).ok());
  EXPECT_EQ(fcntl(fd, F_GETFD), -1) << "the export's memfd outlived its allocation";
  EXPECT_EQ(q[10], 0xEE);
  EXPECT_EQ(q[kPage + 5], static_cast<uint8_t>((kPage + 5) * 7 + 1));

  ASSERT_TRUE(importer.CloseImport(b).ok());
  EXPECT_EQ(importer.Used(0), 0u) << "a closed import is free at once, as freed memory is";
  EXPECT_EQ(importer.CloseImport(b).code(), StatusCode::kInvalidArgument) << "closed twice";
  EXPECT_FALSE(importer.Check({b, 0, 1, 1}, nullptr).ok()) << "usable after close";
  ASSERT_TRUE(importer.Release(b, &device).ok());
  EXPECT_EQ(PermissionsAt(b), "---p");
}

TEST_F(SimMemoryTest, AllocationsAreZeroedReadableAndWritable) {
  SimMemory memory(1, 16 * kMiB);
  AttachFresh(memory, 64 * kMiB);
  const uint64_t size = 2 * kMiB + 123;
  uint64_t a = 0;
  ASSERT_TRUE(memory.Allocate(0, size, &a).ok());
  auto* p = reinterpret_cast<uint8_t*>(a);
  EXPECT_EQ(PermissionsAt(a), "rw-p");
  EXPECT_EQ(std::count(p, p + size, 0), static_cast<long>(size));
  for (uint64_t i = 0; i < size; ++i) p[i] = static_cast<uint8_t>(i * 13 + 1);
  for (uint64_t i = 0; i < size; i += 4093) ASSERT_EQ(p[i], static_cast<uint8_t>(i * 13 + 1));
  int device;
  ASSERT_TRUE(memory.Release(a, &device).ok());
  // First fit hands the same range out again: it must not keep old bytes.
  uint64_t b = 0;
  ASSERT_TRUE(memory.Allocate(0, size, &b).ok());
  ASSERT_EQ(b, a);
  EXPECT_EQ(std::count(p, p + size, 0), static_cast<long>(size));
}

TEST_F(SimMemoryTest, ReleasedMemoryIsInaccessibleAndItsPagesReturned) {
  SimMemory memory(1, 16 * kMiB);
  AttachFresh(memory, 64 * kMiB);
  const uint64_t size = 64 * kPage;
  uint64_t a = 0;
  uint64_t keep = 0;
  ASSERT_TRUE(memory.Allocate(0, size, &a).ok());
  ASSERT_TRUE(memory.Allocate(0, kPage, &keep).ok());
  std::memset(reinterpret_cast<void*>(a), 0xab, size);
  std::memset(reinterpret_cast<void*>(keep), 0xcd, kPage);
  EXPECT_EQ(ResidentPages(a, size), size / kPage);
  int device;
  ASSERT_TRUE(memory.Release(a, &device).ok());
  EXPECT_EQ(PermissionsAt(a), "---p");
  EXPECT_EQ(PermissionsAt(a + size - 1), "---p");
  EXPECT_EQ(ResidentPages(a, size), 0u);
  // Still reserved: nothing else can be mapped there.
  EXPECT_TRUE(IsMapped(a, size));
  // The neighbour is untouched.
  EXPECT_EQ(PermissionsAt(keep), "rw-p");
  EXPECT_EQ(*reinterpret_cast<uint8_t*>(keep + kPage - 1), 0xcd);
}

// A connection may keep state for window pages (rdma registrations pin
// them): every change of the pages behind an address is announced first,
// and only window addresses count as staying.
TEST_F(SimMemoryTest, TheForgetHookHearsOfEveryPageChange) {
  std::vector<std::pair<uint64_t, uint64_t>> heard;  // Outlives `memory`, whose end it hears of too.
  SimMemory memory(1, 16 * kMiB);
  memory.set_forget_hook([&](const void* p, size_t n) { heard.emplace_back(reinterpret_cast<uint64_t>(p), n); });
  const msg::AddressWindow w = AttachFresh(memory, 64 * kMiB);
  EXPECT_TRUE(memory.InWindow(reinterpret_cast<void*>(w.base), w.size));
  EXPECT_TRUE(memory.InWindow(reinterpret_cast<void*>(w.base + w.size - 1), 1));
  EXPECT_FALSE(memory.InWindow(reinterpret_cast<void*>(w.base + w.size - 1), 2));
  EXPECT_FALSE(memory.InWindow(reinterpret_cast<void*>(w.base - 1), 1));
  int on_stack = 0;
  EXPECT_FALSE(memory.InWindow(&on_stack, sizeof on_stack));

  const uint64_t size = 5 * kPage;
  uint64_t a = 0;
  heard.clear();
  ASSERT_TRUE(memory.Allocate(0, size, &a).ok());
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_EQ(heard[0], std::make_pair(a, size));
  heard.clear();
  SimMemory::Exported e;
  ASSERT_TRUE(memory.Export(a, &e).ok());  // The pages become a memfd's.
  ASSERT_EQ(heard.size(), 1u);
  EXPECT_EQ(heard[0], std::make_pair(a, size));
  heard.clear();
  int device = -1;
  ASSERT_TRUE(memory.Release(a, &device).ok());
  ASSERT_FALSE(heard.empty());
  EXPECT_EQ(heard.back(), std::make_pair(a, size));
}

TEST_F(SimMemoryTest, ReleaseAllFreesOnlyThatDevice) {
  SimMemory memory(2, 16 * kMiB);
  AttachFresh(memory, 64 * kMiB);
  uint64_t a0 = 0, a1 = 0, b0 = 0;
  ASSERT_TRUE(memory.Allocate(0, kPage, &a0).ok());
  ASSERT_TRUE(memory.Allocate(1, kPage, &a1).ok());
  ASSERT_TRUE(memory.Allocate(0, 2 * kPage, &b0).ok());
  memory.ReleaseAll(0);
  EXPECT_EQ(memory.Used(0), 0u);
  EXPECT_EQ(memory.Used(1), kPage);
  EXPECT_EQ(PermissionsAt(a0), "---p");
  EXPECT_EQ(PermissionsAt(b0), "---p");
  EXPECT_EQ(PermissionsAt(a1), "rw-p");
}

class SimMemoryCheckTest : public SimMemoryTest {
 protected:
  void SetUp() override {
    window_ = AttachFresh(memory_, 64 * kMiB);
    ASSERT_TRUE(memory_.Allocate(0, kSize, &a_).ok());
    ASSERT_TRUE(memory_.Allocate(0, kSize, &b_).ok());
    ASSERT_EQ(b_, a_ + kSize);  // Adjacent: a region may still not span both.
  }
  bool Ok(const msg::Region& r) { return memory_.Check(r, nullptr).ok(); }
  StatusCode Code(const msg::Region& r) { return memory_.Check(r, nullptr).code(); }

  static constexpr uint64_t kSize = 16 * kPage;
  SimMemory memory_{1, 16 * kMiB};
  msg::AddressWindow window_;
  uint64_t a_ = 0;
  uint64_t b_ = 0;
};

TEST_F(SimMemoryCheckTest, RegionsInsideOneAllocation) {
  int device = -1;
  EXPECT_TRUE(memory_.Check({a_, 0, kSize, 1}, &device).ok());
  EXPECT_EQ(device, 0);
  EXPECT_TRUE(Ok({a_, 0, 1, 1}));
  EXPECT_TRUE(Ok({a_ + kSize - 1, 0, 1, 1}));
  EXPECT_TRUE(Ok({a_ + 100, 0, kSize - 100, 1}));
  EXPECT_TRUE(Ok({b_ + kSize - 1, 0, 1, 1}));
  // Empty regions touch nothing.
  EXPECT_TRUE(Ok({a_, 0, 0, 1}));
  EXPECT_TRUE(Ok({a_, 0, 16, 0}));
}

TEST_F(SimMemoryCheckTest, RegionsStraddlingOrOutside) {
  EXPECT_EQ(Code({a_, 0, kSize + 1, 1}), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(Code({a_ + kSize - 1, 0, 2, 1}), StatusCode::kInvalidDevicePointer);  // Into b.
  EXPECT_EQ(Code({b_ + kSize - 1, 0, 2, 1}), StatusCode::kInvalidDevicePointer);  // Into free space.
  EXPECT_EQ(Code({b_ + kSize, 0, 1, 1}), StatusCode::kInvalidDevicePointer);      // Free window space.
  EXPECT_EQ(Code({window_.base + window_.size - 1, 0, 1, 1}), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(Code({window_.base + window_.size, 0, 1, 1}), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(Code({a_ - 1, 0, 2, 1}), StatusCode::kInvalidDevicePointer);  // Starts before a.
  EXPECT_EQ(Code({0, 0, 1, 1}), StatusCode::kInvalidDevicePointer);
  int on_stack = 0;  // Host memory is never device memory.
  EXPECT_EQ(Code({reinterpret_cast<uint64_t>(&on_stack), 0, sizeof on_stack, 1}), StatusCode::kInvalidDevicePointer);
  // After a release the range is gone.
  int device;
  ASSERT_TRUE(memory_.Release(b_, &device).ok());
  EXPECT_EQ(Code({b_, 0, 1, 1}), StatusCode::kInvalidDevicePointer);
}

TEST_F(SimMemoryCheckTest, PitchedRegions) {
  // 4 rows of 100 bytes, 1024 apart: extent 3*1024+100.
  EXPECT_TRUE(Ok({a_, 1024, 100, 4}));
  // Last row ending exactly at the end of the allocation.
  const uint64_t rows = 16;
  const uint64_t pitch = kSize / rows;
  EXPECT_TRUE(Ok({a_, pitch, pitch, rows}));
  EXPECT_TRUE(Ok({a_ + 7, pitch, pitch - 7, rows}));
  // One byte more, one row more, or a row shifted: past the end.
  EXPECT_EQ(Code({a_ + 8, pitch, pitch - 7, rows}), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(Code({a_, pitch, pitch, rows + 1}), StatusCode::kInvalidDevicePointer);
  // Only the extent counts, not width*height: 2 rows of 1 byte, a whole
  // allocation apart, land in b.
  EXPECT_EQ(Code({a_, kSize, 1, 2}), StatusCode::kInvalidDevicePointer);
  // Rows may not overlap.
  EXPECT_EQ(Code({a_, 10, 11, 2}), StatusCode::kInvalidArgument);
  // A pitch is irrelevant for one row.
  EXPECT_TRUE(Ok({a_, 0, kSize, 1}));
}

TEST_F(SimMemoryCheckTest, RegionsThatWrapAroundTheAddressSpace) {
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  EXPECT_EQ(Code({a_, 0, max, 1}), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(Code({a_, 0, max - a_ + 1, 1}), StatusCode::kInvalidDevicePointer);  // Ends at 2^64.
  EXPECT_EQ(Code({max, 0, 2, 1}), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(Code({a_, max, 1, 3}), StatusCode::kInvalidDevicePointer);        // (h-1)*pitch overflows.
  EXPECT_EQ(Code({a_, 1ull << 62, 1, 5}), StatusCode::kInvalidDevicePointer);  // Overflows to a small value.
  // (h-1)*pitch fits, but adding the width wraps to a tiny extent.
  EXPECT_EQ(Code({a_, 1ull << 63, 1ull << 63, 2}), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(Code({a_, max - 7, 9, 2}), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(Code({a_, max, max, 2}), StatusCode::kInvalidDevicePointer);
}

// Virtual memory: reservations, physical memory and mappings.
class SimMemoryVmmTest : public SimMemoryTest {
 protected:
  void SetUp() override { window_ = AttachFresh(memory_, 64 * kMiB); }
  Status Access(uint64_t address, uint64_t size, uint32_t flags, int device = 0) {
    const msg::VmmAccess a{device, flags};
    return memory_.SetAccess(address, size, std::span<const msg::VmmAccess>(&a, 1));
  }

  SimMemory memory_{2, 16 * kMiB};
  msg::AddressWindow window_;
};

TEST_F(SimMemoryVmmTest, ReservationsAreAlignedWindowRangesAndHonourAFreeHint) {
  uint64_t r = 0;
  ASSERT_TRUE(memory_.Reserve(8 * kPage, kMiB, 0, &r).ok());
  EXPECT_EQ(r % kMiB, 0u);
  EXPECT_GE(r, window_.base);
  EXPECT_LE(r + 8 * kPage, window_.base + window_.size);
  EXPECT_EQ(PermissionsAt(r), "---p");
  uint64_t hinted = 0;
  const uint64_t hint = window_.base + 32 * kMiB;
  ASSERT_TRUE(memory_.Reserve(4 * kPage, 0, hint, &hinted).ok());
  EXPECT_EQ(hinted, hint);
  uint64_t other = 0;
  ASSERT_TRUE(memory_.Reserve(4 * kPage, 0, hint, &other).ok()) << "a taken hint is only a hint";
  EXPECT_NE(other, hint);
  // A reservation is not an allocation: nothing may copy into it.
  EXPECT_EQ(memory_.Check({r, 0, 1, 1}, nullptr).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(memory_.Reserve(kPage + 1, 0, 0, &r).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(memory_.Reserve(kPage, 3 * kPage, 0, &r).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(memory_.Reserve(128 * kMiB, 0, 0, &r).code(), StatusCode::kResourceExhausted);
  // Freed whole, and its range is free again.
  EXPECT_EQ(memory_.FreeReservation(hinted, 2 * kPage).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(memory_.FreeReservation(hinted, 4 * kPage).ok());
  EXPECT_EQ(memory_.FreeReservation(hinted, 4 * kPage).code(), StatusCode::kInvalidArgument);
  ASSERT_TRUE(memory_.Reserve(4 * kPage, 0, hint, &hinted).ok());
  EXPECT_EQ(hinted, hint);
}

TEST_F(SimMemoryVmmTest, MappingsAliasTheirPhysicalMemoryAndNeedAccess) {
  uint64_t r = 0;
  ASSERT_TRUE(memory_.Reserve(16 * kPage, 0, 0, &r).ok());
  ASSERT_TRUE(memory_.CreatePhysical(0, 7, 4 * kPage).ok());
  EXPECT_EQ(memory_.Used(0), 4 * kPage);
  EXPECT_EQ(memory_.CreatePhysical(0, 7, 4 * kPage).code(), StatusCode::kInvalidArgument) << "id in use";
  ASSERT_TRUE(memory_.Map(r, 4 * kPage, 0, 7).ok());
  ASSERT_TRUE(memory_.Map(r + 8 * kPage, 4 * kPage, 0, 7).ok());  // The same memory twice.
  EXPECT_EQ(PermissionsAt(r), "---s");
  EXPECT_EQ(memory_.Check({r, 0, 16, 1}, nullptr).code(), StatusCode::kInvalidDevicePointer) << "no access yet";
  ASSERT_TRUE(Access(r, 4 * kPage, 3).ok());
  ASSERT_TRUE(Access(r + 8 * kPage, 4 * kPage, 1).ok());
  EXPECT_EQ(PermissionsAt(r), "rw-s");
  EXPECT_EQ(PermissionsAt(r + 8 * kPage), "r--s");
  EXPECT_TRUE(memory_.Check({r, 0, 16, 1}, nullptr, true).ok());
  EXPECT_TRUE(memory_.Check({r + 8 * kPage, 0, 16, 1}, nullptr, false).ok());
  EXPECT_EQ(memory_.Check({r + 8 * kPage, 0, 16, 1}, nullptr, true).code(), StatusCode::kInvalidDevicePointer)
      << "read-only for writes";
  std::memcpy(reinterpret_cast<void*>(r + 100), "alias", 6);
  EXPECT_STREQ(reinterpret_cast<const char*>(r + 8 * kPage + 100), "alias");
  // Access is per device; the pages get the widest.
  ASSERT_TRUE(Access(r + 8 * kPage, 4 * kPage, 3, 1).ok());
  EXPECT_EQ(PermissionsAt(r + 8 * kPage), "rw-s");
  ASSERT_TRUE(Access(r + 8 * kPage, 4 * kPage, 0, 1).ok());
  EXPECT_EQ(PermissionsAt(r + 8 * kPage), "r--s");
  // Bad mappings.
  EXPECT_EQ(memory_.Map(r + 2 * kPage, 4 * kPage, 0, 7).code(), StatusCode::kInvalidArgument) << "overlap";
  EXPECT_EQ(memory_.Map(r + 12 * kPage, 8 * kPage, 0, 7).code(), StatusCode::kInvalidArgument) << "too large";
  EXPECT_EQ(memory_.Map(r + 12 * kPage, 4 * kPage, kPage, 7).code(), StatusCode::kInvalidArgument) << "offset";
  EXPECT_EQ(memory_.Map(r + 12 * kPage, 4 * kPage, 0, 8).code(), StatusCode::kInvalidArgument) << "no handle";
  EXPECT_EQ(memory_.Map(r + 14 * kPage, 4 * kPage, 0, 7).code(), StatusCode::kInvalidArgument) << "past the end";
  EXPECT_EQ(Access(r, 2 * kPage, 3).code(), StatusCode::kInvalidArgument) << "part of a mapping";
  EXPECT_EQ(Access(r, 4 * kPage, 2).code(), StatusCode::kInvalidArgument) << "unknown flags";
  EXPECT_EQ(Access(r, 4 * kPage, 3, 2).code(), StatusCode::kInvalidDevice);
  EXPECT_EQ(memory_.Retire(r).code(), StatusCode::kInvalidDevicePointer) << "hipFree of a mapping";
  SimMemory::Exported e;
  EXPECT_EQ(memory_.Export(r, &e).code(), StatusCode::kInvalidArgument) << "IPC export of a mapping";
  EXPECT_EQ(memory_.FreeReservation(r, 16 * kPage).code(), StatusCode::kInvalidArgument) << "still mapped";
}

TEST_F(SimMemoryVmmTest, RegionsRunAcrossAdjacentAccessibleMappings) {
  uint64_t r = 0;
  ASSERT_TRUE(memory_.Reserve(16 * kPage, 0, 0, &r).ok());
  ASSERT_TRUE(memory_.CreatePhysical(1, 1, 4 * kPage).ok());
  ASSERT_TRUE(memory_.CreatePhysical(0, 2, 4 * kPage).ok());
  ASSERT_TRUE(memory_.CreatePhysical(0, 3, 4 * kPage).ok());
  ASSERT_TRUE(memory_.Map(r, 4 * kPage, 0, 1).ok());
  ASSERT_TRUE(memory_.Map(r + 4 * kPage, 4 * kPage, 0, 2).ok());
  ASSERT_TRUE(memory_.Map(r + 12 * kPage, 4 * kPage, 0, 3).ok());  // After a hole.
  ASSERT_TRUE(Access(r, 8 * kPage, 3).ok());  // Two mappings at once.
  ASSERT_TRUE(Access(r + 12 * kPage, 4 * kPage, 3).ok());
  int device = -1;
  ASSERT_TRUE(memory_.Check({r + kPage, 0, 6 * kPage, 1}, &device, true).ok());
  EXPECT_EQ(device, 1) << "the first mapping's device";
  EXPECT_TRUE(memory_.Check({r, 4 * kPage, 8, 2}, nullptr).ok()) << "a pitched region over both";
  EXPECT_EQ(memory_.Check({r + kPage, 0, 8 * kPage, 1}, nullptr).code(), StatusCode::kInvalidDevicePointer)
      << "into the hole";
  std::memset(reinterpret_cast<void*>(r + 4 * kPage - 2), 0x5a, 4);  // Across the seam.
  // Unmap takes whole mappings; the pages are reserved again.
  EXPECT_EQ(memory_.Unmap(r, 2 * kPage).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(memory_.Unmap(r, 12 * kPage).code(), StatusCode::kInvalidArgument) << "the hole";
  // Retired (an unmap waiting for queued work): refused, still mapped.
  ASSERT_TRUE(memory_.RetireMappings(r, 8 * kPage).ok());
  EXPECT_EQ(memory_.Check({r, 0, 1, 1}, nullptr).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(Access(r, 8 * kPage, 3).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(memory_.RetireMappings(r, 8 * kPage).code(), StatusCode::kInvalidArgument) << "twice";
  EXPECT_EQ(PermissionsAt(r + 4 * kPage), "rw-s");
  ASSERT_TRUE(memory_.Unmap(r, 8 * kPage).ok());
  EXPECT_EQ(PermissionsAt(r + 4 * kPage), "---p");
  EXPECT_EQ(memory_.Check({r, 0, 1, 1}, nullptr).code(), StatusCode::kInvalidDevicePointer);
  // Physical memory lives while referenced or mapped, and is counted until then.
  EXPECT_EQ(memory_.Used(0), 8 * kPage);
  ASSERT_TRUE(memory_.ReleasePhysical(3).ok());
  EXPECT_EQ(memory_.Used(0), 8 * kPage) << "still mapped";
  EXPECT_EQ(*reinterpret_cast<volatile uint8_t*>(r + 12 * kPage), 0);
  EXPECT_EQ(memory_.Map(r, 4 * kPage, 0, 3).code(), StatusCode::kInvalidArgument) << "released";
  EXPECT_EQ(memory_.ReleasePhysical(3).code(), StatusCode::kInvalidArgument) << "twice";
  ASSERT_TRUE(memory_.Unmap(r + 12 * kPage, 4 * kPage).ok());
  EXPECT_EQ(memory_.Used(0), 4 * kPage);
  ASSERT_TRUE(memory_.ReleasePhysical(2).ok());
  ASSERT_TRUE(memory_.ReleasePhysical(1).ok());
  EXPECT_EQ(memory_.Used(0), 0u);
  EXPECT_EQ(memory_.Used(1), 0u);
  ASSERT_TRUE(memory_.FreeReservation(r, 16 * kPage).ok());
}

TEST_F(SimMemoryVmmTest, ARegionDoesNotRunIntoAMappingBeingUnmapped) {
  uint64_t r = 0;
  ASSERT_TRUE(memory_.Reserve(8 * kPage, 0, 0, &r).ok());
  ASSERT_TRUE(memory_.CreatePhysical(0, 1, 4 * kPage).ok());
  ASSERT_TRUE(memory_.CreatePhysical(0, 2, 4 * kPage).ok());
  ASSERT_TRUE(memory_.Map(r, 4 * kPage, 0, 1).ok());
  ASSERT_TRUE(memory_.Map(r + 4 * kPage, 4 * kPage, 0, 2).ok());
  ASSERT_TRUE(Access(r, 8 * kPage, 3).ok());
  ASSERT_TRUE(memory_.Check({r + kPage, 0, 4 * kPage, 1}, nullptr, true).ok());
  ASSERT_TRUE(memory_.RetireMappings(r + 4 * kPage, 4 * kPage).ok());
  EXPECT_EQ(memory_.Check({r + kPage, 0, 4 * kPage, 1}, nullptr, true).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_TRUE(memory_.Check({r + kPage, 0, 3 * kPage, 1}, nullptr, true).ok()) << "the live mapping alone";
}

TEST_F(SimMemoryVmmTest, PhysicalMemoryCountsAgainstTheBudgetAndOutlivesADeviceReset) {
  EXPECT_EQ(memory_.CreatePhysical(0, 1, 32 * kMiB).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(memory_.CreatePhysical(0, 1, kPage + 1).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(memory_.CreatePhysical(2, 1, kPage).code(), StatusCode::kInvalidDevice);
  ASSERT_TRUE(memory_.CreatePhysical(0, 1, 12 * kMiB).ok());
  uint64_t a = 0;
  EXPECT_EQ(memory_.Allocate(0, 8 * kMiB, &a).code(), StatusCode::kResourceExhausted);
  uint64_t r = 0;
  ASSERT_TRUE(memory_.Reserve(12 * kMiB, 0, 0, &r).ok());
  ASSERT_TRUE(memory_.Map(r, 12 * kMiB, 0, 1).ok());
  ASSERT_TRUE(Access(r, 12 * kMiB, 3).ok());
  memory_.ReleaseAll(0);  // hipDeviceReset.
  EXPECT_TRUE(memory_.Check({r, 0, 12 * kMiB, 1}, nullptr, true).ok());
  EXPECT_EQ(memory_.Used(0), 12 * kMiB);
}

}  // namespace
}  // namespace hipr::worker::sim

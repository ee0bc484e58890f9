// Tests of SimDevice through the Device interface, in this process: device
// memory is host memory here, so results are checked by reading it directly.
//
// There are no kernels yet, so "slow work" is a run of memsets sized (once
// per process, by measuring) to take about kSlowWorkMs.
#include "worker_service/sim/sim_device.h"

#include <condition_variable>
#include <mutex>

#include <gtest/gtest.h>
#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <vector>

namespace hipr {
// Readable StatusCode values in failure messages (found by ADL).
static void PrintTo(StatusCode code, std::ostream* os) { *os << StatusCodeName(code); }
}  // namespace hipr

namespace hipr::worker::sim {
namespace {

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kBudget = 1024 * kMiB;
constexpr uint64_t kSlowBytes = 32 * kMiB;
constexpr double kSlowWorkMs = 250;
constexpr uint32_t kEventDisableTiming = 0x2;  // hipEventDisableTiming.
constexpr uint32_t kStreamNonBlocking = 0x1;   // hipStreamNonBlocking.

using Clock = std::chrono::steady_clock;

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

class SimDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SimOptions options;
    options.memory_bytes = kBudget;
    options.device_count = 2;
    ASSERT_TRUE(SimDevice::Create(options, &device_).ok());
    const uint64_t size = 8 * kBudget;
    void* p = mmap(nullptr, size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    munmap(p, size);
    msg::AddressWindow used;
    ASSERT_TRUE(device_->AttachWindow({reinterpret_cast<uint64_t>(p), size}, &used).ok());
    ASSERT_EQ(used.base, reinterpret_cast<uint64_t>(p));
  }

  uint64_t Malloc(uint64_t size, int device = 0) {
    uint64_t a = 0;
    Status st = device_->Malloc(device, size, 0, &a);
    EXPECT_TRUE(st.ok()) << st.ToString();
    return a;
  }
  static uint8_t* Ptr(uint64_t address) { return reinterpret_cast<uint8_t*>(address); }
  static msg::Region Linear(uint64_t address, uint64_t size) { return {address, size, size, 1}; }

  // Queues about kSlowWorkMs of work on `stream`: memsets of a fresh
  // buffer of kSlowBytes, the last one of `value`. Returns the buffer.
  uint64_t QueueSlowWork(uint64_t stream, uint8_t value = 0x77) {
    static const int count = MemsetsForSlowWork();
    uint64_t buffer = Malloc(kSlowBytes);
    for (int i = 0; i < count; ++i)
      EXPECT_TRUE(device_->Memset(0, stream, Linear(buffer, kSlowBytes), i == count - 1 ? value : 0x10, 1).ok());
    return buffer;
  }
  int MemsetsForSlowWork() {
    uint64_t buffer = Malloc(kSlowBytes);
    EXPECT_TRUE(device_->Memset(0, 0, Linear(buffer, kSlowBytes), 1, 1).ok());  // Faults the pages in.
    EXPECT_TRUE(device_->StreamSynchronize(0, 0).ok());
    const int probe = 8;
    auto t0 = Clock::now();
    for (int i = 0; i < probe; ++i) EXPECT_TRUE(device_->Memset(0, 0, Linear(buffer, kSlowBytes), i, 1).ok());
    EXPECT_TRUE(device_->StreamSynchronize(0, 0).ok());
    double per = std::max(MsSince(t0) / probe, 0.05);
    EXPECT_TRUE(device_->Free(buffer).ok());
    return std::clamp(static_cast<int>(kSlowWorkMs / per) + 1, 2, 5000);
  }

  // Host-side copies through the BulkIo interface the session uses.
  Status Write(uint64_t stream, const msg::Region& dst, const std::vector<uint8_t>& packed) {
    size_t offset = 0;
    return device_->CopyToDevice(0, stream, dst, [&](const iovec* iov, int count) {
      for (int i = 0; i < count; ++i) {
        std::memcpy(iov[i].iov_base, packed.data() + offset, iov[i].iov_len);
        offset += iov[i].iov_len;
      }
      return Status::Ok();
    });
  }
  Status Read(uint64_t stream, const msg::Region& src, std::vector<uint8_t>* packed) {
    packed->clear();
    return device_->CopyFromDevice(0, stream, src, [&](const iovec* iov, int count) {
      for (int i = 0; i < count; ++i) {
        auto* p = static_cast<uint8_t*>(iov[i].iov_base);
        packed->insert(packed->end(), p, p + iov[i].iov_len);
      }
      return Status::Ok();
    });
  }

  std::unique_ptr<SimDevice> device_;
};

TEST_F(SimDeviceTest, ReportsItsDevicesAndMemory) {
  ASSERT_EQ(device_->devices().size(), 2u);
  EXPECT_EQ(device_->kind(), "sim");
  EXPECT_EQ(device_->devices()[0].name, "AMD Instinct MI250X");
  EXPECT_EQ(device_->devices()[0].total_global_mem, kBudget);
  EXPECT_NE(device_->devices()[0].pci_bus_id, device_->devices()[1].pci_bus_id);
  uint64_t free_bytes = 0, total = 0;
  ASSERT_TRUE(device_->MemInfo(0, &free_bytes, &total).ok());
  EXPECT_EQ(total, kBudget);
  EXPECT_EQ(free_bytes, kBudget);
  EXPECT_EQ(device_->MemInfo(2, &free_bytes, &total).code(), StatusCode::kInvalidDevice);
  EXPECT_EQ(device_->MemInfo(-1, &free_bytes, &total).code(), StatusCode::kInvalidDevice);
}

TEST_F(SimDeviceTest, MemInfoTracksAllocationsPerDevice) {
  uint64_t free_bytes = 0, total = 0;
  uint64_t a = Malloc(10 * kMiB + 1);
  uint64_t b = Malloc(3 * kMiB, 1);
  ASSERT_TRUE(device_->MemInfo(0, &free_bytes, &total).ok());
  EXPECT_EQ(free_bytes, kBudget - 10 * kMiB - 4096);
  ASSERT_TRUE(device_->MemInfo(1, &free_bytes, &total).ok());
  EXPECT_EQ(free_bytes, kBudget - 3 * kMiB);
  ASSERT_TRUE(device_->Free(a).ok());
  ASSERT_TRUE(device_->Free(b).ok());
  ASSERT_TRUE(device_->MemInfo(0, &free_bytes, &total).ok());
  EXPECT_EQ(free_bytes, kBudget);
  ASSERT_TRUE(device_->MemInfo(1, &free_bytes, &total).ok());
  EXPECT_EQ(free_bytes, kBudget);
  uint64_t c = 0;
  EXPECT_EQ(device_->Malloc(0, kBudget + 1, 0, &c).code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(device_->Malloc(2, kMiB, 0, &c).code(), StatusCode::kInvalidDevice);
  EXPECT_EQ(device_->Free(a).code(), StatusCode::kInvalidDevicePointer);  // Twice.
}

TEST_F(SimDeviceTest, MemsetPatternsOnInteriorRanges) {
  const uint64_t size = 64 * 1024;
  uint64_t a = Malloc(size);
  std::memset(Ptr(a), 0xee, size);
  // D8 takes the low byte; D16 and D32 lay the value down little-endian.
  ASSERT_TRUE(device_->Memset(0, 0, Linear(a + 101, 999), 0x1234565a, 1).ok());
  ASSERT_TRUE(device_->Memset(0, 0, Linear(a + 2002, 1000), 0xbeef, 2).ok());
  ASSERT_TRUE(device_->Memset(0, 0, Linear(a + 4004, 1024), 0xdeadbeef, 4).ok());
  ASSERT_TRUE(device_->StreamSynchronize(0, 0).ok());
  std::vector<uint8_t> want(size, 0xee);
  for (uint64_t i = 101; i < 1100; ++i) want[i] = 0x5a;
  for (uint64_t i = 2002; i < 3002; i += 2) want[i] = 0xef, want[i + 1] = 0xbe;
  const uint8_t d32[4] = {0xef, 0xbe, 0xad, 0xde};
  for (uint64_t i = 4004; i < 5028; ++i) want[i] = d32[(i - 4004) % 4];
  EXPECT_EQ(std::vector<uint8_t>(Ptr(a), Ptr(a) + size), want);
}

// A memset of empty rows writes nothing however many rows it names (the
// session fuzzer's hang: 2^64 - 1 of them kept the null stream busy).
TEST_F(SimDeviceTest, MemsetOfEmptyRowsEndsAtOnce) {
  uint64_t a = Malloc(4096);
  std::memset(Ptr(a), 0xee, 4096);
  ASSERT_TRUE(device_->Memset(0, 0, msg::Region{a, 4096, 0, UINT64_MAX}, 0x11, 1).ok());
  ASSERT_TRUE(device_->Memset(0, 0, msg::Region{a, 4096, 0, UINT64_MAX}, 0x11, 4).ok());
  ASSERT_TRUE(device_->StreamSynchronize(0, 0).ok());
  EXPECT_EQ(std::vector<uint8_t>(Ptr(a), Ptr(a) + 4096), std::vector<uint8_t>(4096, 0xee));
}

TEST_F(SimDeviceTest, MemsetRejectsBadArguments) {
  uint64_t a = Malloc(4096);
  std::memset(Ptr(a), 0xee, 4096);
  EXPECT_EQ(device_->Memset(0, 0, Linear(a, 8), 0, 3).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device_->Memset(0, 0, Linear(a, 8), 0, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device_->Memset(0, 0, Linear(a, 6), 0, 4).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device_->Memset(0, 0, Linear(a, 4097), 0, 1).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(device_->Memset(0, 0, Linear(a + 4096, 1), 0, 1).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(device_->Memset(0, 0, Linear(a - 1, 2), 0, 1).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(device_->Memset(0, 0, Linear(0, 2), 0, 1).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(device_->Memset(0, 42, Linear(a, 8), 0, 1).code(), StatusCode::kInvalidHandle);
  EXPECT_EQ(device_->Memset(5, 0, Linear(a, 8), 0, 1).code(), StatusCode::kInvalidDevice);
  ASSERT_TRUE(device_->DeviceSynchronize(0).ok());
  EXPECT_EQ(std::count(Ptr(a), Ptr(a) + 4096, 0xee), 4096);  // Nothing was written.
}

TEST_F(SimDeviceTest, Memset2DTouchesOnlyTheRows) {
  const uint64_t pitch = 256, width = 100, rows = 10, offset = 6;
  uint64_t a = Malloc(pitch * rows + offset);
  std::memset(Ptr(a), 0xee, pitch * rows + offset);
  ASSERT_TRUE(device_->Memset(0, 0, {a + offset, pitch, width, rows}, 0xc0de, 2).ok());
  ASSERT_TRUE(device_->DeviceSynchronize(0).ok());
  for (uint64_t i = 0; i < pitch * rows + offset; ++i) {
    uint64_t in_row = (i - offset) % pitch;
    bool inside = i >= offset && in_row < width;
    uint8_t want = inside ? (in_row % 2 == 0 ? 0xde : 0xc0) : 0xee;
    ASSERT_EQ(Ptr(a)[i], want) << "byte " << i;
  }
}

TEST_F(SimDeviceTest, CopyOnDeviceIncludingOverlap) {
  const uint64_t size = 1 << 16;
  uint64_t a = Malloc(size);
  uint64_t b = Malloc(size);
  auto fill = [&] {
    for (uint64_t i = 0; i < size; ++i) Ptr(a)[i] = static_cast<uint8_t>(i * 31 + 7);
  };
  auto at = [](uint64_t i) { return static_cast<uint8_t>(i * 31 + 7); };
  fill();
  ASSERT_TRUE(device_->CopyOnDevice(0, 0, Linear(b + 10, size - 20), Linear(a + 5, size - 20)).ok());
  ASSERT_TRUE(device_->StreamSynchronize(0, 0).ok());
  for (uint64_t i = 0; i < size - 20; ++i) ASSERT_EQ(Ptr(b)[10 + i], at(5 + i)) << i;
  EXPECT_EQ(Ptr(b)[9], 0);
  EXPECT_EQ(Ptr(b)[size - 10], 0);
  // Overlapping, forwards and backwards: memmove semantics.
  ASSERT_TRUE(device_->CopyOnDevice(0, 0, Linear(a + 1000, 30000), Linear(a, 30000)).ok());
  ASSERT_TRUE(device_->StreamSynchronize(0, 0).ok());
  for (uint64_t i = 0; i < 30000; ++i) ASSERT_EQ(Ptr(a)[1000 + i], at(i)) << i;
  fill();
  ASSERT_TRUE(device_->CopyOnDevice(0, 0, Linear(a, 30000), Linear(a + 1000, 30000)).ok());
  ASSERT_TRUE(device_->StreamSynchronize(0, 0).ok());
  for (uint64_t i = 0; i < 30000; ++i) ASSERT_EQ(Ptr(a)[i], at(1000 + i)) << i;
  EXPECT_EQ(Ptr(a)[30000], at(30000));
}

TEST_F(SimDeviceTest, CopyOnDeviceRejectsBadRegions) {
  uint64_t a = Malloc(8192);
  uint64_t b = Malloc(8192);
  EXPECT_EQ(device_->CopyOnDevice(0, 0, Linear(b, 100), Linear(a, 101)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device_->CopyOnDevice(0, 0, {b, 128, 100, 2}, Linear(a, 200)).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device_->CopyOnDevice(0, 0, Linear(b, 8193), Linear(a, 8193)).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(device_->CopyOnDevice(0, 0, Linear(b, 16), Linear(a + 8190, 16)).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(device_->CopyOnDevice(0, 0, Linear(b + 8190, 16), Linear(a, 16)).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(device_->CopyOnDevice(0, 0, Linear(0, 16), Linear(a, 16)).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(device_->CopyOnDevice(0, 9, Linear(b, 16), Linear(a, 16)).code(), StatusCode::kInvalidHandle);
}

TEST_F(SimDeviceTest, PitchedCopiesInAndOutAndOnDevice) {
  const uint64_t width = 100, rows = 20, src_pitch = 300, dst_pitch = 128;
  uint64_t a = Malloc(src_pitch * rows);
  uint64_t b = Malloc(dst_pitch * rows);
  std::memset(Ptr(a), 0xee, src_pitch * rows);
  std::memset(Ptr(b), 0xdd, dst_pitch * rows);
  std::vector<uint8_t> packed(width * rows);
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<uint8_t>(i % 251);
  ASSERT_TRUE(Write(0, {a, src_pitch, width, rows}, packed).ok());
  for (uint64_t r = 0; r < rows; ++r) {
    ASSERT_EQ(std::memcmp(Ptr(a) + r * src_pitch, packed.data() + r * width, width), 0) << r;
    EXPECT_EQ(Ptr(a)[r * src_pitch + width], 0xee) << r;  // The gap is untouched.
  }
  ASSERT_TRUE(device_->CopyOnDevice(0, 0, {b, dst_pitch, width, rows}, {a, src_pitch, width, rows}).ok());
  std::vector<uint8_t> back;
  ASSERT_TRUE(Read(0, {b, dst_pitch, width, rows}, &back).ok());  // Ordered after the copy.
  EXPECT_EQ(back, packed);
  for (uint64_t r = 0; r < rows; ++r)
    for (uint64_t i = width; i < dst_pitch; ++i) ASSERT_EQ(Ptr(b)[r * dst_pitch + i], 0xdd) << r << "," << i;
}

TEST_F(SimDeviceTest, HostCopiesValidateBeforeMovingBytes) {
  uint64_t a = Malloc(4096);
  bool called = false;
  BulkIo never = [&](const iovec*, int) {
    called = true;
    return Status::Ok();
  };
  EXPECT_EQ(device_->CopyToDevice(0, 0, Linear(a, 4097), never).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(device_->CopyFromDevice(0, 0, Linear(a + 1, 4096), never).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(device_->CopyToDevice(0, 77, Linear(a, 16), never).code(), StatusCode::kInvalidHandle);
  EXPECT_EQ(device_->CopyFromDevice(0, 77, Linear(a, 16), never).code(), StatusCode::kInvalidHandle);
  EXPECT_FALSE(called);
  // A failing BulkIo is passed on.
  Status link = LinkDown("gone");
  EXPECT_EQ(device_->CopyToDevice(0, 0, Linear(a, 16), [&](const iovec*, int) { return link; }).code(),
            StatusCode::kLinkDown);
}

TEST_F(SimDeviceTest, HostCopiesAreOrderedAfterEarlierWorkOnTheirStream) {
  ASSERT_TRUE(device_->StreamCreate(0, 3, 0, 0, {}).ok());
  uint64_t buffer = QueueSlowWork(3, 0x11);
  // The write must land after the memsets, not be overwritten by them.
  ASSERT_TRUE(Write(3, Linear(buffer, 4), {1, 2, 3, 4}).ok());
  std::vector<uint8_t> tail;
  ASSERT_TRUE(Read(3, Linear(buffer + kSlowBytes - 4, 4), &tail).ok());
  EXPECT_EQ(tail, (std::vector<uint8_t>{0x11, 0x11, 0x11, 0x11}));
  ASSERT_TRUE(device_->StreamSynchronize(0, 3).ok());
  EXPECT_EQ(Ptr(buffer)[0], 1);
  EXPECT_EQ(Ptr(buffer)[3], 4);
  EXPECT_EQ(Ptr(buffer)[4], 0x11);
}

// Copies to a stream held at a host callback are staged (the call returns
// at once) and land in order once it runs on. The buffers they wait in are
// kept and handed to later copies: two rounds, the second of sizes the
// first round's buffers fit, each copy's bytes distinct, later copies
// overwriting earlier ones.
TEST_F(SimDeviceTest, StagedCopiesLandInOrderThroughKeptBuffers) {
  ASSERT_TRUE(device_->StreamCreate(0, 4, 0, 0, {}).ok());
  constexpr uint64_t kSpan = 8u << 20;
  const uint64_t dst = Malloc(kSpan);
  std::vector<uint8_t> expect(kSpan, 0);
  ASSERT_TRUE(Write(0, Linear(dst, kSpan), expect).ok());
  uint8_t fill = 1;
  auto stage = [&](uint64_t offset, uint64_t size) {
    std::vector<uint8_t> bytes(size);
    for (uint64_t i = 0; i < size; ++i) bytes[i] = static_cast<uint8_t>(fill + i * 7 + (i >> 16));
    ++fill;
    std::copy(bytes.begin(), bytes.end(), expect.begin() + static_cast<std::ptrdiff_t>(offset));
    return Write(4, Linear(dst + offset, size), bytes);
  };
  const std::vector<std::pair<uint64_t, uint64_t>> rounds[2] = {
      {{0, 3u << 20}, {1u << 20, 5u << 20}, {512u << 10, 2u << 20}, {7u << 20, 512u << 10}, {2u << 20, 6u << 20}},
      {{1u << 20, 4u << 20}, {0, 3u << 20}, {3u << 20, 5u << 20}, {6u << 20, 2u << 20}, {0, 1u << 20}}};
  for (const auto& round : rounds) {
    auto gate = std::make_shared<HostGate>();
    ASSERT_TRUE(device_->StreamHostCallback(0, 4, [](Status) {}, gate).ok());
    for (const auto& [offset, size] : round) ASSERT_TRUE(stage(offset, size).ok());
    EXPECT_EQ(device_->StreamQuery(0, 4).code(), StatusCode::kNotReady);  // Held: nothing has landed yet.
    gate->Open();
    ASSERT_TRUE(device_->StreamSynchronize(0, 4).ok());
    EXPECT_TRUE(std::equal(expect.begin(), expect.end(), Ptr(dst)));
  }
}

TEST_F(SimDeviceTest, WorkOnOneStreamRunsInSubmissionOrder) {
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  const uint64_t size = 16 * kMiB;
  const int steps = 40;
  const uint64_t step = size / (steps + 1);
  uint64_t a = Malloc(size);
  uint64_t b = Malloc(size);
  // Each memset covers a shorter prefix than the one before; the first is
  // the slowest, so work that overtook it would be overwritten.
  for (int k = 1; k <= steps; ++k)
    ASSERT_TRUE(device_->Memset(0, 1, Linear(a, size - (k - 1) * step), static_cast<uint32_t>(k), 1).ok());
  ASSERT_TRUE(device_->CopyOnDevice(0, 1, Linear(b, size), Linear(a, size)).ok());
  ASSERT_TRUE(device_->StreamSynchronize(0, 1).ok());
  for (uint64_t i = 0; i < size; i += 4093) {
    // Offset i was last written by the largest k with i < size - (k-1)*step.
    int k = static_cast<int>(std::min<uint64_t>((size - 1 - i) / step + 1, steps));
    ASSERT_EQ(Ptr(b)[i], k) << "offset " << i;
  }
}

TEST_F(SimDeviceTest, NullStreamWaitsForBlockingStreamsOnly) {
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  uint64_t buffer = QueueSlowWork(1, 0x11);
  // Legacy null stream: runs after everything queued on blocking streams.
  ASSERT_TRUE(device_->Memset(0, 0, Linear(buffer, 16), 0x22, 1).ok());
  ASSERT_TRUE(device_->StreamSynchronize(0, 0).ok());
  EXPECT_TRUE(device_->StreamQuery(0, 1).ok());
  EXPECT_EQ(Ptr(buffer)[0], 0x22);
  EXPECT_EQ(Ptr(buffer)[16], 0x11);
  // A non-blocking stream is not waited for.
  ASSERT_TRUE(device_->StreamCreate(0, 2, kStreamNonBlocking, 0, {}).ok());
  QueueSlowWork(2);
  auto t0 = Clock::now();
  uint64_t small = Malloc(4096);
  ASSERT_TRUE(device_->Memset(0, 0, Linear(small, 16), 0x33, 1).ok());
  ASSERT_TRUE(device_->StreamSynchronize(0, 0).ok());
  EXPECT_EQ(device_->StreamQuery(0, 2).code(), StatusCode::kNotReady) << "after " << MsSince(t0) << " ms";
  EXPECT_EQ(Ptr(small)[0], 0x33);
  ASSERT_TRUE(device_->DeviceSynchronize(0).ok());
  EXPECT_TRUE(device_->StreamQuery(0, 2).ok());
}

// The replay thread (this test's) never waits for the device: null-stream
// work behind a busy blocking stream is queued at once, and synchronizing
// calls complete later, on their own, while other streams' work is queued
// and runs meanwhile.
TEST_F(SimDeviceTest, SynchronizingCallsCompleteWithoutBlockingTheCaller) {
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  ASSERT_TRUE(device_->StreamCreate(0, 2, kStreamNonBlocking, 0, {}).ok());
  ASSERT_TRUE(device_->EventCreate(0, 7, 0).ok());
  uint64_t buffer = QueueSlowWork(1, 0x55);
  ASSERT_TRUE(device_->EventRecord(7, 1).ok());
  auto t0 = Clock::now();
  ASSERT_TRUE(device_->Memset(0, 0, Linear(buffer, 16), 0x66, 1).ok());  // Ordered after stream 1.

  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::string> order;
  auto note = [&](const char* what) {
    return [&, what](Status st) {
      EXPECT_TRUE(st.ok()) << what << ": " << st.ToString();
      std::lock_guard lock(mu);
      order.push_back(what);
      cv.notify_all();
    };
  };
  device_->StreamSynchronizeAsync(0, 1, note("stream 1"));
  device_->EventSynchronizeAsync(7, note("event 7"));
  device_->DeviceSynchronizeAsync(0, note("device 0"));
  // Work on the non-blocking stream is queued and done meanwhile.
  uint64_t other = Malloc(4096);
  ASSERT_TRUE(device_->Memset(0, 2, Linear(other, 64), 0x77, 1).ok());
  device_->StreamSynchronizeAsync(0, 2, note("stream 2"));
  EXPECT_LT(MsSince(t0), kSlowWorkMs / 2) << "a call waited for the device";
  {
    std::unique_lock lock(mu);
    ASSERT_TRUE(cv.wait_for(lock, std::chrono::seconds(20), [&] { return order.size() == 4; }));
    EXPECT_EQ(order.front(), "stream 2") << "the idle stream's synchronization waited for the busy one";
  }
  EXPECT_EQ(Ptr(other)[63], 0x77);
  EXPECT_EQ(Ptr(buffer)[0], 0x66);
  EXPECT_EQ(Ptr(buffer)[16], 0x55);
  device_->StreamSynchronizeAsync(0, 99, [](Status st) { EXPECT_EQ(st.code(), StatusCode::kInvalidHandle); });
  device_->EventSynchronizeAsync(99, [](Status st) { EXPECT_EQ(st.code(), StatusCode::kInvalidHandle); });
  device_->DeviceSynchronizeAsync(5, [](Status st) { EXPECT_EQ(st.code(), StatusCode::kInvalidDevice); });
}

TEST_F(SimDeviceTest, StreamQueryAndSynchronize) {
  ASSERT_TRUE(device_->StreamCreate(0, 5, 0, 0, {}).ok());
  EXPECT_TRUE(device_->StreamQuery(0, 5).ok());
  QueueSlowWork(5);
  EXPECT_EQ(device_->StreamQuery(0, 5).code(), StatusCode::kNotReady);
  ASSERT_TRUE(device_->StreamSynchronize(0, 5).ok());
  EXPECT_TRUE(device_->StreamQuery(0, 5).ok());
  // Destroying a stream with queued work returns at once (as HIP) and the
  // work still runs; a device synchronization waits for it.
  uint64_t buffer = QueueSlowWork(5, 0x44);
  auto t0 = Clock::now();
  ASSERT_TRUE(device_->StreamDestroy(5).ok());
  EXPECT_LT(MsSince(t0), 200) << "StreamDestroy waited for the stream's work";
  EXPECT_EQ(device_->StreamQuery(0, 5).code(), StatusCode::kInvalidHandle);
  ASSERT_TRUE(device_->DeviceSynchronize(0).ok());
  EXPECT_EQ(Ptr(buffer)[kSlowBytes - 1], 0x44);
}

TEST_F(SimDeviceTest, EventQueryBeforeAndAfterCompletion) {
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  ASSERT_TRUE(device_->EventCreate(0, 10, 0).ok());
  EXPECT_TRUE(device_->EventQuery(10).ok());  // Never recorded: complete.
  QueueSlowWork(1);
  ASSERT_TRUE(device_->EventRecord(10, 1).ok());
  EXPECT_EQ(device_->EventQuery(10).code(), StatusCode::kNotReady);
  ASSERT_TRUE(device_->EventSynchronize(10).ok());
  EXPECT_TRUE(device_->EventQuery(10).ok());
}

TEST_F(SimDeviceTest, ElapsedTimeMeasuresTheWorkBetweenRecords) {
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  ASSERT_TRUE(device_->EventCreate(0, 1, 0).ok());
  ASSERT_TRUE(device_->EventCreate(0, 2, 0).ok());
  float ms = -1;
  EXPECT_EQ(device_->EventElapsedTime(1, 2, &ms).code(), StatusCode::kInvalidHandle);  // Never recorded.
  auto t0 = Clock::now();
  ASSERT_TRUE(device_->EventRecord(1, 1).ok());
  QueueSlowWork(1);
  ASSERT_TRUE(device_->EventRecord(2, 1).ok());
  EXPECT_EQ(device_->EventElapsedTime(1, 2, &ms).code(), StatusCode::kNotReady);
  ASSERT_TRUE(device_->EventSynchronize(2).ok());
  double wall = MsSince(t0);
  ASSERT_TRUE(device_->EventElapsedTime(1, 2, &ms).ok());
  // The records bracket the memsets, which take nearly all of the wall time.
  EXPECT_GT(ms, 0);
  EXPECT_LE(ms, wall + 0.01);
  EXPECT_GE(ms, 0.5 * wall) << "wall " << wall << " ms";
  float back = 0;
  ASSERT_TRUE(device_->EventElapsedTime(2, 1, &back).ok());
  EXPECT_FLOAT_EQ(back, -ms);
  // Same event twice: zero.
  ASSERT_TRUE(device_->EventElapsedTime(1, 1, &back).ok());
  EXPECT_EQ(back, 0);
}

TEST_F(SimDeviceTest, ElapsedTimeOnEventsWithoutTimingIsAnInvalidHandle) {
  ASSERT_TRUE(device_->EventCreate(0, 1, 0).ok());
  ASSERT_TRUE(device_->EventCreate(0, 2, kEventDisableTiming).ok());
  ASSERT_TRUE(device_->EventRecord(1, 0).ok());
  ASSERT_TRUE(device_->EventRecord(2, 0).ok());
  ASSERT_TRUE(device_->EventSynchronize(2).ok());
  float ms = 0;
  EXPECT_EQ(device_->EventElapsedTime(1, 2, &ms).code(), StatusCode::kInvalidHandle);
  EXPECT_EQ(device_->EventElapsedTime(2, 1, &ms).code(), StatusCode::kInvalidHandle);
  // Such events still synchronize and query normally.
  EXPECT_TRUE(device_->EventQuery(2).ok());
}

TEST_F(SimDeviceTest, SynchronizingANeverRecordedEventReturnsAtOnce) {
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  ASSERT_TRUE(device_->EventCreate(0, 1, 0).ok());
  QueueSlowWork(1);
  auto t0 = Clock::now();
  ASSERT_TRUE(device_->EventSynchronize(1).ok());
  EXPECT_LT(MsSince(t0), 100);
  EXPECT_EQ(device_->StreamQuery(0, 1).code(), StatusCode::kNotReady);
  // Waiting on it from a stream is a no-op too.
  ASSERT_TRUE(device_->StreamCreate(0, 2, 0, 0, {}).ok());
  ASSERT_TRUE(device_->StreamWaitEvent(0, 2, 1, 0).ok());
  ASSERT_TRUE(device_->StreamSynchronize(0, 2).ok());
  EXPECT_EQ(device_->StreamQuery(0, 1).code(), StatusCode::kNotReady);
}

TEST_F(SimDeviceTest, StreamWaitEventOrdersWorkAcrossStreams) {
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  ASSERT_TRUE(device_->StreamCreate(0, 2, 0, 0, {}).ok());
  ASSERT_TRUE(device_->EventCreate(0, 7, kEventDisableTiming).ok());
  uint64_t out = Malloc(4096);
  uint64_t buffer = QueueSlowWork(1, 0x55);
  ASSERT_TRUE(device_->EventRecord(7, 1).ok());
  ASSERT_TRUE(device_->StreamWaitEvent(0, 2, 7, 0).ok());
  // The last page is written last: without the wait, this copy reads zeros.
  ASSERT_TRUE(device_->CopyOnDevice(0, 2, Linear(out, 4096), Linear(buffer + kSlowBytes - 4096, 4096)).ok());
  ASSERT_TRUE(device_->StreamSynchronize(0, 2).ok());
  EXPECT_EQ(std::count(Ptr(out), Ptr(out) + 4096, 0x55), 4096);
}

// IPC events between two sims of one process (two sessions' devices): the
// opened event follows the exporter's record, and the exporter sees the
// importer's; destroyed and foreign handles are refused.
TEST_F(SimDeviceTest, IpcEventsFollowRecordsOfEitherSession) {
  constexpr uint32_t kInterprocess = 0x4;  // hipEventInterprocess.
  SimOptions options;
  options.memory_bytes = kBudget;
  std::unique_ptr<SimDevice> other;
  ASSERT_TRUE(SimDevice::Create(options, &other).ok());
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  ASSERT_TRUE(device_->EventCreate(0, 7, kEventDisableTiming | kInterprocess).ok());
  ASSERT_TRUE(device_->EventCreate(0, 8, kEventDisableTiming).ok());
  Device::IpcEventHandle handle{};
  EXPECT_EQ(device_->IpcGetEventHandle(8, &handle).code(), StatusCode::kInvalidArgument);  // Not interprocess.
  const uint64_t slow = QueueSlowWork(1);
  ASSERT_TRUE(device_->EventRecord(7, 1).ok());
  ASSERT_TRUE(device_->IpcGetEventHandle(7, &handle).ok());
  ASSERT_TRUE(other->IpcOpenEventHandle(0, 9, handle).ok());
  EXPECT_EQ(other->EventQuery(9).code(), StatusCode::kNotReady);
  ASSERT_TRUE(other->EventSynchronize(9).ok());
  // It waited for the exporter's work: the last of it (the final memset's
  // bytes) is in place. (A wall-clock bound here failed on a loaded machine:
  // the work's length is calibrated once, under whatever load there was.)
  EXPECT_EQ(Ptr(slow)[kSlowBytes - 1], 0x77);
  EXPECT_TRUE(device_->EventQuery(7).ok());
  // The importer records; the exporter's query and wait follow that record.
  ASSERT_TRUE(other->StreamCreate(0, 1, 0, 0, {}).ok());
  auto gate = std::make_shared<HostGate>();
  ASSERT_TRUE(other->StreamHostCallback(0, 1, [](Status) {}, gate).ok());
  ASSERT_TRUE(other->EventRecord(9, 1).ok());
  EXPECT_EQ(device_->EventQuery(7).code(), StatusCode::kNotReady);
  gate->Open();
  ASSERT_TRUE(device_->EventSynchronize(7).ok());
  EXPECT_TRUE(other->EventQuery(9).ok());
  // A forged handle, and the handle of a destroyed event.
  Device::IpcEventHandle forged = handle;
  forged[20] ^= 1;
  EXPECT_EQ(other->IpcOpenEventHandle(0, 10, forged).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(other->IpcOpenEventHandle(0, 9, handle).code(), StatusCode::kInvalidArgument);  // Id in use.
  ASSERT_TRUE(other->EventDestroy(9).ok());
  ASSERT_TRUE(device_->EventDestroy(7).ok());
  EXPECT_EQ(other->IpcOpenEventHandle(0, 11, handle).code(), StatusCode::kInvalidArgument);
}

// A wait refers to the record the event had when the wait was queued;
// recording the event again elsewhere must not release it early, and the
// event's time is that of its latest record.
TEST_F(SimDeviceTest, ReRecordingAnEventOnAnotherStream) {
  for (uint64_t s : {1, 2, 3}) ASSERT_TRUE(device_->StreamCreate(0, s, 0, 0, {}).ok());
  ASSERT_TRUE(device_->EventCreate(0, 7, 0).ok());
  ASSERT_TRUE(device_->EventCreate(0, 8, 0).ok());
  uint64_t out = Malloc(4096);
  ASSERT_TRUE(device_->EventRecord(8, 2).ok());
  uint64_t buffer = QueueSlowWork(1, 0x66);
  ASSERT_TRUE(device_->EventRecord(7, 1).ok());     // Behind the slow work.
  ASSERT_TRUE(device_->StreamWaitEvent(0, 3, 7, 0).ok());
  ASSERT_TRUE(device_->EventRecord(7, 2).ok());     // Completes at once.
  ASSERT_TRUE(device_->CopyOnDevice(0, 3, Linear(out, 4096), Linear(buffer + kSlowBytes - 4096, 4096)).ok());
  ASSERT_TRUE(device_->StreamSynchronize(0, 2).ok());
  EXPECT_TRUE(device_->EventQuery(7).ok());  // Its latest record has completed.
  float before = -1;
  ASSERT_TRUE(device_->EventElapsedTime(8, 7, &before).ok());
  ASSERT_TRUE(device_->StreamSynchronize(0, 3).ok());
  EXPECT_EQ(std::count(Ptr(out), Ptr(out) + 4096, 0x66), 4096) << "stream 3 ran before the record it waited for";
  ASSERT_TRUE(device_->DeviceSynchronize(0).ok());
  float after = -1;
  ASSERT_TRUE(device_->EventElapsedTime(8, 7, &after).ok());
  EXPECT_EQ(after, before) << "an older record overwrote the event's time";
}

TEST_F(SimDeviceTest, UnknownStreamAndEventIdsAreInvalidHandles) {
  const StatusCode bad = StatusCode::kInvalidHandle;
  uint64_t a = Malloc(4096);
  float ms;
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  ASSERT_TRUE(device_->EventCreate(0, 1, 0).ok());
  EXPECT_EQ(device_->StreamSynchronize(0, 99).code(), bad);
  EXPECT_EQ(device_->StreamQuery(0, 99).code(), bad);
  EXPECT_EQ(device_->StreamDestroy(99).code(), bad);
  EXPECT_EQ(device_->StreamWaitEvent(0, 99, 1, 0).code(), bad);
  EXPECT_EQ(device_->StreamWaitEvent(0, 1, 99, 0).code(), bad);
  EXPECT_EQ(device_->EventRecord(99, 1).code(), bad);
  EXPECT_EQ(device_->EventRecord(1, 99).code(), bad);
  EXPECT_EQ(device_->EventSynchronize(99).code(), bad);
  EXPECT_EQ(device_->EventQuery(99).code(), bad);
  EXPECT_EQ(device_->EventDestroy(99).code(), bad);
  EXPECT_EQ(device_->EventElapsedTime(1, 99, &ms).code(), bad);
  EXPECT_EQ(device_->EventElapsedTime(99, 1, &ms).code(), bad);
  EXPECT_EQ(device_->Memset(0, 99, Linear(a, 4), 0, 1).code(), bad);
  EXPECT_EQ(device_->CopyOnDevice(0, 99, Linear(a, 4), Linear(a + 8, 4)).code(), bad);
  // Destroyed handles are unknown too.
  ASSERT_TRUE(device_->StreamDestroy(1).ok());
  ASSERT_TRUE(device_->EventDestroy(1).ok());
  EXPECT_EQ(device_->StreamSynchronize(0, 1).code(), bad);
  EXPECT_EQ(device_->EventQuery(1).code(), bad);
  // Ids are the client's to choose, but not twice, and not 0.
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  EXPECT_EQ(device_->StreamCreate(0, 1, 0, 0, {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device_->StreamCreate(0, 0, 0, 0, {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device_->StreamCreate(0, 2, 0x100, 0, {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device_->StreamCreate(9, 2, 0, 0, {}).code(), StatusCode::kInvalidDevice);
  ASSERT_TRUE(device_->EventCreate(0, 1, 0).ok());
  EXPECT_EQ(device_->EventCreate(0, 1, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device_->EventCreate(0, 0, 0).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device_->EventCreate(9, 2, 0).code(), StatusCode::kInvalidDevice);
}

TEST_F(SimDeviceTest, FreeReleasesTheMemoryAfterTheQueuedWorkWithoutWaiting) {
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  uint64_t free0 = 0, total = 0;
  ASSERT_TRUE(device_->MemInfo(0, &free0, &total).ok());
  uint64_t buffer = QueueSlowWork(1);
  // The replay goes on at once; unmapping under the running memsets would
  // crash this process, so the pages stay until the stream is past them.
  auto t0 = Clock::now();
  ASSERT_TRUE(device_->Free(buffer).ok());
  EXPECT_LT(MsSince(t0), 200) << "Free waited for the device";
  EXPECT_EQ(device_->StreamQuery(0, 1).code(), StatusCode::kNotReady);
  uint64_t free1 = 0;
  ASSERT_TRUE(device_->MemInfo(0, &free1, &total).ok());
  EXPECT_EQ(free1, free0) << "freed memory counts as free at once";
  EXPECT_EQ(device_->Free(buffer).code(), StatusCode::kInvalidDevicePointer) << "a second free";
  EXPECT_EQ(device_->Memset(0, 0, Linear(buffer, 16), 1, 1).code(), StatusCode::kInvalidDevicePointer)
      << "new work on freed memory";
  ASSERT_TRUE(device_->DeviceSynchronize(0).ok());
  EXPECT_TRUE(device_->StreamQuery(0, 1).ok());
}

TEST_F(SimDeviceTest, DeviceResetFreesEverythingOfThatDeviceOnly) {
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  ASSERT_TRUE(device_->StreamCreate(1, 2, 0, 0, {}).ok());
  ASSERT_TRUE(device_->EventCreate(0, 1, 0).ok());
  ASSERT_TRUE(device_->EventCreate(1, 2, 0).ok());
  uint64_t a = Malloc(100 * kMiB, 0);
  uint64_t b = Malloc(kMiB, 0);
  uint64_t c = Malloc(kMiB, 1);
  Ptr(c)[0] = 0x42;
  uint64_t free_bytes = 0, total = 0;
  ASSERT_TRUE(device_->MemInfo(0, &free_bytes, &total).ok());
  EXPECT_EQ(free_bytes, total - 101 * kMiB);
  ASSERT_TRUE(device_->DeviceReset(0).ok());
  ASSERT_TRUE(device_->MemInfo(0, &free_bytes, &total).ok());
  EXPECT_EQ(free_bytes, total);
  EXPECT_EQ(device_->CheckRegion(Linear(a, 1)).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(device_->CheckRegion(Linear(b, 1)).code(), StatusCode::kInvalidDevicePointer);
  EXPECT_EQ(device_->StreamSynchronize(0, 1).code(), StatusCode::kInvalidHandle);
  EXPECT_EQ(device_->EventQuery(1).code(), StatusCode::kInvalidHandle);
  // Device 1 keeps its memory, stream and event.
  ASSERT_TRUE(device_->MemInfo(1, &free_bytes, &total).ok());
  EXPECT_EQ(free_bytes, total - kMiB);
  EXPECT_TRUE(device_->CheckRegion(Linear(c, kMiB)).ok());
  EXPECT_EQ(Ptr(c)[0], 0x42);
  EXPECT_TRUE(device_->StreamSynchronize(0, 2).ok());
  EXPECT_TRUE(device_->EventQuery(2).ok());
  // Device 0 is usable again, ids included.
  ASSERT_TRUE(device_->StreamCreate(0, 1, 0, 0, {}).ok());
  uint64_t d = Malloc(kBudget, 0);
  EXPECT_NE(d, 0u);
}

// A texture object is device memory holding the HiprTwinTexture that twin
// code samples through, filled from the request's HIP descriptions; bad
// requests and memory outside this session are refused, and a destroyed
// handle is unknown.
TEST_F(SimDeviceTest, TextureObjectsDescribeTheirMemory) {
  uint64_t base = 0;
  ASSERT_TRUE(device_->Malloc(0, 256 * 4, 0, &base).ok());
  msg::TextureCreateRequest r;
  r.shape = msg::kTexturePitch2D;
  r.memory = msg::Region{base, 256, 10 * 8, 4};  // 10 float2 per row, 4 rows.
  r.channel_bits = {32, 32, 0, 0};
  r.channel_kind = 2;     // hipChannelFormatKindFloat.
  r.address_mode = {3, 1, 1};  // Border, clamp.
  r.filter_mode = 1;      // Linear.
  r.normalized_coords = 1;
  r.border_color = {0.5f, 0, 0, 1};
  uint64_t handle = 0;
  ASSERT_TRUE(device_->CreateTexture(r, &handle).ok());
  ASSERT_NE(handle, 0u);
  HiprTwinTexture t;
  std::memcpy(&t, reinterpret_cast<const void*>(handle), sizeof t);
  EXPECT_EQ(t.magic, HIPR_TWIN_TEXTURE_MAGIC);
  EXPECT_EQ(t.address, base);
  EXPECT_EQ(t.pitch, 256u);
  EXPECT_EQ(t.width, 10u);
  EXPECT_EQ(t.height, 4u);
  EXPECT_EQ(t.channels, 2u);
  EXPECT_EQ(t.channel_bits, 32u);
  EXPECT_EQ(t.address_mode[0], 3);
  EXPECT_EQ(t.filter_mode, 1);
  EXPECT_EQ(t.normalized_coords, 1);
  EXPECT_EQ(t.border_color[0], 0.5f);

  msg::TextureCreateRequest bad = r;
  bad.channel_bits = {32, 16, 0, 0};
  EXPECT_EQ(device_->CreateTexture(bad, &handle).code(), StatusCode::kInvalidArgument);
  bad = r;
  bad.memory.height = 1 << 20;  // Past the allocation (rounded up to the sim's granularity).
  EXPECT_EQ(device_->CreateTexture(bad, &handle).code(), StatusCode::kInvalidDevicePointer);
  bad = r;
  bad.channel_kind = 1;  // Unsigned, read as integers, filtered: refused.
  EXPECT_EQ(device_->CreateTexture(bad, &handle).code(), StatusCode::kInvalidArgument);
  bad = r;
  bad.shape = msg::kTextureLinear;  // Linear memory has one row.
  EXPECT_EQ(device_->CreateTexture(bad, &handle).code(), StatusCode::kInvalidArgument);

  uint64_t made = 0;
  ASSERT_TRUE(device_->CreateTexture(r, &made).ok());
  EXPECT_TRUE(device_->DestroyTexture(made).ok());
  EXPECT_EQ(device_->DestroyTexture(made).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(device_->DestroyTexture(base).code(), StatusCode::kInvalidArgument);  // Not a texture.
}

}  // namespace
}  // namespace hipr::worker::sim

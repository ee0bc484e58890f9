// hipr-worker's shm host segment seen from the wire, with RawClient (no
// stub): copies may name only ranges the client registered (kHostRegister),
// hostile ranges are refused with a clear error, and the session lives on.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <string>
#include <vector>

#include "tests/support/raw_client.h"

namespace hipr::test {
namespace {

using wire::Op;

constexpr int kHipSuccess = 0;
constexpr int kHipErrorInvalidValue = 1;
constexpr uint64_t kKiB = 1024;

std::string SocketPath() { return "/tmp/hipr-shm-test-" + std::to_string(getpid()) + ".sock"; }

int HostRange(RawClient& c, Op op, uint64_t offset, uint64_t bytes) {
  msg::CallReply r;
  Status st = c.Call(op, msg::HostRangeRequest{offset, bytes}, &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return st.ok() ? r.error : -1;
}

// A copy naming segment rows at `offset`, `pitch` apart, as big as `dev`.
int ToDevice(RawClient& c, const msg::Region& dev, uint64_t offset, uint64_t pitch) {
  msg::CallReply r;
  Status st = c.Call(Op::kCopyToDevice, msg::CopyToDeviceRequest{0, 0, dev, true, msg::SharedHost{true, offset, pitch}},
                     &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return st.ok() ? r.error : -1;
}
int FromDevice(RawClient& c, const msg::Region& dev, uint64_t offset, uint64_t pitch) {
  msg::CallReply r;
  Status st = c.Call(Op::kCopyFromDevice, msg::CopyFromDeviceRequest{0, 0, dev, msg::SharedHost{true, offset, pitch}},
                     &r);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return st.ok() ? r.error : -1;
}

TEST(WorkerShm, CopiesNameOnlyRegisteredRangesOfTheHostSegment) {
  const std::string path = SocketPath();
  WorkerProcess worker({"--listen-unix", path, "--shm-host-bytes", "1M"});
  std::unique_ptr<RawClient> c;
  Status st = RawClient::Connect("unix:" + path, &c);
  ASSERT_TRUE(st.ok()) << st.ToString();
  const Connection::SharedRegion seg = c->conn().SharedHostRegion();
  ASSERT_EQ(seg.bytes, 1024 * kKiB);
  constexpr uint64_t n = 64 * kKiB;
  uint64_t dev = 0;
  ASSERT_EQ(c->Malloc(n, &dev), kHipSuccess);
  const msg::Region whole{dev, n, n, 1};

  // Nothing registered yet: the copy is refused, both ways.
  for (uint64_t i = 0; i < n; ++i) seg.base[i] = static_cast<uint8_t>(i * 7 + 3);
  EXPECT_EQ(ToDevice(*c, whole, 0, 0), kHipErrorInvalidValue);
  EXPECT_EQ(FromDevice(*c, whole, 0, 0), kHipErrorInvalidValue);

  // Two ranges side by side; hostile ones refused.
  ASSERT_EQ(HostRange(*c, Op::kHostRegister, 0, n), kHipSuccess);
  ASSERT_EQ(HostRange(*c, Op::kHostRegister, n, n), kHipSuccess);
  EXPECT_EQ(HostRange(*c, Op::kHostRegister, n / 2, n), kHipErrorInvalidValue) << "overlap";
  EXPECT_EQ(HostRange(*c, Op::kHostRegister, 2 * n + 1, 4 * kKiB), kHipErrorInvalidValue) << "not a page";
  EXPECT_EQ(HostRange(*c, Op::kHostRegister, 2 * n, 0), kHipErrorInvalidValue) << "empty";
  EXPECT_EQ(HostRange(*c, Op::kHostRegister, 1020 * kKiB, 8 * kKiB), kHipErrorInvalidValue) << "past the end";
  EXPECT_EQ(HostRange(*c, Op::kHostRegister, ~uint64_t{0} - 4095, 4 * kKiB), kHipErrorInvalidValue) << "wraps";

  // Segment -> device -> segment, through registered ranges: every byte.
  ASSERT_EQ(ToDevice(*c, whole, 0, 0), kHipSuccess);
  ASSERT_EQ(FromDevice(*c, whole, n, 0), kHipSuccess);
  EXPECT_EQ(std::memcmp(seg.base, seg.base + n, n), 0);
  std::vector<uint8_t> back(n);
  ASSERT_EQ(c->Read(dev, back.data(), n), kHipSuccess);  // Over the rings, as bulk.
  EXPECT_EQ(std::memcmp(back.data(), seg.base, n), 0);
  // Pitched: 16 rows of 1000 bytes from host rows 4000 apart, into device rows 1024 apart.
  const msg::Region rows{dev, 1024, 1000, 16};
  ASSERT_EQ(FromDevice(*c, rows, n, 4000), kHipSuccess);
  for (uint64_t r = 0; r < 16; ++r)
    ASSERT_EQ(std::memcmp(seg.base + n + r * 4000, back.data() + r * 1024, 1000), 0) << "row " << r;

  // Rows that leave their range, even into the neighbouring one.
  EXPECT_EQ(ToDevice(*c, whole, 4 * kKiB, 0), kHipErrorInvalidValue);
  EXPECT_EQ(FromDevice(*c, rows, n - 8 * kKiB, 4000), kHipErrorInvalidValue);

  // Unregistered: exactly, once; refused from then on.
  EXPECT_EQ(HostRange(*c, Op::kHostUnregister, 0, n / 2), kHipErrorInvalidValue);
  ASSERT_EQ(HostRange(*c, Op::kHostUnregister, 0, n), kHipSuccess);
  EXPECT_EQ(HostRange(*c, Op::kHostUnregister, 0, n), kHipErrorInvalidValue);
  EXPECT_EQ(ToDevice(*c, whole, 0, 0), kHipErrorInvalidValue);
  EXPECT_EQ(FromDevice(*c, whole, n, 0), kHipSuccess) << "the other range is still registered";

  // The session survived all of it.
  EXPECT_EQ(c->Synchronize(), kHipSuccess);
  EXPECT_EQ(c->Free(dev), kHipSuccess);
}

TEST(WorkerShm, ATcpSessionHasNoHostSegmentToRegister) {
  WorkerProcess worker;
  std::unique_ptr<RawClient> c;
  ASSERT_TRUE(RawClient::Connect(worker.endpoint(), &c).ok());
  EXPECT_EQ(HostRange(*c, Op::kHostRegister, 0, 4 * kKiB), kHipErrorInvalidValue);
  EXPECT_EQ(HostRange(*c, Op::kHostUnregister, 0, 4 * kKiB), kHipErrorInvalidValue);
  uint64_t dev = 0;
  ASSERT_EQ(c->Malloc(4096, &dev), kHipSuccess);
  EXPECT_EQ(ToDevice(*c, msg::Region{dev, 4096, 4096, 1}, 0, 0), kHipErrorInvalidValue);
  EXPECT_EQ(c->Synchronize(), kHipSuccess);
}

}  // namespace
}  // namespace hipr::test

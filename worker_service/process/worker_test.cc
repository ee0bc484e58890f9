// End-to-end tests of hipr-worker with the sim device, driven over real
// sockets by RawClient (no stub, so the worker's own checks are what is
// tested): bulk copies, isolation between sessions, hostile frames, and what
// happens when clients, session processes or the worker itself die.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <functional>
#include <limits>
#include <ostream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/raw_client.h"

namespace hipr {
// Readable StatusCode values in failure messages (found by ADL).
static void PrintTo(StatusCode code, std::ostream* os) { *os << StatusCodeName(code); }
}  // namespace hipr

namespace hipr::test {
namespace {

using Clock = std::chrono::steady_clock;
using wire::Op;

// HIP error numbers as they travel in replies.
constexpr int kHipSuccess = 0;

// Generated-call ids (FNV-1a of the name; shim_gen/gen_remoting.py): they
// never change, so a test may spell them.
constexpr uint32_t kFnDeviceGetLimit = 0x21dc569f;
constexpr uint32_t kFnDeviceGetSharedMemConfig = 0xd349ae3c;
// Argument lists a hostile client could send for hipDeviceGetLimit(limit).
struct ThreeArgs {
  uint32_t a = 2, b = 0, c = 0;
  HIPR_FIELDS(a, b, c)
};
struct StringArg {
  std::string limit = "heap";
  HIPR_FIELDS(limit)
};
struct NoArgs {
  HIPR_FIELDS()
};
struct SharedMemConfigReply {
  uint32_t config = 0;
  HIPR_FIELDS(config)
};
constexpr int kHipErrorInvalidValue = 1;
constexpr int kHipErrorOutOfMemory = 2;
constexpr int kHipErrorInvalidHandle = 400;

constexpr uint64_t kMiB = 1ull << 20;
constexpr uint64_t kBudget = 2048 * kMiB;  // WorkerProcess passes --sim-memory 2G.

std::vector<uint8_t> Pattern(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (size_t i = 0; i < n; ++i) {
    x = x * 1664525u + 1013904223u;
    v[i] = static_cast<uint8_t>(x >> 24);
  }
  return v;
}

double MsSince(Clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

// Polls `done` every 10 ms for up to `timeout_ms`.
bool WaitUntil(const std::function<bool()>& done, int timeout_ms = 5000) {
  auto t0 = Clock::now();
  while (!done()) {
    if (MsSince(t0) > timeout_ms) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

bool ProcessExists(pid_t pid) { return kill(pid, 0) == 0 || errno != ESRCH; }

std::unique_ptr<RawClient> Connect(const WorkerProcess& worker) {
  std::unique_ptr<RawClient> c;
  Status st = RawClient::Connect(worker.endpoint(), &c);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return c;
}

std::unique_ptr<RawClient> ConnectBare(const WorkerProcess& worker) {
  std::unique_ptr<RawClient> c;
  Status st = RawClient::ConnectBare(worker.endpoint(), &c);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return c;
}

Status SendHeader(RawClient& c, uint32_t magic, uint16_t version, uint16_t op, uint32_t id, uint32_t length) {
  uint8_t raw[sizeof(wire::FrameHeader)];
  wire::EncodeHeader(wire::FrameHeader{magic, version, op, id, length}, raw);
  return c.conn().SendAll(raw, sizeof raw);
}

// Sends a frame whose payload is `payload`, as is.
Status SendRawFrame(RawClient& c, uint16_t op, const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> bytes(sizeof(wire::FrameHeader));
  wire::EncodeHeader(wire::MakeHeader(op, c.NextId(), static_cast<uint32_t>(payload.size())), bytes.data());
  bytes.insert(bytes.end(), payload.begin(), payload.end());
  return c.conn().SendAll(bytes.data(), bytes.size());
}

struct SessionEnd {
  bool ended = false;      // The worker closed the connection.
  bool fatal = false;      // ...after a kFatal frame.
  StatusCode status = StatusCode::kOk;
  std::string message;     // The kFatal message.
  std::string detail;      // For failure messages.
};

// Reads until the worker closes the connection (or `timeout_ms` passes),
// noting any kFatal on the way.
SessionEnd AwaitSessionEnd(RawClient& c, int timeout_ms = 5000) {
  SessionEnd end;
  auto t0 = Clock::now();
  for (;;) {
    int left = timeout_ms - static_cast<int>(MsSince(t0));
    if (left <= 0) {
      end.detail = "connection still open after " + std::to_string(timeout_ms) + " ms";
      return end;
    }
    wire::FrameHeader h;
    std::vector<uint8_t> body;
    Status st = c.ReceiveAny(&h, &body, left);
    if (st.code() == StatusCode::kTimeout) continue;
    if (!st.ok()) {  // Closed (or reset, or unreadable after the end).
      end.ended = true;
      end.detail = st.ToString();
      return end;
    }
    if (h.op == static_cast<uint16_t>(Op::kFatal)) {
      msg::Fatal fatal;
      EXPECT_TRUE(codec::DecodeBody(body.data(), body.size(), &fatal).ok());
      end.fatal = true;
      end.status = fatal.status;
      end.message = fatal.message;
    }
  }
}

// A session that must keep working while others misbehave: it holds one
// allocation with a known pattern.
class LiveSession {
 public:
  explicit LiveSession(const WorkerProcess& worker) : client_(Connect(worker)), pattern_(Pattern(kSize, 99)) {
    EXPECT_EQ(client_->Malloc(kSize, &address_), kHipSuccess);
    EXPECT_EQ(client_->Write(address_, pattern_.data(), kSize), kHipSuccess);
  }
  // Reads the pattern back and does a fresh allocation round trip.
  void ExpectWorking(const char* when) {
    SCOPED_TRACE(when);
    std::vector<uint8_t> back(kSize);
    ASSERT_EQ(client_->Read(address_, back.data(), kSize), kHipSuccess) << client_->last_status().ToString();
    EXPECT_EQ(back, pattern_);
    uint64_t a = 0;
    ASSERT_EQ(client_->Malloc(4096, &a), kHipSuccess);
    std::vector<uint8_t> in = Pattern(4096, ++round_), out(4096);
    ASSERT_EQ(client_->Write(a, in.data(), in.size()), kHipSuccess);
    ASSERT_EQ(client_->Read(a, out.data(), out.size()), kHipSuccess);
    EXPECT_EQ(in, out);
    EXPECT_EQ(client_->Free(a), kHipSuccess);
  }
  RawClient& client() { return *client_; }

 private:
  static constexpr uint64_t kSize = 3 * kMiB + 5;
  std::unique_ptr<RawClient> client_;
  std::vector<uint8_t> pattern_;
  uint64_t address_ = 0;
  uint32_t round_ = 0;
};

// ---- Bulk copies -----------------------------------------------------------

class RoundTripTest : public ::testing::TestWithParam<std::vector<std::string>> {};

TEST_P(RoundTripTest, SizesAroundChunkBoundariesAreByteExact) {
  WorkerProcess worker(GetParam());
  auto c = Connect(worker);
  ASSERT_TRUE(c);
  const uint64_t chunk = c->hello().chunk_bytes;
  ASSERT_GE(chunk, wire::kMinChunkBytes);
  uint32_t seed = 1;
  for (uint64_t size : std::vector<uint64_t>{1, 4095, 4096, chunk - 1, chunk, chunk + 1, 3 * chunk + 17, 64 * kMiB}) {
    SCOPED_TRACE("size " + std::to_string(size) + ", chunk " + std::to_string(chunk));
    uint64_t a = 0;
    ASSERT_EQ(c->Malloc(size, &a), kHipSuccess);
    std::vector<uint8_t> in = Pattern(size, seed++);
    std::vector<uint8_t> out(size, 0xcc);
    ASSERT_EQ(c->Write(a, in.data(), size), kHipSuccess) << c->last_status().ToString();
    ASSERT_EQ(c->Read(a, out.data(), size), kHipSuccess) << c->last_status().ToString();
    ASSERT_TRUE(in == out);
    ASSERT_EQ(c->Free(a), kHipSuccess);
  }
}

INSTANTIATE_TEST_SUITE_P(Chunks, RoundTripTest,
                         ::testing::Values(std::vector<std::string>{},
                                           std::vector<std::string>{"--chunk-bytes", "65536"}),
                         [](const auto& info) { return info.param.empty() ? "DefaultChunk" : "SmallChunk"; });

TEST(WorkerTest, CopiesAtOffsetsIntoAllocations) {
  WorkerProcess worker;
  auto c = Connect(worker);
  ASSERT_TRUE(c);
  const uint64_t size = 3 * kMiB;
  uint64_t a = 0;
  ASSERT_EQ(c->Malloc(size, &a), kHipSuccess);
  std::vector<uint8_t> model = Pattern(size, 7);
  ASSERT_EQ(c->Write(a, model.data(), size), kHipSuccess);
  struct Piece {
    uint64_t offset, size;
  };
  uint32_t seed = 100;
  for (Piece p : {Piece{1, 1}, Piece{4095, 2}, Piece{4096, 4096}, Piece{12345, 100000}, Piece{kMiB + 3, kMiB},
                  Piece{size - 7, 7}}) {
    std::vector<uint8_t> piece = Pattern(p.size, seed++);
    ASSERT_EQ(c->Write(a + p.offset, piece.data(), p.size), kHipSuccess) << p.offset;
    std::copy(piece.begin(), piece.end(), model.begin() + static_cast<long>(p.offset));
  }
  for (Piece p : {Piece{0, size}, Piece{4000, 200}, Piece{size - 1, 1}, Piece{kMiB - 1, kMiB + 2}}) {
    std::vector<uint8_t> out(p.size);
    ASSERT_EQ(c->Read(a + p.offset, out.data(), p.size), kHipSuccess) << p.offset;
    EXPECT_TRUE(std::equal(out.begin(), out.end(), model.begin() + static_cast<long>(p.offset))) << p.offset;
  }
}

TEST(WorkerTest, PitchedCopiesAndMemsetsViaRawRequests) {
  WorkerProcess worker;
  auto c = Connect(worker);
  ASSERT_TRUE(c);
  const uint64_t size = 256 * 1024;
  uint64_t a = 0, b = 0;
  ASSERT_EQ(c->Malloc(size, &a), kHipSuccess);
  ASSERT_EQ(c->Malloc(size, &b), kHipSuccess);
  std::vector<uint8_t> model_a = Pattern(size, 1), model_b(size, 0);
  ASSERT_EQ(c->Write(a, model_a.data(), size), kHipSuccess);

  // Host -> device, 2-D: 300 rows of 333 bytes, 512 apart, from offset 7.
  const msg::Region dst{a + 7, 512, 333, 300};
  std::vector<uint8_t> packed = Pattern(dst.bytes(), 2);
  ASSERT_EQ(c->WriteRegion(dst, packed.data()), kHipSuccess) << c->last_status().ToString();
  for (uint64_t r = 0; r < dst.height; ++r)
    std::copy_n(packed.begin() + static_cast<long>(r * dst.width), dst.width,
                model_a.begin() + static_cast<long>(7 + r * dst.pitch));
  std::vector<uint8_t> whole(size);
  ASSERT_EQ(c->Read(a, whole.data(), size), kHipSuccess);
  EXPECT_TRUE(whole == model_a) << "rows misplaced or gaps overwritten";

  // Device -> host, 2-D, packed on arrival.
  std::vector<uint8_t> back(dst.bytes());
  ASSERT_EQ(c->ReadRegion(dst, back.data()), kHipSuccess);
  EXPECT_TRUE(back == packed);

  // Device -> device with different pitches.
  msg::CopyOnDeviceRequest copy;
  copy.src = {a + 7, 512, 333, 300};
  copy.dst = {b + 1, 400, 333, 300};
  copy.want_reply = true;
  msg::CallReply reply;
  ASSERT_TRUE(c->Call(Op::kCopyOnDevice, copy, &reply).ok());
  EXPECT_EQ(reply.error, kHipSuccess);
  for (uint64_t r = 0; r < 300; ++r)
    std::copy_n(packed.begin() + static_cast<long>(r * 333), 333, model_b.begin() + static_cast<long>(1 + r * 400));

  // A 2-D memset of 32-bit elements, fire-and-forget, then a synchronize.
  msg::MemsetRequest memset;
  memset.dst = {b + 4096, 1000, 200, 50};
  memset.value = 0x04030201;
  memset.element_size = 4;
  ASSERT_TRUE(c->Send(Op::kMemset, memset).ok());
  ASSERT_EQ(c->Synchronize(), kHipSuccess);
  for (uint64_t r = 0; r < 50; ++r)
    for (uint64_t i = 0; i < 200; ++i) model_b[4096 + r * 1000 + i] = static_cast<uint8_t>(1 + i % 4);
  ASSERT_EQ(c->Read(b, whole.data(), size), kHipSuccess);
  EXPECT_TRUE(whole == model_b);
}

TEST(WorkerTest, MemoryAccountingReturnsToItsStart) {
  WorkerProcess worker;
  auto c = Connect(worker);
  ASSERT_TRUE(c);
  uint64_t free0 = 0, total = 0;
  ASSERT_EQ(c->MemInfo(&free0, &total), kHipSuccess);
  EXPECT_EQ(total, kBudget);
  EXPECT_EQ(free0, kBudget);
  std::vector<uint64_t> addresses;
  uint64_t sum = 0;
  for (uint64_t size : std::vector<uint64_t>{1, 4096, 5000, 64 * kMiB, 100 * kMiB + 1}) {
    uint64_t a = 0;
    ASSERT_EQ(c->Malloc(size, &a), kHipSuccess);
    addresses.push_back(a);
    sum += size;
    uint64_t f = 0;
    ASSERT_EQ(c->MemInfo(&f, &total), kHipSuccess);
    EXPECT_LE(f, free0 - sum);
    EXPECT_GE(f, free0 - sum - addresses.size() * 4096);  // Rounded to pages at most.
  }
  // hipMalloc(0) succeeds with a null pointer and hipFree(nullptr) is a no-op.
  uint64_t zero = 1;
  EXPECT_EQ(c->Malloc(0, &zero), kHipSuccess);
  EXPECT_EQ(zero, 0u);
  EXPECT_EQ(c->Free(0), kHipSuccess);
  for (uint64_t a : addresses) ASSERT_EQ(c->Free(a), kHipSuccess);
  uint64_t free1 = 0;
  ASSERT_EQ(c->MemInfo(&free1, &total), kHipSuccess);
  EXPECT_EQ(free1, free0);
  EXPECT_EQ(c->Free(addresses[0]), kHipErrorInvalidValue);  // Already freed.
}

TEST(WorkerTest, MallocBeyondTheBudgetIsOutOfMemoryAndTheSessionGoesOn) {
  WorkerProcess worker;
  auto c = Connect(worker);
  ASSERT_TRUE(c);
  uint64_t a = 0;
  EXPECT_EQ(c->Malloc(kBudget + 1, &a), kHipErrorOutOfMemory);
  EXPECT_EQ(c->Malloc(std::numeric_limits<uint64_t>::max(), &a), kHipErrorOutOfMemory);
  uint64_t big = 0;
  ASSERT_EQ(c->Malloc(kBudget - kMiB, &big), kHipSuccess);
  EXPECT_EQ(c->Malloc(kMiB + 1, &a), kHipErrorOutOfMemory);
  uint64_t rest = 0;
  ASSERT_EQ(c->Malloc(kMiB, &rest), kHipSuccess);
  EXPECT_EQ(c->Malloc(1, &a), kHipErrorOutOfMemory);
  // The failures were replies, not the end of the session.
  EXPECT_EQ(c->Synchronize(), kHipSuccess);
  std::vector<uint8_t> in = Pattern(kMiB, 3), out(kMiB);
  ASSERT_EQ(c->Write(rest, in.data(), kMiB), kHipSuccess);
  ASSERT_EQ(c->Read(rest, out.data(), kMiB), kHipSuccess);
  EXPECT_EQ(in, out);
  ASSERT_EQ(c->Free(big), kHipSuccess);
  EXPECT_EQ(c->Malloc(kMiB, &a), kHipSuccess);
}

// ---- Isolation between sessions ---------------------------------------------

TEST(WorkerTest, ASessionCannotTouchAnotherSessionsMemory) {
  WorkerProcess worker;
  auto a = Connect(worker);
  auto b = Connect(worker);
  ASSERT_TRUE(a && b);
  const uint64_t size = kMiB;
  uint64_t x = 0, own = 0;
  ASSERT_EQ(a->Malloc(size, &x), kHipSuccess);
  ASSERT_EQ(b->Malloc(size, &own), kHipSuccess);
  std::vector<uint8_t> pattern = Pattern(size, 11);
  ASSERT_EQ(a->Write(x, pattern.data(), size), kHipSuccess);
  uint64_t a_free = 0, total = 0;
  ASSERT_EQ(a->MemInfo(&a_free, &total), kHipSuccess);

  std::vector<uint8_t> buf = Pattern(size, 12);
  EXPECT_EQ(b->Read(x, buf.data(), 4096), kHipErrorInvalidValue);
  EXPECT_EQ(b->Write(x, buf.data(), 4096), kHipErrorInvalidValue);
  EXPECT_EQ(b->Write(x, buf.data(), size), kHipErrorInvalidValue);
  EXPECT_EQ(b->Memset(x, 0xff, size), kHipErrorInvalidValue);  // Surfaces at the synchronize.
  EXPECT_EQ(b->Free(x), kHipErrorInvalidValue);                 // Likewise.
  // Fire-and-forget host -> device copy: the error comes with the synchronize.
  EXPECT_EQ(b->WriteRegion({x, 4096, 4096, 1}, buf.data(), 0, /*want_reply=*/false), kHipSuccess);
  EXPECT_EQ(b->Synchronize(), kHipErrorInvalidValue);
  EXPECT_EQ(b->Synchronize(), kHipSuccess);  // Reported once.
  msg::CopyOnDeviceRequest copy;
  copy.dst = {own, 4096, 4096, 1};
  copy.src = {x, 4096, 4096, 1};
  copy.want_reply = true;
  msg::CallReply reply;
  ASSERT_TRUE(b->Call(Op::kCopyOnDevice, copy, &reply).ok());
  EXPECT_EQ(reply.error, kHipErrorInvalidValue);
  copy.dst = {x, 4096, 4096, 1};
  copy.src = {own, 4096, 4096, 1};
  copy.want_reply = false;
  ASSERT_TRUE(b->Send(Op::kCopyOnDevice, copy).ok());
  EXPECT_EQ(b->Synchronize(), kHipErrorInvalidValue);

  // A's bytes and accounting are intact, and B carries on.
  std::vector<uint8_t> back(size);
  ASSERT_EQ(a->Read(x, back.data(), size), kHipSuccess);
  EXPECT_TRUE(back == pattern);
  uint64_t a_free_after = 0;
  ASSERT_EQ(a->MemInfo(&a_free_after, &total), kHipSuccess);
  EXPECT_EQ(a_free_after, a_free);
  ASSERT_EQ(b->Write(own, buf.data(), size), kHipSuccess);
  ASSERT_EQ(b->Read(own, back.data(), size), kHipSuccess);
  EXPECT_TRUE(back == buf);
}

TEST(WorkerTest, StreamAndEventIdsBelongToTheirSession) {
  WorkerProcess worker;
  auto a = Connect(worker);
  auto b = Connect(worker);
  ASSERT_TRUE(a && b);
  ASSERT_TRUE(a->Send(Op::kStreamCreate, msg::StreamCreateRequest{0, 77, 0, 0, {}}).ok());
  ASSERT_TRUE(a->Send(Op::kEventCreate, msg::EventCreateRequest{0, 5, 0}).ok());
  ASSERT_TRUE(a->Send(Op::kEventRecord, msg::EventRecordRequest{5, 77}).ok());
  msg::CallReply r;
  ASSERT_TRUE(a->Call(Op::kStreamSynchronize, msg::StreamRequest{77}, &r).ok());
  EXPECT_EQ(r.error, kHipSuccess);

  ASSERT_TRUE(b->Call(Op::kStreamSynchronize, msg::StreamRequest{77}, &r).ok());
  EXPECT_EQ(r.error, kHipErrorInvalidHandle);
  ASSERT_TRUE(b->Call(Op::kStreamQuery, msg::StreamRequest{77}, &r).ok());
  EXPECT_EQ(r.error, kHipErrorInvalidHandle);
  ASSERT_TRUE(b->Call(Op::kEventQuery, msg::EventRequest{5}, &r).ok());
  EXPECT_EQ(r.error, kHipErrorInvalidHandle);
  ASSERT_TRUE(b->Call(Op::kEventSynchronize, msg::EventRequest{5}, &r).ok());
  EXPECT_EQ(r.error, kHipErrorInvalidHandle);
  msg::EventElapsedReply elapsed;
  ASSERT_TRUE(b->Call(Op::kEventElapsedTime, msg::EventElapsedRequest{5, 5}, &elapsed).ok());
  EXPECT_EQ(elapsed.error, kHipErrorInvalidHandle);
  // Fire-and-forget uses surface at the next synchronize.
  ASSERT_TRUE(b->Send(Op::kEventRecord, msg::EventRecordRequest{5, 0}).ok());
  EXPECT_EQ(b->Synchronize(), kHipErrorInvalidHandle);
  ASSERT_TRUE(b->Send(Op::kStreamDestroy, msg::StreamRequest{77}).ok());
  EXPECT_EQ(b->Synchronize(), kHipErrorInvalidHandle);
  uint64_t own = 0;
  ASSERT_EQ(b->Malloc(4096, &own), kHipSuccess);
  std::vector<uint8_t> buf(4096, 1);
  EXPECT_EQ(b->Write(own, buf.data(), buf.size(), /*stream=*/77), kHipErrorInvalidHandle);
  EXPECT_EQ(b->Read(own, buf.data(), buf.size(), /*stream=*/77), kHipErrorInvalidHandle);

  // A's stream and event still work.
  ASSERT_TRUE(a->Call(Op::kStreamQuery, msg::StreamRequest{77}, &r).ok());
  EXPECT_EQ(r.error, kHipSuccess);
  ASSERT_TRUE(a->Call(Op::kEventSynchronize, msg::EventRequest{5}, &r).ok());
  EXPECT_EQ(r.error, kHipSuccess);
  ASSERT_TRUE(a->Call(Op::kEventElapsedTime, msg::EventElapsedRequest{5, 5}, &elapsed).ok());
  EXPECT_EQ(elapsed.error, kHipSuccess);
  EXPECT_EQ(elapsed.milliseconds, 0);
  uint64_t x = 0;
  ASSERT_EQ(a->Malloc(4096, &x), kHipSuccess);
  EXPECT_EQ(a->Write(x, buf.data(), buf.size(), 77), kHipSuccess);
}

TEST(WorkerTest, ConcurrentSessionsStayIndependent) {
  WorkerProcess worker;
  std::vector<std::thread> threads;
  for (uint32_t t = 0; t < 3; ++t) {
    threads.emplace_back([&worker, t] {
      auto c = Connect(worker);
      ASSERT_TRUE(c);
      const uint64_t size = 4 * kMiB + t;
      uint64_t a = 0;
      ASSERT_EQ(c->Malloc(size, &a), kHipSuccess);
      std::vector<uint8_t> out(size);
      for (uint32_t i = 0; i < 10; ++i) {
        std::vector<uint8_t> in = Pattern(size, t * 100 + i);
        ASSERT_EQ(c->Write(a, in.data(), size), kHipSuccess);
        ASSERT_EQ(c->Read(a, out.data(), size), kHipSuccess);
        ASSERT_TRUE(in == out) << "thread " << t << " round " << i;
      }
    });
  }
  for (auto& t : threads) t.join();
}

// ---- Bad requests that fail one call ----------------------------------------

// ---- Virtual memory ----------------------------------------------------------

int32_t VmmCall(RawClient& c, Op op, const auto& request) {
  msg::CallReply reply;
  EXPECT_TRUE(c.Call(op, request, &reply).ok()) << c.last_status().ToString();
  return reply.error;
}

TEST(WorkerTest, VirtualMemoryMapsPhysicalMemoryIntoAReservation) {
  WorkerProcess worker;
  auto c = Connect(worker);
  ASSERT_TRUE(c);
  const uint64_t granule = c->hello().devices.at(0).vmm_granularity;
  ASSERT_EQ(granule, 4096u);
  msg::VmmReserveReply reserved;
  ASSERT_TRUE(c->Call(Op::kVmmReserve, msg::VmmReserveRequest{8 * granule, kMiB, 0}, &reserved).ok());
  ASSERT_EQ(reserved.error, kHipSuccess);
  const uint64_t r = reserved.address;
  EXPECT_EQ(r % kMiB, 0u);
  ASSERT_EQ(VmmCall(*c, Op::kVmmCreate, msg::VmmCreateRequest{0, 1, 4 * granule}), kHipSuccess);
  ASSERT_EQ(VmmCall(*c, Op::kVmmCreate, msg::VmmCreateRequest{0, 2, 4 * granule}), kHipSuccess);
  ASSERT_EQ(VmmCall(*c, Op::kVmmMap, msg::VmmMapRequest{r, 4 * granule, 0, 1}), kHipSuccess);
  ASSERT_EQ(VmmCall(*c, Op::kVmmMap, msg::VmmMapRequest{r + 4 * granule, 4 * granule, 0, 2}), kHipSuccess);
  std::vector<uint8_t> in = Pattern(8 * granule, 5), out(8 * granule);
  EXPECT_EQ(c->Write(r, in.data(), in.size()), kHipErrorInvalidValue) << "no access yet";
  ASSERT_EQ(VmmCall(*c, Op::kVmmSetAccess, msg::VmmSetAccessRequest{r, 8 * granule, {{0, 3}}}), kHipSuccess);
  ASSERT_EQ(c->Write(r, in.data(), in.size()), kHipSuccess) << "one copy across both mappings";
  ASSERT_EQ(c->Read(r, out.data(), out.size()), kHipSuccess);
  EXPECT_EQ(in, out);
  EXPECT_EQ(VmmCall(*c, Op::kVmmRelease, msg::VmmHandleRequest{1}), kHipSuccess);  // Mapped: lives on.
  ASSERT_EQ(c->Read(r, out.data(), out.size()), kHipSuccess);
  EXPECT_EQ(in, out);
  EXPECT_EQ(VmmCall(*c, Op::kVmmUnmap, msg::VmmRangeRequest{r, 8 * granule}), kHipSuccess);
  EXPECT_EQ(c->Read(r, out.data(), 16), kHipErrorInvalidValue);
  EXPECT_EQ(VmmCall(*c, Op::kVmmRelease, msg::VmmHandleRequest{2}), kHipSuccess);
  EXPECT_EQ(VmmCall(*c, Op::kVmmFree, msg::VmmRangeRequest{r, 8 * granule}), kHipSuccess);
}

TEST(WorkerTest, HostileVirtualMemoryRequestsFailAndTheSessionsGoOn) {
  WorkerProcess worker;
  LiveSession bystander(worker);
  auto c = Connect(worker);
  ASSERT_TRUE(c);
  const uint64_t g = c->hello().devices.at(0).vmm_granularity;
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  uint64_t plain = 0;
  ASSERT_EQ(c->Malloc(4 * g, &plain), kHipSuccess);
  std::vector<uint8_t> pattern = Pattern(4 * g, 9), back(4 * g);
  ASSERT_EQ(c->Write(plain, pattern.data(), pattern.size()), kHipSuccess);
  msg::VmmReserveReply reserved;
  for (const msg::VmmReserveRequest& bad : {msg::VmmReserveRequest{0, 0, 0}, msg::VmmReserveRequest{g + 1, 0, 0},
                                            msg::VmmReserveRequest{g, 3, 0}, msg::VmmReserveRequest{g, 1ull << 63, 0},
                                            msg::VmmReserveRequest{max - g + 1, 0, 0}}) {
    ASSERT_TRUE(c->Call(Op::kVmmReserve, bad, &reserved).ok());
    EXPECT_NE(reserved.error, kHipSuccess) << bad.size << " " << bad.alignment << " " << bad.hint;
  }
  // A wild hint is only a hint: the range comes from the window.
  ASSERT_TRUE(c->Call(Op::kVmmReserve, msg::VmmReserveRequest{g, 0, max - g + 1}, &reserved).ok());
  ASSERT_EQ(reserved.error, kHipSuccess);
  EXPECT_GE(reserved.address, c->hello().window.base);
  EXPECT_LT(reserved.address, c->hello().window.base + c->hello().window.size);
  EXPECT_EQ(VmmCall(*c, Op::kVmmFree, msg::VmmRangeRequest{reserved.address, g}), kHipSuccess);
  EXPECT_EQ(VmmCall(*c, Op::kVmmCreate, msg::VmmCreateRequest{0, 1, g}), kHipSuccess);
  EXPECT_NE(VmmCall(*c, Op::kVmmCreate, msg::VmmCreateRequest{0, 1, g}), kHipSuccess) << "id in use";
  EXPECT_NE(VmmCall(*c, Op::kVmmCreate, msg::VmmCreateRequest{7, 2, g}), kHipSuccess) << "no such device";
  EXPECT_NE(VmmCall(*c, Op::kVmmCreate, msg::VmmCreateRequest{0, 3, max - g + 1}), kHipSuccess);
  // Mapping over a hipMalloc'd allocation, outside any reservation, with
  // another session's id or none; unmapping and granting what no mapping is.
  EXPECT_NE(VmmCall(*c, Op::kVmmMap, msg::VmmMapRequest{plain, g, 0, 1}), kHipSuccess);
  EXPECT_NE(VmmCall(*c, Op::kVmmMap, msg::VmmMapRequest{max - g + 1, g, 0, 1}), kHipSuccess);
  EXPECT_NE(VmmCall(*c, Op::kVmmMap, msg::VmmMapRequest{0, g, 0, 99}), kHipSuccess);
  EXPECT_NE(VmmCall(*c, Op::kVmmUnmap, msg::VmmRangeRequest{plain, 4 * g}), kHipSuccess);
  EXPECT_NE(VmmCall(*c, Op::kVmmUnmap, msg::VmmRangeRequest{max - g + 1, max}), kHipSuccess);
  EXPECT_NE(VmmCall(*c, Op::kVmmSetAccess, msg::VmmSetAccessRequest{plain, 4 * g, {{0, 0}}}), kHipSuccess);
  std::vector<msg::VmmAccess> many(4000, msg::VmmAccess{0, 1});
  EXPECT_NE(VmmCall(*c, Op::kVmmSetAccess, msg::VmmSetAccessRequest{plain, 4 * g, many}), kHipSuccess);
  EXPECT_NE(VmmCall(*c, Op::kVmmFree, msg::VmmRangeRequest{plain, 4 * g}), kHipSuccess);
  EXPECT_NE(VmmCall(*c, Op::kVmmRelease, msg::VmmHandleRequest{42}), kHipSuccess);
  msg::VmmImportRequest forged{0, 5, std::vector<uint8_t>(msg::kIpcMemHandleBytes, 0x41)};
  msg::VmmImportReply imported;
  ASSERT_TRUE(c->Call(Op::kVmmImport, forged, &imported).ok());
  EXPECT_NE(imported.error, kHipSuccess);
  forged.token.resize(3);
  ASSERT_TRUE(c->Call(Op::kVmmImport, forged, &imported).ok());
  EXPECT_NE(imported.error, kHipSuccess);
  // The allocation is as written, the session and its neighbour go on.
  ASSERT_EQ(c->Read(plain, back.data(), back.size()), kHipSuccess);
  EXPECT_EQ(back, pattern);
  EXPECT_EQ(c->Free(plain), kHipSuccess);
  EXPECT_EQ(c->Synchronize(), kHipSuccess);
  bystander.ExpectWorking("after hostile virtual memory requests");
}

TEST(WorkerTest, OutOfRangeCopiesFailAndTheSessionKeepsWorking) {
  WorkerProcess worker;
  auto c = Connect(worker);
  ASSERT_TRUE(c);
  const uint64_t size = kMiB;
  uint64_t x = 0, y = 0;
  ASSERT_EQ(c->Malloc(size, &x), kHipSuccess);
  ASSERT_EQ(c->Malloc(size, &y), kHipSuccess);
  ASSERT_EQ(y, x + size) << "first fit should place the two side by side";
  std::vector<uint8_t> px = Pattern(size, 1), py = Pattern(size, 2);
  ASSERT_EQ(c->Write(x, px.data(), size), kHipSuccess);
  ASSERT_EQ(c->Write(y, py.data(), size), kHipSuccess);
  const uint64_t unmapped = c->hello().window.base + c->hello().window.size / 2;
  const uint64_t max = std::numeric_limits<uint64_t>::max();
  std::vector<uint8_t> buf(size + 1, 0xab);

  // Past the end of an allocation (the bulk is consumed, nothing written).
  EXPECT_EQ(c->Write(x, buf.data(), size + 1), kHipErrorInvalidValue);
  EXPECT_EQ(c->Read(y, buf.data(), size + 1), kHipErrorInvalidValue);
  EXPECT_EQ(c->Write(x + size - 1, buf.data(), 2), kHipErrorInvalidValue);
  // Straddling two adjacent allocations.
  EXPECT_EQ(c->Read(x + size - 10, buf.data(), 20), kHipErrorInvalidValue);
  EXPECT_EQ(c->Write(x + size - 10, buf.data(), 20), kHipErrorInvalidValue);
  // An address in the window that no allocation covers, and address 0.
  EXPECT_EQ(c->Read(unmapped, buf.data(), 16), kHipErrorInvalidValue);
  EXPECT_EQ(c->Write(unmapped, buf.data(), 16), kHipErrorInvalidValue);
  EXPECT_EQ(c->Read(0, buf.data(), 16), kHipErrorInvalidValue);
  EXPECT_EQ(c->Write(0, buf.data(), 16), kHipErrorInvalidValue);
  EXPECT_EQ(c->Memset(0, 1, 16), kHipErrorInvalidValue);
  EXPECT_EQ(c->Memset(unmapped, 1, 16), kHipErrorInvalidValue);
  // Huge sizes, including ones whose extent or byte count overflows.
  EXPECT_EQ(c->Read(x, buf.data(), 1ull << 62), kHipErrorInvalidValue);
  EXPECT_EQ(c->ReadRegion({x, 1ull << 33, 1ull << 33, 1ull << 33}, buf.data()), kHipErrorInvalidValue);
  EXPECT_EQ(c->Memset(x, 1, max), kHipErrorInvalidValue);
  EXPECT_EQ(c->Memset(max - 8, 1, 16), kHipErrorInvalidValue);
  // (height-1)*pitch fits in 64 bits but adding the width wraps to a tiny
  // extent that would pass a naive bounds check.
  msg::MemsetRequest wrap;
  wrap.dst = {x, 1ull << 63, 1ull << 63, 2};
  ASSERT_TRUE(c->Send(Op::kMemset, wrap).ok());
  EXPECT_EQ(c->Synchronize(), kHipErrorInvalidValue) << c->last_status().ToString();
  wrap.dst = {x, max - 7, 9, 2};
  ASSERT_TRUE(c->Send(Op::kMemset, wrap).ok());
  EXPECT_EQ(c->Synchronize(), kHipErrorInvalidValue) << c->last_status().ToString();
  msg::CopyOnDeviceRequest copy;
  copy.dst = {x, 0, max, 1};
  copy.src = {y, 0, max, 1};
  copy.want_reply = true;
  msg::CallReply reply;
  ASSERT_TRUE(c->Call(Op::kCopyOnDevice, copy, &reply).ok());
  EXPECT_EQ(reply.error, kHipErrorInvalidValue);
  copy.dst = {x, 0, 16, 1};
  copy.src = {y + size - 8, 0, 16, 1};  // Source runs off the end.
  ASSERT_TRUE(c->Call(Op::kCopyOnDevice, copy, &reply).ok());
  EXPECT_EQ(reply.error, kHipErrorInvalidValue);
  // Bad memset shapes.
  msg::MemsetRequest odd;
  odd.dst = {x, 6, 6, 1};
  odd.element_size = 4;
  ASSERT_TRUE(c->Send(Op::kMemset, odd).ok());
  EXPECT_EQ(c->Synchronize(), kHipErrorInvalidValue);

  // Still working, and nothing above wrote a byte.
  EXPECT_EQ(c->Synchronize(), kHipSuccess);
  std::vector<uint8_t> back(size);
  ASSERT_EQ(c->Read(x, back.data(), size), kHipSuccess) << c->last_status().ToString();
  EXPECT_TRUE(back == px);
  ASSERT_EQ(c->Read(y, back.data(), size), kHipSuccess);
  EXPECT_TRUE(back == py);
}

// ---- Protocol violations end one session -------------------------------------

struct Violation {
  const char* name;
  bool hello_first;
  // Sends the offending bytes; returns false if it could not.
  std::function<bool(RawClient&)> send;
};

TEST(WorkerTest, MalformedFramesEndOnlyTheirSession) {
  WorkerProcess worker({"--hello-timeout-ms", "400"});
  LiveSession live(worker);
  const uint16_t malloc_op = static_cast<uint16_t>(Op::kMalloc);
  auto valid_malloc_body = [] {
    codec::BodyWriter w;
    w.Encode(msg::MallocRequest{0, 4096, 0});
    return std::vector<uint8_t>(w.data(), w.data() + w.size());
  };
  const std::vector<Violation> violations = {
      {"bad magic", true,
       [](RawClient& c) { return SendHeader(c, 0x50524948, 1, 0x0101, 1, 0).ok(); }},
      {"payload length over the frame limit", true,
       [](RawClient& c) { return SendHeader(c, wire::kMagic, 1, 0x0101, 1, wire::kMaxPayloadBytes + 1).ok(); }},
      {"body length over the body limit", true,
       [](RawClient& c) { return SendHeader(c, wire::kMagic, 1, 0x0101, 1, wire::kMaxBodyBytes + 1).ok(); }},
      {"frame version 2", true,
       [](RawClient& c) { return SendHeader(c, wire::kMagic, 2, 0x0101, 1, 0).ok(); }},
      {"garbage msgpack", true,
       [&](RawClient& c) { return SendRawFrame(c, malloc_op, {0xc1, 0xc1, 0xc1, 0xc1}).ok(); }},
      {"truncated msgpack", true,
       [&](RawClient& c) {
         auto body = valid_malloc_body();
         body.pop_back();
         return SendRawFrame(c, malloc_op, body).ok();
       }},
      {"empty body", true, [&](RawClient& c) { return SendRawFrame(c, malloc_op, {}).ok(); }},
      {"mistyped body", true,
       [&](RawClient& c) { return SendRawFrame(c, malloc_op, {0xa3, 'a', 'b', 'c'}).ok(); }},
      {"msgpack nested past the depth limit", true,
       [&](RawClient& c) {
         std::vector<uint8_t> body(65, 0x91);  // [[[[...]]]]
         body.back() = 0x00;
         return SendRawFrame(c, malloc_op, body).ok();
       }},
      {"unknown op", true, [&](RawClient& c) { return SendRawFrame(c, 0x0777, valid_malloc_body()).ok(); }},
      {"reply op from the client", true,
       [&](RawClient& c) { return SendRawFrame(c, wire::ReplyOp(Op::kMalloc), valid_malloc_body()).ok(); }},
      {"second hello", true,
       [](RawClient& c) {
         msg::HelloRequest hello;
         hello.min_version = hello.max_version = 1;
         return c.Send(Op::kHello, hello).ok();
       }},
      {"data frame outside a transfer", true,
       [](RawClient& c) {
         return SendHeader(c, wire::kMagic, 1, static_cast<uint16_t>(Op::kData), 1, 16).ok();
       }},
      {"copy whose byte count overflows", true,
       [](RawClient& c) {
         msg::CopyToDeviceRequest req;
         req.dst = {c.hello().window.base, 1ull << 33, 1ull << 33, 1ull << 33};
         req.want_reply = true;
         return c.Send(Op::kCopyToDevice, req).ok();
       }},
      {"copy interrupted by another request", true,
       [](RawClient& c) {
         uint64_t a = 0;
         if (c.Malloc(8192, &a) != 0) return false;
         msg::CopyToDeviceRequest req;
         req.dst = {a, 8192, 8192, 1};
         std::vector<uint8_t> half(4096, 1);
         iovec iov{half.data(), half.size()};
         uint32_t id = 0;
         if (!c.Send(Op::kCopyToDevice, req, &id, &iov, 1).ok()) return false;
         return SendHeader(c, wire::kMagic, 1, static_cast<uint16_t>(Op::kMalloc), id + 1, 0).ok();
       }},
      {"copy data for another request", true,
       [](RawClient& c) {
         uint64_t a = 0;
         if (c.Malloc(8192, &a) != 0) return false;
         msg::CopyToDeviceRequest req;
         req.dst = {a, 8192, 8192, 1};
         uint32_t id = 0;
         if (!c.Send(Op::kCopyToDevice, req, &id).ok()) return false;
         return SendHeader(c, wire::kMagic, 1, static_cast<uint16_t>(Op::kData), id + 1, 8192).ok();
       }},
      {"generated call without its argument list", true,
       [](RawClient& c) { return c.Send(Op::kApiCall, msg::ApiCallHead{kFnDeviceGetLimit, 0, true}).ok(); }},
      {"generated call with too many arguments", true,
       [](RawClient& c) {
         return c.Send(Op::kApiCall, msg::ApiCallRequest<ThreeArgs>{kFnDeviceGetLimit, 0, true, {}}).ok();
       }},
      {"generated call with a mistyped argument", true,
       [](RawClient& c) {
         return c.Send(Op::kApiCall, msg::ApiCallRequest<StringArg>{kFnDeviceGetLimit, 0, true, {}}).ok();
       }},
      {"hello not first", false, [&](RawClient& c) { return SendRawFrame(c, malloc_op, valid_malloc_body()).ok(); }},
      {"bad magic before the hello", false,
       [](RawClient& c) { return SendHeader(c, 0, 1, static_cast<uint16_t>(Op::kHello), 1, 0).ok(); }},
      {"no hello within the time limit", false, [](RawClient&) { return true; }},
  };
  for (const Violation& v : violations) {
    SCOPED_TRACE(v.name);
    auto c = v.hello_first ? Connect(worker) : ConnectBare(worker);
    ASSERT_TRUE(c);
    ASSERT_TRUE(v.send(*c));
    SessionEnd end = AwaitSessionEnd(*c);
    EXPECT_TRUE(end.ended) << end.detail;
    EXPECT_TRUE(end.fatal) << "no kFatal before the close: " << end.detail;
    EXPECT_FALSE(end.message.empty());
    ASSERT_TRUE(worker.Alive());
    live.ExpectWorking(v.name);
  }
  // Every offending session process has gone; only the live one is left.
  EXPECT_TRUE(WaitUntil([&] { return worker.SessionPids().size() == 1; }))
      << worker.SessionPids().size() << " session processes";
}

// What a well-formed generated call gets wrong is the call's error, and the
// session goes on.
TEST(WorkerTest, GeneratedCallErrorsAreCallErrors) {
  WorkerProcess worker;
  auto c = Connect(worker);
  ASSERT_TRUE(c);
  msg::CallReply reply;
  ASSERT_TRUE(c->Call(Op::kApiCall, msg::ApiCallRequest<NoArgs>{0x0badf00d, 0, true, {}}, &reply).ok());
  EXPECT_EQ(reply.error, 801);  // hipErrorNotSupported: an id this worker does not know.
  ASSERT_TRUE(c->Call(Op::kApiCall, msg::ApiCallRequest<NoArgs>{kFnDeviceGetSharedMemConfig, 7, true, {}}, &reply)
                  .ok());
  EXPECT_EQ(reply.error, 101);  // hipErrorInvalidDevice: the current device is out of range.
  msg::ApiCallReply<SharedMemConfigReply> ok;
  ASSERT_TRUE(c->Call(Op::kApiCall, msg::ApiCallRequest<NoArgs>{kFnDeviceGetSharedMemConfig, 0, true, {}}, &ok).ok());
  EXPECT_EQ(ok.error, kHipSuccess);
  EXPECT_EQ(ok.out.config, 1u);  // hipSharedMemBankSizeFourByte.
}

TEST(WorkerTest, NoHelloWithinTheTimeoutEndsTheConnection) {
  WorkerProcess worker({"--hello-timeout-ms", "300"});
  auto c = ConnectBare(worker);
  ASSERT_TRUE(c);
  auto t0 = Clock::now();
  SessionEnd end = AwaitSessionEnd(*c);
  double ms = MsSince(t0);
  EXPECT_TRUE(end.ended) << end.detail;
  EXPECT_TRUE(end.fatal);
  EXPECT_NE(end.message.find("hello"), std::string::npos) << end.message;
  EXPECT_GE(ms, 250);
  EXPECT_LT(ms, 3000);
}

TEST(WorkerTest, HelloWithoutACommonVersionIsRefused) {
  WorkerProcess worker;
  LiveSession live(worker);
  for (auto [lo, hi] : {std::pair<uint16_t, uint16_t>{2, 9}, {0, 0}, {5, 3}}) {
    SCOPED_TRACE(std::to_string(lo) + ".." + std::to_string(hi));
    auto c = ConnectBare(worker);
    ASSERT_TRUE(c);
    msg::HelloRequest hello;
    hello.min_version = lo;
    hello.max_version = hi;
    hello.client_name = "future-client";
    msg::HelloReply reply;
    Status st = c->Call(Op::kHello, hello, &reply);
    ASSERT_TRUE(st.ok()) << st.ToString();
    EXPECT_EQ(reply.status, StatusCode::kVersionMismatch);
    EXPECT_NE(reply.message.find("protocol"), std::string::npos) << reply.message;
    EXPECT_TRUE(AwaitSessionEnd(*c).ended);
  }
  live.ExpectWorking("after refused hellos");
}

// ---- Deaths ---------------------------------------------------------------

// A client that dies halfway through sending a 256 MiB copy: its session
// process must notice, exit, and give everything back.
TEST(WorkerTest, ClientKilledMidCopyFreesItsSession) {
  WorkerProcess worker;
  LiveSession live(worker);
  ASSERT_TRUE(WaitUntil([&] { return worker.SessionPids().size() == 1; }));
  const pid_t live_pid = worker.SessionPids()[0];
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    close(ready[0]);
    std::unique_ptr<RawClient> c;
    if (!RawClient::Connect(worker.endpoint(), &c).ok()) _exit(1);
    const uint64_t size = 256 * kMiB;
    uint64_t a = 0;
    if (c->Malloc(size, &a) != 0) _exit(2);
    msg::CopyToDeviceRequest req;
    req.dst = {a, size, size, 1};
    req.want_reply = true;
    std::vector<uint8_t> first(32 * kMiB, 0x5a);  // An eighth of it, then nothing.
    iovec iov{first.data(), first.size()};
    if (!c->Send(Op::kCopyToDevice, req, nullptr, &iov, 1).ok()) _exit(3);
    (void)!write(ready[1], "x", 1);
    for (;;) pause();
  }
  close(ready[1]);
  pollfd pfd{ready[0], POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 10000), 1);
  char x = 0;
  ASSERT_EQ(read(ready[0], &x, 1), 1) << "the child client failed to start its copy";
  close(ready[0]);
  std::vector<pid_t> pids;
  ASSERT_TRUE(WaitUntil([&] { return (pids = worker.SessionPids()).size() == 2; }));
  pid_t victim = pids[0] == live_pid ? pids[1] : pids[0];
  ASSERT_EQ(kill(child, SIGKILL), 0);
  int ws = 0;
  ASSERT_EQ(waitpid(child, &ws, 0), child);

  EXPECT_TRUE(WaitUntil([&] { return !ProcessExists(victim); })) << "session process " << victim << " lingers";
  EXPECT_TRUE(worker.Alive());
  live.ExpectWorking("after the client died");
  auto fresh = Connect(worker);
  ASSERT_TRUE(fresh);
  uint64_t free_bytes = 0, total = 0;
  ASSERT_EQ(fresh->MemInfo(&free_bytes, &total), kHipSuccess);
  EXPECT_EQ(free_bytes, total);
  uint64_t a = 0;
  EXPECT_EQ(fresh->Malloc(kBudget, &a), kHipSuccess);
}

TEST(WorkerTest, SessionProcessKilledUnderALiveClientTellsThatClient) {
  WorkerProcess worker;
  LiveSession live(worker);
  ASSERT_TRUE(WaitUntil([&] { return worker.SessionPids().size() == 1; }));
  const pid_t live_pid = worker.SessionPids()[0];
  auto victim_client = Connect(worker);
  ASSERT_TRUE(victim_client);
  std::vector<pid_t> pids;
  ASSERT_TRUE(WaitUntil([&] { return (pids = worker.SessionPids()).size() == 2; }));
  pid_t victim = pids[0] == live_pid ? pids[1] : pids[0];
  ASSERT_EQ(kill(victim, SIGKILL), 0);
  auto t0 = Clock::now();
  SessionEnd end = AwaitSessionEnd(*victim_client);
  EXPECT_LT(MsSince(t0), 3000);
  EXPECT_TRUE(end.ended) << end.detail;
  ASSERT_TRUE(end.fatal) << end.detail;
  EXPECT_NE(end.message.find("killed by signal 9"), std::string::npos) << end.message;
  EXPECT_TRUE(worker.Alive());
  live.ExpectWorking("after another session was killed");
  auto fresh = Connect(worker);
  ASSERT_TRUE(fresh);
  EXPECT_EQ(fresh->Synchronize(), kHipSuccess);
}

TEST(WorkerTest, ConnectionsBeyondMaxSessionsAreRefused) {
  WorkerProcess worker({"--max-sessions", "2"});
  auto a = Connect(worker);
  auto b = Connect(worker);
  ASSERT_TRUE(a && b);
  auto third = ConnectBare(worker);
  ASSERT_TRUE(third);
  SessionEnd end = AwaitSessionEnd(*third);
  EXPECT_TRUE(end.ended) << end.detail;
  ASSERT_TRUE(end.fatal) << end.detail;
  EXPECT_NE(end.message.find("limit"), std::string::npos) << end.message;
  EXPECT_EQ(end.status, StatusCode::kUnavailable) << "a full worker refuses for now: clients retry";
  EXPECT_EQ(a->Synchronize(), kHipSuccess);
  EXPECT_EQ(b->Synchronize(), kHipSuccess);
  // A slot frees up once a session has ended.
  a.reset();
  EXPECT_TRUE(WaitUntil([&] {
    std::unique_ptr<RawClient> c;
    return RawClient::Connect(worker.endpoint(), &c).ok();
  }));
}

TEST(WorkerTest, OnePeerCannotHoldEverySlot) {
  WorkerProcess worker({"--max-sessions", "8", "--max-sessions-per-peer", "2"});
  auto a = Connect(worker);
  auto b = Connect(worker);
  ASSERT_TRUE(a && b);
  auto third = ConnectBare(worker);
  ASSERT_TRUE(third);
  SessionEnd end = AwaitSessionEnd(*third);
  ASSERT_TRUE(end.fatal) << end.detail;
  EXPECT_NE(end.message.find("sessions from 127.0.0.1"), std::string::npos) << end.message;
  EXPECT_EQ(end.status, StatusCode::kUnavailable) << "a full worker refuses for now: clients retry";
  EXPECT_EQ(a->Synchronize(), kHipSuccess);
  EXPECT_EQ(b->Synchronize(), kHipSuccess);
  // The peer gets a slot back once one of its sessions has ended.
  a.reset();
  EXPECT_TRUE(WaitUntil([&] {
    std::unique_ptr<RawClient> c;
    return RawClient::Connect(worker.endpoint(), &c).ok();
  }));
}

// While a call runs longer than the heartbeat period, the worker sends
// heartbeats so the client can tell a slow call from a dead worker.
TEST(WorkerTest, HeartbeatsWhileALongCallRuns) {
  WorkerProcess worker({"--heartbeat-ms", "50"});
  auto c = Connect(worker);
  ASSERT_TRUE(c);
  EXPECT_EQ(c->hello().heartbeat_ms, 50u);
  // The longest call there is without kernels: a synchronize behind a pile
  // of memsets. Size the pile to take about 600 ms.
  const uint64_t size = 64 * kMiB;
  uint64_t a = 0;
  ASSERT_EQ(c->Malloc(size, &a), kHipSuccess);
  ASSERT_EQ(c->Memset(a, 1, size), kHipSuccess);  // Faults the pages in.
  msg::MemsetRequest m;
  m.dst = {a, size, size, 1};
  auto t0 = Clock::now();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(c->Send(Op::kMemset, m).ok());
  ASSERT_EQ(c->Synchronize(), kHipSuccess);
  double per = std::max(MsSince(t0) / 4, 0.1);
  const int pile = std::clamp(static_cast<int>(600 / per), 4, 20000);
  const int before = c->heartbeats();
  t0 = Clock::now();
  for (int i = 0; i < pile; ++i) ASSERT_TRUE(c->Send(Op::kMemset, m).ok());
  ASSERT_EQ(c->Synchronize(), kHipSuccess);
  double ms = MsSince(t0);
  EXPECT_GE(c->heartbeats() - before, 2) << "a synchronize of " << ms << " ms";
  // None while idle.
  const int after = c->heartbeats();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  ASSERT_EQ(c->Synchronize(), kHipSuccess);
  EXPECT_EQ(c->heartbeats(), after);
}

TEST(WorkerTest, SigtermEndsEverySessionAndTheWorkerExitsZero) {
  WorkerProcess worker;
  auto a = Connect(worker);
  auto b = Connect(worker);
  ASSERT_TRUE(a && b);
  uint64_t x = 0;
  ASSERT_EQ(b->Malloc(64 * kMiB, &x), kHipSuccess);
  std::vector<pid_t> sessions;
  ASSERT_TRUE(WaitUntil([&] { return (sessions = worker.SessionPids()).size() == 2; }));
  // b is busy in a call when the signal comes.
  msg::MemsetRequest m;
  m.dst = {x, 64 * kMiB, 64 * kMiB, 1};
  for (int i = 0; i < 50; ++i) ASSERT_TRUE(b->Send(Op::kMemset, m).ok());
  uint32_t id = 0;
  ASSERT_TRUE(b->Send(Op::kDeviceSynchronize, msg::DeviceRequest{0}, &id).ok());

  int ws = worker.Stop(SIGTERM);
  ASSERT_NE(ws, -1) << "the worker did not exit within 5 s";
  EXPECT_TRUE(WIFEXITED(ws)) << ws;
  EXPECT_EQ(WEXITSTATUS(ws), 0);
  // Both clients, the busy one included, are told why before the close.
  for (RawClient* c : {a.get(), b.get()}) {
    SessionEnd end = AwaitSessionEnd(*c);
    EXPECT_TRUE(end.ended) << end.detail;
    EXPECT_TRUE(end.fatal) << end.detail;
    EXPECT_NE(end.message.find("shutting down"), std::string::npos) << end.message;
  }
  for (pid_t p : sessions) EXPECT_TRUE(WaitUntil([&] { return !ProcessExists(p); })) << "session " << p;
}

std::string HipModuleOrSkip() {
  std::string module = WorkerBinary();
  module = module.substr(0, module.rfind('/')) + "/../lib/hipr-worker/libhipr_device_hip.so";
  return access(module.c_str(), R_OK) == 0 ? module : std::string();
}

TEST(WorkerTest, HipDeviceWithoutAnAmdGpuExitsWithCode2) {
  struct stat st;
  if (stat("/dev/kfd", &st) == 0) GTEST_SKIP() << "this machine has /dev/kfd: a GPU may be present";
  if (HipModuleOrSkip().empty()) GTEST_SKIP() << "libhipr_device_hip.so is not built (ninja hipr_device_hip)";
  WorkerRun run = RunWorkerToExit({"--device", "hip", "--listen", "127.0.0.1:0"});
  EXPECT_EQ(run.status, 2) << run.text;
  EXPECT_NE(run.text.find("no usable AMD GPU"), std::string::npos) << run.text;
}

// --hip-runtime (the e2e chain's) is for the hip device only, and a library
// the hip device module does not bind to (not a libamdhip64.so.5 by its
// SONAME) is refused at start-up, naming it.
TEST(WorkerTest, HipRuntimeIsRefusedUnlessTheModuleBindsToIt) {
  WorkerRun sim = RunWorkerToExit({"--device", "sim", "--hip-runtime", "/proc/self/exe", "--listen", "127.0.0.1:0"});
  EXPECT_EQ(sim.status, 2) << sim.text;
  EXPECT_NE(sim.text.find("--hip-runtime is for --device hip"), std::string::npos) << sim.text;

  if (HipModuleOrSkip().empty()) GTEST_SKIP() << "libhipr_device_hip.so is not built (ninja hipr_device_hip)";
  const char* other = "/lib/x86_64-linux-gnu/libz.so.1";
  WorkerRun wrong = RunWorkerToExit({"--device", "hip", "--hip-runtime", other, "--listen", "127.0.0.1:0"});
  EXPECT_EQ(wrong.status, 2) << wrong.text;
  EXPECT_NE(wrong.text.find(std::string("did not bind to --hip-runtime ") + other), std::string::npos) << wrong.text;
}

// Every size flag takes the tenants file's sizes (K/M/G/T) and nothing
// else: a negative, overflowing or unit-less-garbage size stops the worker
// with the flag named, before it listens.
TEST(WorkerTest, SizeFlagsRefuseWhatIsNotASize) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--sim-memory", "-5"}, "--sim-memory: '-5' is not a size"},
      {{"--memory-budget", "2Q"}, "--memory-budget: '2Q' is not a size"},
      {{"--tenant-memory", "99999999999T"}, "--tenant-memory: '99999999999T' is not a size"},
      {{"--code-cache-bytes", "G"}, "--code-cache-bytes: 'G' is not a size"},
      {{"--shm-host-bytes", "4097"}, "--shm-host-bytes: '4097' is not whole pages"},
      {{"--shm-ring-bytes", "3M"}, "--shm-ring-bytes must be a power of two"},
  };
  for (const auto& [flag, said] : cases) {
    std::vector<std::string> args = {"--device", "sim", "--probe-only", "--listen", "127.0.0.1:0"};
    args.insert(args.end(), flag.begin(), flag.end());
    WorkerRun run = RunWorkerToExit(args);
    EXPECT_EQ(run.status, 2) << run.text;
    EXPECT_NE(run.text.find(said), std::string::npos) << run.text;
  }
  WorkerRun fine = RunWorkerToExit({"--device", "sim", "--probe-only", "--listen", "127.0.0.1:0", "--sim-memory", "1G"});
  EXPECT_EQ(fine.status, 0) << fine.text;
  EXPECT_NE(fine.text.find("1024 MiB each"), std::string::npos) << fine.text;
}

// The chain's probe: pointed at hipr's own stub, with HIPR_SERVER naming a
// sim worker, the hip device finds that worker's devices.
TEST(WorkerTest, HipDeviceOnTheStubProbesTheSimWorkerBehindIt) {
  if (HipModuleOrSkip().empty()) GTEST_SKIP() << "libhipr_device_hip.so is not built (ninja hipr_device_hip)";
  std::string stub = WorkerBinary();
  stub = stub.substr(0, stub.rfind('/')) + "/../lib/libhip_client_stub.so";
  // Not built where only the test executables are (deploy/hipr-dev sanitize).
  if (access(stub.c_str(), R_OK) != 0) GTEST_SKIP() << stub << " is not built (ninja hip_client_stub)";
  WorkerProcess inner({"--sim-model", "mi300x", "--sim-devices", "3"});
  const std::string server = "127.0.0.1:" + std::to_string(inner.port());
  WorkerRun run = RunWorkerToExit({"--device", "hip", "--hip-runtime", stub, "--probe-only", "--listen", "127.0.0.1:0"},
                                  server.c_str());
  EXPECT_EQ(run.status, 0) << run.text;
  EXPECT_NE(run.text.find("3 HIP device(s): AMD Instinct MI300X"), std::string::npos) << run.text;
}

// Without --hip-module the worker loads the newest hip device module whose
// runtime loads and finds a device, says which, and names each newer one it
// passed over with the reason. Run on a copy of the worker in a scratch
// install tree: lib/hipr-worker/ holds the 5.x module, whichever of the 6.x
// and 7.x modules this build has, and a "ROCm 9" module that is no module
// (it binds to no HIP runtime).
TEST(WorkerTest, HipDeviceModuleIsTheNewestThatServes) {
  const std::string module5 = HipModuleOrSkip();
  if (module5.empty()) GTEST_SKIP() << "libhipr_device_hip.so is not built (ninja hipr_device_hip)";
  const std::filesystem::path modules = std::filesystem::path(module5).parent_path();
  std::string stub = WorkerBinary();
  stub = stub.substr(0, stub.rfind('/')) + "/../lib/libhip_client_stub.so";
  if (access(stub.c_str(), R_OK) != 0) GTEST_SKIP() << stub << " is not built (ninja hip_client_stub)";
  char scratch_template[] = "/tmp/hipr-modules-XXXXXX";
  ASSERT_NE(mkdtemp(scratch_template), nullptr);
  const std::filesystem::path root = scratch_template;
  std::filesystem::create_directories(root / "bin");
  std::filesystem::create_directories(root / "lib/hipr-worker");
  std::filesystem::copy_file(WorkerBinary(), root / "bin/hipr-worker");
  std::filesystem::copy_file(module5, root / "lib/hipr-worker/libhipr_device_hip.so");
  std::filesystem::copy_file("/lib/x86_64-linux-gnu/libz.so.1", root / "lib/hipr-worker/libhipr_device_hip9.so");
  int newest_built = 5;
  for (int major : {6, 7}) {
    const std::string name = "libhipr_device_hip" + std::to_string(major) + ".so";
    if (!std::filesystem::exists(modules / name)) continue;
    std::filesystem::copy_file(modules / name, root / "lib/hipr-worker" / name);
    newest_built = major;
  }
  const std::string worker = (root / "bin/hipr-worker").string();
  WorkerProcess inner({"--sim-model", "mi300x"});
  const std::string server = "127.0.0.1:" + std::to_string(inner.port());

  WorkerRun run = RunWorkerToExit({"--device", "hip", "--hip-runtime", stub, "--probe-only", "--listen", "127.0.0.1:0"},
                                  server.c_str(), worker);
  EXPECT_EQ(run.status, 0) << run.text;
  const std::string chosen = newest_built == 5 ? "libhipr_device_hip.so" : "libhipr_device_hip" + std::to_string(newest_built) + ".so";
  EXPECT_NE(run.text.find("hip device module: " + (root / "lib/hipr-worker" / chosen).string() +
                          " (the newest that serves; passed over " + (root / "lib/hipr-worker/libhipr_device_hip9.so").string() +
                          ": "),
            std::string::npos)
      << run.text;
  EXPECT_NE(run.text.find("did not bind to --hip-runtime"), std::string::npos) << run.text;
  // What the chosen module was built for is what the stub, its runtime, answers that caller.
  const std::string built_for = newest_built == 5 ? "built for HIP 5." : "built for HIP " + std::to_string(newest_built) + ".";
  EXPECT_NE(run.text.find(built_for), std::string::npos) << run.text;
  EXPECT_NE(run.text.find("runtime " + std::to_string(newest_built) + "."), std::string::npos) << run.text;

  // --hip-module takes exactly that module, newer ones present or not.
  WorkerRun pinned = RunWorkerToExit({"--device", "hip", "--hip-runtime", stub, "--probe-only", "--listen", "127.0.0.1:0",
                                      "--hip-module", (root / "lib/hipr-worker/libhipr_device_hip.so").string()},
                                     server.c_str(), worker);
  EXPECT_EQ(pinned.status, 0) << pinned.text;
  EXPECT_NE(pinned.text.find("libhipr_device_hip.so (--hip-module)"), std::string::npos) << pinned.text;
  EXPECT_NE(pinned.text.find("built for HIP 5."), std::string::npos) << pinned.text;

  // Nothing serves: each module is named with its reason, and the worker does not start.
  std::filesystem::remove(root / "lib/hipr-worker/libhipr_device_hip.so");
  for (int major : {6, 7}) std::filesystem::remove(root / "lib/hipr-worker" / ("libhipr_device_hip" + std::to_string(major) + ".so"));
  WorkerRun none = RunWorkerToExit({"--device", "hip", "--hip-runtime", stub, "--probe-only", "--listen", "127.0.0.1:0"},
                                   server.c_str(), worker);
  EXPECT_EQ(none.status, 2) << none.text;
  EXPECT_NE(none.text.find("libhipr_device_hip9.so"), std::string::npos) << none.text;
  std::filesystem::remove_all(root);
}

}  // namespace
}  // namespace hipr::test

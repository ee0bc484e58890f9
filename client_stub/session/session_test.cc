// Session against a scripted fake worker over real TCP: hello and window
// negotiation, batching, synchronous calls, heartbeats, peer timeout, fatal
// frames, protocol errors and bulk transfers.
#include "client_stub/session/session.h"

#include <sys/mman.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <numeric>
#include <thread>

#include <gtest/gtest.h>
#include <hip/hip_runtime_api.h>

#include "tests/client_stub/fake_worker.h"
#include "protocol/auth.h"

namespace hipr::client {
namespace {

using testing::FakeWorker;
using namespace std::chrono_literals;

Config TestConfig(const FakeWorker& w) {
  Config c;
  c.server = w.address();
  c.connect_timeout_ms = 2000;
  c.peer_timeout_ms = 2000;
  c.window_bytes = uint64_t{256} << 20;
  c.flush_us = 10000000;  // Flush only on calls unless a test says otherwise.
  return c;
}

msg::MemsetRequest Memset(uint64_t address, uint32_t value) {
  msg::MemsetRequest m;
  m.dst = msg::Region{address, 16, 16, 1};
  m.value = value;
  m.element_size = 1;
  return m;
}

// Replies to one kDeviceSynchronize with `error`.
void AnswerSync(Connection& conn, int32_t error = 0) {
  wire::FrameHeader h;
  FakeWorker::Read<msg::DeviceRequest>(conn, wire::Op::kDeviceSynchronize, &h);
  FakeWorker::Reply(conn, h, msg::CallReply{error});
}

Status Sync(Session& s, int32_t* error) {
  msg::CallReply reply;
  Status st = s.Call<wire::Op::kDeviceSynchronize>(msg::DeviceRequest{0}, &reply);
  *error = reply.error;
  return st;
}

TEST(SessionTest, HelloReportsDevicesAndVersions) {
  FakeWorker w;
  msg::HelloRequest seen;
  w.Serve([&](Connection& c) {
    seen = FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0"), FakeWorker::Device("gpu1")});
    AnswerSync(c, 0);
  });
  Config config = TestConfig(w);
  AddressRange window;
  auto s = Session::Open(config, &window);
  ASSERT_FALSE(s->dead()) << s->DeadStatus().ToString();
  ASSERT_EQ(s->device_count(), 2);
  EXPECT_EQ(s->devices()[1].name, "gpu1");
  EXPECT_EQ(s->driver_version(), 50222);
  EXPECT_EQ(s->runtime_version(), 50223);
  int32_t error = -1;
  ASSERT_TRUE(Sync(*s, &error).ok());
  EXPECT_EQ(error, 0);
  w.Join();
  EXPECT_EQ(seen.min_version, wire::kMinProtocolVersion);
  EXPECT_EQ(seen.max_version, wire::kProtocolVersion);
  EXPECT_TRUE(seen.auth_token.empty());  // Secrets never travel.
  EXPECT_EQ(seen.client_nonce.size(), auth::kNonceBytes);
  EXPECT_EQ(seen.client_pid, static_cast<uint32_t>(getpid()));
  EXPECT_EQ(seen.window.base, window.base);
  EXPECT_EQ(seen.window.size, config.window_bytes);
  EXPECT_EQ(seen.chunk_bytes, config.chunk_bytes);
  EXPECT_NE(seen.client_name.find('@'), std::string::npos);
  ReleaseRange(window);
}

// A client with a credential talks only to a worker that proves it holds
// the same secret: one that never asks is refused, naming the setting.
TEST(SessionTest, ACredentialRefusesAWorkerThatDoesNotAuthenticate) {
  FakeWorker w;
  w.Serve([&](Connection& c) { FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")}); });
  Config config = TestConfig(w);
  config.token = "team-a:0123456789abcdef";
  AddressRange window;
  auto s = Session::Open(config, &window);
  ASSERT_TRUE(s->dead());
  EXPECT_NE(s->DeadStatus().message().find("HIPR_TOKEN"), std::string::npos) << s->DeadStatus().ToString();
  EXPECT_NE(s->DeadStatus().message().find("did not authenticate"), std::string::npos)
      << s->DeadStatus().ToString();
  w.Join();
  ReleaseRange(window);
}

TEST(SessionTest, CounterOfferedWindowIsReservedAndOfferReleased) {
  // A counter-offer far from where the kernel places mappings (which grow
  // down from near the top of the address space), checked to be free.
  AddressRange counter;
  if (!ReserveAt(uint64_t{0x1234} << 32, uint64_t{128} << 20, &counter).ok())
    GTEST_SKIP() << "the test address range is in use";
  ReleaseRange(counter);
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")}, msg::AddressWindow{counter.base, counter.size});
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  w.Join();
  ASSERT_FALSE(s->dead()) << s->DeadStatus().ToString();
  EXPECT_EQ(window.base, counter.base);
  EXPECT_EQ(window.size, counter.size);
  // The counter-offer is held: reserving it again fails.
  AddressRange again;
  EXPECT_EQ(ReserveAt(counter.base, counter.size, &again).code(), StatusCode::kFailedPrecondition);
  ReleaseRange(window);
}

TEST(SessionTest, CounterOfferOverlappingTheOfferIsAdopted) {
  // The offer sits at a fixed address far from the kernel's mappings, with
  // free space below it; the counter-offer is the offer shifted down 64 MiB.
  const uint64_t size = uint64_t{256} << 20;
  const uint64_t shift = uint64_t{64} << 20;
  AddressRange below;
  if (!ReserveAt((uint64_t{0x1334} << 32) - shift, shift, &below).ok())
    GTEST_SKIP() << "the test address range is in use";
  ReleaseRange(below);
  AddressRange window;
  if (!ReserveAt(uint64_t{0x1334} << 32, size, &window).ok()) GTEST_SKIP() << "the test address range is in use";
  const msg::AddressWindow counter{window.base - shift, size};
  FakeWorker w;
  w.Serve([&](Connection& c) { FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")}, counter); });
  auto s = Session::Open(TestConfig(w), &window);
  w.Join();
  ASSERT_FALSE(s->dead()) << s->DeadStatus().ToString();
  EXPECT_EQ(window.base, counter.base);
  EXPECT_EQ(window.size, counter.size);
  // The part of the offer above the counter-offer was given back.
  AddressRange top;
  EXPECT_TRUE(ReserveAt(counter.base + size, shift, &top).ok());
  ReleaseRange(top);
  ReleaseRange(window);
}

TEST(SessionTest, CounterOfferThatCannotBeReservedKillsTheSession) {
  const uint64_t page = PageSize();
  void* used = mmap(nullptr, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(used, MAP_FAILED);
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")},
                            msg::AddressWindow{reinterpret_cast<uint64_t>(used), page});
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  w.Join();
  ASSERT_TRUE(s->dead());
  EXPECT_NE(s->DeadStatus().message().find("cannot reserve"), std::string::npos)
      << s->DeadStatus().ToString();
  munmap(used, page);
  ReleaseRange(window);
}

TEST(SessionTest, EmptyWindowReleasesTheOffer) {
  FakeWorker w;
  w.Serve([&](Connection& c) { FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")}, {}, true); });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  w.Join();
  ASSERT_FALSE(s->dead()) << s->DeadStatus().ToString();
  EXPECT_TRUE(window.empty());
}

TEST(SessionTest, RefusedHelloKillsTheSession) {
  FakeWorker w;
  w.Serve([&](Connection& c) {
    wire::FrameHeader h;
    FakeWorker::Read<msg::HelloRequest>(c, wire::Op::kHello, &h);
    msg::HelloReply reply;
    reply.status = StatusCode::kUnauthenticated;
    reply.message = "bad token";
    FakeWorker::Reply(c, h, reply);
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  w.Join();
  ASSERT_TRUE(s->dead());
  EXPECT_NE(s->DeadStatus().message().find("bad token"), std::string::npos);
  ReleaseRange(window);
}

TEST(SessionTest, UnreachableWorkerIsDeadAtOnce) {
  Config config;
  config.server = "127.0.0.1:1";
  AddressRange window;
  auto s = Session::Open(config, &window);
  ASSERT_TRUE(s->dead());
  EXPECT_TRUE(window.empty());  // Nothing reserved for a session that never started.
  msg::CallReply reply;
  EXPECT_EQ(s->Call<wire::Op::kDeviceSynchronize>(msg::DeviceRequest{0}, &reply).scope(),
            StatusScope::kSession);
  EXPECT_EQ(s->Post<wire::Op::kFree>(msg::FreeRequest{1}).scope(), StatusScope::kSession);
}

TEST(SessionTest, UnsetServerNamesTheVariable) {
  Config config;
  AddressRange window;
  auto s = Session::Open(config, &window);
  ASSERT_TRUE(s->dead());
  EXPECT_NE(s->DeadStatus().message().find("HIPR_SERVER"), std::string::npos);
}

TEST(SessionTest, BatchedFramesPrecedeTheCallInOrder) {
  FakeWorker w;
  std::vector<uint32_t> values;
  std::vector<uint32_t> ids;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    for (int i = 0; i < 3; ++i) {
      wire::FrameHeader h;
      values.push_back(FakeWorker::Read<msg::MemsetRequest>(c, wire::Op::kMemset, &h).value);
      ids.push_back(h.request_id);
    }
    wire::FrameHeader h;
    FakeWorker::Read<msg::FreeRequest>(c, wire::Op::kFree, &h);
    ids.push_back(h.request_id);
    AnswerSync(c);
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  ASSERT_FALSE(s->dead());
  for (uint32_t v = 1; v <= 3; ++v) ASSERT_TRUE(s->Post<wire::Op::kMemset>(Memset(window.base, v)).ok());
  ASSERT_TRUE(s->Post<wire::Op::kFree>(msg::FreeRequest{window.base}).ok());
  int32_t error = -1;
  ASSERT_TRUE(Sync(*s, &error).ok());
  w.Join();
  EXPECT_EQ(values, (std::vector<uint32_t>{1, 2, 3}));
  ASSERT_EQ(ids.size(), 4u);
  EXPECT_TRUE(std::is_sorted(ids.begin(), ids.end()));
  ReleaseRange(window);
}

TEST(SessionTest, FlusherSendsAnOldBatchWithoutACall) {
  FakeWorker w;
  std::atomic<bool> got{false};
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    FakeWorker::Read<msg::FreeRequest>(c, wire::Op::kFree);
    got = true;
    AnswerSync(c);
  });
  Config config = TestConfig(w);
  config.flush_us = 2000;
  AddressRange window;
  auto s = Session::Open(config, &window);
  ASSERT_FALSE(s->dead());
  ASSERT_TRUE(s->Post<wire::Op::kFree>(msg::FreeRequest{window.base}).ok());
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!got && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(got.load());
  int32_t error = -1;
  ASSERT_TRUE(Sync(*s, &error).ok());
  w.Join();
  ReleaseRange(window);
}

TEST(SessionTest, BatchOverTheThresholdIsSentAtOnce) {
  FakeWorker w;
  std::atomic<int> got{0};
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    for (int i = 0; i < 4; ++i) {
      FakeWorker::Read<msg::MemsetRequest>(c, wire::Op::kMemset);
      ++got;
    }
    AnswerSync(c);
  });
  Config config = TestConfig(w);
  config.batch_bytes = 100;  // A memset frame is ~40 bytes: the 3rd post flushes.
  AddressRange window;
  auto s = Session::Open(config, &window);
  ASSERT_FALSE(s->dead());
  for (uint32_t v = 0; v < 3; ++v) ASSERT_TRUE(s->Post<wire::Op::kMemset>(Memset(window.base, v)).ok());
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (got < 3 && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  EXPECT_EQ(got.load(), 3);
  ASSERT_TRUE(s->Post<wire::Op::kMemset>(Memset(window.base, 9)).ok());
  int32_t error = -1;
  ASSERT_TRUE(Sync(*s, &error).ok());
  w.Join();
  ReleaseRange(window);
}

// By default a batch leaves once it passes 4 KiB, sent by the post itself
// (the flusher here waits 10 s): the worker starts on a burst's first
// launches while the caller issues the rest, and what is left to send at
// the burst's synchronize stays small.
TEST(SessionTest, ByDefaultABatchLeavesOnceItPasses4KiB) {
  ASSERT_EQ(Config{}.batch_bytes, 4096u);
  msgpack::sbuffer body;
  codec::Packer packer(body);
  codec::Pack(packer, Memset(0, 7));
  const size_t frame = sizeof(wire::FrameHeader) + body.size();
  const int batch = static_cast<int>(Config{}.batch_bytes / frame) + 1;  // The post that passes 4 KiB.
  std::atomic<int> got{0};
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    for (int i = 0; i < 2 * batch + 1; ++i) {
      FakeWorker::Read<msg::MemsetRequest>(c, wire::Op::kMemset);
      ++got;
    }
    AnswerSync(c);
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  ASSERT_FALSE(s->dead());
  auto post = [&](int n) {
    for (int i = 0; i < n; ++i) ASSERT_TRUE(s->Post<wire::Op::kMemset>(Memset(0, 7)).ok());
  };
  auto await = [&](int n) {
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (got < n && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
    return got.load();
  };
  for (int round = 0; round < 2; ++round) {
    post(batch - 1);
    std::this_thread::sleep_for(50ms);
    EXPECT_EQ(got.load(), round * batch);  // Up to 4 KiB: held.
    post(1);
    EXPECT_EQ(await((round + 1) * batch), (round + 1) * batch);  // Past it: sent at once.
  }
  post(1);
  int32_t error = -1;
  ASSERT_TRUE(Sync(*s, &error).ok());
  w.Join();
  EXPECT_EQ(got.load(), 2 * batch + 1);
  ReleaseRange(window);
}

TEST(SessionTest, HeartbeatsKeepALongCallAlive) {
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    wire::FrameHeader h;
    FakeWorker::Read<msg::DeviceRequest>(c, wire::Op::kDeviceSynchronize, &h);
    for (int i = 0; i < 8; ++i) {  // 800 ms of work, peer timeout 300 ms.
      std::this_thread::sleep_for(100ms);
      FakeWorker::Heartbeat(c);
    }
    FakeWorker::Reply(c, h, msg::CallReply{hipErrorNotReady});
  });
  Config config = TestConfig(w);
  config.peer_timeout_ms = 300;
  AddressRange window;
  auto s = Session::Open(config, &window);
  ASSERT_FALSE(s->dead());
  int32_t error = 0;
  ASSERT_TRUE(Sync(*s, &error).ok());
  EXPECT_EQ(error, hipErrorNotReady);
  w.Join();
  ReleaseRange(window);
}

TEST(SessionTest, SilentWorkerTimesOutAndLaterCallsFailFast) {
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    FakeWorker::Read<msg::DeviceRequest>(c, wire::Op::kDeviceSynchronize);
    std::this_thread::sleep_for(1s);  // Never answers.
  });
  Config config = TestConfig(w);
  config.peer_timeout_ms = 200;
  AddressRange window;
  auto s = Session::Open(config, &window);
  ASSERT_FALSE(s->dead());
  const auto start = std::chrono::steady_clock::now();
  int32_t error = 0;
  Status st = Sync(*s, &error);
  EXPECT_LT(std::chrono::steady_clock::now() - start, 900ms);
  EXPECT_EQ(st.scope(), StatusScope::kSession);
  EXPECT_TRUE(s->dead());
  EXPECT_NE(s->DeadStatus().message().find("HIPR_PEER_TIMEOUT_MS"), std::string::npos);
  EXPECT_EQ(s->Post<wire::Op::kFree>(msg::FreeRequest{1}).scope(), StatusScope::kSession);
  w.Join();
  ReleaseRange(window);
}

TEST(SessionTest, FatalFrameEndsTheSessionWithItsMessage) {
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    FakeWorker::Read<msg::DeviceRequest>(c, wire::Op::kDeviceSynchronize);
    FakeWorker::Fatal(c, StatusCode::kDeviceLost, "memory access fault on the GPU");
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  ASSERT_FALSE(s->dead());
  int32_t error = 0;
  EXPECT_FALSE(Sync(*s, &error).ok());
  EXPECT_TRUE(s->dead());
  EXPECT_NE(s->DeadStatus().message().find("memory access fault"), std::string::npos);
  w.Join();
  ReleaseRange(window);
}

// A worker that refuses for now (full, busy with hellos) is retried within
// HIPR_CONNECT_RETRY_S; any other refusal is final.
TEST(SessionTest, ARefusalForNowIsRetriedUntilTheWorkerTakesTheSession) {
  FakeWorker w;
  w.ServeEach(4, [&](Connection& c, int i) {
    if (i < 3) {
      FakeWorker::Fatal(c, StatusCode::kUnavailable, "the worker is at its limit of 2 sessions");
      return;
    }
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    FakeWorker::Read<msg::DeviceRequest>(c, wire::Op::kDeviceSynchronize);
    FakeWorker::Fatal(c, StatusCode::kDeviceLost, "done");
  });
  AddressRange window;
  Config config = TestConfig(w);
  config.connect_retry_s = 30;
  auto s = Session::Open(config, &window);
  ASSERT_FALSE(s->dead()) << s->DeadStatus().ToString();
  int32_t error = 0;
  (void)Sync(*s, &error);
  w.Join();
  ReleaseRange(window);
}

TEST(SessionTest, ARefusalForNowFailsOnceTheRetryTimeIsSpent) {
  FakeWorker w;
  w.Serve([&](Connection& c) { FakeWorker::Fatal(c, StatusCode::kUnavailable, "at its limit"); });
  AddressRange window;
  Config config = TestConfig(w);
  config.connect_retry_s = 0;
  auto s = Session::Open(config, &window);
  ASSERT_TRUE(s->dead());
  EXPECT_EQ(s->DeadStatus().code(), StatusCode::kDeviceLost);
  EXPECT_NE(s->DeadStatus().message().find("at its limit"), std::string::npos) << s->DeadStatus().ToString();
  w.Join();
  ReleaseRange(window);
}

TEST(SessionTest, ATenantLimitIsNotRetried) {
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::Read<msg::HelloRequest>(c, wire::Op::kHello);
    FakeWorker::Fatal(c, StatusCode::kResourceExhausted, "tenant 't' already has 1 live sessions, its limit");
  });
  AddressRange window;
  Config config = TestConfig(w);
  config.connect_retry_s = 30;
  const auto start = std::chrono::steady_clock::now();
  auto s = Session::Open(config, &window);
  EXPECT_TRUE(s->dead());
  EXPECT_LT(std::chrono::steady_clock::now() - start, 5s) << "a final refusal was retried";
  w.Join();
  ReleaseRange(window);
}

TEST(SessionTest, ReplyWithAnotherRequestIdIsAProtocolError) {
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    wire::FrameHeader h;
    FakeWorker::Read<msg::DeviceRequest>(c, wire::Op::kDeviceSynchronize, &h);
    h.request_id += 1;
    FakeWorker::Reply(c, h, msg::CallReply{0});
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  int32_t error = 0;
  EXPECT_FALSE(Sync(*s, &error).ok());
  EXPECT_TRUE(s->dead());
  EXPECT_NE(s->DeadStatus().message().find("request id"), std::string::npos);
  w.Join();
  ReleaseRange(window);
}

TEST(SessionTest, ReplyWithAnotherOpIsAProtocolError) {
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    wire::FrameHeader h;
    FakeWorker::Read<msg::DeviceRequest>(c, wire::Op::kDeviceSynchronize, &h);
    h.op = static_cast<uint16_t>(wire::Op::kDeviceReset);
    FakeWorker::Reply(c, h, msg::CallReply{0});
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  int32_t error = 0;
  EXPECT_FALSE(Sync(*s, &error).ok());
  EXPECT_TRUE(s->dead());
  w.Join();
  ReleaseRange(window);
}

std::vector<uint8_t> Pattern(size_t n, uint8_t seed) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(seed + i * 7 + (i >> 12));
  return v;
}

TEST(SessionTest, DeviceToHostStreamsChunksIntoTheCallersBuffers) {
  constexpr uint32_t kChunk = 64 << 10;
  const size_t n = 3 * kChunk + 5;
  const std::vector<uint8_t> data = Pattern(n, 3);
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")}, {}, false, kChunk);
    wire::FrameHeader h;
    auto req = FakeWorker::Read<msg::CopyFromDeviceRequest>(c, wire::Op::kCopyFromDevice, &h);
    EXPECT_EQ(req.src.bytes(), n);
    // Reply body first, a heartbeat, then the bulk in chunks.
    codec::BodyWriter body;
    body.Encode(msg::CallReply{0});
    ASSERT_TRUE(SendFrame(c, static_cast<uint16_t>(h.op | wire::kReplyBit), h.request_id, body).ok());
    FakeWorker::Heartbeat(c);
    iovec bulk{const_cast<uint8_t*>(data.data()), n};
    ASSERT_TRUE(SendBulk(c, h.request_id, &bulk, 1, kChunk).ok());
    AnswerSync(c);
  });
  Config config = TestConfig(w);
  config.chunk_bytes = kChunk;
  AddressRange window;
  auto s = Session::Open(config, &window);
  ASSERT_FALSE(s->dead());
  EXPECT_EQ(s->chunk_bytes(), kChunk);
  std::vector<uint8_t> a(1000);
  std::vector<uint8_t> b(n - 1000);
  iovec dst[2] = {{a.data(), a.size()}, {b.data(), b.size()}};
  msg::CallReply reply;
  msg::CopyFromDeviceRequest req{0, 0, msg::Region{window.base, n, n, 1}, {}};
  ASSERT_TRUE(s->Call<wire::Op::kCopyFromDevice>(req, &reply, nullptr, 0, dst, 2).ok());
  EXPECT_EQ(reply.error, 0);
  EXPECT_TRUE(std::equal(a.begin(), a.end(), data.begin()));
  EXPECT_TRUE(std::equal(b.begin(), b.end(), data.begin() + 1000));
  int32_t error = -1;
  ASSERT_TRUE(Sync(*s, &error).ok());  // The stream is still in step.
  w.Join();
  ReleaseRange(window);
}

TEST(SessionTest, FailedDeviceToHostReadsNoBulk) {
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    wire::FrameHeader h;
    FakeWorker::Read<msg::CopyFromDeviceRequest>(c, wire::Op::kCopyFromDevice, &h);
    FakeWorker::Reply(c, h, msg::CallReply{hipErrorInvalidValue});
    AnswerSync(c);
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  std::vector<uint8_t> out(100, 0xAB);
  iovec dst{out.data(), out.size()};
  msg::CallReply reply;
  ASSERT_TRUE(s->Call<wire::Op::kCopyFromDevice>(msg::CopyFromDeviceRequest{0, 0, {window.base, 100, 100, 1}, {}},
                      &reply, nullptr, 0, &dst, 1)
                  .ok());
  EXPECT_EQ(reply.error, hipErrorInvalidValue);
  EXPECT_EQ(out[0], 0xAB);
  int32_t error = -1;
  ASSERT_TRUE(Sync(*s, &error).ok());
  w.Join();
  ReleaseRange(window);
}

// PostCopyFromDevice: nobody waits for the reply; the session's callback
// thread reads it and writes the bytes, a failed copy leaves its buffer
// alone and becomes TakeAsyncError()'s, and AwaitAsyncCopies returns once
// all have landed.
TEST(SessionTest, AsyncDeviceToHostLandsWithoutAWaitingCall) {
  const size_t n = 200000;
  const std::vector<uint8_t> data = Pattern(n, 9);
  std::atomic<bool> send_second{false};
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    wire::FrameHeader first;
    wire::FrameHeader second;
    FakeWorker::Read<msg::CopyFromDeviceRequest>(c, wire::Op::kCopyFromDevice, &first);
    FakeWorker::Read<msg::CopyFromDeviceRequest>(c, wire::Op::kCopyFromDevice, &second);
    codec::BodyWriter body;
    body.Encode(msg::CallReply{0});
    ASSERT_TRUE(SendFrame(c, static_cast<uint16_t>(first.op | wire::kReplyBit), first.request_id, body).ok());
    iovec bulk{const_cast<uint8_t*>(data.data()), n};
    ASSERT_TRUE(SendBulk(c, first.request_id, &bulk, 1, wire::kDefaultChunkBytes).ok());
    while (!send_second.load()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    FakeWorker::Reply(c, second, msg::CallReply{hipErrorInvalidValue});
    AnswerSync(c);
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  ASSERT_FALSE(s->dead());
  std::vector<uint8_t> landed(n, 0);
  std::vector<uint8_t> untouched(64, 0xAB);
  iovec a{landed.data(), n};
  iovec b{untouched.data(), untouched.size()};
  ASSERT_TRUE(s->PostCopyFromDevice(msg::CopyFromDeviceRequest{0, 0, {window.base, n, n, 1}, {}}, &a, 1).ok());
  ASSERT_TRUE(s->PostCopyFromDevice(msg::CopyFromDeviceRequest{0, 0, {window.base, 64, 64, 1}, {}}, &b, 1).ok());
  ASSERT_TRUE(s->Flush().ok());
  // No call waits: the bytes still arrive.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (landed[n - 1] != data[n - 1] && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  EXPECT_TRUE(landed == data);
  send_second = true;
  ASSERT_TRUE(s->AwaitAsyncCopies().ok());
  EXPECT_EQ(untouched, std::vector<uint8_t>(64, 0xAB));
  EXPECT_EQ(s->TakeAsyncError(), hipErrorInvalidValue);
  EXPECT_EQ(s->TakeAsyncError(), 0) << "reported twice";
  int32_t error = -1;
  ASSERT_TRUE(Sync(*s, &error).ok());
  w.Join();
  ReleaseRange(window);
}

TEST(SessionTest, BlockingHostToDeviceSendsBulkAndWaits) {
  const size_t n = (1 << 20) + 3;
  const std::vector<uint8_t> data = Pattern(n, 11);
  std::vector<uint8_t> received(n);
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    wire::FrameHeader h;
    auto req = FakeWorker::Read<msg::CopyToDeviceRequest>(c, wire::Op::kCopyToDevice, &h);
    EXPECT_TRUE(req.want_reply);
    iovec dst{received.data(), n};
    ASSERT_TRUE(ReadBulk(c, h.request_id, &dst, 1).ok());
    FakeWorker::Reply(c, h, msg::CallReply{0});
  });
  Config config = TestConfig(w);
  config.chunk_bytes = 256 << 10;
  AddressRange window;
  auto s = Session::Open(config, &window);
  iovec src{const_cast<uint8_t*>(data.data()), n};
  msg::CallReply reply;
  msg::CopyToDeviceRequest req{0, 0, msg::Region{window.base, n, n, 1}, true, {}};
  ASSERT_TRUE(s->Call<wire::Op::kCopyToDevice>(req, &reply, &src, 1).ok());
  EXPECT_EQ(reply.error, 0);
  w.Join();
  EXPECT_EQ(received, data);
  ReleaseRange(window);
}

TEST(SessionTest, LargeAsyncCopyIsSentBeforeReturningSmallOneIsBatched) {
  const size_t big = Session::kInlineBulkBytes + 1;
  const std::vector<uint8_t> big_data = Pattern(big, 5);
  const std::vector<uint8_t> small_data = Pattern(100, 9);
  std::vector<uint8_t> big_seen(big);
  std::vector<uint8_t> small_seen(100);
  std::atomic<bool> big_arrived{false};
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    wire::FrameHeader h;
    auto req = FakeWorker::Read<msg::CopyToDeviceRequest>(c, wire::Op::kCopyToDevice, &h);
    EXPECT_FALSE(req.want_reply);
    iovec dst{big_seen.data(), big};
    ASSERT_TRUE(ReadBulk(c, h.request_id, &dst, 1).ok());
    big_arrived = true;
    FakeWorker::Read<msg::CopyToDeviceRequest>(c, wire::Op::kCopyToDevice, &h);
    iovec sdst{small_seen.data(), 100};
    ASSERT_TRUE(ReadBulk(c, h.request_id, &sdst, 1).ok());
    AnswerSync(c);
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);  // The flusher waits 10 s.
  std::vector<uint8_t> source = big_data;
  iovec src{source.data(), big};
  ASSERT_TRUE(s->PostCopy(msg::CopyToDeviceRequest{0, 0, {window.base, big, big, 1}, false, {}}, &src, 1).ok());
  std::fill(source.begin(), source.end(), 0);  // Consumed on return: may be reused.
  const auto deadline = std::chrono::steady_clock::now() + 5s;
  while (!big_arrived && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(1ms);
  EXPECT_TRUE(big_arrived.load());
  std::vector<uint8_t> small = small_data;
  iovec ssrc{small.data(), 100};
  ASSERT_TRUE(s->PostCopy(msg::CopyToDeviceRequest{0, 0, {window.base, 100, 100, 1}, false, {}}, &ssrc, 1).ok());
  std::fill(small.begin(), small.end(), 0);  // Copied into the batch already.
  int32_t error = -1;
  ASSERT_TRUE(Sync(*s, &error).ok());
  w.Join();
  EXPECT_EQ(big_seen, big_data);
  EXPECT_EQ(small_seen, small_data);
  ReleaseRange(window);
}

TEST(SessionTest, ConcurrentCallersShareTheSession) {
  constexpr int kThreads = 4;
  constexpr int kCalls = 50;
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    for (int i = 0; i < kThreads * kCalls; ++i) {
      // Fire-and-forget frames may arrive between the calls.
      for (;;) {
        wire::FrameHeader h = FakeWorker::Next(c);
        std::vector<uint8_t> body;
        ASSERT_TRUE(ReadBody(c, h, &body).ok());
        if (h.op == static_cast<uint16_t>(wire::Op::kFree)) continue;
        ASSERT_EQ(h.op, static_cast<uint16_t>(wire::Op::kDeviceSynchronize));
        FakeWorker::Reply(c, h, msg::CallReply{0});
        break;
      }
    }
  });
  Config config = TestConfig(w);
  config.flush_us = 100;
  AddressRange window;
  auto s = Session::Open(config, &window);
  std::vector<std::thread> threads;
  std::atomic<int> ok{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kCalls; ++i) {
        (void)s->Post<wire::Op::kFree>(msg::FreeRequest{window.base});
        int32_t error = -1;
        if (Sync(*s, &error).ok() && error == 0) ++ok;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kThreads * kCalls);
  // Frees posted after the last call may still be queued; the script is done.
  w.Join();
  ReleaseRange(window);
}

// Replies come back in the order the worker finishes, not the order of the
// requests: each goes to the thread that waits for it, reply bulk straight
// into that thread's buffer.
TEST(SessionTest, OutOfOrderRepliesReachTheirCallers) {
  const size_t n = (256 << 10) + 5;
  const std::vector<uint8_t> data = Pattern(n, 21);
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    wire::FrameHeader sync{};
    wire::FrameHeader copy{};
    for (int i = 0; i < 2; ++i) {
      wire::FrameHeader h = FakeWorker::Next(c);
      if (h.op == static_cast<uint16_t>(wire::Op::kDeviceSynchronize)) {
        (void)FakeWorker::Body<msg::DeviceRequest>(c, h);
        sync = h;
      } else {
        ASSERT_EQ(h.op, static_cast<uint16_t>(wire::Op::kCopyFromDevice));
        (void)FakeWorker::Body<msg::CopyFromDeviceRequest>(c, h);
        copy = h;
      }
    }
    ASSERT_NE(sync.request_id, 0u);
    ASSERT_NE(copy.request_id, 0u);
    // The later-sent or earlier-sent, whichever: the copy finishes first.
    iovec src{const_cast<uint8_t*>(data.data()), n};
    FakeWorker::Reply(c, copy, msg::CallReply{0}, &src, 1, 64 << 10);
    FakeWorker::Heartbeat(c);
    FakeWorker::Reply(c, sync, msg::CallReply{hipErrorLaunchFailure});
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  std::atomic<int32_t> sync_error{-1};
  std::thread waiter([&] {
    int32_t error = -1;
    EXPECT_TRUE(Sync(*s, &error).ok());
    sync_error = error;
  });
  std::vector<uint8_t> got(n);
  iovec dst{got.data(), n};
  msg::CallReply reply;
  msg::CopyFromDeviceRequest req{0, 0, msg::Region{window.base, n, n, 1}, {}};
  ASSERT_TRUE(s->Call<wire::Op::kCopyFromDevice>(req, &reply, nullptr, 0, &dst, 1).ok());
  waiter.join();
  w.Join();
  EXPECT_EQ(reply.error, 0);
  EXPECT_EQ(got, data);
  EXPECT_EQ(sync_error.load(), hipErrorLaunchFailure);
  EXPECT_FALSE(s->dead());
  ReleaseRange(window);
}

// Many threads with a call outstanding each, answered in reverse order of
// arrival: every caller gets the answer to its own question.
TEST(SessionTest, ConcurrentCallsAnsweredInReverseOrder) {
  constexpr int kThreads = 4;
  constexpr int kCalls = 150;
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    int answered = 0;
    std::vector<std::pair<wire::FrameHeader, msg::DeviceRequest>> held;
    while (answered < kThreads * kCalls) {
      wire::FrameHeader h;
      auto req = FakeWorker::Read<msg::DeviceRequest>(c, wire::Op::kMemGetInfo, &h);
      held.emplace_back(h, req);
      // Each thread has at most one call outstanding: hold as many as can be.
      const int outstanding_max = std::min(kThreads, kThreads * kCalls - answered);
      if (static_cast<int>(held.size()) < outstanding_max) continue;
      for (auto it = held.rbegin(); it != held.rend(); ++it) {
        msg::MemInfoReply r;
        r.free_bytes = static_cast<uint64_t>(it->second.device) * 3;
        r.total_bytes = static_cast<uint64_t>(it->second.device);
        FakeWorker::Reply(c, it->first, r);
        ++answered;
      }
      held.clear();
    }
  });
  AddressRange window;
  auto s = Session::Open(TestConfig(w), &window);
  std::atomic<int> right{0};
  std::vector<std::thread> threads;
  // All threads start together and stay in step, so the worker can hold
  // one call of each.
  std::atomic<int> ready{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      ++ready;
      while (ready.load() < kThreads) std::this_thread::yield();
      for (int i = 0; i < kCalls; ++i) {
        const int32_t tag = t * 100000 + i;
        msg::MemInfoReply r;
        if (s->Call<wire::Op::kMemGetInfo>(msg::DeviceRequest{tag}, &r).ok() &&
            r.free_bytes == static_cast<uint64_t>(tag) * 3 && r.total_bytes == static_cast<uint64_t>(tag))
          ++right;
      }
    });
  }
  for (auto& t : threads) t.join();
  w.Join();
  EXPECT_EQ(right.load(), kThreads * kCalls);
  EXPECT_FALSE(s->dead());
  ReleaseRange(window);
}

}  // namespace
}  // namespace hipr::client

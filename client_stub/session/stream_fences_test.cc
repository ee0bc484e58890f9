// StreamFences against a scripted fake worker over real TCP: the frames a
// fence queues (its event, its record, each other stream's wait, once),
// what ends it, and the wait for a fence of another device.
#include "client_stub/session/stream_fences.h"

#include <gtest/gtest.h>
#include <hip/hip_runtime_api.h>

#include "client_stub/memory/address_window.h"
#include "tests/client_stub/fake_worker.h"

namespace hipr::client {
namespace {

using testing::FakeWorker;

Config TestConfig(const FakeWorker& w) {
  Config c;
  c.server = w.address();
  c.connect_timeout_ms = 2000;
  c.peer_timeout_ms = 2000;
  c.window_bytes = uint64_t{256} << 20;
  c.flush_us = 10000000;  // Flush only on calls.
  return c;
}

// A call that flushes the batch: the script reads the frames before it.
Status Sync(Remote& s) {
  msg::CallReply reply;
  return s.Call<wire::Op::kDeviceSynchronize>(msg::DeviceRequest{0}, &reply);
}

void AnswerSync(Connection& c) {
  wire::FrameHeader h;
  FakeWorker::Read<msg::DeviceRequest>(c, wire::Op::kDeviceSynchronize, &h);
  FakeWorker::Reply(c, h, msg::CallReply{0});
}

TEST(StreamFencesTest, EveryOtherStreamWaitsOnceForTheFence) {
  constexpr uint64_t kEvent = StreamFences::kEventIdBase;
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0")});
    auto create = FakeWorker::Read<msg::EventCreateRequest>(c, wire::Op::kEventCreate);
    EXPECT_EQ(create.event, kEvent);
    EXPECT_EQ(create.device, 0);
    EXPECT_EQ(create.flags, static_cast<uint32_t>(hipEventDisableTiming));
    auto record = FakeWorker::Read<msg::EventRecordRequest>(c, wire::Op::kEventRecord);
    EXPECT_EQ(record.event, kEvent);
    EXPECT_EQ(record.stream, 5u);
    auto wait = FakeWorker::Read<msg::StreamWaitEventRequest>(c, wire::Op::kStreamWaitEvent);
    EXPECT_EQ(wait.stream, 7u);
    EXPECT_EQ(wait.event, kEvent);
    wait = FakeWorker::Read<msg::StreamWaitEventRequest>(c, wire::Op::kStreamWaitEvent);
    EXPECT_EQ(wait.stream, 0u);  // The null stream too.
    AnswerSync(c);  // Nothing else came before: stream 7 waited once, stream 5 never.
    // A second fence on stream 7: it waits for... nothing (it waited for the
    // first already), records; stream 5 now waits for the new fence.
    record = FakeWorker::Read<msg::EventRecordRequest>(c, wire::Op::kEventRecord);
    EXPECT_EQ(record.stream, 7u);
    wait = FakeWorker::Read<msg::StreamWaitEventRequest>(c, wire::Op::kStreamWaitEvent);
    EXPECT_EQ(wait.stream, 5u);
    AnswerSync(c);
  });
  std::vector<AddressRange> windows;
  auto s = Remote::Open(TestConfig(w), &windows);
  ASSERT_FALSE(s->dead()) << s->DeadStatus().ToString();
  StreamFences f;
  EXPECT_FALSE(f.AnyInForce());
  ASSERT_TRUE(f.Order(*s, 0, 7).ok());  // No fence: nothing is sent.
  ASSERT_TRUE(f.Raise(*s, 0, 5).ok());
  EXPECT_TRUE(f.InForce(0));
  EXPECT_FALSE(f.InForce(1));
  ASSERT_TRUE(f.Order(*s, 0, 7).ok());
  ASSERT_TRUE(f.Order(*s, 0, 7).ok());
  ASSERT_TRUE(f.Order(*s, 0, 5).ok());
  ASSERT_TRUE(f.Order(*s, 0, 0).ok());
  ASSERT_TRUE(Sync(*s).ok());
  const uint64_t before_second = f.Ticket(0);
  ASSERT_TRUE(f.Raise(*s, 0, 7).ok());
  ASSERT_TRUE(f.Order(*s, 0, 5).ok());
  ASSERT_TRUE(Sync(*s).ok());
  // What ends a fence: a synchronisation of its stream (or the device) that
  // began after it was raised, and nothing raised since.
  f.Settled(0, 7, before_second);
  EXPECT_TRUE(f.InForce(0)) << "a ticket taken before the fence";
  const uint64_t ticket = f.Ticket(0);
  f.Settled(0, 5, ticket);
  EXPECT_TRUE(f.InForce(0)) << "another stream's synchronisation";
  f.Settled(0, 7, ticket);
  EXPECT_FALSE(f.InForce(0));
  EXPECT_FALSE(f.AnyInForce());
  w.Join();
  for (const AddressRange& window : windows) ReleaseRange(window);
}

TEST(StreamFencesTest, WorkOnAnotherDeviceWaitsUntilTheFenceIsReached) {
  constexpr uint64_t kEvent = StreamFences::kEventIdBase;
  FakeWorker w;
  w.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("gpu0"), FakeWorker::Device("gpu1")});
    EXPECT_EQ(FakeWorker::Read<msg::EventCreateRequest>(c, wire::Op::kEventCreate).event, kEvent);
    EXPECT_EQ(FakeWorker::Read<msg::EventRecordRequest>(c, wire::Op::kEventRecord).stream, 0u);
    // Polled with queries (which collect no deferred error) until reached.
    for (int32_t answer : {static_cast<int32_t>(hipErrorNotReady), 0}) {
      wire::FrameHeader h;
      EXPECT_EQ(FakeWorker::Read<msg::EventRequest>(c, wire::Op::kEventQuery, &h).event, kEvent);
      FakeWorker::Reply(c, h, msg::CallReply{answer});
    }
    AnswerSync(c);  // No wait was queued for device 0's null stream.
  });
  std::vector<AddressRange> windows;
  auto s = Remote::Open(TestConfig(w), &windows);
  ASSERT_FALSE(s->dead()) << s->DeadStatus().ToString();
  StreamFences f;
  ASSERT_TRUE(f.Raise(*s, 1, 0).ok());
  ASSERT_TRUE(f.Order(*s, 0, 0).ok());
  EXPECT_FALSE(f.InForce(1)) << "reached: the fence has ended";
  ASSERT_TRUE(Sync(*s).ok());
  w.Join();
  for (const AddressRange& window : windows) ReleaseRange(window);
}

}  // namespace
}  // namespace hipr::client

// Remote: several workers as one device list (remote.h), against fake
// workers on loopback.
#include "client_stub/session/remote.h"

#include <gtest/gtest.h>

#include "tests/client_stub/fake_worker.h"

namespace hipr::client {
namespace {

using testing::FakeWorker;

Config TwoWorkers(const FakeWorker& a, const FakeWorker& b) {
  Config c;
  c.server = a.address() + "," + b.address();
  c.connect_timeout_ms = 2000;
  c.peer_timeout_ms = 2000;
  c.window_bytes = uint64_t{256} << 20;
  c.flush_us = 10000000;
  return c;
}

void ReleaseAll(const std::vector<AddressRange>& windows) {
  for (const AddressRange& w : windows) ReleaseRange(w);
}

TEST(RemoteTest, ListsServersInOrder) {
  EXPECT_EQ(Remote::SplitServers("a:1"), (std::vector<std::string>{"a:1"}));
  EXPECT_EQ(Remote::SplitServers("a:1,b:2,unix:/x"), (std::vector<std::string>{"a:1", "b:2", "unix:/x"}));
  EXPECT_EQ(Remote::SplitServers("a:1,,b:2,"), (std::vector<std::string>{"a:1", "b:2"})) << "empty entries dropped";
  EXPECT_EQ(Remote::SplitServers(""), (std::vector<std::string>{""})) << "unset stays one (unset) server";
}

TEST(RemoteTest, DnsEntriesBecomeEveryAddressInOrder) {
  std::vector<Remote::Endpoint> e;
  ASSERT_TRUE(Remote::ListWorkers("10.0.0.9:7,dns:127.0.0.1:18515", &e).ok());
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].server, "10.0.0.9:7");
  EXPECT_EQ(e[0].tls_name, "");
  EXPECT_EQ(e[1].server, "127.0.0.1:18515");
  EXPECT_EQ(e[1].tls_name, "127.0.0.1") << "TLS checks the name, not the address it resolved to";
  // Numeric names only: a fresh machine may resolve no name at all (CI's
  // root has no "localhost").
  ASSERT_TRUE(Remote::ListWorkers("dns:::1:9", &e).ok());
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].server, "[::1]:9") << "an IPv6 address is bracketed";
  EXPECT_FALSE(Remote::ListWorkers("dns:nosuchhost.invalid:9", &e).ok());
  Status bad = Remote::ListWorkers("dns:nohostport", &e);
  EXPECT_FALSE(bad.ok());
  EXPECT_NE(bad.message().find("dns:NAME:PORT"), std::string::npos) << bad.ToString();
}

// Devices are numbered across the workers; a request goes to its device's
// worker in that worker's own ordinal, and one without a device goes where
// its caller says.
TEST(RemoteTest, RoutesEachRequestToItsDevicesWorkerInItsOrdinal) {
  FakeWorker a, b;
  msg::MemsetRequest seen_a, seen_b;
  msg::StreamRequest destroyed;
  a.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("a0")});
    wire::FrameHeader h;
    seen_a = FakeWorker::Read<msg::MemsetRequest>(c, wire::Op::kMemset);
    FakeWorker::Read<msg::DeviceRequest>(c, wire::Op::kDeviceSynchronize, &h);
    FakeWorker::Reply(c, h, msg::CallReply{0});
  });
  b.Serve([&](Connection& c) {
    FakeWorker::AcceptHello(c, {FakeWorker::Device("b0"), FakeWorker::Device("b1")});
    wire::FrameHeader h;
    seen_b = FakeWorker::Read<msg::MemsetRequest>(c, wire::Op::kMemset);
    destroyed = FakeWorker::Read<msg::StreamRequest>(c, wire::Op::kStreamDestroy);
    FakeWorker::Read<msg::DeviceRequest>(c, wire::Op::kDeviceSynchronize, &h);
    FakeWorker::Reply(c, h, msg::CallReply{7});
  });
  std::vector<AddressRange> windows;
  auto r = Remote::Open(TwoWorkers(a, b), &windows);
  ASSERT_FALSE(r->dead()) << r->DeadStatus().ToString();
  ASSERT_EQ(r->worker_count(), 2);
  ASSERT_EQ(r->device_count(), 3);
  EXPECT_EQ(r->devices()[0].name, "a0");
  EXPECT_EQ(r->devices()[2].name, "b1");
  EXPECT_TRUE(r->SameWorker(1, 2));
  EXPECT_FALSE(r->SameWorker(0, 1));
  EXPECT_EQ(r->LocalOf(2), 1);
  ASSERT_EQ(windows.size(), 2u);
  EXPECT_FALSE(windows[0].Overlaps(windows[1].base, windows[1].size)) << "each worker has its own addresses";

  msg::MemsetRequest m;
  m.device = 2;
  m.value = 0xb1;
  ASSERT_TRUE(r->Post<wire::Op::kMemset>(m).ok());
  m.device = 0;
  m.value = 0xa0;
  ASSERT_TRUE(r->Post<wire::Op::kMemset>(m).ok());
  ASSERT_TRUE(r->Post<wire::Op::kStreamDestroy>(msg::StreamRequest{42, 1}).ok());
  msg::CallReply reply;
  ASSERT_TRUE(r->Call<wire::Op::kDeviceSynchronize>(msg::DeviceRequest{0}, &reply).ok());
  EXPECT_EQ(reply.error, 0);
  ASSERT_TRUE(r->Call<wire::Op::kDeviceSynchronize>(msg::DeviceRequest{2}, &reply).ok());
  EXPECT_EQ(reply.error, 7) << "worker b's answer";
  Status none = r->Call<wire::Op::kDeviceSynchronize>(msg::DeviceRequest{3}, &reply);
  EXPECT_EQ(ToHipError(none), hipErrorInvalidDevice);
  a.Join();
  b.Join();
  EXPECT_EQ(seen_b.value, 0xb1u);
  EXPECT_EQ(seen_b.device, 1) << "b's own ordinal for the program's device 2";
  EXPECT_EQ(seen_a.value, 0xa0u);
  EXPECT_EQ(seen_a.device, 0);
  EXPECT_EQ(destroyed.stream, 42u);
  r.reset();
  ReleaseAll(windows);
}

// HIP_VISIBLE_DEVICES selects from the joint list, in its order.
TEST(RemoteTest, VisibleDevicesSelectFromTheJointList) {
  FakeWorker a, b;
  a.Serve([&](Connection& c) { FakeWorker::AcceptHello(c, {FakeWorker::Device("a0")}); });
  b.Serve([&](Connection& c) {
    const msg::HelloRequest hello = FakeWorker::AcceptHello(c, {FakeWorker::Device("b0"), FakeWorker::Device("b1")});
    EXPECT_TRUE(hello.visible_devices.empty()) << "with several workers the client selects";
  });
  Config config = TwoWorkers(a, b);
  config.visible_devices = {"HIP_VISIBLE_DEVICES=2,0"};
  std::vector<AddressRange> windows;
  auto r = Remote::Open(config, &windows);
  ASSERT_FALSE(r->dead()) << r->DeadStatus().ToString();
  ASSERT_EQ(r->device_count(), 2);
  EXPECT_EQ(r->devices()[0].name, "b1");
  EXPECT_EQ(r->devices()[1].name, "a0");
  EXPECT_EQ(r->WorkerOf(0), 1);
  EXPECT_EQ(r->LocalOf(0), 1);
  EXPECT_EQ(r->WorkerOf(1), 0);
  a.Join();
  b.Join();
  r.reset();
  ReleaseAll(windows);
}

// A list with a worker that cannot be reached serves nothing.
TEST(RemoteTest, AnUnreachableWorkerServesNoDeviceOfAny) {
  FakeWorker a;
  a.Serve([&](Connection& c) { FakeWorker::AcceptHello(c, {FakeWorker::Device("a0")}); });
  Config config;
  config.server = a.address() + ",127.0.0.1:1";
  config.connect_timeout_ms = 2000;
  config.peer_timeout_ms = 2000;
  config.window_bytes = uint64_t{256} << 20;
  std::vector<AddressRange> windows;
  auto r = Remote::Open(config, &windows);
  EXPECT_TRUE(r->dead());
  EXPECT_EQ(r->device_count(), 0);
  EXPECT_NE(r->DeadStatus().message().find("127.0.0.1:1"), std::string::npos) << r->DeadStatus().ToString();
  a.Join();
  r.reset();
  ReleaseAll(windows);
}

}  // namespace
}  // namespace hipr::client

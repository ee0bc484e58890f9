// RdmaConnection on the verbs double, beyond the conformance suite: the
// zero-copy path and its registration cache, peers that die mid-transfer,
// hostile peers whose RDMA the (double's) NIC refuses, and set-up errors.
#include "protocol/rdma/rdma_connection.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <cstdlib>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "protocol/rdma/rdma_test_util.h"

namespace hipr::rdma {
namespace {

using test::FabricEnvironment;
using test::MakeRdmaPair;

[[maybe_unused]] ::testing::Environment* const kFabric =
    ::testing::AddGlobalTestEnvironment(new FabricEnvironment);

std::vector<uint8_t> Bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> v(n);
  uint64_t x = seed * 0x9e3779b97f4a7c15ull + 1;
  for (auto& b : v) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    b = static_cast<uint8_t>(x);
  }
  return v;
}

// Collects what a connection logs.
struct LogSink {
  std::mutex mu;
  std::vector<std::string> lines;
  std::function<void(const std::string&)> Fn() {
    return [this](const std::string& l) {
      std::lock_guard<std::mutex> lock(mu);
      lines.push_back(l);
    };
  }
  std::string All() {
    std::lock_guard<std::mutex> lock(mu);
    std::string s;
    for (const auto& l : lines) s += l + "\n";
    return s;
  }
};

TEST(QpInfo, RoundTripsAndRefusesNonsense) {
  QpInfo in;
  in.qpn = 0x123456;
  in.psn = 0xABCDEF;
  for (int i = 0; i < 16; ++i) in.gid[i] = static_cast<uint8_t>(i * 3);
  in.ring_addr = 0x7f0012345000;
  in.ring_rkey = 0xDEADBEEF;
  in.ring_bytes = 8u << 20;
  in.recv_buffers = 64;
  in.buffer_bytes = 8192;
  uint8_t wire[kQpInfoBytes];
  EncodeQpInfo(in, wire);
  QpInfo out;
  ASSERT_TRUE(DecodeQpInfo(wire, sizeof wire, &out).ok());
  EXPECT_EQ(out.qpn, in.qpn);
  EXPECT_EQ(out.psn, in.psn);
  EXPECT_EQ(0, std::memcmp(out.gid, in.gid, 16));
  EXPECT_EQ(out.ring_addr, in.ring_addr);
  EXPECT_EQ(out.ring_rkey, in.ring_rkey);
  EXPECT_EQ(out.ring_bytes, in.ring_bytes);
  EXPECT_EQ(out.recv_buffers, in.recv_buffers);
  EXPECT_EQ(out.buffer_bytes, in.buffer_bytes);
  EXPECT_EQ(DecodeQpInfo(wire, sizeof wire - 1, &out).code(), StatusCode::kProtocolError);
  uint8_t bad[kQpInfoBytes];
  std::memcpy(bad, wire, sizeof bad);
  bad[0] ^= 1;
  EXPECT_EQ(DecodeQpInfo(bad, sizeof bad, &out).code(), StatusCode::kProtocolError);
  in.recv_buffers = 1u << 30;  // Would size our credit accounting.
  EncodeQpInfo(in, wire);
  EXPECT_EQ(DecodeQpInfo(wire, sizeof wire, &out).code(), StatusCode::kProtocolError);
}

TEST(RdmaSetUp, NoDeviceOrAnUnknownOneIsNotSupported) {
  std::unique_ptr<RdmaConnection> c;
  Options named;
  named.device = "mlx5_7";
  Status st = RdmaConnection::Create(named, &c);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
  const std::string dir = std::getenv(verbs_double::kFabricEnv);
  unsetenv(verbs_double::kFabricEnv);
  st = RdmaConnection::Create(Options{}, &c);
  setenv(verbs_double::kFabricEnv, dir.c_str(), 1);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported) << st.ToString();
  Options odd;
  odd.chunk_bytes = odd.ring_bytes;  // A chunk must fit the ring four times.
  EXPECT_EQ(RdmaConnection::Create(odd, &c).code(), StatusCode::kInvalidArgument);
}

TEST(RdmaConnectionTest, PeerIsLocalAndNamed) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  EXPECT_TRUE(p.a->PeerIsLocal());
  EXPECT_EQ(p.a->PeerName().rfind("rdma:", 0), 0u) << p.a->PeerName();
}

TEST(RdmaConnectionTest, PinnedSendsAreZeroCopyAndHitTheCache) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  const size_t n = size_t{8} << 20;
  std::vector<uint8_t> pinned = Bytes(n, 11);
  const uint8_t header[16] = {1, 2, 3};
  std::vector<uint8_t> got(n + sizeof header);
  for (int round = 0; round < 3; ++round) {
    std::thread reader([&] { EXPECT_TRUE(p.b->RecvExact(got.data(), got.size()).ok()); });
    iovec iov[2] = {{const_cast<uint8_t*>(header), sizeof header}, {pinned.data(), n}};
    ASSERT_TRUE(p.a->SendVZeroCopy(iov, 2).ok());
    reader.join();
    EXPECT_EQ(0, std::memcmp(got.data(), header, sizeof header));
    EXPECT_TRUE(std::equal(pinned.begin(), pinned.end(), got.begin() + sizeof header)) << "round " << round;
  }
  RdmaConnection::Stats s = p.a->stats();
  EXPECT_EQ(s.bulk_bytes, 3 * n);
  EXPECT_EQ(s.bulk_bytes_copied_on_send, 0u) << "a pinned source was copied in user space";
  MrCache::Stats c = p.a->registrations().stats();
  EXPECT_EQ(c.misses, 1u);
  EXPECT_EQ(c.hits, 2u);
  // The same bytes through SendV (pageable): staged, so copied once.
  std::thread reader([&] { EXPECT_TRUE(p.b->RecvExact(got.data(), n).ok()); });
  ASSERT_TRUE(p.a->SendAll(pinned.data(), n).ok());
  reader.join();
  EXPECT_TRUE(std::equal(pinned.begin(), pinned.end(), got.begin()));
  EXPECT_EQ(p.a->stats().bulk_bytes_copied_on_send, n);
}

TEST(RdmaConnectionTest, InvalidatedRegistrationsAreRegisteredAnew) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  const size_t n = size_t{1} << 20;
  std::vector<uint8_t> pinned = Bytes(n, 12);
  std::vector<uint8_t> got(n);
  auto send = [&] {
    std::thread reader([&] { EXPECT_TRUE(p.b->RecvExact(got.data(), n).ok()); });
    iovec iov{pinned.data(), n};
    EXPECT_TRUE(p.a->SendVZeroCopy(&iov, 1).ok());
    reader.join();
    EXPECT_TRUE(got == pinned);
  };
  send();
  EXPECT_EQ(p.a->registrations().stats().regions, 1u);
  // The memory is "freed": its registration goes first.
  p.a->registrations().Invalidate(pinned.data(), n);
  EXPECT_EQ(p.a->registrations().stats().regions, 0u);
  EXPECT_EQ(p.a->registrations().stats().invalidations, 1u);
  pinned = Bytes(n, 13);  // Other bytes, maybe other pages.
  send();
  EXPECT_EQ(p.a->registrations().stats().misses, 2u);
  EXPECT_EQ(p.a->stats().bulk_bytes_copied_on_send, 0u);
}

TEST(RdmaConnectionTest, ShutdownEndsThePeersStreamToo) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  p.a->Shutdown();
  uint8_t byte;
  EXPECT_EQ(p.b->RecvExact(&byte, 1).code(), StatusCode::kLinkDown);
  EXPECT_EQ(p.a->SendAll(&byte, 1).code(), StatusCode::kLinkDown);
}

// A peer that lies about our ring (its address or key) and WRITEs where we
// never allowed: the NIC refuses it, the liar gets IBV_WC_REM_ACCESS_ERR,
// we get a session-scope error naming the access violation, and not one
// byte of our memory changes.
void HostilePeer(bool wrong_key) {
  LogSink victim_log, liar_log;
  Options vo, lo;
  vo.log = victim_log.Fn();
  lo.log = liar_log.Fn();
  std::unique_ptr<RdmaConnection> victim, liar;
  ASSERT_TRUE(RdmaConnection::Create(vo, &victim).ok());
  ASSERT_TRUE(RdmaConnection::Create(lo, &liar).ok());
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  QpInfo told = victim->local_info();
  if (wrong_key)
    told.ring_rkey += 1;
  else
    told.ring_addr += told.ring_bytes;  // Just past the end of the ring.
  ASSERT_TRUE(victim->Connect(liar->local_info(), sv[0]).ok());
  ASSERT_TRUE(liar->Connect(told, sv[1]).ok());
  const std::vector<uint8_t> bulk = Bytes(256 << 10, 5);
  (void)liar->SendAll(bulk.data(), bulk.size());  // Posted; it fails in flight.
  uint8_t byte;
  Status st = victim->RecvExact(&byte, 1);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  EXPECT_EQ(st.scope(), StatusScope::kSession);
  EXPECT_NE(st.message().find("IBV_EVENT_QP_ACCESS_ERR"), std::string::npos) << st.message();
  EXPECT_NE(victim_log.All().find("IBV_EVENT_QP_ACCESS_ERR"), std::string::npos) << victim_log.All();
  Status lst = liar->WaitReadable(5000);
  EXPECT_EQ(lst.code(), StatusCode::kLinkDown) << lst.ToString();
  EXPECT_NE(lst.message().find("IBV_WC_REM_ACCESS_ERR"), std::string::npos) << lst.message();
  EXPECT_NE(liar_log.All().find("IBV_WC_REM_ACCESS_ERR"), std::string::npos) << liar_log.All();
  // Later calls fail at once.
  EXPECT_EQ(victim->RecvExact(&byte, 1).code(), StatusCode::kProtocolError);
  EXPECT_FALSE(liar->SendAll(bulk.data(), 100).ok());
}

TEST(RdmaHostilePeer, OutOfBoundsWriteIsRefusedAndASessionError) { HostilePeer(false); }
TEST(RdmaHostilePeer, WrongKeyWriteIsRefusedAndASessionError) { HostilePeer(true); }

// The peer is another process, killed (SIGKILL: no clean-up of any kind)
// while bulk is flowing. Either direction ends in kLinkDown, promptly.
enum class Killed { kSender, kReceiver };
void PeerKilledMidTransfer(Killed who) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  const std::vector<uint8_t> chunk = Bytes(size_t{4} << 20, 21);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(sv[0]);
    std::unique_ptr<RdmaConnection> c;
    if (!RdmaConnection::ConnectOverSocket(sv[1], Options{}, 5000, &c).ok()) _exit(1);
    std::vector<uint8_t> sink(chunk.size());
    for (;;) {  // Until killed.
      Status st = who == Killed::kSender ? c->SendAll(chunk.data(), chunk.size())
                                         : c->RecvExact(sink.data(), 64 << 10);
      if (!st.ok()) _exit(2);
      if (who == Killed::kReceiver) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  close(sv[1]);
  std::unique_ptr<RdmaConnection> c;
  ASSERT_TRUE(RdmaConnection::ConnectOverSocket(sv[0], Options{}, 5000, &c).ok());
  std::vector<uint8_t> got(chunk.size());
  if (who == Killed::kSender) {
    ASSERT_TRUE(c->RecvExact(got.data(), got.size()).ok());
    EXPECT_TRUE(got == chunk);
  } else {
    ASSERT_TRUE(c->SendAll(chunk.data(), chunk.size()).ok());
  }
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  const auto t0 = std::chrono::steady_clock::now();
  Status st;
  for (int i = 0; i < 1000 && st.ok(); ++i)
    st = who == Killed::kSender ? c->RecvExact(got.data(), got.size()) : c->SendAll(chunk.data(), chunk.size());
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

TEST(RdmaPeerDeath, ASenderKilledMidWriteEndsTheReceive) { PeerKilledMidTransfer(Killed::kSender); }
TEST(RdmaPeerDeath, AReceiverKilledMidWriteEndsTheSend) { PeerKilledMidTransfer(Killed::kReceiver); }

// A forked child drops its copy without a word: the parent's connection
// goes on.
TEST(RdmaConnectionTest, AbandonInAForkedChildLeavesTheParentsConnection) {
  test::RdmaPair p = MakeRdmaPair();
  ASSERT_TRUE(p.a && p.b);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    p.a->Abandon();
    uint8_t byte = 0;
    const bool refused = p.a->SendAll(&byte, 1).code() == StatusCode::kLinkDown;
    p.a.reset();
    _exit(refused ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  const std::vector<uint8_t> m = Bytes(100000, 3);
  std::vector<uint8_t> got(m.size());
  std::thread reader([&] { EXPECT_TRUE(p.b->RecvExact(got.data(), got.size()).ok()); });
  EXPECT_TRUE(p.a->SendAll(m.data(), m.size()).ok());
  reader.join();
  EXPECT_TRUE(got == m);
}

TEST(RdmaConnectionTest, NothingIsLeftInTheFabricDirectory) {
  {
    test::RdmaPair p = MakeRdmaPair();
    ASSERT_TRUE(p.a && p.b);
  }
  EXPECT_EQ(FabricEnvironment::fabric().FileCount(), 0);
}

}  // namespace
}  // namespace hipr::rdma

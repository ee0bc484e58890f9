// What the conformance suite cannot say about shm: the set-up (refusal,
// silence, a malformed frame), a hostile peer writing the shared control
// words, the sealed segment, the zygote's last word after the worker side
// died, the stall timeout, and an idle connection using no CPU.
#include "protocol/shm/shm_connection.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "protocol/codec.h"
#include "protocol/messages.h"
#include "protocol/wire.h"

namespace hipr::shm {
namespace {

struct Pair {
  std::unique_ptr<ShmConnection> client;
  std::unique_ptr<ShmConnection> worker;
  int worker_sock_dup = -1;  // Another handle on the worker's socket (the zygote's copy).
};

Pair MakePair(const Options& options = Options{}) {
  Pair p;
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  p.worker_sock_dup = dup(sv[1]);
  EXPECT_TRUE(ShmConnection::Accept(sv[1], options, &p.worker).ok());
  Status st = ShmConnection::ConnectOnSocket(sv[0], 2000, options, &p.client);
  EXPECT_TRUE(st.ok()) << st.ToString();
  return p;
}

std::vector<uint8_t> Frame(wire::Op op, const codec::BodyWriter& w) {
  std::vector<uint8_t> f(sizeof(wire::FrameHeader) + w.size());
  wire::EncodeHeader(wire::MakeHeader(static_cast<uint16_t>(op), 0, static_cast<uint32_t>(w.size())), f.data());
  std::memcpy(f.data() + sizeof(wire::FrameHeader), w.data(), w.size());
  return f;
}

double CpuSeconds() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

TEST(ShmSetup, AWorkerRefusalReachesTheClientWithItsReason) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  codec::BodyWriter w;
  w.Encode(msg::Fatal{StatusCode::kResourceExhausted, "the worker is at its limit of 2 sessions"});
  std::vector<uint8_t> f = Frame(wire::Op::kFatal, w);
  ASSERT_EQ(write(sv[1], f.data(), f.size()), static_cast<ssize_t>(f.size()));
  std::unique_ptr<ShmConnection> c;
  Status st = ShmConnection::ConnectOnSocket(sv[0], 2000, Options{}, &c);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(st.message().find("limit of 2 sessions"), std::string::npos) << st.message();
  EXPECT_EQ(c, nullptr);
  close(sv[1]);
}

TEST(ShmSetup, SilenceTimesOutAndClosureFails) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  std::unique_ptr<ShmConnection> c;
  const auto t0 = std::chrono::steady_clock::now();
  Status st = ShmConnection::ConnectOnSocket(dup(sv[0]), 200, Options{}, &c);
  EXPECT_EQ(st.code(), StatusCode::kTimeout) << st.ToString();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
  close(sv[1]);
  st = ShmConnection::ConnectOnSocket(sv[0], 2000, Options{}, &c);
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
}

TEST(ShmSetup, ASetupFrameWithoutDescriptorsIsRefused) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  codec::BodyWriter w;
  w.Encode(msg::ShmSetup{1, uint64_t{4} << 20, 4096});
  std::vector<uint8_t> f = Frame(wire::Op::kShmSetup, w);
  ASSERT_EQ(write(sv[1], f.data(), f.size()), static_cast<ssize_t>(f.size()));
  std::unique_ptr<ShmConnection> c;
  Status st = ShmConnection::ConnectOnSocket(sv[0], 2000, Options{}, &c);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  close(sv[1]);
}

TEST(ShmSetup, RingSizesOutsideTheLimitsAreRefused) {
  for (uint64_t bytes : {uint64_t{1000}, kMinRingBytes / 2, kMaxRingBytes * 2, kMinRingBytes * 3}) {
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
    Options o;
    o.ring_bytes = bytes;
    std::unique_ptr<ShmConnection> w;
    EXPECT_EQ(ShmConnection::Accept(sv[1], o, &w).code(), StatusCode::kInvalidArgument) << bytes;
    close(sv[0]);
  }
}

TEST(ShmSetup, TheClientCannotResizeTheSegment) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  std::unique_ptr<ShmConnection> w;
  Options o;
  o.host_bytes = 1 << 20;
  ASSERT_TRUE(ShmConnection::Accept(sv[1], o, &w).ok());
  // Play a hostile client: take the descriptors by hand.
  uint8_t buf[256];
  iovec iov{buf, sizeof buf};
  msghdr mh{};
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 6)];
  mh.msg_control = control;
  mh.msg_controllen = sizeof control;
  ASSERT_GT(recvmsg(sv[0], &mh, MSG_CMSG_CLOEXEC), 0);
  cmsghdr* c = CMSG_FIRSTHDR(&mh);
  ASSERT_NE(c, nullptr);
  size_t n = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
  ASSERT_EQ(n, 6u);
  for (size_t i : {size_t{0}, size_t{5}}) {  // The rings' segment and the host segment.
    SCOPED_TRACE(i);
    int memfd;
    std::memcpy(&memfd, CMSG_DATA(c) + i * sizeof(int), sizeof memfd);
    EXPECT_NE(ftruncate(memfd, 0), 0) << "a client could truncate the worker's mapping";
    EXPECT_NE(ftruncate(memfd, off_t{1} << 32), 0);
    EXPECT_EQ(fcntl(memfd, F_GET_SEALS) & (F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL),
              F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL);
  }
  for (size_t i = 0; i < n; ++i) {
    int fd;
    std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
    close(fd);
  }
  close(sv[0]);
}

TEST(ShmHostSegment, BothSidesSeeEachOthersWrites) {
  Options o;
  o.host_bytes = 2 << 20;
  Pair p = MakePair(o);
  Connection::SharedRegion c = p.client->SharedHostRegion();
  Connection::SharedRegion w = p.worker->SharedHostRegion();
  ASSERT_EQ(c.bytes, o.host_bytes);
  ASSERT_EQ(w.bytes, o.host_bytes);
  std::memcpy(c.base + 12345, "pinned", 7);
  EXPECT_STREQ(reinterpret_cast<char*>(w.base + 12345), "pinned");
  std::memcpy(w.base + o.host_bytes - 8, "device", 7);
  EXPECT_STREQ(reinterpret_cast<char*>(c.base + o.host_bytes - 8), "device");
  // Without one, there is none.
  Pair q = MakePair();
  EXPECT_EQ(q.client->SharedHostRegion().bytes, 0u);
  EXPECT_EQ(q.client->SharedHostRegion().base, nullptr);
}

TEST(ShmHostilePeer, AHeadMoreThanARingAheadIsAProtocolError) {
  Pair p = MakePair();
  // The client produces into ring 0; pretend it claims more than fits.
  RingControl* ring0 = p.client->control(0);
  ring0->head.store(ring0->tail.load() + p.client->ring_bytes() + 1);
  uint8_t b[16];
  Status st = p.worker->RecvExact(b, sizeof b);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
}

TEST(ShmHostilePeer, ATailPastTheHeadIsAProtocolError) {
  Pair p = MakePair();
  // The client consumes ring 1; pretend it read more than the worker wrote.
  p.client->control(1)->tail.store(12345);
  uint8_t b[16] = {};
  Status st = p.worker->SendAll(b, sizeof b);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
}

TEST(ShmPeerDeath, ADyingClientWakesTheWorkersReceive) {
  Pair p = MakePair();
  std::thread t([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    p.client.reset();  // What a dying client leaves behind: a closed socket.
  });
  uint8_t b[4];
  Status st = p.worker->RecvExact(b, sizeof b);
  t.join();
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
}

TEST(ShmPeerDeath, WhatTheZygoteWritesAfterTheRingDrainsContinuesTheStream) {
  Pair p = MakePair();
  const char ring_part[] = "from the ring;";
  const char socket_part[] = "from the zygote";
  ASSERT_TRUE(p.worker->SendAll(ring_part, sizeof ring_part).ok());
  p.worker.reset();  // The session process died...
  // ...and the zygote, holding its own copy of the socket, tells the client.
  ASSERT_EQ(write(p.worker_sock_dup, socket_part, sizeof socket_part), static_cast<ssize_t>(sizeof socket_part));
  shutdown(p.worker_sock_dup, SHUT_WR);
  char got[sizeof ring_part + sizeof socket_part];
  ASSERT_TRUE(p.client->WaitReadable(2000).ok());
  ASSERT_TRUE(p.client->RecvExact(got, sizeof got).ok());
  EXPECT_STREQ(got, ring_part);
  EXPECT_STREQ(got + sizeof ring_part, socket_part);
  uint8_t more;
  EXPECT_EQ(p.client->RecvExact(&more, 1).code(), StatusCode::kLinkDown);
  close(p.worker_sock_dup);
}

TEST(ShmStall, AReceiveWithNoProgressEndsAfterTheStallTimeout) {
  Options o;
  o.recv_timeout_ms = 200;
  Pair p = MakePair(o);
  const auto t0 = std::chrono::steady_clock::now();
  uint8_t b;
  Status st = p.client->RecvExact(&b, 1);
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
  EXPECT_GE(took, std::chrono::milliseconds(190));
  EXPECT_LT(took, std::chrono::seconds(3));
  // WaitReadable reports a timeout, not a dead link.
  EXPECT_EQ(p.client->WaitReadable(50).code(), StatusCode::kTimeout);
}

TEST(ShmStall, ASendToAFrozenPeerEndsAfterTheSendTimeout) {
  Options o;
  o.send_timeout_ms = 200;
  Pair p = MakePair(o);
  std::vector<uint8_t> big(p.client->ring_bytes() * 2);
  const auto t0 = std::chrono::steady_clock::now();
  Status st = p.client->SendAll(big.data(), big.size());  // Nobody reads.
  const auto took = std::chrono::steady_clock::now() - t0;
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
  EXPECT_GE(took, std::chrono::milliseconds(190));
  EXPECT_LT(took, std::chrono::seconds(3));
}

TEST(ShmStall, APeerThatSendsIsNotFrozen) {
  Options o;
  o.send_timeout_ms = 150;
  Pair p = MakePair(o);
  std::atomic<bool> done{false};
  std::thread talker([&] {  // Heartbeats, but it reads nothing for 600 ms.
    for (int i = 0; i < 12; ++i) {
      uint8_t beat = 1;
      EXPECT_TRUE(p.worker->SendAll(&beat, 1).ok());
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    std::vector<uint8_t> sink(p.worker->ring_bytes() * 2);
    EXPECT_TRUE(p.worker->RecvExact(sink.data(), sink.size()).ok());
    done = true;
  });
  std::vector<uint8_t> big(p.client->ring_bytes() * 2, 9);
  Status st = p.client->SendAll(big.data(), big.size());
  talker.join();
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(done.load());
}

TEST(ShmIdle, ABlockedReceiverUsesNoCpu) {
  Pair p = MakePair();
  // Warm up the spin budget with traffic first, as a busy session would.
  for (int i = 0; i < 100; ++i) {
    uint8_t x = static_cast<uint8_t>(i);
    ASSERT_TRUE(p.worker->SendAll(&x, 1).ok());
    ASSERT_TRUE(p.client->RecvExact(&x, 1).ok());
  }
  const double cpu0 = CpuSeconds();
  std::thread receiver([&] {
    uint8_t b;
    EXPECT_TRUE(p.client->RecvExact(&b, 1).ok());
  });
  std::this_thread::sleep_for(std::chrono::seconds(1));
  const double used = CpuSeconds() - cpu0;
  uint8_t wake = 1;
  ASSERT_TRUE(p.worker->SendAll(&wake, 1).ok());
  receiver.join();
  EXPECT_LT(used, 0.05) << "an idle receiver used " << used << " s of CPU in 1 s";
}

TEST(ShmAbandon, AForkedChildsCopyFailsWithoutDisturbingTheParent) {
  Pair p = MakePair();
  pid_t pid = fork();
  if (pid == 0) {
    p.client->Abandon();
    uint8_t b = 0;
    _exit(p.client->SendAll(&b, 1).code() == StatusCode::kLinkDown ? 0 : 1);
  }
  int ws = 0;
  ASSERT_EQ(waitpid(pid, &ws, 0), pid);
  EXPECT_TRUE(WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
  const char m[] = "parent";
  ASSERT_TRUE(p.client->SendAll(m, sizeof m).ok());
  char got[sizeof m];
  ASSERT_TRUE(p.worker->RecvExact(got, sizeof got).ok());
  EXPECT_STREQ(got, m);
}

}  // namespace
}  // namespace hipr::shm

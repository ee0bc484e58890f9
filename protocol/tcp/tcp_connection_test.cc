// Tests of the tcp transport: endpoint parsing, connecting (and failing to,
// quickly), socket tuning, scatter-gather I/O, and waking blocked calls.
#include "protocol/tcp/tcp_connection.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <atomic>
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace hipr::tcp {
namespace {

using Clock = std::chrono::steady_clock;

double SecondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// Aborts the test program, naming `what`, unless destroyed within `seconds`:
// a connect or a wake-up that never comes fails promptly instead of hanging.
class Watchdog {
 public:
  Watchdog(double seconds, std::string what)
      : what_(std::move(what)), thread_([this, seconds] {
          std::unique_lock<std::mutex> lock(mu_);
          if (!cv_.wait_for(lock, std::chrono::duration<double>(seconds), [this] { return done_; })) {
            std::fprintf(stderr, "watchdog: %s did not finish within %.1f s\n", what_.c_str(), seconds);
            std::abort();
          }
        }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string what_;
  std::thread thread_;
};

// Every test here ends within a minute or aborts.
class TestWatchdog : public ::testing::EmptyTestEventListener {
  void OnTestStart(const ::testing::TestInfo& info) override {
    dog_ = std::make_unique<Watchdog>(60, std::string(info.test_suite_name()) + "." + info.name());
  }
  void OnTestEnd(const ::testing::TestInfo&) override { dog_.reset(); }
  std::unique_ptr<Watchdog> dog_;
};

// Receive/send timeouts so that a test whose call should have returned fails
// instead of hanging.
void SetHangGuard(int fd) {
  timeval tv{20, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
}

// A listening socket on the loopback address and an ephemeral port.
class Listener {
 public:
  explicit Listener(int family = AF_INET) {
    fd_ = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) return;
    sockaddr_storage ss{};
    socklen_t len;
    if (family == AF_INET) {
      auto* a = reinterpret_cast<sockaddr_in*>(&ss);
      a->sin_family = AF_INET;
      a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      len = sizeof *a;
    } else {
      auto* a = reinterpret_cast<sockaddr_in6*>(&ss);
      a->sin6_family = AF_INET6;
      a->sin6_addr = in6addr_loopback;
      len = sizeof *a;
    }
    if (bind(fd_, reinterpret_cast<sockaddr*>(&ss), len) != 0 || listen(fd_, 8) != 0) {
      close(fd_);
      fd_ = -1;
      return;
    }
    getsockname(fd_, reinterpret_cast<sockaddr*>(&ss), &len);
    port_ = ntohs(family == AF_INET ? reinterpret_cast<sockaddr_in*>(&ss)->sin_port
                                    : reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
  }
  ~Listener() {
    if (fd_ >= 0) close(fd_);
  }
  bool ok() const { return fd_ >= 0; }
  uint16_t port() const { return port_; }

  // Accepts one connection within 5 s; -1 on failure.
  int Accept() {
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, 5000) != 1) return -1;
    int fd = accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd >= 0) SetHangGuard(fd);
    return fd;
  }

 private:
  int fd_ = -1;
  uint16_t port_ = 0;
};

// A connected client/server pair over loopback TCP.
struct TcpPair {
  std::unique_ptr<TcpConnection> client;
  std::unique_ptr<TcpConnection> server;
};

void MakePair(TcpPair* pair) {
  Listener l;
  ASSERT_TRUE(l.ok());
  Status st = TcpConnection::Connect(Endpoint{"127.0.0.1", l.port()}, 2000, &pair->client);
  ASSERT_TRUE(st.ok()) << st.ToString();
  ASSERT_NE(pair->client, nullptr);
  SetHangGuard(pair->client->fd());
  int fd = l.Accept();
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(TuneSocket(fd).ok());
  pair->server = std::make_unique<TcpConnection>(fd);
}

int IntOpt(int fd, int level, int name) {
  int v = -1;
  socklen_t len = sizeof v;
  EXPECT_EQ(getsockopt(fd, level, name, &v, &len), 0) << std::strerror(errno);
  return v;
}

// ---- ParseEndpoint -----------------------------------------------------------

TEST(ParseEndpoint, HostAndPort) {
  Endpoint ep;
  ASSERT_TRUE(ParseEndpoint("gpu-node-3.example.com:18515", &ep).ok());
  EXPECT_EQ(ep.host, "gpu-node-3.example.com");
  EXPECT_EQ(ep.port, 18515);
  ASSERT_TRUE(ParseEndpoint("127.0.0.1:0", &ep).ok());
  EXPECT_EQ(ep.host, "127.0.0.1");
  EXPECT_EQ(ep.port, 0);
  ASSERT_TRUE(ParseEndpoint("h:65535", &ep).ok());
  EXPECT_EQ(ep.host, "h");
  EXPECT_EQ(ep.port, 65535);
}

TEST(ParseEndpoint, BracketedIpv6) {
  Endpoint ep;
  ASSERT_TRUE(ParseEndpoint("[::1]:80", &ep).ok());
  EXPECT_EQ(ep.host, "::1");
  EXPECT_EQ(ep.port, 80);
  ASSERT_TRUE(ParseEndpoint("[fe80::1%eth0]:443", &ep).ok());
  EXPECT_EQ(ep.host, "fe80::1%eth0");
  EXPECT_EQ(ep.port, 443);
}

TEST(ParseEndpoint, Errors) {
  for (const char* bad : {"", "localhost", "10.0.0.1", ":80", "[]:80", "host:70000", "host:65536",
                          "host:abc", "host:", "host:80x", "host:-1", "host:99999999999999999999",
                          "[::1]", "[::1]80", "[::1", "[::1]:", "[::1]:x"}) {
    Endpoint ep{"unchanged", 1};
    Status st = ParseEndpoint(bad, &ep);
    EXPECT_EQ(st.code(), StatusCode::kInvalidArgument) << "'" << bad << "' parsed as " << ep.host << ":"
                                                       << ep.port;
    EXPECT_EQ(ep.host, "unchanged") << bad;
    EXPECT_EQ(ep.port, 1) << bad;
  }
}

// ---- Connect and socket options ------------------------------------------------

TEST(TcpConnect, ExchangesBytesBothWays) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  const std::string hello = "hello over tcp";
  ASSERT_TRUE(p.client->SendAll(hello.data(), hello.size()).ok());
  std::string got(hello.size(), '\0');
  ASSERT_TRUE(p.server->RecvExact(got.data(), got.size()).ok());
  EXPECT_EQ(got, hello);
  const std::string back = "and back";
  ASSERT_TRUE(p.server->SendAll(back.data(), back.size()).ok());
  std::string got2(back.size(), '\0');
  ASSERT_TRUE(p.client->RecvExact(got2.data(), got2.size()).ok());
  EXPECT_EQ(got2, back);
}

TEST(TcpConnect, PeerName) {
  Listener l;
  ASSERT_TRUE(l.ok());
  std::unique_ptr<TcpConnection> c;
  ASSERT_TRUE(TcpConnection::Connect(Endpoint{"127.0.0.1", l.port()}, 2000, &c).ok());
  EXPECT_EQ(c->PeerName(), "tcp:127.0.0.1:" + std::to_string(l.port()));
}

// Bulk compression's "auto" asks PeerIsLocal: loopback and unix peers are
// local, a peer at any other address is not (even one on this host).
TEST(TcpConnect, PeerIsLocal) {
  Listener l;
  ASSERT_TRUE(l.ok());
  std::unique_ptr<TcpConnection> c;
  ASSERT_TRUE(TcpConnection::Connect(Endpoint{"127.0.0.1", l.port()}, 2000, &c).ok());
  EXPECT_TRUE(c->PeerIsLocal());
  int fd = l.Accept();
  ASSERT_GE(fd, 0);
  EXPECT_TRUE(TcpConnection(fd).PeerIsLocal());
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  EXPECT_TRUE(TcpConnection(sv[0]).PeerIsLocal());
  close(sv[1]);

  // A non-loopback address of this machine, if it has one.
  ifaddrs* ifs = nullptr;
  ASSERT_EQ(getifaddrs(&ifs), 0);
  std::string addr;
  for (ifaddrs* i = ifs; i != nullptr && addr.empty(); i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    char text[INET_ADDRSTRLEN];
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(i->ifa_addr)->sin_addr, text, sizeof text);
    if (std::string(text).rfind("127.", 0) != 0) addr = text;
  }
  freeifaddrs(ifs);
  if (addr.empty()) GTEST_SKIP() << "no non-loopback IPv4 address here";
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(lfd, 0);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  inet_pton(AF_INET, addr.c_str(), &any.sin_addr);
  ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr*>(&any), sizeof any), 0);
  ASSERT_EQ(listen(lfd, 1), 0);
  socklen_t len = sizeof any;
  getsockname(lfd, reinterpret_cast<sockaddr*>(&any), &len);
  std::unique_ptr<TcpConnection> remote;
  Status st = TcpConnection::Connect(Endpoint{addr, ntohs(any.sin_port)}, 2000, &remote);
  close(lfd);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_FALSE(remote->PeerIsLocal()) << addr;
}

TEST(TcpConnect, Ipv6Loopback) {
  Listener l(AF_INET6);
  if (!l.ok()) GTEST_SKIP() << "no IPv6 loopback here";
  std::unique_ptr<TcpConnection> c;
  Status st = TcpConnection::Connect(Endpoint{"::1", l.port()}, 2000, &c);
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(c->PeerName(), "tcp:::1:" + std::to_string(l.port()));
  EXPECT_TRUE(c->PeerIsLocal());
  int fd = l.Accept();
  ASSERT_GE(fd, 0);
  TcpConnection server(fd);
  ASSERT_TRUE(c->SendAll("x", 1).ok());
  char b = 0;
  ASSERT_TRUE(server.RecvExact(&b, 1).ok());
  EXPECT_EQ(b, 'x');
}

TEST(TcpConnect, SocketIsCloexecNodelayKeepaliveAndBlocking) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  for (int fd : {p.client->fd(), p.server->fd()}) {
    int fdflags = fcntl(fd, F_GETFD);
    ASSERT_GE(fdflags, 0);
    EXPECT_TRUE(fdflags & FD_CLOEXEC);
    EXPECT_FALSE(fcntl(fd, F_GETFL) & O_NONBLOCK) << "I/O is blocking by contract";
    EXPECT_EQ(IntOpt(fd, IPPROTO_TCP, TCP_NODELAY), 1);
    EXPECT_EQ(IntOpt(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
    // A vanished peer is noticed within seconds, not the kernel's 2 hours.
    int idle = IntOpt(fd, IPPROTO_TCP, TCP_KEEPIDLE);
    int interval = IntOpt(fd, IPPROTO_TCP, TCP_KEEPINTVL);
    int count = IntOpt(fd, IPPROTO_TCP, TCP_KEEPCNT);
    EXPECT_GT(idle, 0);
    EXPECT_GT(interval, 0);
    EXPECT_GT(count, 0);
    EXPECT_LE(idle + interval * count, 30);
    int user_timeout = IntOpt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT);
    EXPECT_GT(user_timeout, 0);
    EXPECT_LE(user_timeout, 30000);
  }
}

TEST(TcpConnect, TuneSocketSetsCloexecOnAPlainSocket) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);  // No SOCK_CLOEXEC on purpose.
  ASSERT_GE(fd, 0);
  ASSERT_FALSE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  ASSERT_TRUE(TuneSocket(fd).ok());
  EXPECT_TRUE(fcntl(fd, F_GETFD) & FD_CLOEXEC);
  EXPECT_EQ(IntOpt(fd, IPPROTO_TCP, TCP_NODELAY), 1);
  EXPECT_EQ(IntOpt(fd, SOL_SOCKET, SO_KEEPALIVE), 1);
  close(fd);
}

TEST(TcpConnect, TuneSocketFailsOnANonTcpSocket) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  EXPECT_FALSE(TuneSocket(sv[0]).ok());
  close(sv[0]);
  close(sv[1]);
}

TEST(TcpConnect, ClosedPortFailsQuicklyWithLinkDown) {
  // A bound socket that does not listen: its port refuses connections and
  // cannot be taken by anyone else meanwhile.
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  uint16_t port = ntohs(a.sin_port);

  std::unique_ptr<TcpConnection> c;
  auto t0 = Clock::now();
  Watchdog watchdog(10, "Connect to a closed port");
  Status st = TcpConnection::Connect(Endpoint{"127.0.0.1", port}, 5000, &c);
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
  EXPECT_LT(SecondsSince(t0), 2.0);
  EXPECT_EQ(c, nullptr);
  EXPECT_NE(st.message().find(std::to_string(port)), std::string::npos) << st.ToString();
  close(fd);
}

TEST(TcpConnect, UnroutableAddressTimesOut) {
  std::unique_ptr<TcpConnection> c;
  auto t0 = Clock::now();
  Watchdog watchdog(10, "Connect to an unroutable address");
  Status st = TcpConnection::Connect(Endpoint{"10.255.255.1", 9}, 300, &c);
  double elapsed = SecondsSince(t0);
  if (st.ok()) {
    GTEST_SKIP() << "this network accepts connections to any address (a transparent proxy?); "
                    "ConnectTimesOutWhenSynsAreDropped covers the timeout";
  }
  // Where there is no route at all, connect fails at once: also fine.
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
  EXPECT_LT(elapsed, 1.0);
  EXPECT_EQ(c, nullptr);
}

// A listener whose accept queue is full drops further SYNs, so a connect to
// it hangs in SYN_SENT: the timeout must end it. Needs no outside network.
TEST(TcpConnect, ConnectTimesOutWhenSynsAreDropped) {
  int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(lfd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(lfd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(lfd, 0), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(getsockname(lfd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const Endpoint ep{"127.0.0.1", ntohs(a.sin_port)};

  // Fill the accept queue (never accepted).
  std::vector<std::unique_ptr<TcpConnection>> fillers;
  for (int i = 0; i < 8; ++i) {
    std::unique_ptr<TcpConnection> c;
    auto t0 = Clock::now();
    Watchdog watchdog(10, "Connect to a listener that drops SYNs");
    Status st = TcpConnection::Connect(ep, 300, &c);
    if (!st.ok()) {
      // Dropped: the queue is full. This attempt must have taken the timeout.
      EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
      double elapsed = SecondsSince(t0);
      EXPECT_GE(elapsed, 0.25);
      EXPECT_LT(elapsed, 1.0);
      EXPECT_EQ(c, nullptr);
      close(lfd);
      return;
    }
    fillers.push_back(std::move(c));
  }
  close(lfd);
  GTEST_SKIP() << "the kernel never dropped a SYN for a full accept queue";
}

TEST(TcpConnect, ConnectDoesNotLeakDescriptors) {
  auto count_fds = [] {
    int n = 0;
    for (int fd = 0; fd < 4096; ++fd)
      if (fcntl(fd, F_GETFD) >= 0) ++n;
    return n;
  };
  int before = count_fds();
  for (int i = 0; i < 20; ++i) {
    std::unique_ptr<TcpConnection> c;
    EXPECT_FALSE(TcpConnection::Connect(Endpoint{"127.0.0.1", 1}, 500, &c).ok());
  }
  {
    TcpPair p;
    ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  }
  EXPECT_EQ(count_fds(), before);
}

// ---- I/O ---------------------------------------------------------------------------

TEST(TcpIo, ScatterGatherBeyondIovMax) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  // 3000 iovecs of 1..7 bytes (and some empty), more than one sendmsg takes.
  std::vector<uint8_t> src;
  std::vector<size_t> sizes;
  for (size_t i = 0; i < 3000; ++i) sizes.push_back(i % 8);
  size_t total = 0;
  for (size_t s : sizes) total += s;
  src.resize(total);
  for (size_t i = 0; i < total; ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  std::vector<iovec> out;
  size_t off = 0;
  for (size_t s : sizes) {
    out.push_back({src.data() + off, s});
    off += s;
  }
  std::vector<uint8_t> dst(total, 0);
  std::vector<iovec> in;
  for (size_t o = 0; o < total; o += 3) in.push_back({dst.data() + o, std::min<size_t>(3, total - o)});
  ASSERT_GT(in.size(), 1024u);

  std::thread sender([&] { EXPECT_TRUE(p.client->SendV(out.data(), static_cast<int>(out.size())).ok()); });
  Status st = p.server->RecvV(in.data(), static_cast<int>(in.size()));
  sender.join();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(dst, src);
}

TEST(TcpIo, LargeTransferThroughSmallBuffers) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  const size_t n = 32u << 20;
  std::vector<uint8_t> src(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint8_t>((i * 2654435761u) >> 24);
  std::vector<uint8_t> dst(n, 0);
  std::thread sender([&] { EXPECT_TRUE(p.client->SendAll(src.data(), n).ok()); });
  Status st = p.server->RecvExact(dst.data(), n);
  sender.join();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_TRUE(dst == src);
}

// Small reads come from the read-ahead buffer, large ones straight from
// the socket; interleaved, every byte still arrives once and in order, and
// WaitReadable sees bytes that were read ahead.
TEST(TcpIo, ReadAheadKeepsOrderAcrossSmallAndLargeReads) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  std::vector<size_t> sizes;
  for (size_t i = 0; i < 3000; ++i) sizes.push_back(i % 7 == 0 ? 16 : 1 + (i * 37) % 300);
  sizes.insert(sizes.begin() + 1000, TcpConnection::kDirectBytes);        // Exactly the direct size.
  sizes.insert(sizes.begin() + 2000, (3u << 20) + 5);                      // Bulk.
  sizes.insert(sizes.begin() + 2500, TcpConnection::kReadAheadBytes + 1);  // Over the buffer.
  size_t total = 0;
  for (size_t n : sizes) total += n;
  std::vector<uint8_t> src(total);
  for (size_t i = 0; i < total; ++i) src[i] = static_cast<uint8_t>((i * 2654435761u) >> 13);
  // Sent in one piece: many of the small reads are served by one recv().
  std::thread sender([&] { EXPECT_TRUE(p.client->SendAll(src.data(), total).ok()); });
  std::vector<uint8_t> dst(total, 0);
  size_t at = 0;
  for (size_t i = 0; i < sizes.size(); ++i) {
    if (i % 2 == 1) {
      // Two slices, the way a frame header and body are read.
      const size_t half = sizes[i] / 2;
      iovec v[2] = {{dst.data() + at, half}, {dst.data() + at + half, sizes[i] - half}};
      ASSERT_TRUE(p.server->RecvV(v, 2).ok()) << "read " << i;
    } else {
      ASSERT_TRUE(p.server->RecvExact(dst.data() + at, sizes[i]).ok()) << "read " << i;
    }
    at += sizes[i];
    if (at < total) {
      EXPECT_TRUE(p.server->WaitReadable(5000).ok()) << "after read " << i;
    }
  }
  sender.join();
  EXPECT_TRUE(dst == src);
  EXPECT_EQ(p.server->WaitReadable(0).code(), StatusCode::kTimeout) << "bytes left over";
}

// With a spin set, a receiver polls before it sleeps: timeouts still hold,
// a zero timeout does not spin, and bytes that come during the spin or
// after it are read.
TEST(TcpIo, SpinBeforeSleepingKeepsTimeoutsAndData) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  p.server->set_spin_us(300000);
  auto t0 = Clock::now();
  EXPECT_EQ(p.server->WaitReadable(0).code(), StatusCode::kTimeout);
  EXPECT_LT(SecondsSince(t0), 0.15) << "a zero timeout spun";
  t0 = Clock::now();
  EXPECT_EQ(p.server->WaitReadable(100).code(), StatusCode::kTimeout);
  EXPECT_GE(SecondsSince(t0), 0.099);
  std::thread late([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // Inside the spin.
    EXPECT_TRUE(p.client->SendAll("ab", 2).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(60));  // After it.
    EXPECT_TRUE(p.client->SendAll("c", 1).ok());
  });
  char got[3] = {};
  ASSERT_TRUE(p.server->RecvExact(got, 2).ok());
  ASSERT_TRUE(p.server->WaitReadable(5000).ok());
  ASSERT_TRUE(p.server->RecvExact(got + 2, 1).ok());
  late.join();
  EXPECT_EQ(std::string(got, 3), "abc");
}

TEST(TcpIo, EmptyIoIsANoOp) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  EXPECT_TRUE(p.client->SendV(nullptr, 0).ok());
  EXPECT_TRUE(p.server->RecvV(nullptr, 0).ok());
  char c;
  iovec empty[2] = {{&c, 0}, {&c, 0}};
  EXPECT_TRUE(p.client->SendV(empty, 2).ok());
  EXPECT_TRUE(p.server->RecvV(empty, 2).ok());
  EXPECT_EQ(p.server->WaitReadable(0).code(), StatusCode::kTimeout);
}

TEST(TcpIo, WaitReadable) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  auto t0 = Clock::now();
  Status st = p.server->WaitReadable(150);
  double elapsed = SecondsSince(t0);
  EXPECT_EQ(st.code(), StatusCode::kTimeout) << st.ToString();
  EXPECT_GE(elapsed, 0.14);
  EXPECT_LT(elapsed, 1.0);
  EXPECT_EQ(p.server->WaitReadable(0).code(), StatusCode::kTimeout);

  ASSERT_TRUE(p.client->SendAll("z", 1).ok());
  EXPECT_TRUE(p.server->WaitReadable(2000).ok());
  EXPECT_TRUE(p.server->WaitReadable(-1).ok());  // Data pending: returns at once.
  char c = 0;
  ASSERT_TRUE(p.server->RecvExact(&c, 1).ok());
  EXPECT_EQ(c, 'z');
  EXPECT_EQ(p.server->WaitReadable(0).code(), StatusCode::kTimeout);
}

TEST(TcpIo, WaitReadableThenRecvAfterPeerClose) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  ASSERT_TRUE(p.client->SendAll("last", 4).ok());
  p.client.reset();
  // The bytes sent before the close are still delivered...
  ASSERT_TRUE(p.server->WaitReadable(2000).ok());
  char buf[4];
  ASSERT_TRUE(p.server->RecvExact(buf, 4).ok());
  EXPECT_EQ(std::string(buf, 4), "last");
  // ...then the close shows: readable (EOF) or link down, and a read fails.
  Status w = p.server->WaitReadable(2000);
  EXPECT_TRUE(w.ok() || w.code() == StatusCode::kLinkDown) << w.ToString();
  auto t0 = Clock::now();
  EXPECT_EQ(p.server->RecvExact(buf, 1).code(), StatusCode::kLinkDown);
  EXPECT_LT(SecondsSince(t0), 2.0);
}

TEST(TcpIo, SendToAClosedPeerFailsWithoutSigpipe) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  p.server.reset();
  std::vector<uint8_t> big(8u << 20, 1);
  Status st;
  // The first write may still be accepted locally; the RST makes a later one fail.
  for (int i = 0; i < 50 && st.ok(); ++i) {
    st = p.client->SendAll(big.data(), big.size());
    if (st.ok()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(st.code(), StatusCode::kLinkDown) << st.ToString();
}

// Signals without SA_RESTART interrupt sendmsg/recvmsg midway: they return
// short counts (or EINTR), and every byte must still arrive exactly once.
// Applications the stub is loaded into use signals (profilers, Python).
void NoopHandler(int) {}

TEST(TcpIo, SurvivesSignalInterruptions) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  struct sigaction sa {}, old {};
  sa.sa_handler = NoopHandler;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = 0;  // No SA_RESTART.
  ASSERT_EQ(sigaction(SIGUSR1, &sa, &old), 0);

  const size_t n = 48u << 20;
  std::vector<uint8_t> src(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint8_t>(((i + 1) * 2654435761u) >> 24);
  // Uneven layouts on both sides, so short counts land inside iovecs.
  std::vector<iovec> out, in;
  std::vector<uint8_t> dst(n, 0);
  for (size_t off = 0, k = 0; off < n; ++k) {
    size_t len = std::min<size_t>(n - off, 1000003 + k * 7919);
    out.push_back({src.data() + off, len});
    off += len;
  }
  for (size_t off = 0, k = 0; off < n; ++k) {
    size_t len = std::min<size_t>(n - off, 777777 + k * 104729);
    in.push_back({dst.data() + off, len});
    off += len;
  }

  // Round 0: the receiver waits with nothing read while the sender sleeps;
  // round 1: the sender blocks on a full socket while the receiver sleeps.
  // Either way, signals land both mid-transfer (short counts) and before a
  // byte has moved (EINTR).
  for (int round = 0; round < 2; ++round) {
    std::fill(dst.begin(), dst.end(), 0);
    std::atomic<int> running{2};
    Status send_st, recv_st;
    std::thread sender([&] {
      if (round == 0) std::this_thread::sleep_for(std::chrono::milliseconds(300));
      send_st = p.client->SendV(out.data(), static_cast<int>(out.size()));
      if (!send_st.ok()) p.server->Shutdown();  // Do not leave the receiver waiting.
      --running;
    });
    std::thread receiver([&] {
      if (round == 1) std::this_thread::sleep_for(std::chrono::milliseconds(300));
      recv_st = p.server->RecvV(in.data(), static_cast<int>(in.size()));
      if (!recv_st.ok()) p.client->Shutdown();
      --running;
    });
    int signals = 0;
    {
      Watchdog watchdog(30, "a transfer under signals");
      while (running.load() > 0) {
        pthread_kill(sender.native_handle(), SIGUSR1);
        pthread_kill(receiver.native_handle(), SIGUSR1);
        ++signals;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      }
    }
    sender.join();
    receiver.join();
    EXPECT_TRUE(send_st.ok()) << "round " << round << ": " << send_st.ToString();
    EXPECT_TRUE(recv_st.ok()) << "round " << round << ": " << recv_st.ToString();
    EXPECT_GT(signals, 10);
    size_t bad = 0;
    while (bad < n && dst[bad] == src[bad]) ++bad;
    EXPECT_EQ(bad, n) << "round " << round << ": first wrong byte";
  }
  sigaction(SIGUSR1, &old, nullptr);
}

// ---- Shutdown ------------------------------------------------------------------------

// Runs `blocked` on a thread, calls Shutdown() after 200 ms from this one,
// and expects the blocked call to return kLinkDown promptly.
void ExpectShutdownWakes(TcpConnection& conn, const std::function<Status()>& blocked) {
  Status result;
  Clock::time_point done;
  std::thread t([&] {
    result = blocked();
    done = Clock::now();
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto t0 = Clock::now();
  Watchdog watchdog(10, "a call blocked across Shutdown()");
  conn.Shutdown();
  t.join();
  EXPECT_EQ(result.code(), StatusCode::kLinkDown) << result.ToString();
  EXPECT_LT(std::chrono::duration<double>(done - t0).count(), 2.0);
}

TEST(TcpShutdown, WakesABlockedRecvV) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  ASSERT_TRUE(p.client->SendAll("ab", 2).ok());  // Part of what the reader wants.
  char buf[100];
  ExpectShutdownWakes(*p.server, [&] { return p.server->RecvExact(buf, sizeof buf); });
  // Idempotent, and the connection stays down.
  p.server->Shutdown();
  p.server->Shutdown();
  EXPECT_EQ(p.server->RecvExact(buf, 1).code(), StatusCode::kLinkDown);
  EXPECT_EQ(p.server->SendAll("x", 1).code(), StatusCode::kLinkDown);
}

TEST(TcpShutdown, WakesABlockedWaitReadable) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  ExpectShutdownWakes(*p.server, [&] { return p.server->WaitReadable(-1); });
  EXPECT_EQ(p.server->WaitReadable(1000).code(), StatusCode::kLinkDown);
}

TEST(TcpShutdown, WakesABlockedSendV) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  // The server never reads: a large send fills both socket buffers and blocks.
  std::vector<uint8_t> big(256u << 20, 1);
  ExpectShutdownWakes(*p.client, [&] { return p.client->SendAll(big.data(), big.size()); });
}

TEST(TcpShutdown, PeerSeesTheClose) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  p.client->Shutdown();
  char c;
  auto t0 = Clock::now();
  EXPECT_EQ(p.server->RecvExact(&c, 1).code(), StatusCode::kLinkDown);
  EXPECT_LT(SecondsSince(t0), 2.0);
}

// gtest_main owns main(); the listener is added before the first test runs.
const bool kWatchdogInstalled = [] {
  ::testing::UnitTest::GetInstance()->listeners().Append(new TestWatchdog);
  return true;
}();

}  // namespace
}  // namespace hipr::tcp

namespace hipr::tcp {
namespace {

// MSG_ZEROCOPY sends: every byte arrives, the send waits for the kernel's
// completion notices (so the caller may reuse its buffer at once), a
// receiver waiting on the same socket meanwhile is not misled by the notices
// (POLLERR), and on loopback, where the kernel copies anyway, the notice
// says so and the connection goes back to plain sends.
TEST(TcpZeroCopy, LargeSendsArriveWholeAndWaitForTheirNotices) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  p.client->set_zero_copy_min_bytes(64 << 10, /*keep_when_copied=*/true);
  const size_t n = size_t{8} << 20;
  std::vector<uint8_t> src(n);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint8_t>(i * 131 + 7);
  // A reader on the client's own socket, as the stub's reply reader is: the
  // notices (POLLERR on the socket) must not look like a failure to it.
  Status client_wait;
  std::thread client_reader([&] { client_wait = p.client->WaitReadable(5000); });
  for (int round = 0; round < 3; ++round) {
    std::vector<uint8_t> got(n);
    std::thread receiver([&] { EXPECT_TRUE(p.server->RecvExact(got.data(), n).ok()); });
    iovec iov[2] = {{src.data(), n / 3}, {src.data() + n / 3, n - n / 3}};
    ASSERT_TRUE(p.client->SendVZeroCopy(iov, 2).ok());
    receiver.join();
    EXPECT_TRUE(got == src) << "round " << round;
  }
  const TcpConnection::ZeroCopyStats stats = p.client->zero_copy_stats();
  EXPECT_GE(stats.sends, 3u);
  EXPECT_LE(stats.copied, stats.sends);
  EXPECT_FALSE(stats.off) << "keep_when_copied";
  const uint8_t one = 1;
  ASSERT_TRUE(p.server->SendAll(&one, 1).ok());
  client_reader.join();
  EXPECT_TRUE(client_wait.ok()) << "the client's reader: " << client_wait.ToString();
}

TEST(TcpZeroCopy, SmallSendsAndCopiedNoticesGoBackToPlainSends) {
  TcpPair p;
  ASSERT_NO_FATAL_FAILURE(MakePair(&p));
  p.client->set_zero_copy_min_bytes(1 << 20);
  std::vector<uint8_t> small(1000, 3), big(size_t{2} << 20, 4);
  ASSERT_TRUE(p.client->SendVZeroCopy(std::vector<iovec>{{small.data(), small.size()}}.data(), 1).ok());
  EXPECT_EQ(p.client->zero_copy_stats().sends, 0u) << "below the threshold: a plain send";
  std::thread receiver([&] {
    std::vector<uint8_t> got(small.size() + big.size());
    EXPECT_TRUE(p.server->RecvExact(got.data(), got.size()).ok());
  });
  iovec b{big.data(), big.size()};
  ASSERT_TRUE(p.client->SendVZeroCopy(&b, 1).ok());
  receiver.join();
  const TcpConnection::ZeroCopyStats stats = p.client->zero_copy_stats();
  EXPECT_GE(stats.sends, 1u);
  // Loopback delivers to a local socket, so the kernel copies and says so:
  // the connection stops paying for notices.
  if (stats.copied > 0) {
    EXPECT_TRUE(stats.off);
  }
}

}  // namespace
}  // namespace hipr::tcp

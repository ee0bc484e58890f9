// The peer link (peer_link.h) on loopback: the token decides who gets in.
#include "protocol/peer_link.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>

namespace hipr::peer {
namespace {

std::string AddressOf(const PeerListener& l) { return "127.0.0.1:" + std::to_string(l.port()); }

// Produces `bytes` of a counting pattern in pieces of up to 1000.
std::function<Status(const Sink&)> Pattern(uint64_t bytes) {
  return [bytes](const Sink& sink) {
    std::vector<uint8_t> piece;
    for (uint64_t at = 0; at < bytes;) {
      piece.resize(std::min<uint64_t>(1000, bytes - at));
      for (size_t i = 0; i < piece.size(); ++i) piece[i] = static_cast<uint8_t>((at + i) * 7);
      const iovec iov{piece.data(), piece.size()};
      HIPR_RETURN_IF_ERROR(sink(&iov, 1));
      at += piece.size();
    }
    return Status::Ok();
  };
}

TEST(PeerLinkTest, TheTokenHolderGetsInAndOthersAreDropped) {
  std::unique_ptr<PeerListener> l;
  ASSERT_TRUE(PeerListener::Open("127.0.0.1", 0, 0, &l).ok());
  ASSERT_NE(l->port(), 0);
  ASSERT_EQ(l->token().size(), kPeerTokenBytes);
  const std::string address = AddressOf(*l);
  constexpr uint64_t kBytes = 300000;
  int32_t wrong_error = 0, right_error = -1;
  Status wrong_status, right_status;
  std::thread sender([&] {
    std::vector<uint8_t> wrong = l->token();
    wrong[5] ^= 1;
    // A guess is dropped: the link closes under it.
    wrong_status = PushToPeer(address, wrong, kBytes, Pattern(kBytes), 2000, &wrong_error);
    right_status = PushToPeer(address, l->token(), kBytes, Pattern(kBytes), 2000, &right_error);
  });
  std::unique_ptr<tcp::TcpConnection> conn;
  uint64_t bytes = 0;
  ASSERT_TRUE(l->AcceptPeer(5000, &conn, &bytes).ok());
  ASSERT_EQ(bytes, kBytes);
  std::vector<uint8_t> got(kBytes);
  const iovec iov{got.data(), got.size()};
  ASSERT_TRUE(RecvWithin(*conn, &iov, 1, 2000).ok());
  ASSERT_TRUE(SendPeerStatus(*conn, 0).ok());
  sender.join();
  for (uint64_t i = 0; i < kBytes; ++i) ASSERT_EQ(got[i], static_cast<uint8_t>(i * 7)) << "byte " << i;
  EXPECT_FALSE(wrong_status.ok()) << "the wrong token got an answer";
  EXPECT_TRUE(right_status.ok()) << right_status.ToString();
  EXPECT_EQ(right_error, 0);
}

TEST(PeerLinkTest, TheDestinationsErrorReachesTheSource) {
  std::unique_ptr<PeerListener> l;
  ASSERT_TRUE(PeerListener::Open("127.0.0.1", 0, 0, &l).ok());
  int32_t error = 0;
  Status st;
  std::thread sender([&] { st = PushToPeer(AddressOf(*l), l->token(), 10, Pattern(10), 2000, &error); });
  std::unique_ptr<tcp::TcpConnection> conn;
  uint64_t bytes = 0;
  ASSERT_TRUE(l->AcceptPeer(5000, &conn, &bytes).ok());
  uint8_t got[10];
  const iovec iov{got, sizeof got};
  ASSERT_TRUE(RecvWithin(*conn, &iov, 1, 2000).ok());
  ASSERT_TRUE(SendPeerStatus(*conn, 700).ok());
  sender.join();
  EXPECT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(error, 700);
}

TEST(PeerLinkTest, CancelAndSilenceEndTheWait) {
  std::unique_ptr<PeerListener> l;
  ASSERT_TRUE(PeerListener::Open("127.0.0.1", 0, 0, &l).ok());
  std::thread canceller([&] { EXPECT_TRUE(CancelPeer(AddressOf(*l), l->token(), 2000).ok()); });
  std::unique_ptr<tcp::TcpConnection> conn;
  uint64_t bytes = 0;
  ASSERT_TRUE(l->AcceptPeer(5000, &conn, &bytes).ok());
  EXPECT_EQ(bytes, kPeerCancel);
  canceller.join();

  std::unique_ptr<PeerListener> quiet;
  ASSERT_TRUE(PeerListener::Open("127.0.0.1", 0, 0, &quiet).ok());
  Status st = quiet->AcceptPeer(200, &conn, &bytes);
  EXPECT_EQ(st.code(), StatusCode::kTimeout) << st.ToString();
  // A port is used once: after its wait it listens no more.
  int32_t error = 0;
  EXPECT_FALSE(PushToPeer(AddressOf(*quiet), quiet->token(), 1, Pattern(1), 500, &error).ok());
}

// With a range (--peer-ports), ports come from it, the next when one is
// taken, and none when all are.
TEST(PeerLinkTest, PortsComeFromTheRange) {
  std::unique_ptr<PeerListener> any;
  ASSERT_TRUE(PeerListener::Open("127.0.0.1", 0, 0, &any).ok());
  const uint16_t first = any->port();
  any.reset();  // Free again: the range is [first, first + 1].
  std::unique_ptr<PeerListener> a, b, c;
  Status st = PeerListener::Open("127.0.0.1", first, static_cast<uint16_t>(first + 1), &a);
  if (!st.ok()) GTEST_SKIP() << "port " << first << " was taken meanwhile: " << st.ToString();
  EXPECT_EQ(a->port(), first);
  st = PeerListener::Open("127.0.0.1", first, static_cast<uint16_t>(first + 1), &b);
  if (!st.ok()) GTEST_SKIP() << "port " << first + 1 << " is taken: " << st.ToString();
  EXPECT_EQ(b->port(), first + 1);
  st = PeerListener::Open("127.0.0.1", first, static_cast<uint16_t>(first + 1), &c);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted) << st.ToString();
  EXPECT_NE(st.message().find("--peer-ports"), std::string::npos);
}

// A port that does not greet as a peer port gets nothing: a client cannot
// aim a worker's bytes at another service.
TEST(PeerLinkTest, NothingIsSentToAPortThatIsNotAPeerPort) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a), 0);
  ASSERT_EQ(listen(fd, 1), 0);
  socklen_t len = sizeof a;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len), 0);
  const std::string address = "127.0.0.1:" + std::to_string(ntohs(a.sin_port));
  size_t received = 0;
  std::thread service([&] {
    const int c = accept(fd, nullptr, nullptr);
    char buf[256];
    ssize_t n;
    while ((n = read(c, buf, sizeof buf)) > 0) received += static_cast<size_t>(n);
    close(c);
  });
  int32_t error = 0;
  Status st = PushToPeer(address, std::vector<uint8_t>(kPeerTokenBytes, 1), 100, Pattern(100), 300, &error);
  service.join();
  close(fd);
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("not a hipr peer copy port"), std::string::npos) << st.ToString();
  EXPECT_EQ(received, 0u);
}

TEST(PeerLinkTest, ASourceSendsExactlyWhatItAnnounced) {
  std::unique_ptr<PeerListener> l;
  ASSERT_TRUE(PeerListener::Open("127.0.0.1", 0, 0, &l).ok());
  std::thread receiver([&] {
    std::unique_ptr<tcp::TcpConnection> conn;
    uint64_t bytes = 0;
    (void)l->AcceptPeer(5000, &conn, &bytes);
  });
  int32_t error = 0;
  Status st = PushToPeer(AddressOf(*l), l->token(), 5, Pattern(9), 2000, &error);
  receiver.join();
  EXPECT_FALSE(st.ok());
  EXPECT_NE(st.message().find("announced"), std::string::npos) << st.ToString();
}

}  // namespace
}  // namespace hipr::peer

// The transport conformance suite (protocol/transport_conformance.h) on TCP
// over loopback: plain, and with the receive spin hipr's client and worker
// use (set_spin_us), which takes another path through the receive code.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "protocol/tcp/tcp_connection.h"
#include "protocol/transport_conformance.h"

namespace hipr::test {
namespace {

ConnectionPair MakeTcpPair(int spin_us) {
  ConnectionPair pair;
  int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  EXPECT_GE(listener, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  EXPECT_EQ(listen(listener, 1), 0);
  socklen_t len = sizeof addr;
  EXPECT_EQ(getsockname(listener, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  std::unique_ptr<tcp::TcpConnection> client;
  Status st = tcp::TcpConnection::Connect(tcp::Endpoint{"127.0.0.1", ntohs(addr.sin_port)}, 2000, &client);
  EXPECT_TRUE(st.ok()) << st.ToString();
  int fd = accept(listener, nullptr, nullptr);
  close(listener);
  EXPECT_GE(fd, 0);
  if (!st.ok() || fd < 0) return pair;
  EXPECT_TRUE(tcp::TuneSocket(fd).ok());
  auto server = std::make_unique<tcp::TcpConnection>(fd);
  client->set_spin_us(spin_us);
  server->set_spin_us(spin_us);
  pair.a = std::move(client);
  pair.b = std::move(server);
  return pair;
}

struct TcpPairs : ConnectionPairFactory {
  static ConnectionPair Make() { return MakeTcpPair(0); }
};

struct SpinningTcpPairs : ConnectionPairFactory {
  static ConnectionPair Make() { return MakeTcpPair(50); }
};

using Transports = ::testing::Types<TcpPairs, SpinningTcpPairs>;
INSTANTIATE_TYPED_TEST_SUITE_P(Tcp, TransportConformance, Transports);

}  // namespace
}  // namespace hipr::test

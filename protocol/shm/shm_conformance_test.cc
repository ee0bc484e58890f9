// The transport conformance suite (protocol/transport_conformance.h) on the
// shm transport: with hipr's default ring and spin, and with the smallest
// ring and no spin, which wraps the ring on almost every message and sleeps
// on every wait.
#include <sys/socket.h>

#include "protocol/shm/shm_connection.h"
#include "protocol/transport_conformance.h"

namespace hipr::test {
namespace {

ConnectionPair MakeShmPair(const shm::Options& options) {
  ConnectionPair pair;
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  std::unique_ptr<shm::ShmConnection> worker;
  Status st = shm::ShmConnection::Accept(sv[1], options, &worker);
  EXPECT_TRUE(st.ok()) << st.ToString();
  std::unique_ptr<shm::ShmConnection> client;
  st = shm::ShmConnection::ConnectOnSocket(sv[0], 2000, options, &client);
  EXPECT_TRUE(st.ok()) << st.ToString();
  pair.a = std::move(client);
  pair.b = std::move(worker);
  return pair;
}

struct ShmPairs : ConnectionPairFactory {
  static ConnectionPair Make() { return MakeShmPair(shm::Options{}); }
};

struct SmallRingShmPairs : ConnectionPairFactory {
  static ConnectionPair Make() {
    shm::Options o;
    o.ring_bytes = shm::kMinRingBytes;
    o.spin_us = 0;
    return MakeShmPair(o);
  }
};

using Transports = ::testing::Types<ShmPairs, SmallRingShmPairs>;
INSTANTIATE_TYPED_TEST_SUITE_P(Shm, TransportConformance, Transports);

}  // namespace
}  // namespace hipr::test

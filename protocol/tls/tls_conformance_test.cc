// The transport conformance suite (protocol/transport_conformance.h) on TLS
// over loopback tcp, with the test PKI (tests/support/test_pki.h).
#include "protocol/tls/tls_test_util.h"
#include "protocol/transport_conformance.h"

namespace hipr::test {
namespace {

struct TlsPairs : ConnectionPairFactory {
  static ConnectionPair Make() {
    static const std::shared_ptr<tls::Context> server = ServerContext();
    static const std::shared_ptr<tls::Context> client = ClientContext(Pki().ca);
    TlsHandshakes h = Handshake(*client, *server);
    EXPECT_TRUE(h.client.ok()) << h.client.ToString();
    EXPECT_TRUE(h.server.ok()) << h.server.ToString();
    ConnectionPair pair;
    pair.a = std::move(h.a);
    pair.b = std::move(h.b);
    return pair;
  }
};

using Transports = ::testing::Types<TlsPairs>;
INSTANTIATE_TYPED_TEST_SUITE_P(Tls, TransportConformance, Transports);

}  // namespace
}  // namespace hipr::test

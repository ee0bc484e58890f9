// The transport conformance suite (protocol/transport_conformance.h) on the
// RDMA transport over the verbs double: with the default sizes, and with the
// smallest ones, which wrap the ring, run out of credits and grant on
// almost every message.
#include "protocol/rdma/rdma_test_util.h"
#include "protocol/transport_conformance.h"

namespace hipr::test {
namespace {

[[maybe_unused]] ::testing::Environment* const kFabric =
    ::testing::AddGlobalTestEnvironment(new rdma::test::FabricEnvironment);

ConnectionPair FromRdma(rdma::test::RdmaPair p) {
  ConnectionPair pair;
  pair.a = std::move(p.a);
  pair.b = std::move(p.b);
  return pair;
}

struct RdmaPairs : ConnectionPairFactory {
  static ConnectionPair Make() { return FromRdma(rdma::test::MakeRdmaPair()); }
};

struct SmallRdmaPairs : ConnectionPairFactory {
  static ConnectionPair Make() { return FromRdma(rdma::test::MakeRdmaPair(rdma::test::SmallOptions())); }
};

using Transports = ::testing::Types<RdmaPairs, SmallRdmaPairs>;
INSTANTIATE_TYPED_TEST_SUITE_P(Rdma, TransportConformance, Transports);

}  // namespace
}  // namespace hipr::test

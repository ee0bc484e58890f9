#include "worker_service/process/rdma_setup.h"

#include <gtest/gtest.h>

#include <cstdlib>

namespace hipr::worker {
namespace {

// The product's libibverbs on a machine with no RDMA device (as in CI): the
// worker says so. (The answer to an offer is the transport's upgrade:
// protocol/rdma/rdma_upgrade_test.cc.)

TEST(RdmaSetupTest, OffIsReported) {
  WorkerConfig config;
  config.rdma_device = kRdmaOff;
  bool usable = true;
  EXPECT_EQ(DescribeRdma(config, &usable), "rdma off (--rdma-device off): clients stay on tcp");
  EXPECT_FALSE(usable);
}

TEST(RdmaSetupTest, NoDeviceHereStaysOnTcp) {
  if (getenv("HIPR_VERBS_DOUBLE_DIR") != nullptr) GTEST_SKIP() << "a verbs double fabric is set";
  WorkerConfig config;
  bool usable = true;
  const std::string line = DescribeRdma(config, &usable);
  if (usable) GTEST_SKIP() << "this machine has an RDMA device: " << line;
  EXPECT_NE(line.find("clients stay on tcp"), std::string::npos) << line;
}

}  // namespace
}  // namespace hipr::worker

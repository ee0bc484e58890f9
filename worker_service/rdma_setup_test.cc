#include "worker_service/rdma_setup.h"

#include <gtest/gtest.h>

namespace hipr::worker {
namespace {

// The product's libibverbs on a machine with no RDMA device (as in CI): the
// worker says so and every offer is declined. (With a device, the
// end-to-end tests e2e_*_rdma cover the accepting side on the verbs double.)

TEST(RdmaSetupTest, OffIsReportedAndDeclines) {
  WorkerConfig config;
  config.rdma_device = kRdmaOff;
  bool usable = true;
  EXPECT_EQ(DescribeRdma(config, &usable), "rdma off (--rdma-device off): clients stay on tcp");
  EXPECT_FALSE(usable);
  std::unique_ptr<Connection> conn;
  std::vector<uint8_t> answer;
  std::string device;
  Status st = AcceptRdma(config, 0, std::vector<uint8_t>(64), &conn, &answer, &device);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_EQ(conn, nullptr);
  EXPECT_TRUE(answer.empty());
}

TEST(RdmaSetupTest, OnlyPlainTcpSessionsMove) {
  WorkerConfig config;
  std::unique_ptr<Connection> conn;
  std::vector<uint8_t> answer;
  std::string device;
  Status st = AcceptRdma(config, -1, std::vector<uint8_t>(64), &conn, &answer, &device);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("plain tcp"), std::string::npos);
}

TEST(RdmaSetupTest, MalformedOfferIsRefusedBeforeAnyDevice) {
  WorkerConfig config;
  std::unique_ptr<Connection> conn;
  std::vector<uint8_t> answer;
  std::string device;
  EXPECT_FALSE(AcceptRdma(config, 0, std::vector<uint8_t>(10), &conn, &answer, &device).ok());
  EXPECT_FALSE(AcceptRdma(config, 0, std::vector<uint8_t>(64, 0xAB), &conn, &answer, &device).ok());
  EXPECT_EQ(conn, nullptr);
  EXPECT_TRUE(answer.empty());
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

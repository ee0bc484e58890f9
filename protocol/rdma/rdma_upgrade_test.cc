#include "protocol/rdma/rdma_upgrade.h"

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <thread>

#include "protocol/codec.h"
#include "protocol/frame_io.h"
#include "protocol/messages.h"
#include "protocol/tcp/tcp_connection.h"

namespace hipr::rdma {
namespace {

// The worker's answer to an offer, refused before any device where it must
// be. (With a device, the end-to-end tests e2e_*_rdma cover the accepting
// side on the verbs double.)

TEST(RdmaUpgradeTest, OffDeclines) {
  std::unique_ptr<Connection> conn;
  std::vector<uint8_t> answer;
  std::string device;
  std::shared_ptr<std::atomic<bool>> muted;
  Status st = AcceptOffer(kDeviceOff, 0, std::vector<uint8_t>(64), nullptr, &conn, &answer, &device, &muted);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_EQ(conn, nullptr);
  EXPECT_TRUE(answer.empty());
}

TEST(RdmaUpgradeTest, OnlyPlainTcpSessionsMove) {
  std::unique_ptr<Connection> conn;
  std::vector<uint8_t> answer;
  std::string device;
  std::shared_ptr<std::atomic<bool>> muted;
  Status st = AcceptOffer("", -1, std::vector<uint8_t>(64), nullptr, &conn, &answer, &device, &muted);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("plain tcp"), std::string::npos);
}

TEST(RdmaUpgradeTest, MalformedOfferIsRefusedBeforeAnyDevice) {
  std::unique_ptr<Connection> conn;
  std::vector<uint8_t> answer;
  std::string device;
  std::shared_ptr<std::atomic<bool>> muted;
  EXPECT_FALSE(AcceptOffer("", 0, std::vector<uint8_t>(10), nullptr, &conn, &answer, &device, &muted).ok());
  EXPECT_FALSE(AcceptOffer("", 0, std::vector<uint8_t>(64, 0xAB), nullptr, &conn, &answer, &device, &muted).ok());
  EXPECT_EQ(conn, nullptr);
  EXPECT_TRUE(answer.empty());
}

// AwaitVerdict on stand-ins: two socket pairs, one playing the session's
// tcp connection and one its queue pair (the check is about frames and their
// order, not about verbs; e2e_rdma_selection runs it over the verbs double).
class RdmaVerdictTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (auto* pair : {&tcp_, &rdma_}) {
      int fds[2];
      ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
      pair->worker = std::make_unique<tcp::TcpConnection>(fds[0]);
      pair->client = std::make_unique<tcp::TcpConnection>(fds[1]);
    }
  }
  template <class M>
  static void Send(Connection& conn, uint16_t op, const M& m, uint32_t id = 1) {
    codec::BodyWriter w;
    w.Encode(m);
    ASSERT_TRUE(SendFrame(conn, op, id, w).ok());
  }
  static msg::RdmaProbe Probe(uint64_t session) {
    msg::RdmaProbe p;
    p.session_id = session;
    p.nonce.assign(msg::kRdmaProbeNonceBytes, 0x5A);
    return p;
  }
  Status Await(bool* commit, std::string* why, int timeout_ms = 2000) {
    return AwaitVerdict(*tcp_.worker, *rdma_.worker, 7, commit, why, timeout_ms);
  }
  struct Pair {
    std::unique_ptr<Connection> worker;
    std::unique_ptr<Connection> client;
  };
  Pair tcp_;
  Pair rdma_;
};

constexpr uint16_t kProbeOp = static_cast<uint16_t>(wire::Op::kRdmaProbe);
constexpr uint16_t kVerdictOp = static_cast<uint16_t>(wire::Op::kRdmaVerdict);

TEST_F(RdmaVerdictTest, ProbeAnsweredThenCommit) {
  Send(*rdma_.client, kProbeOp, Probe(7), 42);
  Send(*tcp_.client, kVerdictOp, msg::RdmaVerdict{true, ""});
  bool commit = false;
  std::string why;
  ASSERT_TRUE(Await(&commit, &why).ok());
  EXPECT_TRUE(commit);
  // The answer went back over the queue pair, the probe unchanged.
  wire::FrameHeader h;
  ASSERT_TRUE(ReadHeader(*rdma_.client, &h).ok());
  EXPECT_EQ(h.op, wire::ReplyOp(wire::Op::kRdmaProbe));
  EXPECT_EQ(h.request_id, 42u);
  std::vector<uint8_t> body;
  ASSERT_TRUE(ReadBody(*rdma_.client, h, &body).ok());
  msg::RdmaProbe echo;
  ASSERT_TRUE(codec::DecodeBody(body.data(), body.size(), &echo).ok());
  EXPECT_EQ(echo.session_id, 7u);
  EXPECT_EQ(echo.nonce, Probe(7).nonce);
}

TEST_F(RdmaVerdictTest, NoProbeAndStayKeepsTcpWithTheClientsReason) {
  Send(*tcp_.client, kVerdictOp,
       msg::RdmaVerdict{false, "rdma: a SEND failed: IBV_WC_RETRY_EXC_ERR (transport retry counter exceeded)\n"});
  bool commit = true;
  std::string why;
  ASSERT_TRUE(Await(&commit, &why, 300).ok());
  EXPECT_FALSE(commit);
  EXPECT_NE(why.find("IBV_WC_RETRY_EXC_ERR"), std::string::npos) << why;
  EXPECT_NE(why.find("no probe arrived"), std::string::npos) << why;
  EXPECT_EQ(why.find('\n'), std::string::npos) << "a peer's text is made printable";
}

TEST_F(RdmaVerdictTest, CommitWithoutAProbeEndsTheSession) {
  Send(*tcp_.client, kVerdictOp, msg::RdmaVerdict{true, ""});
  bool commit = false;
  std::string why;
  Status st = Await(&commit, &why, 300);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  EXPECT_FALSE(commit);
}

TEST_F(RdmaVerdictTest, MalformedProbesEndTheSession) {
  bool commit = false;
  std::string why;
  // Another session's.
  Send(*rdma_.client, kProbeOp, Probe(8));
  EXPECT_EQ(Await(&commit, &why).code(), StatusCode::kProtocolError);
  SetUp();
  // Another op.
  Send(*rdma_.client, kVerdictOp, msg::RdmaVerdict{true, ""});
  EXPECT_EQ(Await(&commit, &why).code(), StatusCode::kProtocolError);
  SetUp();
  // Garbage.
  const char junk[] = "not a frame header at all";
  ASSERT_TRUE(rdma_.client->SendAll(junk, sizeof junk).ok());
  EXPECT_FALSE(Await(&commit, &why).ok());
  SetUp();
  // A body that is not a probe.
  Send(*rdma_.client, kProbeOp, msg::RdmaVerdict{true, "x"});
  EXPECT_EQ(Await(&commit, &why).code(), StatusCode::kProtocolError);
  EXPECT_FALSE(commit);
}

TEST_F(RdmaVerdictTest, MalformedOrMissingVerdictEndsTheSession) {
  bool commit = false;
  std::string why;
  Status st = Await(&commit, &why, 200);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  EXPECT_NE(st.message().find("no rdma verdict"), std::string::npos) << st.message();
  SetUp();
  Send(*rdma_.client, kProbeOp, Probe(7));
  Send(*tcp_.client, kProbeOp, Probe(7));  // Not a verdict.
  EXPECT_EQ(Await(&commit, &why).code(), StatusCode::kProtocolError);
  SetUp();
  msg::RdmaVerdict huge{false, std::string(4 * wire::kMaxRdmaProbeBytes, 'x')};
  Send(*tcp_.client, kVerdictOp, huge);
  st = Await(&commit, &why, 300);
  EXPECT_EQ(st.code(), StatusCode::kProtocolError) << st.ToString();
  SetUp();
  tcp_.client.reset();  // The client went away.
  EXPECT_FALSE(Await(&commit, &why, 300).ok());
  EXPECT_FALSE(commit);
}

}  // namespace
}  // namespace hipr::rdma

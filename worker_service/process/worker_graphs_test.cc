// Executable graphs against a real hipr-worker (sim device) over real
// sockets, driven by RawClient with no stub: a graph of memset and copy
// nodes replayed on a stream, graphs sent in several frames, and what the
// worker refuses (each refusal a deferred error of the next synchronize,
// the session going on). Kernel and host nodes are covered end to end
// (tests/e2e/graphs.hip).
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "tests/support/raw_client.h"

namespace hipr::test {
namespace {

using wire::Op;

constexpr int kHipErrorInvalidValue = 1;
constexpr int kHipErrorInvalidHandle = 400;
constexpr int kHipErrorNotReady = 600;

template <class T>
msg::GraphNode Node(Op op, const T& body) {
  codec::BodyWriter w;
  w.Encode(body);
  return msg::GraphNode{static_cast<uint16_t>(op), std::vector<uint8_t>(w.data(), w.data() + w.size()), {}};
}

msg::Region Flat(uint64_t address, uint64_t bytes) { return msg::Region{address, bytes, bytes, 1}; }

class WorkerGraphsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(RawClient::Connect(worker_.endpoint(), &client_).ok());
    ASSERT_EQ(client_->Malloc(kBytes, &a_), 0);
    ASSERT_EQ(client_->Malloc(kBytes, &b_), 0);
  }

  // b = memset(a, v) copied, as a graph of two nodes.
  msg::GraphCreateRequest SetThenCopy(uint64_t graph, uint8_t value) {
    msg::MemsetRequest set;
    set.dst = Flat(a_, kBytes);
    set.value = value;
    set.element_size = 1;
    msg::CopyOnDeviceRequest copy{0, 0, Flat(b_, kBytes), Flat(a_, kBytes), false};
    return msg::GraphCreateRequest{graph, 0, {Node(Op::kMemset, set), Node(Op::kCopyOnDevice, copy)}, false, false};
  }

  std::vector<uint8_t> ReadB() {
    std::vector<uint8_t> out(kBytes);
    EXPECT_EQ(client_->Read(b_, out.data(), kBytes), 0);
    return out;
  }

  static constexpr uint64_t kBytes = 4096;
  WorkerProcess worker_{{}};
  std::unique_ptr<RawClient> client_;
  uint64_t a_ = 0;
  uint64_t b_ = 0;
};

TEST_F(WorkerGraphsTest, ReplaysItsNodesOnTheLaunchStreamEveryLaunch) {
  ASSERT_TRUE(client_->Send(Op::kStreamCreate, msg::StreamCreateRequest{0, 5, 0, 0, {}}).ok());
  ASSERT_TRUE(client_->Send(Op::kGraphCreate, SetThenCopy(1, 0x5a)).ok());
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(client_->Send(Op::kGraphLaunch, msg::GraphLaunchRequest{1, 0, 5, {}}).ok());
  msg::CallReply r;
  ASSERT_TRUE(client_->Call(Op::kStreamSynchronize, msg::StreamRequest{5}, &r).ok());
  EXPECT_EQ(r.error, 0);
  EXPECT_EQ(ReadB(), std::vector<uint8_t>(kBytes, 0x5a));
  ASSERT_TRUE(client_->Send(Op::kGraphDestroy, msg::GraphRequest{1}).ok());
  EXPECT_EQ(client_->Synchronize(), 0);
}

TEST_F(WorkerGraphsTest, TakesAGraphInSeveralFrames) {
  msg::GraphCreateRequest first = SetThenCopy(2, 0x11);
  msg::GraphCreateRequest rest = SetThenCopy(2, 0x22);
  rest.append = true;
  ASSERT_TRUE(client_->Send(Op::kGraphCreate, first).ok());
  ASSERT_TRUE(client_->Send(Op::kGraphCreate, rest).ok());
  ASSERT_TRUE(client_->Send(Op::kGraphLaunch, msg::GraphLaunchRequest{2, 0, 0, {}}).ok());
  EXPECT_EQ(client_->Synchronize(), 0);
  EXPECT_EQ(ReadB(), std::vector<uint8_t>(kBytes, 0x22)) << "the appended nodes did not run last";
}

// Node 0 waits for a value that node 2, on a branch of its own, writes;
// node 1 (after node 0) fills b. Replayed one node after another on one
// stream, node 0 would wait forever: the branches must run concurrently,
// as on a GPU.
TEST_F(WorkerGraphsTest, IndependentBranchesRunConcurrently) {
  constexpr uint32_t kWaitEq = 1;  // hipStreamWaitValueEq.
  ASSERT_TRUE(client_->Send(Op::kStreamCreate, msg::StreamCreateRequest{0, 5, 0, 0, {}}).ok());
  msg::MemsetRequest set;
  set.dst = Flat(b_, kBytes);
  set.value = 0x3c;
  set.element_size = 1;
  msg::GraphCreateRequest g{30, 0,
                            {Node(Op::kStreamWaitValue, msg::StreamWaitValueRequest{0, 0, a_, 1, 0xffffffff, kWaitEq, 4}),
                             Node(Op::kMemset, set), Node(Op::kStreamWriteValue, msg::StreamWriteValueRequest{0, 0, a_, 1, 4})},
                            false, true};
  g.nodes[1].deps = {0};
  ASSERT_TRUE(client_->Send(Op::kGraphCreate, g).ok());
  for (int launch = 0; launch < 3; ++launch) {
    SCOPED_TRACE(launch);
    msg::MemsetRequest clear;
    clear.stream = 5;
    clear.dst = Flat(a_, 4);
    clear.element_size = 1;
    ASSERT_TRUE(client_->Send(Op::kMemset, clear).ok());
    ASSERT_TRUE(client_->Send(Op::kGraphLaunch, msg::GraphLaunchRequest{30, 0, 5, {}}).ok());
    // Polled with a deadline: run one node after another, it never ends.
    msg::CallReply r;
    r.error = kHipErrorNotReady;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (r.error == kHipErrorNotReady && std::chrono::steady_clock::now() < deadline) {
      ASSERT_TRUE(client_->Call(Op::kStreamQuery, msg::StreamRequest{5}, &r).ok());
      if (r.error == kHipErrorNotReady) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_EQ(r.error, 0) << "the launch did not finish: its branches did not run concurrently";
    EXPECT_EQ(ReadB(), std::vector<uint8_t>(kBytes, 0x3c));
    set.value = 0;
    ASSERT_TRUE(client_->Send(Op::kMemset, set).ok());
  }
  ASSERT_TRUE(client_->Send(Op::kGraphDestroy, msg::GraphRequest{30}).ok());
  EXPECT_EQ(client_->Synchronize(), 0);
}

TEST_F(WorkerGraphsTest, RefusesBadGraphsAsDeferredErrorsAndGoesOn) {
  struct Case {
    const char* what;
    std::vector<std::pair<Op, msg::GraphCreateRequest>> create;
    msg::GraphLaunchRequest launch;
    int error;
  };
  msg::GraphCreateRequest unknown_op{10, 0, {msg::GraphNode{static_cast<uint16_t>(Op::kMalloc), {}, {}}}, false, false};
  msg::GraphCreateRequest bad_body{11, 0, {msg::GraphNode{static_cast<uint16_t>(Op::kMemset), {0xc1}, {}}}, false, false};
  msg::GraphCreateRequest unnamed_kernel{12, 0, {Node(Op::kLaunchKernel, msg::LaunchRequest{})}, false, false};
  msg::GraphCreateRequest forward = SetThenCopy(17, 1);
  forward.has_deps = true;
  forward.nodes[0].deps = {1};
  msg::GraphCreateRequest with_edges = SetThenCopy(18, 1);
  with_edges.has_deps = true;
  with_edges.nodes[1].deps = {0};
  msg::GraphCreateRequest without_edges = SetThenCopy(18, 1);
  without_edges.append = true;
  msg::GraphCreateRequest orphan = SetThenCopy(13, 1);
  orphan.append = true;
  const std::vector<Case> cases = {
      {"an op that cannot be a node", {{Op::kGraphCreate, unknown_op}}, {}, kHipErrorInvalidValue},
      {"a node body that is not msgpack", {{Op::kGraphCreate, bad_body}}, {}, kHipErrorInvalidValue},
      {"a kernel node without its kernel's name", {{Op::kGraphCreate, unnamed_kernel}}, {}, kHipErrorInvalidValue},
      {"an append to no graph", {{Op::kGraphCreate, orphan}}, {}, kHipErrorInvalidValue},
      {"a graph id in use", {{Op::kGraphCreate, SetThenCopy(14, 1)}, {Op::kGraphCreate, SetThenCopy(14, 1)}},
       {}, kHipErrorInvalidValue},
      {"a launch of no graph", {}, msg::GraphLaunchRequest{99, 0, 0, {}}, kHipErrorInvalidHandle},
      {"a launch naming callbacks the graph lacks", {{Op::kGraphCreate, SetThenCopy(15, 1)}},
       msg::GraphLaunchRequest{15, 0, 0, {7}}, kHipErrorInvalidValue},
      {"a launch on another device", {{Op::kGraphCreate, SetThenCopy(16, 1)}},
       msg::GraphLaunchRequest{16, 1, 0, {}}, kHipErrorInvalidValue},
      {"a node depending on one after it", {{Op::kGraphCreate, forward}}, {}, kHipErrorInvalidValue},
      {"a graph continued without its edges", {{Op::kGraphCreate, with_edges}, {Op::kGraphCreate, without_edges}},
       {}, kHipErrorInvalidValue},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.what);
    for (const auto& [op, create] : c.create) ASSERT_TRUE(client_->Send(op, create).ok());
    if (c.launch.graph != 0) {
      ASSERT_TRUE(client_->Send(Op::kGraphLaunch, c.launch).ok());
    }
    EXPECT_EQ(client_->Synchronize(), c.error);
    EXPECT_EQ(client_->Synchronize(), 0) << "the error was reported twice";
  }
  ASSERT_TRUE(client_->Send(Op::kGraphDestroy, msg::GraphRequest{12345}).ok());
  EXPECT_EQ(client_->Synchronize(), kHipErrorInvalidHandle);
  // The session still works.
  ASSERT_TRUE(client_->Send(Op::kGraphCreate, SetThenCopy(20, 0x77)).ok());
  ASSERT_TRUE(client_->Send(Op::kGraphLaunch, msg::GraphLaunchRequest{20, 0, 0, {}}).ok());
  EXPECT_EQ(client_->Synchronize(), 0);
  EXPECT_EQ(ReadB(), std::vector<uint8_t>(kBytes, 0x77));
}

}  // namespace
}  // namespace hipr::test

// Test helpers for the RDMA transport on the verbs double: a fabric for the
// whole test process, and connected pairs over a socketpair.
#pragma once

#include <gtest/gtest.h>
#include <sys/socket.h>

#include <memory>
#include <thread>

#include "protocol/rdma/rdma_connection.h"
#include "protocol/rdma/verbs_double/verbs_double.h"

namespace hipr::rdma::test {

// One fabric directory per test process (children it forks share it),
// removed when the process's tests end.
class FabricEnvironment : public ::testing::Environment {
 public:
  void SetUp() override { fabric_ = std::make_unique<verbs_double::Fabric>(); }
  void TearDown() override { fabric_.reset(); }
  static verbs_double::Fabric& fabric() { return *instance_->fabric_; }
  FabricEnvironment() { instance_ = this; }

 private:
  std::unique_ptr<verbs_double::Fabric> fabric_;
  static inline FabricEnvironment* instance_ = nullptr;
};

struct RdmaPair {
  std::unique_ptr<RdmaConnection> a;
  std::unique_ptr<RdmaConnection> b;
};

// Both ends exchange their queue-pair information over a socketpair, which
// then stays as their liveness socket.
inline RdmaPair MakeRdmaPair(const Options& options_a, const Options& options_b) {
  RdmaPair pair;
  int sv[2];
  EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
  Status st_b;
  std::thread tb([&] { st_b = RdmaConnection::ConnectOverSocket(sv[1], options_b, 5000, &pair.b); });
  Status st_a = RdmaConnection::ConnectOverSocket(sv[0], options_a, 5000, &pair.a);
  tb.join();
  EXPECT_TRUE(st_a.ok()) << st_a.ToString();
  EXPECT_TRUE(st_b.ok()) << st_b.ToString();
  return pair;
}

inline RdmaPair MakeRdmaPair(const Options& options = {}) { return MakeRdmaPair(options, options); }

// Small everything: rings wrap, credits run out, grants are frequent.
inline Options SmallOptions() {
  Options o;
  o.recv_buffers = 8;
  o.buffer_bytes = 256;
  o.ring_bytes = 256u << 10;
  o.chunk_bytes = 64u << 10;
  o.staging_slots = 2;
  o.bulk_min_bytes = 1024;
  o.max_inline = 48;
  return o;
}

}  // namespace hipr::rdma::test

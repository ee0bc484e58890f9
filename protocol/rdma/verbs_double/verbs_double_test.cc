// The verbs double (verbs_double.h) against the verbs semantics the RDMA
// transport relies on: state transitions, keys and bounds, in-order
// completions, RNR, retry exhaustion, flushes; within a process and across
// two.
#include "protocol/rdma/verbs_double/verbs_double.h"

#include <gtest/gtest.h>
#include <infiniband/verbs.h>
#include <poll.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

namespace hipr::verbs_double {
namespace {

// What two QPs exchange to connect.
struct Address {
  uint32_t qpn;
  uint32_t psn;
  ibv_gid gid;
};

struct RcOptions {
  uint8_t timeout = 10;  // ~4 ms per try.
  uint8_t retry_cnt = 3;
  uint8_t rnr_retry = 2;
  uint8_t min_rnr_timer = 14;  // 1.28 ms.
  unsigned access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE;
};

// One endpoint: device, PD, one CQ with a channel, one RC QP.
class Node {
 public:
  Node() {
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    EXPECT_EQ(n, 1);
    if (n >= 1) ctx_ = ibv_open_device(list[0]);
    ibv_free_device_list(list);
    EXPECT_NE(ctx_, nullptr);
    if (ctx_ == nullptr) return;
    pd_ = ibv_alloc_pd(ctx_);
    channel_ = ibv_create_comp_channel(ctx_);
    cq_ = ibv_create_cq(ctx_, 1024, this, channel_, 0);
    ibv_qp_init_attr init{};
    init.send_cq = cq_;
    init.recv_cq = cq_;
    init.qp_type = IBV_QPT_RC;
    init.cap.max_send_wr = 256;
    init.cap.max_recv_wr = 256;
    init.cap.max_send_sge = 4;
    init.cap.max_recv_sge = 4;
    init.cap.max_inline_data = 128;
    qp_ = ibv_create_qp(pd_, &init);
    EXPECT_NE(qp_, nullptr);
  }
  ~Node() {
    if (qp_ != nullptr) {
      EXPECT_EQ(ibv_destroy_qp(qp_), 0);
    }
    for (ibv_mr* mr : mrs_) {
      EXPECT_EQ(ibv_dereg_mr(mr), 0);
    }
    if (cq_ != nullptr) {
      EXPECT_EQ(ibv_destroy_cq(cq_), 0);
    }
    if (channel_ != nullptr) {
      EXPECT_EQ(ibv_destroy_comp_channel(channel_), 0);
    }
    if (pd_ != nullptr) {
      EXPECT_EQ(ibv_dealloc_pd(pd_), 0);
    }
    if (ctx_ != nullptr) {
      EXPECT_EQ(ibv_close_device(ctx_), 0);
    }
  }

  Address address(uint32_t psn = 0x1234) const {
    Address a{qp_->qp_num, psn, {}};
    EXPECT_EQ(ibv_query_gid(ctx_, 1, 0, &a.gid), 0);
    return a;
  }

  int ToInit(unsigned access) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_INIT;
    a.pkey_index = 0;
    a.port_num = 1;
    a.qp_access_flags = access;
    return ibv_modify_qp(qp_, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
  }
  int ToRtr(const Address& peer, const RcOptions& o) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = IBV_MTU_4096;
    a.dest_qp_num = peer.qpn;
    a.rq_psn = peer.psn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = o.min_rnr_timer;
    a.ah_attr.is_global = 1;
    a.ah_attr.grh.dgid = peer.gid;
    a.ah_attr.grh.hop_limit = 1;
    a.ah_attr.port_num = 1;
    return ibv_modify_qp(qp_, &a,
                         IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                             IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  }
  int ToRts(uint32_t psn, const RcOptions& o) {
    ibv_qp_attr a{};
    a.qp_state = IBV_QPS_RTS;
    a.sq_psn = psn;
    a.timeout = o.timeout;
    a.retry_cnt = o.retry_cnt;
    a.rnr_retry = o.rnr_retry;
    a.max_rd_atomic = 1;
    return ibv_modify_qp(qp_, &a,
                         IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                             IBV_QP_MAX_QP_RD_ATOMIC);
  }
  void Connect(const Address& peer, const RcOptions& o = {}) {
    ASSERT_EQ(ToInit(o.access), 0);
    ASSERT_EQ(ToRtr(peer, o), 0);
    ASSERT_EQ(ToRts(0x1234, o), 0);
  }

  ibv_mr* Register(void* p, size_t n, int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) {
    ibv_mr* mr = ibv_reg_mr(pd_, p, n, access);
    EXPECT_NE(mr, nullptr) << std::strerror(errno);
    if (mr != nullptr) mrs_.push_back(mr);
    return mr;
  }
  void Deregister(ibv_mr* mr) {
    mrs_.erase(std::find(mrs_.begin(), mrs_.end(), mr));
    EXPECT_EQ(ibv_dereg_mr(mr), 0);
  }

  int Write(uint64_t wr_id, const void* src, uint32_t n, uint32_t lkey, uint64_t raddr, uint32_t rkey,
            unsigned flags = IBV_SEND_SIGNALED) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(src), n, lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_WRITE;
    wr.send_flags = flags;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp_, &wr, &bad);
  }
  int Read(uint64_t wr_id, void* dst, uint32_t n, uint32_t lkey, uint64_t raddr, uint32_t rkey,
           unsigned flags = IBV_SEND_SIGNALED) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(dst), n, lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_RDMA_READ;
    wr.send_flags = flags;
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp_, &wr, &bad);
  }
  int Send(uint64_t wr_id, const void* src, uint32_t n, uint32_t lkey, unsigned flags = IBV_SEND_SIGNALED) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(src), n, lkey};
    ibv_send_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = flags;
    ibv_send_wr* bad = nullptr;
    return ibv_post_send(qp_, &wr, &bad);
  }
  int Recv(uint64_t wr_id, void* dst, uint32_t n, uint32_t lkey) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(dst), n, lkey};
    ibv_recv_wr wr{};
    wr.wr_id = wr_id;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    ibv_recv_wr* bad = nullptr;
    return ibv_post_recv(qp_, &wr, &bad);
  }

  // The next `n` completions, waiting up to `timeout_ms` for them.
  std::vector<ibv_wc> Completions(size_t n, int timeout_ms = 5000) {
    std::vector<ibv_wc> out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
    while (out.size() < n && std::chrono::steady_clock::now() < deadline) {
      ibv_wc wc[16];
      int got = ibv_poll_cq(cq_, 16, wc);
      EXPECT_GE(got, 0);
      if (got <= 0) {
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        continue;
      }
      out.insert(out.end(), wc, wc + got);
    }
    return out;
  }
  ibv_wc One(int timeout_ms = 5000) {
    auto v = Completions(1, timeout_ms);
    if (v.empty()) {
      ADD_FAILURE() << "no completion within " << timeout_ms << " ms";
      ibv_wc wc{};
      wc.status = IBV_WC_GENERAL_ERR;
      return wc;
    }
    return v[0];
  }
  void DestroyQp() {
    EXPECT_EQ(ibv_destroy_qp(qp_), 0);
    qp_ = nullptr;
  }
  ibv_qp_state State() {
    ibv_qp_attr a{};
    ibv_qp_init_attr i{};
    EXPECT_EQ(ibv_query_qp(qp_, &a, IBV_QP_STATE, &i), 0);
    return a.qp_state;
  }

  ibv_context* ctx() { return ctx_; }
  ibv_pd* pd() { return pd_; }
  ibv_cq* cq() { return cq_; }
  ibv_comp_channel* channel() { return channel_; }
  ibv_qp* qp() { return qp_; }

 private:
  ibv_context* ctx_ = nullptr;
  ibv_pd* pd_ = nullptr;
  ibv_comp_channel* channel_ = nullptr;
  ibv_cq* cq_ = nullptr;
  ibv_qp* qp_ = nullptr;
  std::vector<ibv_mr*> mrs_;
};

class VerbsDoubleTest : public ::testing::Test {
 protected:
  Fabric fabric_;
};

// Two connected nodes in this process.
class ConnectedPair : public VerbsDoubleTest {
 protected:
  void Connect(const RcOptions& o = {}) { Connect(o, o); }
  void Connect(const RcOptions& oa, const RcOptions& ob) {
    a_.Connect(b_.address(), oa);
    b_.Connect(a_.address(), ob);
  }
  Node a_;
  Node b_;
};

TEST(VerbsDoubleDevices, NoFabricMeansNoDevice) {
  ASSERT_EQ(std::getenv(kFabricEnv), nullptr);
  int n = -1;
  ibv_device** list = ibv_get_device_list(&n);
  ASSERT_NE(list, nullptr);
  EXPECT_EQ(n, 0);
  EXPECT_EQ(list[0], nullptr);
  ibv_free_device_list(list);
}

TEST_F(VerbsDoubleTest, DeviceQueriesLookLikeAnActivePort) {
  Node n;
  EXPECT_STREQ(ibv_get_device_name(n.ctx()->device), "hipr_double0");
  ibv_port_attr port{};
  ASSERT_EQ(ibv_query_port(n.ctx(), 1, &port), 0);
  EXPECT_EQ(port.state, IBV_PORT_ACTIVE);
  EXPECT_EQ(port.link_layer, IBV_LINK_LAYER_ETHERNET);
  ibv_device_attr dev{};
  ASSERT_EQ(ibv_query_device(n.ctx(), &dev), 0);
  EXPECT_GT(dev.max_qp_wr, 0);
  Node other;
  EXPECT_NE(std::memcmp(n.address().gid.raw, other.address().gid.raw, 16), 0) << "each device has its own GID";
}

TEST_F(VerbsDoubleTest, RegisteringUnmappedMemoryFails) {
  Node n;
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* p = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(p, MAP_FAILED);
  ASSERT_EQ(munmap(static_cast<char*>(p) + page, page), 0);
  EXPECT_EQ(ibv_reg_mr(n.pd(), p, 2 * page, int{IBV_ACCESS_LOCAL_WRITE}), nullptr);
  EXPECT_EQ(errno, EFAULT);
  // Remote write without local write is invalid, as on hardware.
  EXPECT_EQ(ibv_reg_mr(n.pd(), p, page, int{IBV_ACCESS_REMOTE_WRITE}), nullptr);
  EXPECT_EQ(errno, EINVAL);
  munmap(p, page);
}

TEST_F(ConnectedPair, StateMachineRefusesSkippedStatesAndEarlyPosts) {
  RcOptions o;
  std::vector<uint8_t> buf(64);
  ibv_mr* mr = a_.Register(buf.data(), buf.size());
  EXPECT_EQ(a_.State(), IBV_QPS_RESET);
  EXPECT_EQ(a_.Recv(1, buf.data(), 64, mr->lkey), EINVAL) << "receive posted in RESET";
  EXPECT_EQ(a_.ToRtr(b_.address(), o), EINVAL) << "RESET -> RTR";
  EXPECT_EQ(a_.ToRts(0, o), EINVAL) << "RESET -> RTS";
  // INIT needs its attributes.
  ibv_qp_attr attr{};
  attr.qp_state = IBV_QPS_INIT;
  EXPECT_EQ(ibv_modify_qp(a_.qp(), &attr, IBV_QP_STATE), EINVAL);
  ASSERT_EQ(a_.ToInit(o.access), 0);
  EXPECT_EQ(a_.Send(1, buf.data(), 8, mr->lkey), EINVAL) << "send posted in INIT";
  EXPECT_EQ(a_.Recv(1, buf.data(), 64, mr->lkey), 0) << "receives may be posted from INIT";
  EXPECT_EQ(a_.ToRts(0, o), EINVAL) << "INIT -> RTS";
  ASSERT_EQ(a_.ToRtr(b_.address(), o), 0);
  EXPECT_EQ(a_.Send(1, buf.data(), 8, mr->lkey), EINVAL) << "send posted in RTR";
  ASSERT_EQ(a_.ToRts(0, o), 0);
  EXPECT_EQ(a_.State(), IBV_QPS_RTS);
  // To ERR: the posted receive is flushed, and later posts complete flushed.
  attr.qp_state = IBV_QPS_ERR;
  ASSERT_EQ(ibv_modify_qp(a_.qp(), &attr, IBV_QP_STATE), 0);
  ibv_wc wc = a_.One();
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(wc.wr_id, 1u);
  EXPECT_EQ(a_.Send(2, buf.data(), 8, mr->lkey), 0);
  wc = a_.One();
  EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(wc.wr_id, 2u);
}

TEST_F(ConnectedPair, WriteLandsInTheTargetAndSendsCompleteInOrder) {
  Connect();
  std::vector<uint8_t> src(300000), dst(300000, 0), rbuf(4096, 0);
  for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i * 7 + 3);
  ibv_mr* smr = a_.Register(src.data(), src.size());
  ibv_mr* dmr = b_.Register(dst.data(), dst.size());
  ibv_mr* rmr = b_.Register(rbuf.data(), rbuf.size());
  ASSERT_EQ(b_.Recv(77, rbuf.data(), 4096, rmr->lkey), 0);
  // A multi-packet WRITE, then a SEND that may be looked at only once the
  // WRITE's bytes are in place (RC ordering).
  ASSERT_EQ(a_.Write(1, src.data(), 300000, smr->lkey, reinterpret_cast<uintptr_t>(dst.data()), dmr->rkey), 0);
  for (uint64_t id = 2; id < 40; ++id)
    ASSERT_EQ(a_.Write(id, src.data() + id, 100, smr->lkey, reinterpret_cast<uintptr_t>(dst.data()) + id, dmr->rkey,
                       id % 3 == 0 ? 0u : unsigned{IBV_SEND_SIGNALED}),
              0);
  const char msg[] = "done";
  ASSERT_EQ(a_.Send(40, msg, sizeof msg, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE), 0);
  ibv_wc r = b_.One();
  ASSERT_EQ(r.status, IBV_WC_SUCCESS) << ibv_wc_status_str(r.status);
  EXPECT_EQ(r.opcode, IBV_WC_RECV);
  EXPECT_EQ(r.wr_id, 77u);
  EXPECT_EQ(r.byte_len, sizeof msg);
  EXPECT_STREQ(reinterpret_cast<char*>(rbuf.data()), "done");
  EXPECT_TRUE(dst == src);
  // Signaled ones only (27 of 40), in posting order.
  std::vector<ibv_wc> wcs = a_.Completions(28, 200);
  ASSERT_EQ(wcs.size(), 27u);
  uint64_t last = 0;
  for (const ibv_wc& wc : wcs) {
    EXPECT_EQ(wc.status, IBV_WC_SUCCESS);
    EXPECT_GT(wc.wr_id, last);
    EXPECT_NE(wc.wr_id % 3, 0u) << "an unsignaled request completed";
    last = wc.wr_id;
  }
  EXPECT_EQ(last, 40u);
}

TEST_F(ConnectedPair, InlineDataIsTakenWhenPosted) {
  Connect();
  std::vector<uint8_t> rbuf(256, 0);
  ibv_mr* rmr = b_.Register(rbuf.data(), rbuf.size());
  ASSERT_EQ(b_.Recv(1, rbuf.data(), 256, rmr->lkey), 0);
  char msg[16] = "original";
  ASSERT_EQ(a_.Send(1, msg, sizeof msg, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE), 0);
  std::strcpy(msg, "changed");
  EXPECT_EQ(b_.One().status, IBV_WC_SUCCESS);
  EXPECT_STREQ(reinterpret_cast<char*>(rbuf.data()), "original");
  std::vector<uint8_t> big(200);
  EXPECT_EQ(a_.Send(2, big.data(), 200, 0, IBV_SEND_INLINE), EINVAL) << "over max_inline_data";
}

// A WRITE the target's NIC must refuse, and what both ends then see.
void ExpectRemoteAccessError(ConnectedPair* t, Node& a, Node& b, uint64_t raddr_delta, int rkey_delta,
                             bool deregister = false, int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE) {
  std::vector<uint8_t> src(8192, 0xAB), dst(4096, 0), rbuf(64);
  ibv_mr* smr = a.Register(src.data(), src.size());
  ibv_mr* dmr = b.Register(dst.data(), dst.size(), access);
  ibv_mr* rmr = b.Register(rbuf.data(), rbuf.size());
  const uint32_t rkey = dmr->rkey + rkey_delta;
  if (deregister) b.Deregister(dmr);
  ASSERT_EQ(b.Recv(9, rbuf.data(), 64, rmr->lkey), 0);
  ASSERT_EQ(a.Write(1, src.data(), 4096, smr->lkey, reinterpret_cast<uintptr_t>(dst.data()) + raddr_delta, rkey), 0);
  ASSERT_EQ(a.Send(2, src.data(), 8, smr->lkey), 0);
  std::vector<ibv_wc> wcs = a.Completions(2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wcs[0].status);
  EXPECT_EQ(wcs[1].wr_id, 2u);
  EXPECT_EQ(wcs[1].status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(wcs[1].status);
  EXPECT_EQ(a.State(), IBV_QPS_ERR);
  // The target: its QP in ERR, its receive flushed, an access-error event,
  // and not one byte written.
  ibv_wc r = b.One();
  EXPECT_EQ(r.status, IBV_WC_WR_FLUSH_ERR);
  EXPECT_EQ(b.State(), IBV_QPS_ERR);
  ibv_async_event ev{};
  ASSERT_EQ(ibv_get_async_event(b.ctx(), &ev), 0);
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
  EXPECT_EQ(ev.element.qp, b.qp());
  ibv_ack_async_event(&ev);
  if (!deregister) {
    EXPECT_EQ(std::count(dst.begin(), dst.end(), 0), 4096);
  }
}

TEST_F(ConnectedPair, WriteOutOfBoundsIsARemoteAccessError) {
  Connect();
  ExpectRemoteAccessError(this, a_, b_, /*raddr_delta=*/1, 0);
}

TEST_F(ConnectedPair, WriteWithAWrongKeyIsARemoteAccessError) {
  Connect();
  ExpectRemoteAccessError(this, a_, b_, 0, /*rkey_delta=*/1);
}

TEST_F(ConnectedPair, WriteToADeregisteredRegionIsARemoteAccessError) {
  Connect();
  ExpectRemoteAccessError(this, a_, b_, 0, 0, /*deregister=*/true);
}

TEST_F(ConnectedPair, WriteToARegionWithoutRemoteWriteIsARemoteAccessError) {
  Connect();
  ExpectRemoteAccessError(this, a_, b_, 0, 0, false, IBV_ACCESS_LOCAL_WRITE);
}

constexpr unsigned kReadable = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;

TEST_F(ConnectedPair, ReadFetchesTheTargetsBytesAndCompletesInOrder) {
  RcOptions o;
  o.access = kReadable;
  Connect(o);
  // Larger than the response slots together: slots are reused as it goes.
  const size_t n = 5u << 20;
  std::vector<uint8_t> src(n), dst(n, 0), small(100, 0), rbuf(64);
  for (size_t i = 0; i < n; ++i) src[i] = static_cast<uint8_t>(i * 13 + 5);
  ibv_mr* smr = b_.Register(src.data(), n, IBV_ACCESS_REMOTE_READ);
  ibv_mr* dmr = a_.Register(dst.data(), n, IBV_ACCESS_LOCAL_WRITE);
  ibv_mr* tmr = a_.Register(small.data(), small.size(), IBV_ACCESS_LOCAL_WRITE);
  ibv_mr* rmr = b_.Register(rbuf.data(), rbuf.size());
  ASSERT_EQ(b_.Recv(7, rbuf.data(), 64, rmr->lkey), 0);
  const uintptr_t base = reinterpret_cast<uintptr_t>(src.data());
  ASSERT_EQ(a_.Read(1, dst.data(), static_cast<uint32_t>(n), dmr->lkey, base, smr->rkey), 0);
  ASSERT_EQ(a_.Read(2, small.data(), 100, tmr->lkey, base + 1000, smr->rkey), 0);
  ASSERT_EQ(a_.Read(3, small.data(), 0, tmr->lkey, base, smr->rkey), 0);
  const char msg[] = "after";
  ASSERT_EQ(a_.Send(4, msg, sizeof msg, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE), 0);
  std::vector<ibv_wc> wcs = a_.Completions(4);
  ASSERT_EQ(wcs.size(), 4u);
  for (uint64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(wcs[i].wr_id, i + 1);
    EXPECT_EQ(wcs[i].status, IBV_WC_SUCCESS) << ibv_wc_status_str(wcs[i].status);
    EXPECT_EQ(wcs[i].opcode, i < 3 ? IBV_WC_RDMA_READ : IBV_WC_SEND);
  }
  EXPECT_EQ(wcs[0].byte_len, n);
  EXPECT_TRUE(dst == src);
  EXPECT_TRUE(std::equal(small.begin(), small.end(), src.begin() + 1000));
  EXPECT_EQ(b_.One().status, IBV_WC_SUCCESS);
  EXPECT_EQ(a_.State(), IBV_QPS_RTS);
  EXPECT_EQ(b_.State(), IBV_QPS_RTS);
  // Inline READs make no sense.
  EXPECT_EQ(a_.Read(5, small.data(), 8, tmr->lkey, base, smr->rkey, IBV_SEND_SIGNALED | IBV_SEND_INLINE), EINVAL);
}

// A READ the target's NIC must refuse: the requester's READ fails with
// IBV_WC_REM_ACCESS_ERR, its QP goes to ERR and later requests are flushed;
// the target's QP goes to ERR with an access-error event.
void ExpectReadRefused(Node& a, Node& b, uint64_t raddr_delta, int rkey_delta, int access) {
  std::vector<uint8_t> src(4096, 0xCD), dst(8192, 0);
  ibv_mr* smr = b.Register(src.data(), src.size(), access);
  ibv_mr* dmr = a.Register(dst.data(), dst.size(), IBV_ACCESS_LOCAL_WRITE);
  ASSERT_EQ(a.Read(1, dst.data(), 4096, dmr->lkey, reinterpret_cast<uintptr_t>(src.data()) + raddr_delta,
                   smr->rkey + rkey_delta),
            0);
  ASSERT_EQ(a.Read(2, dst.data() + 4096, 16, dmr->lkey, reinterpret_cast<uintptr_t>(src.data()), smr->rkey), 0);
  ASSERT_EQ(a.Send(3, dst.data(), 8, dmr->lkey), 0);
  std::vector<ibv_wc> wcs = a.Completions(3);
  ASSERT_EQ(wcs.size(), 3u);
  EXPECT_EQ(wcs[0].wr_id, 1u);
  EXPECT_EQ(wcs[0].status, IBV_WC_REM_ACCESS_ERR) << ibv_wc_status_str(wcs[0].status);
  for (int i = 1; i < 3; ++i) {
    EXPECT_EQ(wcs[i].wr_id, static_cast<uint64_t>(i + 1));
    EXPECT_EQ(wcs[i].status, IBV_WC_WR_FLUSH_ERR) << ibv_wc_status_str(wcs[i].status);
  }
  EXPECT_EQ(a.State(), IBV_QPS_ERR);
  EXPECT_EQ(std::count(dst.begin(), dst.end(), 0), 8192) << "a refused READ delivered bytes";
  // Posts after the error are flushed at once.
  ASSERT_EQ(a.Read(4, dst.data(), 16, dmr->lkey, reinterpret_cast<uintptr_t>(src.data()), smr->rkey), 0);
  ibv_wc late = a.One();
  EXPECT_EQ(late.wr_id, 4u);
  EXPECT_EQ(late.status, IBV_WC_WR_FLUSH_ERR);
  for (int i = 0; i < 200 && b.State() != IBV_QPS_ERR; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(b.State(), IBV_QPS_ERR);
  ibv_async_event ev{};
  ASSERT_EQ(ibv_get_async_event(b.ctx(), &ev), 0);
  EXPECT_EQ(ev.event_type, IBV_EVENT_QP_ACCESS_ERR);
  ibv_ack_async_event(&ev);
}

TEST_F(ConnectedPair, ReadWithAWrongKeyIsARemoteAccessError) {
  RcOptions o;
  o.access = kReadable;
  Connect(o);
  ExpectReadRefused(a_, b_, 0, /*rkey_delta=*/1, IBV_ACCESS_REMOTE_READ);
}

TEST_F(ConnectedPair, ReadOutOfBoundsIsARemoteAccessError) {
  RcOptions o;
  o.access = kReadable;
  Connect(o);
  ExpectReadRefused(a_, b_, /*raddr_delta=*/1, 0, IBV_ACCESS_REMOTE_READ);
}

TEST_F(ConnectedPair, ReadOfARegionWithoutRemoteReadIsARemoteAccessError) {
  RcOptions o;
  o.access = kReadable;
  Connect(o);
  ExpectReadRefused(a_, b_, 0, 0, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
}

TEST_F(ConnectedPair, ReadThroughAQpWithoutRemoteReadIsARemoteAccessError) {
  RcOptions readable;
  readable.access = kReadable;
  Connect(readable, RcOptions{});  // b's QP allows remote writes only.
  ExpectReadRefused(a_, b_, 0, 0, IBV_ACCESS_REMOTE_READ);
}

TEST_F(ConnectedPair, ReadIntoMemoryWithoutLocalWriteIsALocalProtectionError) {
  RcOptions o;
  o.access = kReadable;
  Connect(o);
  std::vector<uint8_t> src(64), dst(64);
  ibv_mr* smr = b_.Register(src.data(), src.size(), IBV_ACCESS_REMOTE_READ);
  ibv_mr* dmr = a_.Register(dst.data(), dst.size(), IBV_ACCESS_REMOTE_READ);
  ASSERT_EQ(a_.Read(1, dst.data(), 64, dmr->lkey, reinterpret_cast<uintptr_t>(src.data()), smr->rkey), 0);
  EXPECT_EQ(a_.One().status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(a_.State(), IBV_QPS_ERR);
}

TEST_F(ConnectedPair, ABadLocalKeyIsALocalProtectionError) {
  Connect();
  std::vector<uint8_t> src(64), dst(64);
  ibv_mr* smr = a_.Register(src.data(), src.size());
  ibv_mr* dmr = b_.Register(dst.data(), dst.size());
  ASSERT_EQ(a_.Write(1, src.data(), 64, smr->lkey + 1, reinterpret_cast<uintptr_t>(dst.data()), dmr->rkey), 0);
  EXPECT_EQ(a_.One().status, IBV_WC_LOC_PROT_ERR);
  EXPECT_EQ(a_.State(), IBV_QPS_ERR);
}

TEST_F(ConnectedPair, SendLargerThanTheReceiveFailsBothEnds) {
  Connect();
  std::vector<uint8_t> src(1000), rbuf(100);
  ibv_mr* smr = a_.Register(src.data(), src.size());
  ibv_mr* rmr = b_.Register(rbuf.data(), rbuf.size());
  ASSERT_EQ(b_.Recv(5, rbuf.data(), 100, rmr->lkey), 0);
  ASSERT_EQ(a_.Send(1, src.data(), 1000, smr->lkey), 0);
  EXPECT_EQ(a_.One().status, IBV_WC_REM_INV_REQ_ERR);
  ibv_wc r = b_.One();
  EXPECT_EQ(r.wr_id, 5u);
  EXPECT_EQ(r.status, IBV_WC_LOC_LEN_ERR);
}

TEST_F(ConnectedPair, SendWithoutAReceiveExhaustsRnrRetries) {
  RcOptions o;
  o.rnr_retry = 2;
  o.min_rnr_timer = 18;  // 5 ms.
  Connect(o);
  std::vector<uint8_t> src(64);
  ibv_mr* smr = a_.Register(src.data(), src.size());
  ASSERT_EQ(a_.Send(1, src.data(), 64, smr->lkey), 0);
  ASSERT_EQ(a_.Send(2, src.data(), 64, smr->lkey), 0);
  std::vector<ibv_wc> wcs = a_.Completions(2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].status, IBV_WC_RNR_RETRY_EXC_ERR) << ibv_wc_status_str(wcs[0].status);
  EXPECT_EQ(wcs[1].status, IBV_WC_WR_FLUSH_ERR);
  // The responder is not in error: a late receive gets nothing.
  EXPECT_EQ(b_.State(), IBV_QPS_RTS);
  std::vector<uint8_t> rbuf(64);
  ibv_mr* rmr = b_.Register(rbuf.data(), rbuf.size());
  ASSERT_EQ(b_.Recv(1, rbuf.data(), 64, rmr->lkey), 0);
  EXPECT_TRUE(b_.Completions(1, 100).empty());
}

TEST_F(ConnectedPair, ASendWaitsForAReceivePostedWithinTheRnrBudget) {
  RcOptions o;
  o.rnr_retry = 7;  // For ever.
  Connect(o);
  std::vector<uint8_t> src(64, 5), rbuf(64);
  ibv_mr* smr = a_.Register(src.data(), src.size());
  ibv_mr* rmr = b_.Register(rbuf.data(), rbuf.size());
  ASSERT_EQ(a_.Send(1, src.data(), 64, smr->lkey), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  ASSERT_EQ(b_.Recv(1, rbuf.data(), 64, rmr->lkey), 0);
  EXPECT_EQ(a_.One().status, IBV_WC_SUCCESS);
  EXPECT_EQ(b_.One().status, IBV_WC_SUCCESS);
  EXPECT_EQ(rbuf, src);
}

TEST_F(ConnectedPair, ADestroyedPeerExhaustsTransportRetries) {
  Connect();
  std::vector<uint8_t> src(64);
  ibv_mr* smr = a_.Register(src.data(), src.size());
  b_.DestroyQp();
  ASSERT_EQ(a_.Write(1, src.data(), 64, smr->lkey, 0x1000, 1234), 0);
  ASSERT_EQ(a_.Send(2, src.data(), 64, smr->lkey), 0);
  std::vector<ibv_wc> wcs = a_.Completions(2);
  ASSERT_EQ(wcs.size(), 2u);
  EXPECT_EQ(wcs[0].status, IBV_WC_RETRY_EXC_ERR) << ibv_wc_status_str(wcs[0].status);
  EXPECT_EQ(wcs[1].status, IBV_WC_WR_FLUSH_ERR);
}

TEST_F(ConnectedPair, AWrongPsnOrGidNeverReachesThePeer) {
  RcOptions o;
  ASSERT_EQ(a_.ToInit(o.access), 0);
  Address wrong = b_.address();
  wrong.gid.raw[15] ^= 1;
  ASSERT_EQ(a_.ToRtr(wrong, o), 0) << "a NIC cannot tell at RTR";
  ASSERT_EQ(a_.ToRts(0x1234, o), 0);
  b_.Connect(a_.address(), o);
  std::vector<uint8_t> src(64);
  ibv_mr* smr = a_.Register(src.data(), src.size());
  ASSERT_EQ(a_.Send(1, src.data(), 64, smr->lkey), 0);
  EXPECT_EQ(a_.One().status, IBV_WC_RETRY_EXC_ERR);
}

TEST_F(ConnectedPair, CompletionChannelWakesAPoller) {
  Connect();
  std::vector<uint8_t> rbuf(64);
  ibv_mr* rmr = b_.Register(rbuf.data(), rbuf.size());
  ASSERT_EQ(b_.Recv(3, rbuf.data(), 64, rmr->lkey), 0);
  ASSERT_EQ(ibv_req_notify_cq(b_.cq(), 0), 0);
  std::thread sender([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const char m[] = "hi";
    EXPECT_EQ(a_.Send(1, m, sizeof m, 0, IBV_SEND_INLINE), 0);
  });
  pollfd pfd{b_.channel()->fd, POLLIN, 0};
  ASSERT_EQ(poll(&pfd, 1, 5000), 1);
  ibv_cq* cq = nullptr;
  void* cq_ctx = nullptr;
  ASSERT_EQ(ibv_get_cq_event(b_.channel(), &cq, &cq_ctx), 0);
  EXPECT_EQ(cq, b_.cq());
  ibv_ack_cq_events(cq, 1);
  EXPECT_EQ(b_.One().wr_id, 3u);
  sender.join();
}

TEST_F(ConnectedPair, ResourcesInUseCannotBeFreed) {
  EXPECT_EQ(ibv_dealloc_pd(a_.pd()), EBUSY);
  EXPECT_EQ(ibv_destroy_cq(a_.cq()), EBUSY);
}

// Across processes: the child connects to us, writes into our memory and
// sends a notice; the fabric directory is all they share.
TEST_F(VerbsDoubleTest, WriteAndSendBetweenProcesses) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(sv[0]);
    int rc = 1;
    {
      Node c;
      struct {
        Address addr;
        uint64_t raddr;
        uint32_t rkey;
      } peer;
      Address mine = c.address();
      if (read(sv[1], &peer, sizeof peer) == sizeof peer && write(sv[1], &mine, sizeof mine) == sizeof mine) {
        c.Connect(peer.addr);
        std::vector<uint8_t> src(1 << 20);
        for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint8_t>(i ^ (i >> 8));
        ibv_mr* mr = c.Register(src.data(), src.size());
        c.Write(1, src.data(), static_cast<uint32_t>(src.size()), mr->lkey, peer.raddr, peer.rkey);
        c.Send(2, "ok", 3, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE);
        std::vector<ibv_wc> wcs = c.Completions(2);
        rc = wcs.size() == 2 && wcs[0].status == IBV_WC_SUCCESS && wcs[1].status == IBV_WC_SUCCESS ? 0 : 2;
      }
    }
    _exit(rc);
  }
  close(sv[1]);
  {
    Node n;
    std::vector<uint8_t> dst(1 << 20, 0), rbuf(64);
    ibv_mr* dmr = n.Register(dst.data(), dst.size());
    ibv_mr* rmr = n.Register(rbuf.data(), rbuf.size());
    ASSERT_EQ(n.ToInit(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE), 0);
    ASSERT_EQ(n.Recv(1, rbuf.data(), 64, rmr->lkey), 0);
    struct {
      Address addr;
      uint64_t raddr;
      uint32_t rkey;
    } mine{n.address(), reinterpret_cast<uintptr_t>(dst.data()), dmr->rkey};
    Address child{};
    ASSERT_EQ(write(sv[0], &mine, sizeof mine), static_cast<ssize_t>(sizeof mine));
    ASSERT_EQ(read(sv[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
    RcOptions o;
    ASSERT_EQ(n.ToRtr(child, o), 0);
    ASSERT_EQ(n.ToRts(0x1234, o), 0);
    ibv_wc r = n.One();
    EXPECT_EQ(r.status, IBV_WC_SUCCESS) << ibv_wc_status_str(r.status);
    EXPECT_STREQ(reinterpret_cast<char*>(rbuf.data()), "ok");
    bool same = true;
    for (size_t i = 0; i < dst.size() && same; ++i) same = dst[i] == static_cast<uint8_t>(i ^ (i >> 8));
    EXPECT_TRUE(same);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  close(sv[0]);
  EXPECT_EQ(fabric_.FileCount(), 0) << "wires left in the fabric directory";
}

// A peer process killed in the middle of a stream of WRITEs: our requests
// fail with a retry error, never hang.
TEST_F(VerbsDoubleTest, APeerKilledMidWriteExhaustsRetries) {
  int sv[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    close(sv[0]);
    Node c;
    std::vector<uint8_t> dst(1 << 20);
    ibv_mr* mr = c.Register(dst.data(), dst.size());
    struct {
      Address addr;
      uint64_t raddr;
      uint32_t rkey;
    } mine{c.address(), reinterpret_cast<uintptr_t>(dst.data()), mr->rkey};
    Address peer{};
    if (write(sv[1], &mine, sizeof mine) != sizeof mine || read(sv[1], &peer, sizeof peer) != sizeof peer) _exit(1);
    c.Connect(peer);
    char go = 1;
    if (write(sv[1], &go, 1) != 1) _exit(1);
    pause();  // Killed here.
    _exit(0);
  }
  close(sv[1]);
  Node n;
  struct {
    Address addr;
    uint64_t raddr;
    uint32_t rkey;
  } child{};
  ASSERT_EQ(read(sv[0], &child, sizeof child), static_cast<ssize_t>(sizeof child));
  Address mine = n.address();
  ASSERT_EQ(write(sv[0], &mine, sizeof mine), static_cast<ssize_t>(sizeof mine));
  n.Connect(child.addr);
  char go;
  ASSERT_EQ(read(sv[0], &go, 1), 1);
  std::vector<uint8_t> src(1 << 20, 1);
  ibv_mr* smr = n.Register(src.data(), src.size());
  // 200 MiB: far more than the double moves before the kill lands.
  for (int i = 0; i < 200; ++i)
    ASSERT_EQ(n.Write(static_cast<uint64_t>(i), src.data(), 1 << 20, smr->lkey, child.raddr, child.rkey), 0);
  kill(pid, SIGKILL);
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  std::vector<ibv_wc> wcs = n.Completions(200, 10000);
  ASSERT_EQ(wcs.size(), 200u);
  bool failed = false;
  for (const ibv_wc& wc : wcs) {
    if (!failed && wc.status != IBV_WC_SUCCESS) {
      EXPECT_EQ(wc.status, IBV_WC_RETRY_EXC_ERR) << ibv_wc_status_str(wc.status);
      failed = true;
    } else if (failed) {
      EXPECT_EQ(wc.status, IBV_WC_WR_FLUSH_ERR);
    }
  }
  EXPECT_TRUE(failed) << "200 MiB of WRITEs into a killed process all succeeded";
  close(sv[0]);
}

}  // namespace
}  // namespace hipr::verbs_double

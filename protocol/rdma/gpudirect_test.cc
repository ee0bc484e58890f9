// The verbs half of GPUDirect RDMA (gpudirect.h) with a fake
// ibv_reg_dmabuf_mr: argument checks and errno mapping. No NIC.
#include "protocol/rdma/gpudirect.h"

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cerrno>

namespace hipr::rdma {
namespace {

int calls = 0;
int fail_errno = 0;
ibv_mr fake_mr;

ibv_mr* FakeReg(ibv_pd*, uint64_t, size_t, uint64_t, int, int) {
  ++calls;
  if (fail_errno != 0) {
    errno = fail_errno;
    return nullptr;
  }
  return &fake_mr;
}

ibv_pd* const kPd = reinterpret_cast<ibv_pd*>(uintptr_t{0x1000});  // Never dereferenced.

TEST(RegisterDmaBuf, PassesThroughAndMapsErrors) {
  calls = 0;
  fail_errno = 0;
  ibv_mr* mr = nullptr;
  ASSERT_TRUE(RegisterDmaBuf(FakeReg, kPd, 3, 4096, 8192, 0x7f0000001000, IBV_ACCESS_REMOTE_READ, &mr).ok());
  EXPECT_EQ(mr, &fake_mr);

  mr = nullptr;
  fail_errno = EOPNOTSUPP;
  Status st = RegisterDmaBuf(FakeReg, kPd, 3, 0, 4096, 0x7f0000000000, IBV_ACCESS_REMOTE_READ, &mr);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("cannot import dma-bufs"), std::string::npos) << st.message();
  fail_errno = ENOMEM;
  EXPECT_EQ(RegisterDmaBuf(FakeReg, kPd, 3, 0, 4096, 0x7f0000000000, 0, &mr).code(), StatusCode::kResourceExhausted);
  fail_errno = EFAULT;
  EXPECT_EQ(RegisterDmaBuf(FakeReg, kPd, 3, 0, 4096, 0x7f0000000000, 0, &mr).code(), StatusCode::kInternal);
  EXPECT_EQ(mr, nullptr);
  EXPECT_EQ(calls, 4);
}

TEST(RegisterDmaBuf, RefusesBeforeCalling) {
  calls = 0;
  ibv_mr* mr = nullptr;
  const Status none = RegisterDmaBuf(nullptr, kPd, 3, 0, 4096, 0, 0, &mr);
  EXPECT_EQ(none.code(), StatusCode::kNotSupported);
  EXPECT_EQ(none.message(), "this libibverbs has no ibv_reg_dmabuf_mr (rdma-core >= 34 has it)");
  EXPECT_EQ(RegisterDmaBuf(FakeReg, kPd, -1, 0, 4096, 0, 0, &mr).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(RegisterDmaBuf(FakeReg, kPd, 3, 0, 0, 0, 0, &mr).code(), StatusCode::kInvalidArgument);
  // ibv_reg_dmabuf_mr(3): iova and offset must share their page offset.
  EXPECT_EQ(RegisterDmaBuf(FakeReg, kPd, 3, 100, 4096, 0x7f0000000000, 0, &mr).code(), StatusCode::kInvalidArgument);
  const Status flags = RegisterDmaBuf(FakeReg, kPd, 3, 0, 4096, 0, IBV_ACCESS_MW_BIND, &mr);
  EXPECT_EQ(flags.code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(flags.message(), "dma-buf registration: access flags 0x10 are not allowed");
  EXPECT_EQ(calls, 0);
  EXPECT_EQ(mr, nullptr);
}

// The double (and this test) define no ibv_reg_dmabuf_mr: resolution finds
// none rather than failing to link.
TEST(ResolveRegDmaBufMr, AbsentWhereNoLibibverbsHasIt) { EXPECT_EQ(ResolveRegDmaBufMr(RTLD_DEFAULT), nullptr); }

}  // namespace
}  // namespace hipr::rdma

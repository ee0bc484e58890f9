// GPUDirect RDMA's probe and registration (hip_gpudirect.h), resolved from a
// stand-in HIP runtime (hip_gpudirect_fake_runtime.cc) with a fake
// ibv_reg_dmabuf_mr, and the probe's answer from this machine's real HIP.
// No GPU and no NIC: the call sequence and the error paths are what is
// checked, not that a NIC can reach GPU memory.
#include "worker_service/hip/hip_gpudirect.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <regex>
#include <string>

namespace hipr::worker {
namespace {

// The fake ibv_reg_dmabuf_mr: records its arguments, checks the fd is open
// while it runs, and answers with fake_mr or fails with reg_errno.
struct RegCall {
  int calls = 0;
  ibv_pd* pd = nullptr;
  uint64_t offset = 0;
  size_t length = 0;
  uint64_t iova = 0;
  int fd = -1;
  bool fd_open = false;
  int access = 0;
};
RegCall reg_call;
int reg_errno = 0;
ibv_mr fake_mr;

ibv_mr* FakeRegDmaBufMr(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd, int access) {
  reg_call = {reg_call.calls + 1, pd, offset, length, iova, fd, fcntl(fd, F_GETFD) >= 0, access};
  if (reg_errno != 0) {
    errno = reg_errno;
    return nullptr;
  }
  return &fake_mr;
}

int OpenFds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  while (dirent* e = readdir(d)) n += e->d_name[0] != '.';
  closedir(d);
  return n;
}

bool FdClosed(int fd) { return fcntl(fd, F_GETFD) < 0 && errno == EBADF; }

ibv_pd* const kPd = reinterpret_cast<ibv_pd*>(uintptr_t{0x1000});  // Never dereferenced.
constexpr int kAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;

class FakeRuntime : public ::testing::Test {
 protected:
  void SetUp() override {
    handle_ = dlopen(HIPR_TEST_FAKE_HIP, RTLD_NOW | RTLD_LOCAL);
    ASSERT_NE(handle_, nullptr) << dlerror();
    api_ = ResolveHipDmaBufApi(handle_);
    base_ = reinterpret_cast<uintptr_t (*)()>(dlsym(handle_, "hipr_fake_base"))();
    size_ = reinterpret_cast<size_t (*)()>(dlsym(handle_, "hipr_fake_size"))();
    set_export_error_ = reinterpret_cast<void (*)(int)>(dlsym(handle_, "hipr_fake_set_export_error"));
    last_export_ = reinterpret_cast<int (*)(void**, size_t*, unsigned*, unsigned long long*, int*)>(
        dlsym(handle_, "hipr_fake_last_export"));
    set_export_error_(0);
    reg_call = {};
    reg_errno = 0;
  }
  void TearDown() override {
    if (handle_ != nullptr) dlclose(handle_);
  }

  void* handle_ = nullptr;
  HipDmaBufApi api_;
  uint64_t base_ = 0;
  size_t size_ = 0;
  void (*set_export_error_)(int) = nullptr;
  int (*last_export_)(void**, size_t*, unsigned*, unsigned long long*, int*) = nullptr;
};

TEST_F(FakeRuntime, ResolvesEveryFunctionAndNamesTheRuntime) {
  EXPECT_NE(api_.get_handle_for_address_range, nullptr);
  EXPECT_NE(api_.get_address_range, nullptr);
  EXPECT_NE(api_.get_device_count, nullptr);
  EXPECT_NE(api_.device_get_attribute, nullptr);
  EXPECT_NE(api_.runtime_get_version, nullptr);
  EXPECT_EQ(api_.runtime, "HIP 7.0.51831 (libhipr_fake_hip_dmabuf.so)");
}

TEST_F(FakeRuntime, ProbeIsAvailableWhenBothHalvesAndAGpuAre) {
  const GpuDirectCapability cap = ProbeGpuDirect(api_, FakeRegDmaBufMr);
  EXPECT_TRUE(cap.available);
  EXPECT_EQ(cap.Describe(),
            "available: dma-buf (HIP 7.0.51831 (libhipr_fake_hip_dmabuf.so); GPU 1 of 2; the NIC's provider is asked "
            "at the first registration)");
  EXPECT_EQ(reg_call.calls, 0);  // Probing registers nothing.
}

TEST_F(FakeRuntime, ProbeWithoutIbvRegDmabufMrSaysSo) {
  const GpuDirectCapability cap = ProbeGpuDirect(api_, nullptr);
  EXPECT_FALSE(cap.available);
  EXPECT_EQ(cap.Describe(), "unavailable: this libibverbs has no ibv_reg_dmabuf_mr (rdma-core >= 34 has it)");
}

TEST_F(FakeRuntime, ProbeWithoutAGpuReportingDmaBufSaysSo) {
  HipDmaBufApi api = api_;
  api.device_get_attribute = [](int* value, int, int) {
    *value = 0;
    return 0;
  };
  const GpuDirectCapability cap = ProbeGpuDirect(api, FakeRegDmaBufMr);
  EXPECT_FALSE(cap.available);
  EXPECT_EQ(cap.Describe(),
            "unavailable: no GPU of 2 reports hipDeviceAttributeDmaBufSupported (amdgpu kernel driver without dma-buf "
            "export?)");
}

TEST_F(FakeRuntime, RegistersTheRangeAtItsOffsetInTheExportedAllocation) {
  const int fds = OpenFds();
  ibv_mr* mr = nullptr;
  // A range straddling pages: rounded out to [base + 8 KiB, base + 16 KiB).
  const uint64_t address = base_ + 8192 + 100;
  ASSERT_TRUE(RegisterDeviceMemory(api_, FakeRegDmaBufMr, kPd, address, 5000, kAccess, &mr).ok());
  EXPECT_EQ(mr, &fake_mr);

  void* dptr = nullptr;
  size_t size = 0;
  unsigned type = 0;
  unsigned long long flags = 1;
  int fd = -1;
  ASSERT_EQ(last_export_(&dptr, &size, &type, &flags, &fd), 1);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(dptr), base_);  // The whole allocation.
  EXPECT_EQ(size, size_);
  EXPECT_EQ(type, kHipMemRangeHandleTypeDmaBufFd);
  EXPECT_EQ(flags, 0u);

  ASSERT_EQ(reg_call.calls, 1);
  EXPECT_EQ(reg_call.pd, kPd);
  EXPECT_EQ(reg_call.fd, fd);
  EXPECT_TRUE(reg_call.fd_open);
  EXPECT_EQ(reg_call.offset, 8192u);
  EXPECT_EQ(reg_call.length, 8192u);
  EXPECT_EQ(reg_call.iova, base_ + 8192);  // The NIC sees the device address.
  EXPECT_EQ(reg_call.access, kAccess);
  EXPECT_TRUE(FdClosed(fd));  // The region holds its own reference.
  EXPECT_EQ(OpenFds(), fds);
}

TEST_F(FakeRuntime, AFailingRegistrationSaysWhyAndLeavesNoFd) {
  const int fds = OpenFds();
  reg_errno = EOPNOTSUPP;
  ibv_mr* mr = nullptr;
  const Status st = RegisterDeviceMemory(api_, FakeRegDmaBufMr, kPd, base_, 4096, kAccess, &mr);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_NE(st.message().find("ibv_reg_dmabuf_mr(offset 0, length 4096) failed: Operation not supported"),
            std::string::npos)
      << st.message();
  EXPECT_NE(st.message().find("cannot import dma-bufs"), std::string::npos) << st.message();
  EXPECT_EQ(mr, nullptr);
  ASSERT_EQ(reg_call.calls, 1);
  EXPECT_TRUE(FdClosed(reg_call.fd));
  EXPECT_EQ(OpenFds(), fds);

  reg_errno = ENOMEM;
  EXPECT_EQ(RegisterDeviceMemory(api_, FakeRegDmaBufMr, kPd, base_, 4096, kAccess, &mr).code(),
            StatusCode::kResourceExhausted);
  EXPECT_EQ(OpenFds(), fds);
}

TEST_F(FakeRuntime, AFailingExportSaysWhyAndRegistersNothing) {
  const int fds = OpenFds();
  set_export_error_(801);  // hipErrorNotSupported.
  ibv_mr* mr = nullptr;
  const Status st = RegisterDeviceMemory(api_, FakeRegDmaBufMr, kPd, base_, 4096, kAccess, &mr);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_EQ(st.message(), "hipMemGetHandleForAddressRange(dma-buf, 67108864 bytes) failed: error 801");
  EXPECT_EQ(reg_call.calls, 0);
  EXPECT_EQ(mr, nullptr);
  EXPECT_EQ(OpenFds(), fds);
}

TEST_F(FakeRuntime, RefusesBeforeExportingWhatCannotWork) {
  const int fds = OpenFds();
  ibv_mr* mr = nullptr;
  void* dptr = nullptr;
  size_t size = 0;
  unsigned type = 0;
  unsigned long long flags = 0;
  int fd = -1;
  // Not device memory of this runtime.
  EXPECT_EQ(RegisterDeviceMemory(api_, FakeRegDmaBufMr, kPd, 4096, 4096, kAccess, &mr).code(),
            StatusCode::kInvalidDevicePointer);
  // Past the end of its allocation.
  EXPECT_EQ(RegisterDeviceMemory(api_, FakeRegDmaBufMr, kPd, base_ + size_ - 4096, 8192, kAccess, &mr).code(),
            StatusCode::kInvalidDevicePointer);
  // Empty.
  EXPECT_EQ(RegisterDeviceMemory(api_, FakeRegDmaBufMr, kPd, base_, 0, kAccess, &mr).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(last_export_(&dptr, &size, &type, &flags, &fd), 0);
  // No ibv_reg_dmabuf_mr: refused before anything is exported.
  const Status no_verbs = RegisterDeviceMemory(api_, nullptr, kPd, base_, 4096, kAccess, &mr);
  EXPECT_EQ(no_verbs.code(), StatusCode::kNotSupported);
  EXPECT_EQ(no_verbs.message(), "this libibverbs has no ibv_reg_dmabuf_mr (rdma-core >= 34 has it)");
  EXPECT_EQ(last_export_(&dptr, &size, &type, &flags, &fd), 0);
  // An access flag dma-buf regions do not take: exported, refused, fd closed.
  EXPECT_EQ(RegisterDeviceMemory(api_, FakeRegDmaBufMr, kPd, base_, 4096, kAccess | IBV_ACCESS_MW_BIND, &mr).code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(reg_call.calls, 0);
  EXPECT_EQ(mr, nullptr);
  EXPECT_EQ(OpenFds(), fds);
}

TEST(HipGpuDirect, ARuntimeWithoutTheExportIsRefusedByName) {
  HipDmaBufApi api;
  api.runtime = "HIP 5.2.21153 (libamdhip64.so.5)";
  ibv_mr* mr = nullptr;
  const Status st = RegisterDeviceMemory(api, FakeRegDmaBufMr, kPd, 1 << 20, 4096, kAccess, &mr);
  EXPECT_EQ(st.code(), StatusCode::kNotSupported);
  EXPECT_EQ(st.message(),
            "HIP 5.2.21153 (libamdhip64.so.5) has no hipMemGetHandleForAddressRange (dma-buf export of device memory)");
}

// This machine's HIP (Debian's 5.2 here): the probe names it and the missing
// export. Needs no GPU: only hipRuntimeGetVersion runs.
TEST(HipGpuDirect, ThisMachinesHipRuntime) {
  void* hip = dlopen(HIPR_TEST_REAL_HIP, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(hip, nullptr) << dlerror();
  const HipDmaBufApi api = ResolveHipDmaBufApi(hip);
  if (api.get_handle_for_address_range != nullptr) GTEST_SKIP() << api.runtime << " has the export (HIP >= 7)";
  EXPECT_TRUE(std::regex_match(api.runtime, std::regex(R"(HIP [1-6]\.\d+\.\d+ \(libamdhip64\.so[.\d]*\))")))
      << api.runtime;
  const GpuDirectCapability cap = ProbeGpuDirect(api, FakeRegDmaBufMr);
  EXPECT_FALSE(cap.available);
  EXPECT_EQ(cap.Describe(), "unavailable: " + api.runtime +
                                " has no hipMemGetHandleForAddressRange (dma-buf export of device memory, added in "
                                "HIP 7.0)");
  std::printf("this machine: GPUDirect RDMA %s\n", cap.Describe().c_str());
}

// Debian 12's libibverbs (rdma-core 44) has ibv_reg_dmabuf_mr.
TEST(HipGpuDirect, ThisMachinesLibibverbsResolves) {
  void* verbs = dlopen(HIPR_TEST_IBVERBS, RTLD_NOW | RTLD_LOCAL);
  if (verbs == nullptr) GTEST_SKIP() << dlerror();
  EXPECT_NE(rdma::ResolveRegDmaBufMr(verbs), nullptr);
}

}  // namespace
}  // namespace hipr::worker

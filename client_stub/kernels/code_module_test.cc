// ReadableBytesAt: the view a code object without a stated size is parsed in
// stops where this process's readable memory stops, so hostile headers are
// refused instead of read past it.
#include "client_stub/kernels/code_module.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>

#include "protocol/code_object/code_object.h"

namespace hipr::client {
namespace {

class TwoPages : public ::testing::Test {
 protected:
  void SetUp() override {
    page_ = static_cast<size_t>(sysconf(_SC_PAGESIZE));
    void* m = mmap(nullptr, 3 * page_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(m, MAP_FAILED);
    base_ = static_cast<uint8_t*>(m);
    // Readable, readable, then a guard page no read may touch.
    ASSERT_EQ(mprotect(base_ + 2 * page_, page_, PROT_NONE), 0);
  }
  void TearDown() override { munmap(base_, 3 * page_); }
  size_t page_ = 0;
  uint8_t* base_ = nullptr;
};

TEST_F(TwoPages, ReadableRunEndsAtTheGuardPage) {
  EXPECT_EQ(ReadableBytesAt(base_, UINT64_MAX), 2 * page_);
  EXPECT_EQ(ReadableBytesAt(base_ + 100, UINT64_MAX), 2 * page_ - 100);
  EXPECT_EQ(ReadableBytesAt(base_ + 100, 50), 50u);
  EXPECT_EQ(ReadableBytesAt(base_ + 2 * page_, UINT64_MAX), 0u) << "PROT_NONE";
}

// An AMDGPU ELF header at the end of readable memory whose section table
// (e_shoff, e_shnum = 0xffff) lies past it: refused, the guard never read.
TEST_F(TwoPages, HostileSectionCountIsRefusedNotRead) {
  uint8_t* elf = base_ + 2 * page_ - 64;
  std::memset(elf, 0, 64);
  const uint8_t ident[] = {0x7f, 'E', 'L', 'F', 2, 1, 1, 64};
  std::memcpy(elf, ident, sizeof ident);
  const uint16_t type = 3, machine = 224, ehsize = 64, shentsize = 64, shnum = 0xffff;
  const uint64_t shoff = 64;
  std::memcpy(elf + 16, &type, 2);
  std::memcpy(elf + 18, &machine, 2);
  std::memcpy(elf + 40, &shoff, 8);
  std::memcpy(elf + 52, &ehsize, 2);
  std::memcpy(elf + 58, &shentsize, 2);
  std::memcpy(elf + 60, &shnum, 2);
  ASSERT_TRUE(co::LooksLikeAmdgpuElf(co::Bytes(elf, 64)));
  uint64_t size = 0;
  EXPECT_FALSE(co::ImageSize(co::Bytes(elf, ReadableBytesAt(elf, co::kMaxCodeObjectBytes)), &size).ok());
}

}  // namespace
}  // namespace hipr::client

// copy_kind.h against the cases of clr's hip_memory.cpp (ihipMemcpy_validate,
// IsHtoHMemcpyValid, the 2-D/3-D validators, the symbol entry points).
#include "client_stub/copies/copy_kind.h"

#include <gtest/gtest.h>

namespace hipr::client {
namespace {

constexpr auto kDev = CopySideClass::kDevice;
constexpr auto kPin = CopySideClass::kPinned;
constexpr auto kPage = CopySideClass::kPageable;

TEST(CopyKindTest, ValidKinds) {
  for (int k : {0, 1, 2, 3, 4, 1024}) EXPECT_TRUE(ValidKind(static_cast<hipMemcpyKind>(k))) << k;
  for (int k : {-1, 5, 6, 1023, 1025, 0x7fffffff}) EXPECT_FALSE(ValidKind(static_cast<hipMemcpyKind>(k))) << k;
}

TEST(CopyKindTest, PointersDecideOneDimensionalCopies) {
  // Any kind between sides the runtime knows, in any direction.
  for (hipMemcpyKind k : {hipMemcpyHostToHost, hipMemcpyHostToDevice, hipMemcpyDeviceToHost, hipMemcpyDeviceToDevice,
                          hipMemcpyDefault, kMemcpyDeviceToDeviceNoCU}) {
    EXPECT_EQ(CheckCopyKind(k, KindRule::kPointers, kPage, kDev), hipSuccess) << k;
    EXPECT_EQ(CheckCopyKind(k, KindRule::kPointers, kDev, kPage), hipSuccess) << k;
    EXPECT_EQ(CheckCopyKind(k, KindRule::kPointers, kDev, kDev), hipSuccess) << k;
    EXPECT_EQ(CheckCopyKind(k, KindRule::kPointers, kPin, kPin), hipSuccess) << k;
    EXPECT_EQ(CheckCopyKind(k, KindRule::kPointers, kPage, kPin), hipSuccess) << k;
  }
  // Two pageable buffers: only HostToHost and Default.
  EXPECT_EQ(CheckCopyKind(hipMemcpyHostToHost, KindRule::kPointers, kPage, kPage), hipSuccess);
  EXPECT_EQ(CheckCopyKind(hipMemcpyDefault, KindRule::kPointers, kPage, kPage), hipSuccess);
  for (hipMemcpyKind k : {hipMemcpyHostToDevice, hipMemcpyDeviceToHost, hipMemcpyDeviceToDevice,
                          kMemcpyDeviceToDeviceNoCU})
    EXPECT_EQ(CheckCopyKind(k, KindRule::kPointers, kPage, kPage), hipErrorInvalidValue) << k;
}

TEST(CopyKindTest, ClaimedSidesMustBeKnownInTwoAndThreeDimensions) {
  EXPECT_EQ(CheckCopyKind(hipMemcpyHostToDevice, KindRule::kClaimed, kPage, kPage), hipErrorInvalidValue);
  EXPECT_EQ(CheckCopyKind(hipMemcpyHostToDevice, KindRule::kClaimed, kPin, kPage), hipSuccess);
  EXPECT_EQ(CheckCopyKind(hipMemcpyHostToDevice, KindRule::kClaimed, kDev, kDev), hipSuccess)
      << "a side claimed host that is device memory is copied as device memory";
  EXPECT_EQ(CheckCopyKind(hipMemcpyDeviceToHost, KindRule::kClaimed, kDev, kPage), hipErrorInvalidValue);
  EXPECT_EQ(CheckCopyKind(hipMemcpyDeviceToHost, KindRule::kClaimed, kPage, kDev), hipSuccess);
  EXPECT_EQ(CheckCopyKind(hipMemcpyDeviceToHost, KindRule::kClaimed, kDev, kDev), hipSuccess);
  EXPECT_EQ(CheckCopyKind(hipMemcpyDeviceToDevice, KindRule::kClaimed, kDev, kPage), hipErrorInvalidValue);
  EXPECT_EQ(CheckCopyKind(kMemcpyDeviceToDeviceNoCU, KindRule::kClaimed, kPage, kDev), hipErrorInvalidValue);
  EXPECT_EQ(CheckCopyKind(hipMemcpyDeviceToDevice, KindRule::kClaimed, kPin, kDev), hipSuccess);
  EXPECT_EQ(CheckCopyKind(hipMemcpyHostToHost, KindRule::kClaimed, kDev, kPage), hipSuccess);
  EXPECT_EQ(CheckCopyKind(hipMemcpyDefault, KindRule::kClaimed, kPage, kPage), hipSuccess);
}

TEST(CopyKindTest, SymbolKinds) {
  EXPECT_EQ(CheckSymbolKind(hipMemcpyHostToDevice, true), hipSuccess);
  EXPECT_EQ(CheckSymbolKind(hipMemcpyDeviceToDevice, true), hipSuccess);
  EXPECT_EQ(CheckSymbolKind(kMemcpyDeviceToDeviceNoCU, true), hipSuccess);
  EXPECT_EQ(CheckSymbolKind(hipMemcpyDeviceToHost, true), hipErrorInvalidMemcpyDirection);
  EXPECT_EQ(CheckSymbolKind(hipMemcpyDefault, true), hipErrorInvalidMemcpyDirection);
  EXPECT_EQ(CheckSymbolKind(hipMemcpyHostToHost, true), hipErrorInvalidMemcpyDirection);
  EXPECT_EQ(CheckSymbolKind(hipMemcpyDeviceToHost, false), hipSuccess);
  EXPECT_EQ(CheckSymbolKind(hipMemcpyDeviceToDevice, false), hipSuccess);
  EXPECT_EQ(CheckSymbolKind(hipMemcpyHostToDevice, false), hipErrorInvalidMemcpyDirection);
  EXPECT_EQ(CheckSymbolKind(hipMemcpyDefault, false), hipErrorInvalidMemcpyDirection);
  EXPECT_EQ(CheckSymbolKind(static_cast<hipMemcpyKind>(7), false), hipErrorInvalidMemcpyDirection);
}

}  // namespace
}  // namespace hipr::client

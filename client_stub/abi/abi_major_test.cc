// abi_major.h: majors from library names, and the default for code with no
// DT_NEEDED libamdhip64 (this test binary has none). Per-object answers in a
// process holding two majors are covered end to end (e2e_mixed_majors).
#include "client_stub/abi/abi_major.h"

#include <gtest/gtest.h>

namespace hipr::client {
namespace {

TEST(AbiMajorTest, MajorOfVersionNode) {
  EXPECT_EQ(MajorOfVersionNode("hip_4.2"), 4);
  EXPECT_EQ(MajorOfVersionNode("hip_6.0"), 6);
  EXPECT_EQ(MajorOfVersionNode("hip_7.12"), 7);
  EXPECT_EQ(MajorOfVersionNode("hip_10.1"), 10);
  EXPECT_EQ(MajorOfVersionNode("hip_6"), 0);
  EXPECT_EQ(MajorOfVersionNode("hip_6."), 0);
  EXPECT_EQ(MajorOfVersionNode("hip_6.0x"), 0);
  EXPECT_EQ(MajorOfVersionNode("hip_.0"), 0);
  EXPECT_EQ(MajorOfVersionNode("GLIBC_2.34"), 0);
  EXPECT_EQ(MajorOfVersionNode("libamdhip64.so.6"), 0);
}

TEST(AbiMajorTest, VersionForMajor) {
  constexpr int k52 = 50221153;  // Debian's 5.2.3.
  EXPECT_EQ(VersionForMajor(k52, 5), k52) << "the worker's own major: its version";
  EXPECT_EQ(VersionForMajor(k52, 6), 60032830) << "an older worker: the caller's first release (6.0.0)";
  EXPECT_EQ(VersionForMajor(k52, 7), 70051831) << "7.0.0";
  EXPECT_EQ(VersionForMajor(60241133, 6), 60241133);
  EXPECT_EQ(VersionForMajor(60241133, 7), 70051831);
  EXPECT_EQ(VersionForMajor(60241133, 5), 50731921) << "a newer worker: the caller's last release (5.7.1)";
  EXPECT_EQ(VersionForMajor(70253211, 6), 60443484) << "6.4.3";
  EXPECT_EQ(VersionForMajor(0, 5) / 10000000, 5) << "no worker version: the stub's own HIP_VERSION";
  EXPECT_EQ(VersionForMajor(0, 6), 60032830);
}

TEST(AbiMajorTest, MajorOfName) {
  EXPECT_EQ(MajorOfName("libamdhip64.so.5"), 5);
  EXPECT_EQ(MajorOfName("libamdhip64.so.6"), 6);
  EXPECT_EQ(MajorOfName("/opt/rocm/lib/libamdhip64.so.7.1.25424"), 7);
  EXPECT_EQ(MajorOfName("libamdhip64.so"), 0);
  EXPECT_EQ(MajorOfName("libamdhip64.so.x"), 0);
  EXPECT_EQ(MajorOfName("libamdhip64.so.6x"), 0);
  EXPECT_EQ(MajorOfName("libhipblas.so.2"), 0);
  EXPECT_EQ(MajorOfName("/lib/libamdhip64.so.6/../libc.so.6"), 0);
  EXPECT_EQ(MajorOfName(nullptr), 0);
}

__attribute__((noinline)) int MajorHere() { return HIPR_CALLER_MAJOR(); }

TEST(AbiMajorTest, CodeWithoutTheRuntimeGetsTheDlopenedOrDefaultMajor) {
  EXPECT_EQ(MajorHere(), 5) << "no DT_NEEDED libamdhip64 and nothing dlopened: 5";
  NoteDlopenMajor(0);  // An unversioned name changes nothing.
  EXPECT_EQ(MajorHere(), 5);
  NoteDlopenMajor(7);
  EXPECT_EQ(MajorHere(), 7) << "the last dlopen(\"libamdhip64.so.7\") decides";
  EXPECT_EQ(MajorHere(), 7) << "the cached range answers the same";
}

}  // namespace
}  // namespace hipr::client

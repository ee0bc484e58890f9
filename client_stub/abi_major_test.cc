// abi_major.h: majors from library names, and the default for code with no
// DT_NEEDED libamdhip64 (this test binary has none). Per-object answers in a
// process holding two majors are covered end to end (e2e_mixed_majors).
#include "client_stub/abi_major.h"

#include <gtest/gtest.h>

namespace hipr::client {
namespace {

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

// Tests of the locally computed HIP exports (local_exports.cc). Links
// local_exports.cc directly; needs no session, no device and no libamdhip64.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <gtest/gtest.h>
#include <hip/hip_runtime_api.h>
#include <hip/amd_detail/hip_prof_str.h>  // HIP_API_ID_* (after hip_runtime_api.h)
#include <hip/hiprtc.h>

// Exported by local_exports.cc but declared in no (included) HIP header.
extern "C" uint16_t __gnu_f2h_ieee(float f);
extern "C" float __gnu_h2f_ieee(uint16_t h);
extern "C" const char* hipGetCmdName(uint32_t id);
extern "C" const char* amd_dbgapi_get_build_name();

namespace {

uint32_t Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

float FromBits(uint32_t b) {
  float f;
  std::memcpy(&f, &b, sizeof f);
  return f;
}

bool IsHalfNan(uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; }

// Exact value of a finite half, computed independently of the code under
// test: subnormals are m * 2^-24, normals (1024 + m) * 2^(e - 25).
double HalfValue(uint16_t h) {
  const int e = (h >> 10) & 0x1f;
  const int m = h & 0x3ff;
  const double magnitude = e == 0 ? std::ldexp(m, -24) : std::ldexp(1024 + m, e - 25);
  return (h & 0x8000) ? -magnitude : magnitude;
}

// Reference float -> half for finite inputs: nearest half by exact double
// arithmetic (every half, float and midpoint is exact in double), ties to
// the even bit pattern, >= 65520 to infinity.
uint16_t ReferenceF2H(float f) {
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(static_cast<double>(f));
  if (a >= 65520.0) return sign | 0x7c00;
  // Positive finite halves are ordered like their bit patterns: binary
  // search for the largest one <= a.
  uint16_t lo = 0, hi = 0x7bff;
  while (lo < hi) {
    const uint16_t mid = static_cast<uint16_t>((lo + hi + 1) / 2);
    if (HalfValue(mid) <= a) lo = mid; else hi = mid - 1;
  }
  if (lo == 0x7bff) return sign | lo;
  const double below = a - HalfValue(lo);
  const double above = HalfValue(lo + 1) - a;
  if (below < above || (below == above && (lo & 1) == 0)) return sign | lo;
  return sign | (lo + 1);
}

TEST(HalfConversion, EveryHalfRoundTripsThroughFloat) {
  for (uint32_t i = 0; i <= 0xffff; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const float f = __gnu_h2f_ieee(h);
    if (IsHalfNan(h)) {
      EXPECT_TRUE(std::isnan(f)) << std::hex << h;
      const uint16_t back = __gnu_f2h_ieee(f);
      EXPECT_TRUE(IsHalfNan(back)) << std::hex << h;
      EXPECT_EQ(back, (h & 0x8000) | 0x7e00) << "canonical quiet NaN: " << std::hex << h;
      continue;
    }
    if ((h & 0x7c00) != 0x7c00) {
      EXPECT_EQ(static_cast<double>(f), HalfValue(h)) << std::hex << h;
    }
    EXPECT_EQ(__gnu_f2h_ieee(f), h) << std::hex << h;
  }
}

TEST(HalfConversion, RoundsToNearestEven) {
  EXPECT_EQ(__gnu_f2h_ieee(1.0f), 0x3c00);
  EXPECT_EQ(__gnu_f2h_ieee(-2.0f), 0xc000);
  EXPECT_EQ(__gnu_f2h_ieee(0.1f), 0x2e66);  // 0.0999755859375
  // Half spacing at 1.0 is 2^-10. Ties go to the even pattern.
  EXPECT_EQ(__gnu_f2h_ieee(1.0f + std::ldexp(1.0f, -11)), 0x3c00);
  EXPECT_EQ(__gnu_f2h_ieee(1.0f + 3 * std::ldexp(1.0f, -11)), 0x3c02);
  // Just above / below a tie.
  EXPECT_EQ(__gnu_f2h_ieee(std::nextafter(1.0f + std::ldexp(1.0f, -11), 2.0f)), 0x3c01);
  EXPECT_EQ(__gnu_f2h_ieee(std::nextafter(1.0f + 3 * std::ldexp(1.0f, -11), 0.0f)), 0x3c01);
  // Overflow: 65504 is the largest half; 65520 is the midpoint to 2^16.
  EXPECT_EQ(__gnu_f2h_ieee(65504.0f), 0x7bff);
  EXPECT_EQ(__gnu_f2h_ieee(std::nextafter(65520.0f, 0.0f)), 0x7bff);
  EXPECT_EQ(__gnu_f2h_ieee(65520.0f), 0x7c00);
  EXPECT_EQ(__gnu_f2h_ieee(-1e10f), 0xfc00);
  // A carry out of the mantissa bumps the exponent.
  EXPECT_EQ(__gnu_f2h_ieee(std::nextafter(2.0f, 0.0f)), 0x4000);
}

TEST(HalfConversion, Denormals) {
  const float min_subnormal = std::ldexp(1.0f, -24);
  EXPECT_EQ(__gnu_f2h_ieee(min_subnormal), 0x0001);
  EXPECT_EQ(__gnu_h2f_ieee(0x0001), min_subnormal);
  EXPECT_EQ(__gnu_h2f_ieee(0x03ff), std::ldexp(1023.0f, -24));  // largest subnormal
  EXPECT_EQ(__gnu_f2h_ieee(std::ldexp(1.0f, -14)), 0x0400);     // smallest normal
  // Half of the smallest subnormal is a tie: rounds to (even) zero; anything
  // above it rounds up.
  EXPECT_EQ(__gnu_f2h_ieee(std::ldexp(1.0f, -25)), 0x0000);
  EXPECT_EQ(__gnu_f2h_ieee(std::nextafter(std::ldexp(1.0f, -25), 1.0f)), 0x0001);
  EXPECT_EQ(__gnu_f2h_ieee(3 * std::ldexp(1.0f, -25)), 0x0002);  // 1.5 ulp -> 2
  EXPECT_EQ(__gnu_f2h_ieee(-min_subnormal), 0x8001);
  // Rounding up from the largest subnormal gives the smallest normal.
  EXPECT_EQ(__gnu_f2h_ieee(std::nextafter(std::ldexp(1.0f, -14), 0.0f)), 0x0400);
  // Float subnormals and tiny values flush to signed zero.
  EXPECT_EQ(__gnu_f2h_ieee(std::numeric_limits<float>::denorm_min()), 0x0000);
  EXPECT_EQ(__gnu_f2h_ieee(-std::numeric_limits<float>::min()), 0x8000);
}

TEST(HalfConversion, ZerosInfinitiesAndNans) {
  EXPECT_EQ(__gnu_f2h_ieee(0.0f), 0x0000);
  EXPECT_EQ(__gnu_f2h_ieee(-0.0f), 0x8000);
  EXPECT_TRUE(std::signbit(__gnu_h2f_ieee(0x8000)));
  EXPECT_EQ(__gnu_h2f_ieee(0x8000), 0.0f);

  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(__gnu_f2h_ieee(inf), 0x7c00);
  EXPECT_EQ(__gnu_f2h_ieee(-inf), 0xfc00);
  EXPECT_EQ(__gnu_h2f_ieee(0x7c00), inf);
  EXPECT_EQ(__gnu_h2f_ieee(0xfc00), -inf);

  // float -> half: any NaN becomes the canonical quiet NaN with its sign
  // (as HIP 5.2 does), including signalling NaNs and payloads that live only
  // in the low 13 bits.
  EXPECT_EQ(__gnu_f2h_ieee(std::numeric_limits<float>::quiet_NaN()), 0x7e00);
  EXPECT_EQ(__gnu_f2h_ieee(-std::numeric_limits<float>::quiet_NaN()), 0xfe00);
  EXPECT_EQ(__gnu_f2h_ieee(FromBits(0x7f800001)), 0x7e00);
  EXPECT_EQ(__gnu_f2h_ieee(FromBits(0x7fffffff)), 0x7e00);
  // half -> float: payload kept, signalling NaNs quieted.
  EXPECT_TRUE(std::isnan(__gnu_h2f_ieee(0x7e00)));
  EXPECT_TRUE(std::isnan(__gnu_h2f_ieee(0xfd01)));
  EXPECT_EQ(Bits(__gnu_h2f_ieee(0x7e01)), 0x7fc02000u);
  EXPECT_EQ(Bits(__gnu_h2f_ieee(0x7d00)), 0x7fe00000u);  // signalling -> quiet
  EXPECT_EQ(Bits(__gnu_h2f_ieee(0xfc01)), 0xffc02000u);
}

TEST(HalfConversion, MatchesExactReferenceOnSampledFloats) {
  // Every 65537th bit pattern (about 65k floats, all exponents) plus every
  // float near the subnormal/normal and overflow boundaries.
  auto check = [](uint32_t bits) {
    const float f = FromBits(bits);
    if (std::isnan(f)) return;
    ASSERT_EQ(__gnu_f2h_ieee(f), ReferenceF2H(f)) << std::hex << "float bits " << bits;
  };
  for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 65537) check(static_cast<uint32_t>(bits));
  for (uint32_t bits = 0x32f00000; bits <= 0x38900000; bits += 61) check(bits);
  for (uint32_t bits = 0x477f0000; bits <= 0x47800000; ++bits) check(bits | 0x80000000u);
}

TEST(ErrorNames, KnownCodes) {
  EXPECT_STREQ(hipGetErrorName(hipSuccess), "hipSuccess");
  EXPECT_STREQ(hipGetErrorString(hipSuccess), "no error");
  EXPECT_STREQ(hipGetErrorName(hipErrorInvalidValue), "hipErrorInvalidValue");
  EXPECT_STREQ(hipGetErrorString(hipErrorInvalidValue), "invalid argument");
  EXPECT_STREQ(hipGetErrorName(hipErrorNotSupported), "hipErrorNotSupported");
  EXPECT_STREQ(hipGetErrorString(hipErrorNotSupported), "operation not supported");
  EXPECT_STREQ(hipGetErrorName(hipErrorUnknown), "hipErrorUnknown");
  EXPECT_STREQ(hipGetErrorString(hipErrorUnknown), "unknown error");
  EXPECT_STREQ(hipGetErrorName(hipErrorGraphExecUpdateFailure), "hipErrorGraphExecUpdateFailure");
  EXPECT_STREQ(hipGetErrorName(hipErrorTbd), "hipErrorTbd");
  // Aliases share a value; HIP reports the primary name.
  EXPECT_STREQ(hipGetErrorName(hipErrorMemoryAllocation), "hipErrorOutOfMemory");
  EXPECT_STREQ(hipGetErrorName(hipErrorInvalidResourceHandle), "hipErrorInvalidHandle");
}

TEST(ErrorNames, UnknownCodes) {
  for (int code : {-1, 10, 102, 799, 1000, 123456}) {
    const auto error = static_cast<hipError_t>(code);
    EXPECT_STREQ(hipGetErrorName(error), "hipErrorUnknown") << code;
    EXPECT_STREQ(hipGetErrorString(error), "unknown error") << code;
  }
}

TEST(ErrorNames, EveryCodeHasANameAndDescription) {
  for (int code = 0; code <= 1100; ++code) {
    const auto error = static_cast<hipError_t>(code);
    const std::string name = hipGetErrorName(error);
    EXPECT_EQ(name.rfind("hip", 0), 0u) << code;
    EXPECT_FALSE(std::string(hipGetErrorString(error)).empty()) << code;
  }
}

TEST(LocalExports, ChannelDescStoresArgumentsVerbatim) {
  const hipChannelFormatDesc d = hipCreateChannelDesc(8, 16, 0, 32, hipChannelFormatKindFloat);
  EXPECT_EQ(d.x, 8);
  EXPECT_EQ(d.y, 16);
  EXPECT_EQ(d.z, 0);
  EXPECT_EQ(d.w, 32);
  EXPECT_EQ(d.f, hipChannelFormatKindFloat);
  const hipChannelFormatDesc odd =
      hipCreateChannelDesc(-1, 7, 1000, 0, static_cast<hipChannelFormatKind>(77));
  EXPECT_EQ(odd.x, -1);
  EXPECT_EQ(odd.z, 1000);
  EXPECT_EQ(static_cast<int>(odd.f), 77);
}

TEST(LocalExports, NamesAndVersions) {
  EXPECT_STREQ(hipApiName(HIP_API_ID_hipMalloc), "hipMalloc");
  EXPECT_STREQ(hipApiName(0xffffff), "unknown");
  EXPECT_STREQ(hipGetCmdName(0x11f0), "KernelExecution");
  EXPECT_STREQ(hipGetCmdName(0x1207), "FillBuffer");
  EXPECT_STREQ(hipGetCmdName(1), "Unknown command type");
  EXPECT_NE(amd_dbgapi_get_build_name(), nullptr);

  EXPECT_STREQ(hiprtcGetErrorString(HIPRTC_ERROR_COMPILATION), "HIPRTC_ERROR_COMPILATION");
  EXPECT_EQ(hiprtcGetErrorString(static_cast<hiprtcResult>(99)), nullptr);
  int major = -1, minor = -1;
  EXPECT_EQ(hiprtcVersion(&major, &minor), HIPRTC_SUCCESS);
  EXPECT_EQ(major, 9);
  EXPECT_EQ(minor, 0);
  EXPECT_EQ(hiprtcVersion(nullptr, &minor), HIPRTC_ERROR_INVALID_INPUT);
}

}  // namespace

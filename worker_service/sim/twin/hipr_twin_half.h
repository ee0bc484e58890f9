// Half precision for kernel twins: what <hip/hip_fp16.h> gives a kernel
// (include/hip/hip_fp16.h includes this after the prelude; HIP's
// <hip/hip_runtime.h> does not declare __half, so neither does the prelude).
//
// The API is that of Debian's HIP 5.2 (hip/amd_detail/amd_hip_fp16.h):
// __half_raw / __half2_raw (a _Float16 `data` over the bits `x` / `x`,`y`),
// __half and __half2 with the same constructors, conversions, assignments
// and operators (the conversions unless __HIP_NO_HALF_CONVERSIONS__, the
// operators unless __HIP_NO_HALF_OPERATORS__, half/half2 unless
// HIP_NO_HALF), and the free functions in an anonymous namespace, as there.
//
// Values are binary16 bit patterns; every operation computes in float or
// double, where it is exact or rounds innocuously, and rounds once to the
// nearest binary16, ties to even, with subnormals, overflow to infinity and
// signed zeros as the GPU's native fp16 instructions (gfx90a) give them:
//   - +, -, *: exact in double, then one rounding.
//   - fma: x * y is exact in double (22 bits), and so is x * y + z, except
//     where |x * y| >= 2^17 (the result overflows either way) or
//     |x * y| < 2^-14 <= 2^-19 |z| (the double sum and the exact one both
//     round to z): so one rounding.
//   - float, double and integers to half: rounded directly, never through
//     an intermediate type that could round first.
//   - / (__hdiv, __h2div, the operators): as HIP 5.2's compiler (LLVM 15)
//     has gfx90a divide, not correctly rounded: both to float, v_rcp_f32 of
//     the divisor, v_mul_f32, v_cvt_f16_f32, then v_div_fixup_f16 for
//     zeros, infinities and NaN. The float reciprocal is taken correctly
//     rounded (AMD documents v_rcp_f32 to 1 ulp). Rounding the float
//     product again makes some subnormal quotients (about 1.5 in a million
//     random pairs of halves) differ from the correctly rounded ones, as
//     on the GPU.
// Where HIP 5.2's definitions differ from their names, the twin does what
// the GPU does with them:
//   - __float2half_rz/_rd/_ru and every __int2half_*-style conversion round
//     to nearest even (the header casts, whatever the suffix);
//   - __half2int_rn/_rd/_ru and the other half-to-integer conversions
//     truncate (a C++ conversion), whatever the suffix;
//   - the unordered comparisons (__hequ, __hltu, __hequ2, __hbltu2, ...)
//     are the ordered ones: false where an operand is NaN (__hneu and
//     friends: true, as __hne);
//   - operator<= and >= are !(y < x) and !(x < y): true against a NaN;
//     for __half2 they hold unless both lanes compare the other way;
//   - _sat clamps with comparisons: NaN stays NaN, -0 stays -0;
//   - __heq2 and friends give 1.0 or 0.0 per lane; __hisinf2 and
//     __hisnan2 give -1.0 or 0.0 per lane (OCML returns -1 for true).
// Not bit-exact (results differ from the GPU's by at most the error of the
// GPU's approximation; tests/e2e/half_ops.hip allows 1 ulp for hrsqrt
// and hsqrt, 2 ulp for the others):
//   - hrsqrt, hsqrt, hexp, hexp2, hexp10, hlog, hlog2, hlog10, hsin, hcos
//     and their h2 forms: correctly rounded here (host double libm; a
//     double quotient or square root rounds innocuously, 53 >= 2 * 11 + 2),
//     approximations on the GPU (v_rsq_f16, v_sqrt_f16, OCML);
//   - hrcp and h2rcp: correctly rounded here; with HIP 5.2 a program using
//     them does not link (the header calls __llvm_amdgcn_rcp_f16, which
//     Debian's device libraries do not define), so no twin meets them;
//   - amd_mixed_dot: one rounding to float here; v_dot2_f32_f16's
//     intermediate rounding is not documented;
//   - the sign and payload of a NaN result (an input NaN quieted, else
//     0x7e00); a test should check only that a NaN is a NaN.
// Out-of-range conversions to integers (NaN, infinities, values the type
// cannot hold) are undefined in C++ and on the GPU; here they saturate and a
// NaN gives 0. HIP 5.2 has no warp shuffles of __half / __half2 (a call is
// ambiguous there), so there are none here either.
#ifndef HIPR_TWIN_HALF_H_
#define HIPR_TWIN_HALF_H_

#include <math.h>
#include <stdint.h>

#include <limits>
#include <type_traits>

#include "hipr_twin_vector_types.h"

#ifndef __HOST_DEVICE__
#define __HOST_DEVICE__ __host__ __device__
#endif

typedef _Float16 _Float16_2 __attribute__((ext_vector_type(2)));

struct __half_raw {
  union {
    _Float16 data;
    unsigned short x;
  };
};

struct __half2_raw {
  union {
    _Float16_2 data;
    struct {
      unsigned short x;
      unsigned short y;
    };
  };
};

// As HIP's header does: _Float16 converts like float and double below.
namespace std {
template <>
struct is_floating_point<_Float16> : std::true_type {};
}  // namespace std

template <bool cond, typename T = void>
using Enable_if_t = typename std::enable_if<cond, T>::type;

namespace hipr_twin {
namespace fp16 {

constexpr unsigned short kSignBit = 0x8000;
constexpr unsigned short kMagnitude = 0x7fff;
constexpr unsigned short kInfinity = 0x7c00;
constexpr unsigned short kQuietBit = 0x0200;
constexpr unsigned short kDefaultNan = 0x7e00;
constexpr unsigned short kOne = 0x3c00;

constexpr bool IsNan(unsigned short h) { return (h & kMagnitude) > kInfinity; }
constexpr bool IsInf(unsigned short h) { return (h & kMagnitude) == kInfinity; }

// The value of a binary16, exactly (a NaN stays a NaN, quieted, its payload
// in the top fraction bits).
inline float ToFloat(unsigned short h) {
  const uint32_t sign = static_cast<uint32_t>(h & kSignBit) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  const uint32_t fraction = h & 0x3ffu;
  if (exponent == 0) {
    const float magnitude = static_cast<float>(fraction) * 0x1p-24f;  // Exact: a float normal.
    return sign ? -magnitude : magnitude;
  }
  uint32_t bits;
  if (exponent == 0x1f)
    bits = sign | 0x7f800000u | (fraction << 13) | (fraction ? 0x00400000u : 0u);
  else
    bits = sign | ((exponent + 112u) << 23) | (fraction << 13);
  return __builtin_bit_cast(float, bits);
}
inline double ToDouble(unsigned short h) { return static_cast<double>(ToFloat(h)); }

// `value` rounded to the nearest binary16, ties to even.
inline unsigned short FromDouble(double value) {
  const uint64_t bits = __builtin_bit_cast(uint64_t, value);
  const unsigned short sign = static_cast<unsigned short>((bits >> 48) & kSignBit);
  const int biased = static_cast<int>((bits >> 52) & 0x7ff);
  const uint64_t fraction = bits & ((uint64_t{1} << 52) - 1);
  if (biased == 0x7ff) {
    if (fraction == 0) return sign | kInfinity;
    return sign | kDefaultNan | static_cast<unsigned short>((fraction >> 42) & 0x3ff);
  }
  const int exponent = biased - 1023;  // value = significand * 2^(exponent - 52)
  if (biased == 0 || exponent < -25) return sign;  // Below half the smallest subnormal.
  if (exponent > 15) return sign | kInfinity;
  const uint64_t significand = fraction | (uint64_t{1} << 52);
  // Keep 11 bits for a normal result, fewer for a subnormal one (whose unit
  // is 2^-24).
  const int shift = exponent >= -14 ? 42 : 28 - exponent;
  uint64_t kept = significand >> shift;
  const uint64_t rest = significand & ((uint64_t{1} << shift) - 1);
  const uint64_t halfway = uint64_t{1} << (shift - 1);
  if (rest > halfway || (rest == halfway && (kept & 1))) ++kept;
  // A carry out of the fraction steps the exponent (up to infinity) by itself.
  const uint64_t magnitude = exponent >= -14 ? (static_cast<uint64_t>(exponent + 14) << 10) + kept : kept;
  return sign | static_cast<unsigned short>(magnitude);
}
inline unsigned short FromFloat(float value) { return FromDouble(static_cast<double>(value)); }

template <typename T>
inline unsigned short FromFloating(T value) {
  if constexpr (std::is_same<T, _Float16>::value)
    return __builtin_bit_cast(unsigned short, value);
  else
    return FromDouble(static_cast<double>(value));  // long double: the device's is double.
}

// Every integer of magnitude >= 65520 overflows, so rounding a wide one to
// double first cannot change the result.
template <typename T>
inline unsigned short FromIntegral(T value) {
  return FromDouble(static_cast<double>(value));
}

// A C++ conversion (truncation); saturating, NaN to 0, where C++ leaves it
// undefined.
template <typename T>
inline T ToIntegral(unsigned short h) {
  const double value = ToDouble(h);
  if constexpr (std::is_same<T, bool>::value) {
    return value != 0.0;
  } else {
    if (value != value) return 0;
    const double truncated = __builtin_trunc(value);
    if (truncated <= static_cast<double>(std::numeric_limits<T>::min())) return std::numeric_limits<T>::min();
    if (truncated >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(truncated);
  }
}

// A NaN result: the first NaN operand, quieted, else the default NaN.
inline unsigned short NanResult(unsigned short a, unsigned short b, unsigned short c) {
  if (IsNan(a)) return a | kQuietBit;
  if (IsNan(b)) return b | kQuietBit;
  if (IsNan(c)) return c | kQuietBit;
  return kDefaultNan;
}
inline unsigned short Rounded(double value, unsigned short a, unsigned short b = 0, unsigned short c = 0) {
  const unsigned short h = FromDouble(value);
  return IsNan(h) ? NanResult(a, b, c) : h;
}

constexpr unsigned short Neg(unsigned short a) { return a ^ kSignBit; }
constexpr unsigned short Abs(unsigned short a) { return a & kMagnitude; }

inline unsigned short Add(unsigned short a, unsigned short b) { return Rounded(ToDouble(a) + ToDouble(b), a, b); }
inline unsigned short Sub(unsigned short a, unsigned short b) { return Rounded(ToDouble(a) - ToDouble(b), a, b); }
inline unsigned short Mul(unsigned short a, unsigned short b) { return Rounded(ToDouble(a) * ToDouble(b), a, b); }
// gfx90a's f16 division as LLVM 15 emits it (see the top of this file).
inline unsigned short Div(unsigned short a, unsigned short b) {
  if (IsNan(a) || IsNan(b) || IsInf(a) || IsInf(b) || Abs(a) == 0 || Abs(b) == 0)
    return Rounded(ToDouble(a) / ToDouble(b), a, b);  // v_div_fixup_f16's IEEE results.
  const float reciprocal = static_cast<float>(1.0 / ToDouble(b));  // Correctly rounded: 53 >= 2 * 24 + 2.
  return FromFloat(ToFloat(a) * reciprocal);  // Finite, nonzero, normal in float.
}
inline unsigned short Fma(unsigned short a, unsigned short b, unsigned short c) {
  const double product = ToDouble(a) * ToDouble(b);  // Exact.
  return Rounded(product + ToDouble(c), a, b, c);
}

inline bool Eq(unsigned short a, unsigned short b) { return ToFloat(a) == ToFloat(b); }
inline bool Lt(unsigned short a, unsigned short b) { return ToFloat(a) < ToFloat(b); }
inline bool Le(unsigned short a, unsigned short b) { return ToFloat(a) <= ToFloat(b); }

// HIP's __clamp_01: by comparisons, so NaN and -0 pass through.
inline unsigned short Clamp01(unsigned short a) {
  if (Lt(a, 0)) return 0;
  if (Lt(kOne, a)) return kOne;
  return a;
}

// A function of the value, correctly rounded (host libm in double).
template <typename F>
inline unsigned short Apply(unsigned short a, F f) {
  return Rounded(f(ToDouble(a)), a);
}

inline _Float16_2 Pack(unsigned short lo, unsigned short hi) {
  return __builtin_bit_cast(_Float16_2, static_cast<uint32_t>(lo) | (static_cast<uint32_t>(hi) << 16));
}

}  // namespace fp16
}  // namespace hipr_twin

// ---- __half -------------------------------------------------------------------------

struct __half {
 protected:
  union {
    _Float16 data;
    unsigned short __x;
  };

 public:
  __half() = default;
  __half(const __half_raw& x) : __x{x.x} {}
#if !defined(__HIP_NO_HALF_CONVERSIONS__)
  __half(decltype(data) x) : __x{__builtin_bit_cast(unsigned short, x)} {}
  template <typename T, Enable_if_t<std::is_floating_point<T>{}>* = nullptr>
  __half(T x) : __x{::hipr_twin::fp16::FromFloating(x)} {}
#endif
  __half(const __half&) = default;
  __half(__half&&) = default;
  ~__half() = default;
#if !defined(__HIP_NO_HALF_CONVERSIONS__)
  template <typename T, Enable_if_t<std::is_integral<T>{}>* = nullptr>
  __half(T x) : __x{::hipr_twin::fp16::FromIntegral(x)} {}
#endif

  __half& operator=(const __half&) = default;
  __half& operator=(__half&&) = default;
  __half& operator=(const __half_raw& x) {
    __x = x.x;
    return *this;
  }
  volatile __half& operator=(const __half_raw& x) volatile {
    __x = x.x;
    return *this;
  }
  volatile __half& operator=(const volatile __half_raw& x) volatile {
    __x = x.x;
    return *this;
  }
  __half& operator=(__half_raw&& x) {
    __x = x.x;
    return *this;
  }
  volatile __half& operator=(__half_raw&& x) volatile {
    __x = x.x;
    return *this;
  }
  volatile __half& operator=(volatile __half_raw&& x) volatile {
    __x = x.x;
    return *this;
  }
#if !defined(__HIP_NO_HALF_CONVERSIONS__)
  template <typename T, Enable_if_t<std::is_floating_point<T>{}>* = nullptr>
  __half& operator=(T x) {
    __x = ::hipr_twin::fp16::FromFloating(x);
    return *this;
  }
  template <typename T, Enable_if_t<std::is_integral<T>{}>* = nullptr>
  __half& operator=(T x) {
    __x = ::hipr_twin::fp16::FromIntegral(x);
    return *this;
  }
#endif

#if !defined(__HIP_NO_HALF_OPERATORS__)
  __half& operator+=(const __half& x) {
    __x = ::hipr_twin::fp16::Add(__x, x.__x);
    return *this;
  }
  __half& operator-=(const __half& x) {
    __x = ::hipr_twin::fp16::Sub(__x, x.__x);
    return *this;
  }
  __half& operator*=(const __half& x) {
    __x = ::hipr_twin::fp16::Mul(__x, x.__x);
    return *this;
  }
  __half& operator/=(const __half& x) {
    __x = ::hipr_twin::fp16::Div(__x, x.__x);
    return *this;
  }
  __half& operator++() {
    __x = ::hipr_twin::fp16::Add(__x, ::hipr_twin::fp16::kOne);
    return *this;
  }
  __half operator++(int) {
    __half tmp{*this};
    ++*this;
    return tmp;
  }
  __half& operator--() {
    __x = ::hipr_twin::fp16::Sub(__x, ::hipr_twin::fp16::kOne);
    return *this;
  }
  __half operator--(int) {
    __half tmp{*this};
    --*this;
    return tmp;
  }
#endif

#if !defined(__HIP_NO_HALF_CONVERSIONS__)
  template <typename T, Enable_if_t<std::is_floating_point<T>{}>* = nullptr>
  operator T() const {
    if constexpr (std::is_same<T, _Float16>::value)
      return __builtin_bit_cast(_Float16, __x);
    else
      return static_cast<T>(::hipr_twin::fp16::ToFloat(__x));
  }
#endif
  operator __half_raw() const {
    __half_raw r;
    r.x = __x;
    return r;
  }
  operator __half_raw() const volatile {
    __half_raw r;
    r.x = __x;
    return r;
  }
#if !defined(__HIP_NO_HALF_CONVERSIONS__)
  template <typename T, Enable_if_t<std::is_integral<T>{}>* = nullptr>
  operator T() const {
    return ::hipr_twin::fp16::ToIntegral<T>(__x);
  }
#endif

#if !defined(__HIP_NO_HALF_OPERATORS__)
  __half operator+() const { return *this; }
  __half operator-() const {
    __half tmp{*this};
    tmp.__x = ::hipr_twin::fp16::Neg(__x);
    return tmp;
  }

  friend inline __half operator+(const __half& x, const __half& y) { return __half{x} += y; }
  friend inline __half operator-(const __half& x, const __half& y) { return __half{x} -= y; }
  friend inline __half operator*(const __half& x, const __half& y) { return __half{x} *= y; }
  friend inline __half operator/(const __half& x, const __half& y) { return __half{x} /= y; }
  friend inline bool operator==(const __half& x, const __half& y) { return ::hipr_twin::fp16::Eq(x.__x, y.__x); }
  friend inline bool operator!=(const __half& x, const __half& y) { return !(x == y); }
  friend inline bool operator<(const __half& x, const __half& y) { return ::hipr_twin::fp16::Lt(x.__x, y.__x); }
  friend inline bool operator>(const __half& x, const __half& y) { return y < x; }
  friend inline bool operator<=(const __half& x, const __half& y) { return !(y < x); }
  friend inline bool operator>=(const __half& x, const __half& y) { return !(x < y); }
#endif
};

// ---- __half2 ------------------------------------------------------------------------

struct __half2 {
 public:
  union {
    _Float16_2 data;
    struct {
      unsigned short x;  // The low half (lane 0).
      unsigned short y;
    };
  };

  __half2() = default;
  __half2(const __half2_raw& x) : data{x.data} {}
  __half2(decltype(data) x) : data{x} {}
  __half2(const __half& x, const __half& y)
      : data{::hipr_twin::fp16::Pack(static_cast<__half_raw>(x).x, static_cast<__half_raw>(y).x)} {}
  __half2(const __half2&) = default;
  __half2(__half2&&) = default;
  ~__half2() = default;

  __half2& operator=(const __half2&) = default;
  __half2& operator=(__half2&&) = default;
  __half2& operator=(const __half2_raw& x) {
    data = x.data;
    return *this;
  }

#if !defined(__HIP_NO_HALF_OPERATORS__)
  __half2& operator+=(const __half2& o) {
    data = ::hipr_twin::fp16::Pack(::hipr_twin::fp16::Add(x, o.x), ::hipr_twin::fp16::Add(y, o.y));
    return *this;
  }
  __half2& operator-=(const __half2& o) {
    data = ::hipr_twin::fp16::Pack(::hipr_twin::fp16::Sub(x, o.x), ::hipr_twin::fp16::Sub(y, o.y));
    return *this;
  }
  __half2& operator*=(const __half2& o) {
    data = ::hipr_twin::fp16::Pack(::hipr_twin::fp16::Mul(x, o.x), ::hipr_twin::fp16::Mul(y, o.y));
    return *this;
  }
  __half2& operator/=(const __half2& o) {
    data = ::hipr_twin::fp16::Pack(::hipr_twin::fp16::Div(x, o.x), ::hipr_twin::fp16::Div(y, o.y));
    return *this;
  }
  __half2& operator++() {
    return *this += __half2{::hipr_twin::fp16::Pack(::hipr_twin::fp16::kOne, ::hipr_twin::fp16::kOne)};
  }
  __half2 operator++(int) {
    __half2 tmp{*this};
    ++*this;
    return tmp;
  }
  __half2& operator--() {
    return *this -= __half2{::hipr_twin::fp16::Pack(::hipr_twin::fp16::kOne, ::hipr_twin::fp16::kOne)};
  }
  __half2 operator--(int) {
    __half2 tmp{*this};
    --*this;
    return tmp;
  }
#endif

  operator decltype(data)() const { return data; }
  operator __half2_raw() const {
    __half2_raw r;
    r.data = data;
    return r;
  }

#if !defined(__HIP_NO_HALF_OPERATORS__)
  __half2 operator+() const { return *this; }
  __half2 operator-() const {
    return __half2{::hipr_twin::fp16::Pack(::hipr_twin::fp16::Neg(x), ::hipr_twin::fp16::Neg(y))};
  }

  friend inline __half2 operator+(const __half2& x, const __half2& y) { return __half2{x} += y; }
  friend inline __half2 operator-(const __half2& x, const __half2& y) { return __half2{x} -= y; }
  friend inline __half2 operator*(const __half2& x, const __half2& y) { return __half2{x} *= y; }
  friend inline __half2 operator/(const __half2& x, const __half2& y) { return __half2{x} /= y; }
  friend inline bool operator==(const __half2& a, const __half2& b) {
    return ::hipr_twin::fp16::Eq(a.x, b.x) && ::hipr_twin::fp16::Eq(a.y, b.y);
  }
  friend inline bool operator!=(const __half2& a, const __half2& b) { return !(a == b); }
  friend inline bool operator<(const __half2& a, const __half2& b) {
    return ::hipr_twin::fp16::Lt(a.x, b.x) && ::hipr_twin::fp16::Lt(a.y, b.y);
  }
  friend inline bool operator>(const __half2& a, const __half2& b) { return b < a; }
  friend inline bool operator<=(const __half2& a, const __half2& b) { return !(b < a); }
  friend inline bool operator>=(const __half2& a, const __half2& b) { return !(a < b); }
#endif
};

// ---- Free functions (an anonymous namespace, as in HIP's header) --------------------

namespace hipr_twin {
namespace fp16 {
inline unsigned short Bits(__half h) { return static_cast<__half_raw>(h).x; }
inline __half Half(unsigned short bits) {
  __half_raw r;
  r.x = bits;
  return __half{r};
}
inline __half2 Half2(unsigned short lo, unsigned short hi) {
  __half2_raw r;
  r.x = lo;
  r.y = hi;
  return __half2{r};
}
template <typename F>
inline __half Unary(__half a, F f) {
  return Half(f(Bits(a)));
}
template <typename F>
inline __half Binary(__half a, __half b, F f) {
  return Half(f(Bits(a), Bits(b)));
}
// f of the value, correctly rounded.
template <typename F>
inline __half Math(__half a, F f) {
  return Half(Apply(Bits(a), f));
}
template <typename F>
inline __half2 Lanes(__half2 a, F f) {
  return Half2(f(a.x), f(a.y));
}
template <typename F>
inline __half2 Lanes(__half2 a, __half2 b, F f) {
  return Half2(f(a.x, b.x), f(a.y, b.y));
}
// 1.0 or 0.0 per lane, as __heq2 and friends.
template <typename F>
inline __half2 Predicate2(__half2 a, __half2 b, F f) {
  return Lanes(a, b, [f](unsigned short p, unsigned short q) -> unsigned short { return f(p, q) ? kOne : 0; });
}
inline bool Both(__half2 predicate) { return predicate.x != 0 && predicate.y != 0; }
// -1.0 or 0.0 per lane, as __hisinf2 and __hisnan2.
template <typename F>
inline __half2 Class2(__half2 a, F f) {
  return Lanes(a, [f](unsigned short p) -> unsigned short { return f(p) ? (kOne | kSignBit) : 0; });
}
}  // namespace fp16
}  // namespace hipr_twin

namespace {

namespace hipr_fp16 = ::hipr_twin::fp16;

inline __half2 make_half2(__half x, __half y) { return __half2{x, y}; }
inline __half __low2half(__half2 x) { return hipr_fp16::Half(x.x); }
inline __half __high2half(__half2 x) { return hipr_fp16::Half(x.y); }
inline __half2 __half2half2(__half x) { return __half2{x, x}; }
inline __half2 __halves2half2(__half x, __half y) { return __half2{x, y}; }
inline __half2 __low2half2(__half2 x) { return hipr_fp16::Half2(x.x, x.x); }
inline __half2 __high2half2(__half2 x) { return hipr_fp16::Half2(x.y, x.y); }
inline __half2 __lows2half2(__half2 x, __half2 y) { return hipr_fp16::Half2(x.x, y.x); }
inline __half2 __highs2half2(__half2 x, __half2 y) { return hipr_fp16::Half2(x.y, y.y); }
inline __half2 __lowhigh2highlow(__half2 x) { return hipr_fp16::Half2(x.y, x.x); }

// Bit casts.
inline short __half_as_short(__half x) { return static_cast<short>(hipr_fp16::Bits(x)); }
inline unsigned short __half_as_ushort(__half x) { return hipr_fp16::Bits(x); }
inline __half __short_as_half(short x) { return hipr_fp16::Half(static_cast<unsigned short>(x)); }
inline __half __ushort_as_half(unsigned short x) { return hipr_fp16::Half(x); }

// float -> half | half2: to nearest even, whatever the suffix (HIP 5.2).
inline __half __float2half(float x) { return hipr_fp16::Half(hipr_fp16::FromFloat(x)); }
inline __half __float2half_rn(float x) { return __float2half(x); }
inline __half __float2half_rz(float x) { return __float2half(x); }
inline __half __float2half_rd(float x) { return __float2half(x); }
inline __half __float2half_ru(float x) { return __float2half(x); }
inline __half2 __float2half2_rn(float x) {
  const unsigned short h = hipr_fp16::FromFloat(x);
  return hipr_fp16::Half2(h, h);
}
inline __half2 __floats2half2_rn(float x, float y) {
  return hipr_fp16::Half2(hipr_fp16::FromFloat(x), hipr_fp16::FromFloat(y));
}
inline __half2 __float22half2_rn(float2 x) { return __floats2half2_rn(x.x, x.y); }

// half | half2 -> float: exact.
inline float __half2float(__half x) { return hipr_fp16::ToFloat(hipr_fp16::Bits(x)); }
inline float __low2float(__half2 x) { return hipr_fp16::ToFloat(x.x); }
inline float __high2float(__half2 x) { return hipr_fp16::ToFloat(x.y); }
inline float2 __half22float2(__half2 x) { return make_float2(hipr_fp16::ToFloat(x.x), hipr_fp16::ToFloat(x.y)); }

// Integers: to half to nearest even, from half by truncation, whatever the
// suffix (HIP 5.2).
#define HIPR_TWIN_HALF_INTEGER(type, name)                                                              \
  inline type __half2##name##_rn(__half x) { return hipr_fp16::ToIntegral<type>(hipr_fp16::Bits(x)); } \
  inline type __half2##name##_rz(__half x) { return hipr_fp16::ToIntegral<type>(hipr_fp16::Bits(x)); } \
  inline type __half2##name##_rd(__half x) { return hipr_fp16::ToIntegral<type>(hipr_fp16::Bits(x)); } \
  inline type __half2##name##_ru(__half x) { return hipr_fp16::ToIntegral<type>(hipr_fp16::Bits(x)); } \
  inline __half __##name##2half_rn(type x) { return hipr_fp16::Half(hipr_fp16::FromIntegral(x)); }     \
  inline __half __##name##2half_rz(type x) { return hipr_fp16::Half(hipr_fp16::FromIntegral(x)); }     \
  inline __half __##name##2half_rd(type x) { return hipr_fp16::Half(hipr_fp16::FromIntegral(x)); }     \
  inline __half __##name##2half_ru(type x) { return hipr_fp16::Half(hipr_fp16::FromIntegral(x)); }
HIPR_TWIN_HALF_INTEGER(int, int)
HIPR_TWIN_HALF_INTEGER(short, short)
HIPR_TWIN_HALF_INTEGER(long long, ll)
HIPR_TWIN_HALF_INTEGER(unsigned int, uint)
HIPR_TWIN_HALF_INTEGER(unsigned short, ushort)
HIPR_TWIN_HALF_INTEGER(unsigned long long, ull)
#undef HIPR_TWIN_HALF_INTEGER

// Loads.
inline __half __ldg(const __half* ptr) { return *ptr; }
inline __half __ldcg(const __half* ptr) { return *ptr; }
inline __half __ldca(const __half* ptr) { return *ptr; }
inline __half __ldcs(const __half* ptr) { return *ptr; }
inline __half2 __ldg(const __half2* ptr) { return *ptr; }
inline __half2 __ldcg(const __half2* ptr) { return *ptr; }
inline __half2 __ldca(const __half2* ptr) { return *ptr; }
inline __half2 __ldcs(const __half2* ptr) { return *ptr; }

// Relations (the unordered forms are the ordered ones in HIP 5.2).
inline bool __heq(__half x, __half y) { return hipr_fp16::Eq(hipr_fp16::Bits(x), hipr_fp16::Bits(y)); }
inline bool __hne(__half x, __half y) { return !__heq(x, y); }
inline bool __hle(__half x, __half y) { return hipr_fp16::Le(hipr_fp16::Bits(x), hipr_fp16::Bits(y)); }
inline bool __hge(__half x, __half y) { return hipr_fp16::Le(hipr_fp16::Bits(y), hipr_fp16::Bits(x)); }
inline bool __hlt(__half x, __half y) { return hipr_fp16::Lt(hipr_fp16::Bits(x), hipr_fp16::Bits(y)); }
inline bool __hgt(__half x, __half y) { return hipr_fp16::Lt(hipr_fp16::Bits(y), hipr_fp16::Bits(x)); }
inline bool __hequ(__half x, __half y) { return __heq(x, y); }
inline bool __hneu(__half x, __half y) { return __hne(x, y); }
inline bool __hleu(__half x, __half y) { return __hle(x, y); }
inline bool __hgeu(__half x, __half y) { return __hge(x, y); }
inline bool __hltu(__half x, __half y) { return __hlt(x, y); }
inline bool __hgtu(__half x, __half y) { return __hgt(x, y); }

inline __half2 __heq2(__half2 x, __half2 y) { return hipr_fp16::Predicate2(x, y, hipr_fp16::Eq); }
inline __half2 __hne2(__half2 x, __half2 y) {
  return hipr_fp16::Predicate2(x, y, [](unsigned short a, unsigned short b) { return !hipr_fp16::Eq(a, b); });
}
inline __half2 __hle2(__half2 x, __half2 y) { return hipr_fp16::Predicate2(x, y, hipr_fp16::Le); }
inline __half2 __hge2(__half2 x, __half2 y) {
  return hipr_fp16::Predicate2(x, y, [](unsigned short a, unsigned short b) { return hipr_fp16::Le(b, a); });
}
inline __half2 __hlt2(__half2 x, __half2 y) { return hipr_fp16::Predicate2(x, y, hipr_fp16::Lt); }
inline __half2 __hgt2(__half2 x, __half2 y) {
  return hipr_fp16::Predicate2(x, y, [](unsigned short a, unsigned short b) { return hipr_fp16::Lt(b, a); });
}
inline __half2 __hequ2(__half2 x, __half2 y) { return __heq2(x, y); }
inline __half2 __hneu2(__half2 x, __half2 y) { return __hne2(x, y); }
inline __half2 __hleu2(__half2 x, __half2 y) { return __hle2(x, y); }
inline __half2 __hgeu2(__half2 x, __half2 y) { return __hge2(x, y); }
inline __half2 __hltu2(__half2 x, __half2 y) { return __hlt2(x, y); }
inline __half2 __hgtu2(__half2 x, __half2 y) { return __hgt2(x, y); }

// True when the relation holds in both lanes.
inline bool __hbeq2(__half2 x, __half2 y) { return hipr_fp16::Both(__heq2(x, y)); }
inline bool __hbne2(__half2 x, __half2 y) { return hipr_fp16::Both(__hne2(x, y)); }
inline bool __hble2(__half2 x, __half2 y) { return hipr_fp16::Both(__hle2(x, y)); }
inline bool __hbge2(__half2 x, __half2 y) { return hipr_fp16::Both(__hge2(x, y)); }
inline bool __hblt2(__half2 x, __half2 y) { return hipr_fp16::Both(__hlt2(x, y)); }
inline bool __hbgt2(__half2 x, __half2 y) { return hipr_fp16::Both(__hgt2(x, y)); }
inline bool __hbequ2(__half2 x, __half2 y) { return __hbeq2(x, y); }
inline bool __hbneu2(__half2 x, __half2 y) { return __hbne2(x, y); }
inline bool __hbleu2(__half2 x, __half2 y) { return __hble2(x, y); }
inline bool __hbgeu2(__half2 x, __half2 y) { return __hbge2(x, y); }
inline bool __hbltu2(__half2 x, __half2 y) { return __hblt2(x, y); }
inline bool __hbgtu2(__half2 x, __half2 y) { return __hbgt2(x, y); }

// Arithmetic.
inline __half __clamp_01(__half x) { return hipr_fp16::Unary(x, hipr_fp16::Clamp01); }
inline __half __hadd(__half x, __half y) { return hipr_fp16::Binary(x, y, hipr_fp16::Add); }
inline __half __habs(__half x) { return hipr_fp16::Unary(x, hipr_fp16::Abs); }
inline __half __hsub(__half x, __half y) { return hipr_fp16::Binary(x, y, hipr_fp16::Sub); }
inline __half __hmul(__half x, __half y) { return hipr_fp16::Binary(x, y, hipr_fp16::Mul); }
inline __half __hadd_sat(__half x, __half y) { return __clamp_01(__hadd(x, y)); }
inline __half __hsub_sat(__half x, __half y) { return __clamp_01(__hsub(x, y)); }
inline __half __hmul_sat(__half x, __half y) { return __clamp_01(__hmul(x, y)); }
inline __half __hfma(__half x, __half y, __half z) {
  return hipr_fp16::Half(hipr_fp16::Fma(hipr_fp16::Bits(x), hipr_fp16::Bits(y), hipr_fp16::Bits(z)));
}
inline __half __hfma_sat(__half x, __half y, __half z) { return __clamp_01(__hfma(x, y, z)); }
inline __half __hdiv(__half x, __half y) { return hipr_fp16::Binary(x, y, hipr_fp16::Div); }

inline __half2 __hadd2(__half2 x, __half2 y) { return hipr_fp16::Lanes(x, y, hipr_fp16::Add); }
inline __half2 __habs2(__half2 x) { return hipr_fp16::Lanes(x, hipr_fp16::Abs); }
inline __half2 __hsub2(__half2 x, __half2 y) { return hipr_fp16::Lanes(x, y, hipr_fp16::Sub); }
inline __half2 __hmul2(__half2 x, __half2 y) { return hipr_fp16::Lanes(x, y, hipr_fp16::Mul); }
inline __half2 __hadd2_sat(__half2 x, __half2 y) { return hipr_fp16::Lanes(__hadd2(x, y), hipr_fp16::Clamp01); }
inline __half2 __hsub2_sat(__half2 x, __half2 y) { return hipr_fp16::Lanes(__hsub2(x, y), hipr_fp16::Clamp01); }
inline __half2 __hmul2_sat(__half2 x, __half2 y) { return hipr_fp16::Lanes(__hmul2(x, y), hipr_fp16::Clamp01); }
inline __half2 __hfma2(__half2 x, __half2 y, __half2 z) {
  return hipr_fp16::Half2(hipr_fp16::Fma(x.x, y.x, z.x), hipr_fp16::Fma(x.y, y.y, z.y));
}
inline __half2 __hfma2_sat(__half2 x, __half2 y, __half2 z) {
  return hipr_fp16::Lanes(__hfma2(x, y, z), hipr_fp16::Clamp01);
}
inline __half2 __h2div(__half2 x, __half2 y) { return hipr_fp16::Lanes(x, y, hipr_fp16::Div); }

// a.x * b.x + a.y * b.y + c, rounded once to float; clamped to [0, 1]
// (NaN to 0) when saturating, as v_dot2_f32_f16's clamp.
inline float amd_mixed_dot(__half2 a, __half2 b, float c, bool saturate) {
  const double sum = hipr_fp16::ToDouble(a.x) * hipr_fp16::ToDouble(b.x) +
                     hipr_fp16::ToDouble(a.y) * hipr_fp16::ToDouble(b.y) + static_cast<double>(c);
  const float r = static_cast<float>(sum);
  if (!saturate) return r;
  return r > 0.0f ? (r < 1.0f ? r : 1.0f) : 0.0f;
}

// Math: rounding functions are exact; the rest are correctly rounded here
// and approximations on the GPU (see the top of this file).
inline __half htrunc(__half x) { return hipr_fp16::Math(x, [](double v) { return __builtin_trunc(v); }); }
inline __half hceil(__half x) { return hipr_fp16::Math(x, [](double v) { return __builtin_ceil(v); }); }
inline __half hfloor(__half x) { return hipr_fp16::Math(x, [](double v) { return __builtin_floor(v); }); }
inline __half hrint(__half x) { return hipr_fp16::Math(x, [](double v) { return __builtin_rint(v); }); }
inline __half hsin(__half x) { return hipr_fp16::Math(x, [](double v) { return ::sin(v); }); }
inline __half hcos(__half x) { return hipr_fp16::Math(x, [](double v) { return ::cos(v); }); }
inline __half hexp(__half x) { return hipr_fp16::Math(x, [](double v) { return ::exp(v); }); }
inline __half hexp2(__half x) { return hipr_fp16::Math(x, [](double v) { return ::exp2(v); }); }
inline __half hexp10(__half x) { return hipr_fp16::Math(x, [](double v) { return ::exp10(v); }); }
inline __half hlog2(__half x) { return hipr_fp16::Math(x, [](double v) { return ::log2(v); }); }
inline __half hlog(__half x) { return hipr_fp16::Math(x, [](double v) { return ::log(v); }); }
inline __half hlog10(__half x) { return hipr_fp16::Math(x, [](double v) { return ::log10(v); }); }
inline __half hrcp(__half x) { return hipr_fp16::Math(x, [](double v) { return 1.0 / v; }); }
inline __half hrsqrt(__half x) { return hipr_fp16::Math(x, [](double v) { return 1.0 / ::sqrt(v); }); }
inline __half hsqrt(__half x) { return hipr_fp16::Math(x, [](double v) { return ::sqrt(v); }); }
inline bool __hisinf(__half x) { return hipr_fp16::IsInf(hipr_fp16::Bits(x)); }
inline bool __hisnan(__half x) { return hipr_fp16::IsNan(hipr_fp16::Bits(x)); }
inline __half __hneg(__half x) { return hipr_fp16::Unary(x, hipr_fp16::Neg); }

#define HIPR_TWIN_HALF2_MATH(name2, name)                                                           \
  inline __half2 name2(__half2 x) {                                                                 \
    return __halves2half2(name(hipr_fp16::Half(x.x)), name(hipr_fp16::Half(x.y)));                  \
  }
HIPR_TWIN_HALF2_MATH(h2trunc, htrunc)
HIPR_TWIN_HALF2_MATH(h2ceil, hceil)
HIPR_TWIN_HALF2_MATH(h2floor, hfloor)
HIPR_TWIN_HALF2_MATH(h2rint, hrint)
HIPR_TWIN_HALF2_MATH(h2sin, hsin)
HIPR_TWIN_HALF2_MATH(h2cos, hcos)
HIPR_TWIN_HALF2_MATH(h2exp, hexp)
HIPR_TWIN_HALF2_MATH(h2exp2, hexp2)
HIPR_TWIN_HALF2_MATH(h2exp10, hexp10)
HIPR_TWIN_HALF2_MATH(h2log2, hlog2)
HIPR_TWIN_HALF2_MATH(h2log, hlog)
HIPR_TWIN_HALF2_MATH(h2log10, hlog10)
HIPR_TWIN_HALF2_MATH(h2rcp, hrcp)
HIPR_TWIN_HALF2_MATH(h2rsqrt, hrsqrt)
HIPR_TWIN_HALF2_MATH(h2sqrt, hsqrt)
#undef HIPR_TWIN_HALF2_MATH
inline __half2 __hisinf2(__half2 x) { return hipr_fp16::Class2(x, hipr_fp16::IsInf); }
inline __half2 __hisnan2(__half2 x) { return hipr_fp16::Class2(x, hipr_fp16::IsNan); }
inline __half2 __hneg2(__half2 x) { return hipr_fp16::Lanes(x, hipr_fp16::Neg); }

}  // namespace

#if !defined(HIP_NO_HALF)
using half = __half;
using half2 = __half2;
#endif

#endif  // HIPR_TWIN_HALF_H_

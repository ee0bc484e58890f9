// Device math for kernel twins (part of hipr_twin_prelude.h).
//
// The C math library (expf, logf, sqrtf, fmaxf, tanhf, powf, fabsf, erff,
// exp10f, sincosf, ...) comes from the host's libm unchanged. Added here:
// HIP's global min/max overloads, the single-precision intrinsics
// (__expf, __fdividef, rsqrtf, __saturatef, ...) computed at full
// precision, rounding-mode conversions and __ldg. Results may differ from
// the GPU's in the last bits, as between two GPU generations. The integer
// and bit intrinsics are in hipr_twin_bits.h.
#ifndef HIPR_TWIN_MATH_H_
#define HIPR_TWIN_MATH_H_

#include <math.h>
#include <stdint.h>
#include <string.h>

// ---- min / max ---------------------------------------------------------------

template <typename T>
inline T min(T a, T b) {
  return a < b ? a : b;
}
template <typename T>
inline T max(T a, T b) {
  return a > b ? a : b;
}
inline int min(int a, int b) { return a < b ? a : b; }
inline int max(int a, int b) { return a > b ? a : b; }
inline int min(unsigned int a, int b) { return min(static_cast<int>(a), b); }
inline int max(unsigned int a, int b) { return max(static_cast<int>(a), b); }
inline int min(int a, unsigned int b) { return min(a, static_cast<int>(b)); }
inline int max(int a, unsigned int b) { return max(a, static_cast<int>(b)); }
inline float min(float a, float b) { return fminf(a, b); }
inline float max(float a, float b) { return fmaxf(a, b); }
inline double min(double a, double b) { return fmin(a, b); }
inline double max(double a, double b) { return fmax(a, b); }

// ---- Single-precision intrinsics ------------------------------------------------

inline float __expf(float x) { return expf(x); }
inline float __exp10f(float x) { return exp10f(x); }
inline float __logf(float x) { return logf(x); }
inline float __log2f(float x) { return log2f(x); }
inline float __log10f(float x) { return log10f(x); }
inline float __sinf(float x) { return sinf(x); }
inline float __cosf(float x) { return cosf(x); }
inline float __tanf(float x) { return tanf(x); }
inline void __sincosf(float x, float* s, float* c) { sincosf(x, s, c); }
inline float __powf(float x, float y) { return powf(x, y); }
inline float __fdividef(float x, float y) { return x / y; }
inline float __fadd_rn(float x, float y) { return x + y; }
inline float __fsub_rn(float x, float y) { return x - y; }
inline float __fmul_rn(float x, float y) { return x * y; }
inline float __fdiv_rn(float x, float y) { return x / y; }
inline float __fmaf_rn(float x, float y, float z) { return fmaf(x, y, z); }
inline float __frcp_rn(float x) { return 1.0f / x; }
inline float __fsqrt_rn(float x) { return sqrtf(x); }
inline float __frsqrt_rn(float x) { return 1.0f / sqrtf(x); }
inline float __saturatef(float x) { return x < 0.0f ? 0.0f : (x > 1.0f ? 1.0f : x); }
inline double __dadd_rn(double x, double y) { return x + y; }
inline double __dmul_rn(double x, double y) { return x * y; }
inline double __fma_rn(double x, double y, double z) { return fma(x, y, z); }
inline double __drcp_rn(double x) { return 1.0 / x; }
inline double __dsqrt_rn(double x) { return sqrt(x); }

inline float rsqrtf(float x) { return 1.0f / sqrtf(x); }
inline double rsqrt(double x) { return 1.0 / sqrt(x); }
inline float rcbrtf(float x) { return 1.0f / cbrtf(x); }
inline double rcbrt(double x) { return 1.0 / cbrt(x); }
inline float sinpif(float x) { return sinf(static_cast<float>(M_PI) * x); }
inline float cospif(float x) { return cosf(static_cast<float>(M_PI) * x); }
inline double sinpi(double x) { return sin(M_PI * x); }
inline double cospi(double x) { return cos(M_PI * x); }
inline void sincospif(float x, float* s, float* c) { sincosf(static_cast<float>(M_PI) * x, s, c); }
inline float normcdff(float x) { return 0.5f * erfcf(-x * static_cast<float>(M_SQRT1_2)); }
inline double normcdf(double x) { return 0.5 * erfc(-x * M_SQRT1_2); }
inline float fdividef(float x, float y) { return x / y; }

// ---- Conversions ------------------------------------------------------------------

inline int __float2int_rn(float x) { return static_cast<int>(nearbyintf(x)); }
inline int __float2int_rz(float x) { return static_cast<int>(truncf(x)); }
inline int __float2int_rd(float x) { return static_cast<int>(floorf(x)); }
inline int __float2int_ru(float x) { return static_cast<int>(ceilf(x)); }
inline unsigned int __float2uint_rn(float x) { return static_cast<unsigned int>(nearbyintf(x)); }
inline unsigned int __float2uint_rz(float x) { return static_cast<unsigned int>(truncf(x)); }
inline long long __float2ll_rn(float x) { return static_cast<long long>(nearbyintf(x)); }
inline long long __float2ll_rz(float x) { return static_cast<long long>(truncf(x)); }
inline float __int2float_rn(int x) { return static_cast<float>(x); }
inline float __uint2float_rn(unsigned int x) { return static_cast<float>(x); }
inline float __ll2float_rn(long long x) { return static_cast<float>(x); }
inline float __double2float_rn(double x) { return static_cast<float>(x); }
inline int __double2int_rn(double x) { return static_cast<int>(nearbyint(x)); }
inline int __double2int_rz(double x) { return static_cast<int>(trunc(x)); }
inline double __int2double_rn(int x) { return static_cast<double>(x); }

namespace hipr_twin {
template <typename To, typename From>
inline To BitCast(From from) {
  static_assert(sizeof(To) == sizeof(From), "sizes differ");
  To to;
  memcpy(&to, &from, sizeof(To));
  return to;
}
}  // namespace hipr_twin

inline int __float_as_int(float x) { return ::hipr_twin::BitCast<int>(x); }
inline unsigned int __float_as_uint(float x) { return ::hipr_twin::BitCast<unsigned int>(x); }
inline float __int_as_float(int x) { return ::hipr_twin::BitCast<float>(x); }
inline float __uint_as_float(unsigned int x) { return ::hipr_twin::BitCast<float>(x); }
inline long long __double_as_longlong(double x) { return ::hipr_twin::BitCast<long long>(x); }
inline double __longlong_as_double(long long x) { return ::hipr_twin::BitCast<double>(x); }

// ---- Loads ---------------------------------------------------------------------------

template <typename T>
inline T __ldg(const T* p) {
  return *p;
}

#endif  // HIPR_TWIN_MATH_H_

// half_ops: __half and __half2 as HIP 5.2's hip_fp16.h defines them, run by
// kernels and checked element by element against a host reference written
// here from binary16's definition (values, not any half type: the host side
// never uses hip_fp16.h's functions). Every group of the API: conversions
// from and to float, double and the integer types, the moves between
// __half and __half2, arithmetic (+ - * / fma, the _sat forms, negation,
// absolute value, the operators), comparisons and the math functions.
//
// Inputs: binary16 edge values (signed zeros, subnormals, the smallest
// normal, 1 and its neighbours, values whose sums round to a tie, the
// largest finite value, infinities, quiet and signalling NaNs) paired with
// each other, plus pseudo-random triples, some built so that fma cancels to
// near a tie or into the subnormal range.
//
// The reference rounds exactly: a sum, difference or product of two
// binary16 values is exact in double, so it is rounded once here (by
// frexp/ldexp/nearbyint, ties to even); fma is summed exactly in 128-bit
// integers; a square root rounds in double first, which cannot change the
// binary16 result (53 >= 2 * 11 + 2). Division is not correctly rounded on
// the GPU: HIP 5.2's compiler (LLVM 15) has gfx90a multiply by the
// divisor's float reciprocal (v_rcp_f32, v_mul_f32, v_cvt_f16_f32,
// v_div_fixup_f16), which the reference follows, taking the reciprocal as
// correctly rounded; a few subnormal quotients differ from the correctly
// rounded ones, and must, as on the GPU. Results must be
// bit-identical, except that a NaN need only be a NaN (its sign and payload
// are not specified), and except the GPU's approximations, checked to
// within: 1 ulp for hrsqrt and hsqrt, 2 ulp for hexp, hexp2, hexp10, hlog,
// hlog2, hlog10, hsin and hcos (|x| <= 4 for hsin/hcos, where the argument
// reduction keeps its accuracy). hrcp and h2rcp are not tested: HIP 5.2's
// header calls __llvm_amdgcn_rcp_f16, which Debian's device libraries do
// not define, so a program using them does not link.
//
// HIP 5.2's own definitions decide the expected results where they differ
// from the names: every __float2half_r?, __int2half_r?-style conversion
// rounds to nearest even; every __half2int_r?-style conversion truncates;
// the unordered comparisons (__hequ, ...) are the ordered ones; operator<=
// and >= are !(y < x) and !(x < y); __heq2 and friends give 1.0/0.0 per
// lane, __hisinf2/__hisnan2 -1.0/0.0; _sat clamps by comparisons.
#include <hip/hip_fp16.h>

#include <math.h>

#include <algorithm>
#include <random>

#include "common.h"

namespace {

// ---- Host reference -------------------------------------------------------------------

// The value of binary16 `h`, exactly.
double RefValue(uint16_t h) {
  const int e = (h >> 10) & 31;
  const int f = h & 1023;
  double v;
  if (e == 31)
    v = f != 0 ? NAN : INFINITY;
  else if (e == 0)
    v = ldexp(f, -24);
  else
    v = ldexp(f + 1024, e - 25);
  return (h & 0x8000) != 0 ? -v : v;
}

bool RefIsNan(uint16_t h) { return (h & 0x7fff) > 0x7c00; }

// `v` rounded to the nearest binary16, ties to even: scaled so that
// binary16's spacing near it is 1, rounded to an integer, scaled back.
uint16_t RefRound(double v) {
  if (isnan(v)) return 0x7e00;
  const uint16_t sign = signbit(v) ? 0x8000 : 0;
  const double a = fabs(v);
  if (isinf(a)) return sign | 0x7c00;
  if (a == 0) return sign;
  int e = 0;
  frexp(a, &e);  // a in [2^(e-1), 2^e).
  const int spacing = std::max(e - 1 - 10, -24);
  const double n = nearbyint(ldexp(a, -spacing));  // The default mode: ties to even.
  const double r = ldexp(n, spacing);
  if (r > 65504.0) return sign | 0x7c00;
  if (n == 0) return sign;
  frexp(r, &e);
  if (e - 1 < -14) return sign | static_cast<uint16_t>(n);  // Subnormal: n units of 2^-24.
  const double fraction = ldexp(r, -(e - 1)) - 1.0;
  return sign | static_cast<uint16_t>((e - 1 + 15) << 10) | static_cast<uint16_t>(fraction * 1024.0);
}

// A finite binary16 times 2^24: an integer.
__int128 RefScaled(uint16_t h) {
  const int e = (h >> 10) & 31;
  const __int128 f = h & 1023;
  const __int128 v = e != 0 ? (f + 1024) << (e - 1) : f;
  return (h & 0x8000) != 0 ? -v : v;
}

// a * b + c with one rounding: the exact sum in units of 2^-48.
uint16_t RefFma(uint16_t a, uint16_t b, uint16_t c) {
  const double va = RefValue(a), vb = RefValue(b), vc = RefValue(c);
  if (!isfinite(va) || !isfinite(vb) || !isfinite(vc)) return RefRound(va * vb + vc);
  const __int128 s = RefScaled(a) * RefScaled(b) + RefScaled(c) * (static_cast<__int128>(1) << 24);
  if (s == 0) return RefRound(va * vb + vc);  // The sign of an exact zero, as IEEE sums give it.
  const bool negative = s < 0;
  const unsigned __int128 m = negative ? -static_cast<unsigned __int128>(s) : static_cast<unsigned __int128>(s);
  int top = 127;
  while (((m >> top) & 1) == 0) --top;
  const int drop = std::max(top - 10, 24);  // Keep 11 bits, or units of 2^-24.
  unsigned __int128 kept = m >> drop;
  const unsigned __int128 rest = m & ((static_cast<unsigned __int128>(1) << drop) - 1);
  const unsigned __int128 halfway = static_cast<unsigned __int128>(1) << (drop - 1);
  if (rest > halfway || (rest == halfway && (kept & 1) != 0)) ++kept;
  const double r = ldexp(static_cast<double>(kept), drop - 48);  // Exact.
  return RefRound(negative ? -r : r);
}

// gfx90a's f16 division as LLVM 15 emits it: IEEE results for zeros,
// infinities and NaN (v_div_fixup_f16), else a float product by the float
// reciprocal, rounded to binary16.
uint16_t RefDiv(uint16_t a, uint16_t b) {
  const double va = RefValue(a), vb = RefValue(b);
  if (!isfinite(va) || !isfinite(vb) || va == 0 || vb == 0) return RefRound(va / vb);
  const float reciprocal = 1.0f / static_cast<float>(vb);
  return RefRound(static_cast<float>(va) * reciprocal);
}

uint16_t RefClamp01(uint16_t h) {
  const double v = RefValue(h);
  if (v < 0) return 0;
  if (v > 1) return 0x3c00;
  return h;
}

int Ordered(uint16_t h) { return (h & 0x8000) != 0 ? -static_cast<int>(h & 0x7fff) : static_cast<int>(h); }

// Whether `got` is `want`: a NaN for a NaN (unless exact_nan), else the same
// bits, or within `ulps` of them.
bool Matches(uint16_t got, uint16_t want, int ulps = 0, bool exact_nan = false) {
  if (RefIsNan(want) && !exact_nan) return RefIsNan(got);
  if (got == want) return true;
  if (ulps == 0 || RefIsNan(got) || RefIsNan(want)) return false;
  return std::abs(Ordered(got) - Ordered(want)) <= ulps;
}

// ---- Inputs ---------------------------------------------------------------------------------

constexpr uint16_t kEdges[] = {
    0x0000, 0x8000,  // +-0
    0x0001, 0x8001, 0x0002, 0x0003, 0x01ff, 0x0200, 0x03ff, 0x83ff,  // Subnormals.
    0x0400, 0x8400, 0x0401, 0x1000,  // The smallest normals, 2^-11.
    0x2e66, 0x3555, 0x3800, 0x3bff, 0x3c00, 0xbc00, 0x3c01, 0x3e00,  // 0.1, 1/3, 0.5, 1-, 1, -1, 1+, 1.5
    0x4000, 0x4200, 0x4248, 0xc500, 0x4800, 0x4c00, 0x5640, 0x63d0,  // 2, 3, 3.14, -5, 8, 16, 100, 1000
    0x6800, 0x6801, 0x7800, 0x7bfe, 0x7bff, 0xfbff,  // 2048, 2050, 32768, the largest finite values
    0x7c00, 0xfc00, 0x7e00, 0xfe00, 0x7c01,  // +-inf, quiet NaNs, a signalling NaN
};
constexpr int kEdgeCount = sizeof(kEdges) / sizeof(kEdges[0]);

struct Triples {
  std::vector<uint16_t> a, b, c;
  int size() const { return static_cast<int>(a.size()); }
  void Add(uint16_t x, uint16_t y, uint16_t z) {
    a.push_back(x);
    b.push_back(y);
    c.push_back(z);
  }
};

uint16_t RandomFinite(std::mt19937& rng) {
  uint16_t h;
  do h = static_cast<uint16_t>(rng()); while ((h & 0x7c00) == 0x7c00);
  return h;
}

// Every pair of edge values (c: another edge value), then random triples:
// any bits; nearby exponents (sums that cancel or round to ties); tiny
// values (subnormal results); fma whose c nearly cancels a * b.
Triples MakeTriples() {
  Triples t;
  for (int i = 0; i < kEdgeCount; ++i)
    for (int j = 0; j < kEdgeCount; ++j) t.Add(kEdges[i], kEdges[j], kEdges[(i * 7 + j * 3) % kEdgeCount]);
  // Quotients where gfx90a's division (RefDiv) is not correctly rounded.
  const uint16_t kDivisions[][2] = {{0x2e9e, 0x7700}, {0x1d55, 0x7290}, {0x19f6, 0x72d0}, {0x063c, 0x5300},
                                    {0x0eae, 0x5b80}};
  for (const auto& d : kDivisions) {
    t.Add(d[0], d[1], 0x3c00);
    t.Add(d[0] ^ 0x8000, d[1], 0x3c00);
  }
  std::mt19937 rng(20240522);
  const auto any = [&rng] { return static_cast<uint16_t>(rng()); };
  for (int i = 0; i < 1000; ++i) {
    const uint16_t x = any(), y = any();
    t.Add(x, y, any());
  }
  for (int i = 0; i < 1000; ++i) {
    const uint16_t x = RandomFinite(rng);
    const uint16_t y = static_cast<uint16_t>((x & 0x7c00) | (rng() & 0x83ff));
    t.Add(x, y, static_cast<uint16_t>((x & 0xfc00) | (rng() & 0x3ff)));
  }
  for (int i = 0; i < 500; ++i)
    t.Add(static_cast<uint16_t>(rng() & 0x87ff), static_cast<uint16_t>(rng() & 0x87ff),
          static_cast<uint16_t>(rng() & 0x83ff));
  for (int i = 0; i < 1500; ++i) {
    const uint16_t x = RandomFinite(rng), y = static_cast<uint16_t>((rng() & 0x8000) | 0x3000 | (rng() & 0x0fff));
    uint16_t z = RefRound(-RefValue(x) * RefValue(y));
    if ((z & 0x7c00) == 0x7c00) z = 0;
    z = static_cast<uint16_t>(z + static_cast<int>(rng() % 5) - 2);
    t.Add(x, y, z);
  }
  return t;
}

template <typename T>
T* ToDevice(const std::vector<T>& v) {
  T* d = nullptr;
  HIP_OK(hipMalloc(&d, v.size() * sizeof(T)));
  HIP_OK(hipMemcpy(d, v.data(), v.size() * sizeof(T), hipMemcpyHostToDevice));
  return d;
}
template <typename T>
T* DeviceArray(size_t n) {
  T* d = nullptr;
  HIP_OK(hipMalloc(&d, n * sizeof(T)));
  HIP_OK(hipMemset(d, 0xa5, n * sizeof(T)));
  return d;
}
template <typename T>
std::vector<T> ToHost(const T* d, size_t n) {
  std::vector<T> v(n);
  HIP_OK(hipMemcpy(v.data(), d, n * sizeof(T), hipMemcpyDeviceToHost));
  return v;
}

constexpr int kBlock = 256;
dim3 Grid(int n) { return dim3(static_cast<unsigned>((n + kBlock - 1) / kBlock)); }

}  // namespace

// ---- Kernels --------------------------------------------------------------------------------

__device__ inline __half H(unsigned short bits) { return __ushort_as_half(bits); }
__device__ inline unsigned short B(__half h) { return __half_as_ushort(h); }
__device__ inline unsigned int B2(__half2 h) {
  return static_cast<unsigned int>(B(__low2half(h))) | (static_cast<unsigned int>(B(__high2half(h))) << 16);
}

constexpr int kFromFloatOps = 14;
__global__ void from_float(const float* in, int n, unsigned short* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const float f = in[i];
  unsigned short* o = out + i;
  o[0 * n] = B(__float2half(f));
  o[1 * n] = B(__float2half_rn(f));
  o[2 * n] = B(__float2half_rz(f));
  o[3 * n] = B(__float2half_rd(f));
  o[4 * n] = B(__float2half_ru(f));
  o[5 * n] = B(__half(f));
  __half h;
  h = f;
  o[6 * n] = B(h);
  const __half2 p = __float2half2_rn(f);
  o[7 * n] = B(__low2half(p));
  o[8 * n] = B(__high2half(p));
  const __half2 q = __floats2half2_rn(f, -f);
  o[9 * n] = B(__low2half(q));
  o[10 * n] = B(__high2half(q));
  const __half2 r = __float22half2_rn(make_float2(-f, f));
  o[11 * n] = B(__low2half(r));
  o[12 * n] = B(__high2half(r));
  o[13 * n] = B(__half(static_cast<double>(f)));
}

constexpr int kFromDoubleOps = 2;
__global__ void from_double(const double* in, int n, unsigned short* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  out[i] = B(__half(in[i]));
  __half h;
  h = in[i];
  out[n + i] = B(h);
}

constexpr int kToFloatOps = 7;
__global__ void to_float(const unsigned short* in, int n, float* out, double* out_double) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const __half h = H(in[i]);
  const __half2 p = __halves2half2(h, H(in[(i + 1) % n]));
  out[0 * n + i] = __half2float(h);
  out[1 * n + i] = h;  // operator float()
  out[2 * n + i] = static_cast<float>(h);
  out[3 * n + i] = __low2float(p);
  out[4 * n + i] = __high2float(p);
  const float2 f2 = __half22float2(p);
  out[5 * n + i] = f2.x;
  out[6 * n + i] = f2.y;
  out_double[i] = static_cast<double>(h);
}

// From integers: __T2half_{rn,rz,rd,ru} for int, short, ll, uint, ushort,
// ull, then the constructors from int, long long and unsigned long long.
constexpr int kFromIntOps = 27;
__global__ void from_int(const long long* in, int n, unsigned short* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const long long v = in[i];
  unsigned short* o = out + i;
  const int vi = static_cast<int>(v);
  const short vs = static_cast<short>(v);
  const unsigned int vu = static_cast<unsigned int>(v);
  const unsigned short vus = static_cast<unsigned short>(v);
  const unsigned long long vull = static_cast<unsigned long long>(v);
  o[0 * n] = B(__int2half_rn(vi));
  o[1 * n] = B(__int2half_rz(vi));
  o[2 * n] = B(__int2half_rd(vi));
  o[3 * n] = B(__int2half_ru(vi));
  o[4 * n] = B(__short2half_rn(vs));
  o[5 * n] = B(__short2half_rz(vs));
  o[6 * n] = B(__short2half_rd(vs));
  o[7 * n] = B(__short2half_ru(vs));
  o[8 * n] = B(__ll2half_rn(v));
  o[9 * n] = B(__ll2half_rz(v));
  o[10 * n] = B(__ll2half_rd(v));
  o[11 * n] = B(__ll2half_ru(v));
  o[12 * n] = B(__uint2half_rn(vu));
  o[13 * n] = B(__uint2half_rz(vu));
  o[14 * n] = B(__uint2half_rd(vu));
  o[15 * n] = B(__uint2half_ru(vu));
  o[16 * n] = B(__ushort2half_rn(vus));
  o[17 * n] = B(__ushort2half_rz(vus));
  o[18 * n] = B(__ushort2half_rd(vus));
  o[19 * n] = B(__ushort2half_ru(vus));
  o[20 * n] = B(__ull2half_rn(vull));
  o[21 * n] = B(__ull2half_rz(vull));
  o[22 * n] = B(__ull2half_rd(vull));
  o[23 * n] = B(__ull2half_ru(vull));
  o[24 * n] = B(__half(vi));
  o[25 * n] = B(__half(v));
  o[26 * n] = B(__half(vull));
}

// To signed integers (inputs within +-32767): __half2{int,short,ll}_r?,
// then int(h), long long(h).
constexpr int kToSignedOps = 14;
__global__ void to_signed(const unsigned short* in, int n, long long* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const __half h = H(in[i]);
  long long* o = out + i;
  o[0 * n] = __half2int_rn(h);
  o[1 * n] = __half2int_rz(h);
  o[2 * n] = __half2int_rd(h);
  o[3 * n] = __half2int_ru(h);
  o[4 * n] = __half2short_rn(h);
  o[5 * n] = __half2short_rz(h);
  o[6 * n] = __half2short_rd(h);
  o[7 * n] = __half2short_ru(h);
  o[8 * n] = __half2ll_rn(h);
  o[9 * n] = __half2ll_rz(h);
  o[10 * n] = __half2ll_rd(h);
  o[11 * n] = __half2ll_ru(h);
  const int iv = h;
  const long long lv = h;
  o[12 * n] = iv;
  o[13 * n] = lv;
}

// To unsigned integers (inputs in (-1, 65504]): __half2{uint,ushort,ull}_r?,
// then unsigned(h).
constexpr int kToUnsignedOps = 13;
__global__ void to_unsigned(const unsigned short* in, int n, unsigned long long* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const __half h = H(in[i]);
  unsigned long long* o = out + i;
  o[0 * n] = __half2uint_rn(h);
  o[1 * n] = __half2uint_rz(h);
  o[2 * n] = __half2uint_rd(h);
  o[3 * n] = __half2uint_ru(h);
  o[4 * n] = __half2ushort_rn(h);
  o[5 * n] = __half2ushort_rz(h);
  o[6 * n] = __half2ushort_rd(h);
  o[7 * n] = __half2ushort_ru(h);
  o[8 * n] = __half2ull_rn(h);
  o[9 * n] = __half2ull_rz(h);
  o[10 * n] = __half2ull_rd(h);
  o[11 * n] = __half2ull_ru(h);
  const unsigned int uv = h;
  o[12 * n] = uv;
}

enum ArithOp {
  kHadd, kHsub, kHmul, kHdiv, kHfma, kHaddSat, kHsubSat, kHmulSat, kHfmaSat, kHneg, kHabs, kClamp01,
  kOpAdd, kOpSub, kOpMul, kOpDiv, kOpNeg, kOpPlus, kAddAssign, kSubAssign, kMulAssign, kDivAssign,
  kPreInc, kPostIncValue, kPostIncAfter, kPreDec, kPostDecValue, kPostDecAfter, kArithOps
};
__global__ void arithmetic(const unsigned short* a, const unsigned short* b, const unsigned short* c, int n,
                           unsigned short* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const __half x = H(a[i]), y = H(b[i]), z = H(c[i]);
  unsigned short* o = out + i;
  o[kHadd * n] = B(__hadd(x, y));
  o[kHsub * n] = B(__hsub(x, y));
  o[kHmul * n] = B(__hmul(x, y));
  o[kHdiv * n] = B(__hdiv(x, y));
  o[kHfma * n] = B(__hfma(x, y, z));
  o[kHaddSat * n] = B(__hadd_sat(x, y));
  o[kHsubSat * n] = B(__hsub_sat(x, y));
  o[kHmulSat * n] = B(__hmul_sat(x, y));
  o[kHfmaSat * n] = B(__hfma_sat(x, y, z));
  o[kHneg * n] = B(__hneg(x));
  o[kHabs * n] = B(__habs(x));
  o[kClamp01 * n] = B(__clamp_01(x));
  o[kOpAdd * n] = B(x + y);
  o[kOpSub * n] = B(x - y);
  o[kOpMul * n] = B(x * y);
  o[kOpDiv * n] = B(x / y);
  o[kOpNeg * n] = B(-x);
  o[kOpPlus * n] = B(+x);
  __half t = x;
  t += y;
  o[kAddAssign * n] = B(t);
  t = x;
  t -= y;
  o[kSubAssign * n] = B(t);
  t = x;
  t *= y;
  o[kMulAssign * n] = B(t);
  t = x;
  t /= y;
  o[kDivAssign * n] = B(t);
  t = x;
  o[kPreInc * n] = B(++t);
  t = x;
  o[kPostIncValue * n] = B(t++);
  o[kPostIncAfter * n] = B(t);
  t = x;
  o[kPreDec * n] = B(--t);
  t = x;
  o[kPostDecValue * n] = B(t--);
  o[kPostDecAfter * n] = B(t);
}

// __half2 with lanes x = (a, b), y = (b, c), z = (c, a); each result's
// lanes as low | high << 16.
enum Arith2Op {
  kHadd2, kHsub2, kHmul2, kH2div, kHfma2, kHadd2Sat, kHsub2Sat, kHmul2Sat, kHfma2Sat, kHneg2, kHabs2,
  kOp2Add, kOp2Sub, kOp2Mul, kOp2Div, kOp2Neg, kOp2AddAssign, kOp2PreInc, kOp2PostDecAfter, kArith2Ops
};
__global__ void arithmetic2(const unsigned short* a, const unsigned short* b, const unsigned short* c, int n,
                            unsigned int* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const __half2 x = __halves2half2(H(a[i]), H(b[i]));
  const __half2 y = __halves2half2(H(b[i]), H(c[i]));
  const __half2 z = __halves2half2(H(c[i]), H(a[i]));
  unsigned int* o = out + i;
  o[kHadd2 * n] = B2(__hadd2(x, y));
  o[kHsub2 * n] = B2(__hsub2(x, y));
  o[kHmul2 * n] = B2(__hmul2(x, y));
  o[kH2div * n] = B2(__h2div(x, y));
  o[kHfma2 * n] = B2(__hfma2(x, y, z));
  o[kHadd2Sat * n] = B2(__hadd2_sat(x, y));
  o[kHsub2Sat * n] = B2(__hsub2_sat(x, y));
  o[kHmul2Sat * n] = B2(__hmul2_sat(x, y));
  o[kHfma2Sat * n] = B2(__hfma2_sat(x, y, z));
  o[kHneg2 * n] = B2(__hneg2(x));
  o[kHabs2 * n] = B2(__habs2(x));
  o[kOp2Add * n] = B2(x + y);
  o[kOp2Sub * n] = B2(x - y);
  o[kOp2Mul * n] = B2(x * y);
  o[kOp2Div * n] = B2(x / y);
  o[kOp2Neg * n] = B2(-x);
  __half2 t = x;
  t += y;
  o[kOp2AddAssign * n] = B2(t);
  t = x;
  o[kOp2PreInc * n] = B2(++t);
  t = x;
  t--;
  o[kOp2PostDecAfter * n] = B2(t);
}

enum CompareOp {
  kHeq, kHne, kHle, kHge, kHlt, kHgt, kHequ, kHneu, kHleu, kHgeu, kHltu, kHgtu,
  kOpEq, kOpNe, kOpLt, kOpGt, kOpLe, kOpGe, kHisnan, kHisinf, kCompareOps
};
__global__ void compare(const unsigned short* a, const unsigned short* b, int n, unsigned char* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const __half x = H(a[i]), y = H(b[i]);
  unsigned char* o = out + i;
  o[kHeq * n] = __heq(x, y);
  o[kHne * n] = __hne(x, y);
  o[kHle * n] = __hle(x, y);
  o[kHge * n] = __hge(x, y);
  o[kHlt * n] = __hlt(x, y);
  o[kHgt * n] = __hgt(x, y);
  o[kHequ * n] = __hequ(x, y);
  o[kHneu * n] = __hneu(x, y);
  o[kHleu * n] = __hleu(x, y);
  o[kHgeu * n] = __hgeu(x, y);
  o[kHltu * n] = __hltu(x, y);
  o[kHgtu * n] = __hgtu(x, y);
  o[kOpEq * n] = x == y;
  o[kOpNe * n] = x != y;
  o[kOpLt * n] = x < y;
  o[kOpGt * n] = x > y;
  o[kOpLe * n] = x <= y;
  o[kOpGe * n] = x >= y;
  o[kHisnan * n] = __hisnan(x);
  o[kHisinf * n] = __hisinf(x);
}

// __half2: x = (a, b), y = (b, c). Half-valued results (1.0/0.0 per lane)
// as low | high << 16, the rest 0 or 1.
enum Compare2Op {
  kHeq2, kHne2, kHle2, kHge2, kHlt2, kHgt2, kHequ2, kHneu2, kHleu2, kHgeu2, kHltu2, kHgtu2, kHisnan2, kHisinf2,
  kHbeq2, kHbne2, kHble2, kHbge2, kHblt2, kHbgt2, kHbequ2, kHbneu2, kHbleu2, kHbgeu2, kHbltu2, kHbgtu2,
  kOp2Eq, kOp2Ne, kOp2Lt, kOp2Gt, kOp2Le, kOp2Ge, kCompare2Ops
};
constexpr int kCompare2Halves = kHbeq2;
__global__ void compare2(const unsigned short* a, const unsigned short* b, const unsigned short* c, int n,
                         unsigned int* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const __half2 x = __halves2half2(H(a[i]), H(b[i]));
  const __half2 y = __halves2half2(H(b[i]), H(c[i]));
  unsigned int* o = out + i;
  o[kHeq2 * n] = B2(__heq2(x, y));
  o[kHne2 * n] = B2(__hne2(x, y));
  o[kHle2 * n] = B2(__hle2(x, y));
  o[kHge2 * n] = B2(__hge2(x, y));
  o[kHlt2 * n] = B2(__hlt2(x, y));
  o[kHgt2 * n] = B2(__hgt2(x, y));
  o[kHequ2 * n] = B2(__hequ2(x, y));
  o[kHneu2 * n] = B2(__hneu2(x, y));
  o[kHleu2 * n] = B2(__hleu2(x, y));
  o[kHgeu2 * n] = B2(__hgeu2(x, y));
  o[kHltu2 * n] = B2(__hltu2(x, y));
  o[kHgtu2 * n] = B2(__hgtu2(x, y));
  o[kHisnan2 * n] = B2(__hisnan2(x));
  o[kHisinf2 * n] = B2(__hisinf2(x));
  o[kHbeq2 * n] = __hbeq2(x, y);
  o[kHbne2 * n] = __hbne2(x, y);
  o[kHble2 * n] = __hble2(x, y);
  o[kHbge2 * n] = __hbge2(x, y);
  o[kHblt2 * n] = __hblt2(x, y);
  o[kHbgt2 * n] = __hbgt2(x, y);
  o[kHbequ2 * n] = __hbequ2(x, y);
  o[kHbneu2 * n] = __hbneu2(x, y);
  o[kHbleu2 * n] = __hbleu2(x, y);
  o[kHbgeu2 * n] = __hbgeu2(x, y);
  o[kHbltu2 * n] = __hbltu2(x, y);
  o[kHbgtu2 * n] = __hbgtu2(x, y);
  o[kOp2Eq * n] = x == y;
  o[kOp2Ne * n] = x != y;
  o[kOp2Lt * n] = x < y;
  o[kOp2Gt * n] = x > y;
  o[kOp2Le * n] = x <= y;
  o[kOp2Ge * n] = x >= y;
}

enum MathOp {
  kHtrunc, kHceil, kHfloor, kHrint, kHsqrt, kHrsqrt, kHexp, kHexp2, kHexp10, kHlog, kHlog2, kHlog10,
  kHsin, kHcos, kMathOps
};
// Scalar results, then the h2 forms with lanes (a[i], a[i + 1]).
__global__ void half_math(const unsigned short* a, int n, unsigned short* out, unsigned int* out2) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const __half x = H(a[i]);
  const __half2 p = __halves2half2(x, H(a[(i + 1) % n]));
  unsigned short* o = out + i;
  unsigned int* o2 = out2 + i;
  o[kHtrunc * n] = B(htrunc(x));
  o[kHceil * n] = B(hceil(x));
  o[kHfloor * n] = B(hfloor(x));
  o[kHrint * n] = B(hrint(x));
  o[kHsqrt * n] = B(hsqrt(x));
  o[kHrsqrt * n] = B(hrsqrt(x));
  o[kHexp * n] = B(hexp(x));
  o[kHexp2 * n] = B(hexp2(x));
  o[kHexp10 * n] = B(hexp10(x));
  o[kHlog * n] = B(hlog(x));
  o[kHlog2 * n] = B(hlog2(x));
  o[kHlog10 * n] = B(hlog10(x));
  o[kHsin * n] = B(hsin(x));
  o[kHcos * n] = B(hcos(x));
  o2[kHtrunc * n] = B2(h2trunc(p));
  o2[kHceil * n] = B2(h2ceil(p));
  o2[kHfloor * n] = B2(h2floor(p));
  o2[kHrint * n] = B2(h2rint(p));
  o2[kHsqrt * n] = B2(h2sqrt(p));
  o2[kHrsqrt * n] = B2(h2rsqrt(p));
  o2[kHexp * n] = B2(h2exp(p));
  o2[kHexp2 * n] = B2(h2exp2(p));
  o2[kHexp10 * n] = B2(h2exp10(p));
  o2[kHlog * n] = B2(h2log(p));
  o2[kHlog2 * n] = B2(h2log2(p));
  o2[kHlog10 * n] = B2(h2log10(p));
  o2[kHsin * n] = B2(h2sin(p));
  o2[kHcos * n] = B2(h2cos(p));
}

// Moves between __half and __half2, bit casts and loads: x = (a, b),
// y = (b, a ^ sign). Bits are kept exactly, NaNs too.
enum MoveOp {
  kHalves2half2, kMakeHalf2, kHalf2Ctor, kHalf2Half2, kLow2Half2, kHigh2Half2, kLows2Half2, kHighs2Half2,
  kLowHigh2HighLow, kLow2Half, kHigh2Half, kHalfAsShort, kHalfAsUshort, kShortAsHalf, kUshortAsHalf,
  kLdgHalf, kLdgHalf2, kRawRoundTrip, kHalf2Members, kMoveOps
};
__global__ void moves(const unsigned short* a, const unsigned short* b, int n, unsigned int* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const __half ha = H(a[i]), hb = H(b[i]);
  const __half2 x = __halves2half2(ha, hb);
  const __half2 y = __halves2half2(hb, __hneg(ha));
  unsigned int* o = out + i;
  o[kHalves2half2 * n] = B2(x);
  o[kMakeHalf2 * n] = B2(make_half2(hb, ha));
  o[kHalf2Ctor * n] = B2(__half2(ha, hb));
  o[kHalf2Half2 * n] = B2(__half2half2(ha));
  o[kLow2Half2 * n] = B2(__low2half2(x));
  o[kHigh2Half2 * n] = B2(__high2half2(x));
  o[kLows2Half2 * n] = B2(__lows2half2(x, y));
  o[kHighs2Half2 * n] = B2(__highs2half2(x, y));
  o[kLowHigh2HighLow * n] = B2(__lowhigh2highlow(x));
  o[kLow2Half * n] = B(__low2half(y));
  o[kHigh2Half * n] = B(__high2half(y));
  o[kHalfAsShort * n] = static_cast<unsigned int>(static_cast<int>(__half_as_short(ha)));
  o[kHalfAsUshort * n] = __half_as_ushort(hb);
  o[kShortAsHalf * n] = B(__short_as_half(static_cast<short>(a[i])));
  o[kUshortAsHalf * n] = B(__ushort_as_half(b[i]));
  const __half* pa = reinterpret_cast<const __half*>(a);
  o[kLdgHalf * n] = B(__ldg(pa + i));
  o[kLdgHalf2 * n] = B2(__ldg(&x));
  const __half_raw raw = ha;
  const __half back = raw;
  o[kRawRoundTrip * n] = raw.x | (static_cast<unsigned int>(B(back)) << 16);
  o[kHalf2Members * n] = x.x | (static_cast<unsigned int>(x.y) << 16);
}

// amd_mixed_dot: a.x * b.x + a.y * b.y + c in float, plain and saturated.
__global__ void mixed_dot(const unsigned short* a, const unsigned short* b, const float* c, int n, float* out) {
  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const __half2 x = __halves2half2(H(a[2 * i]), H(a[2 * i + 1]));
  const __half2 y = __halves2half2(H(b[2 * i]), H(b[2 * i + 1]));
  out[2 * i] = amd_mixed_dot(x, y, c[i], false);
  out[2 * i + 1] = amd_mixed_dot(x, y, c[i], true);
}

// ---- Checks -----------------------------------------------------------------------------------

namespace {

uint32_t FloatBits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}
uint64_t DoubleBits(double d) {
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
}

// A float or double result equal to `want` (both NaN, or the same bits).
template <typename F>
bool SameFloat(F got, F want) {
  if (isnan(want)) return isnan(got);
  if constexpr (sizeof(F) == 4)
    return FloatBits(got) == FloatBits(want);
  else
    return DoubleBits(got) == DoubleBits(want);
}

void CheckHalf(const char* op, const char* inputs, uint16_t got, uint16_t want, int ulps = 0, bool exact_nan = false) {
  if (!Matches(got, want, ulps, exact_nan))
    e2e::Fail(__FILE__, __LINE__, "%s(%s) = 0x%04x (%.9g), expected 0x%04x (%.9g)%s", op, inputs, got,
              RefValue(got), want, RefValue(want), ulps ? " within the tolerance" : "");
}

void CheckHalf2(const char* op, const char* inputs, uint32_t got, uint16_t want_lo, uint16_t want_hi, int ulps = 0,
                bool exact_nan = false) {
  const uint16_t lo = static_cast<uint16_t>(got), hi = static_cast<uint16_t>(got >> 16);
  if (!Matches(lo, want_lo, ulps, exact_nan) || !Matches(hi, want_hi, ulps, exact_nan))
    e2e::Fail(__FILE__, __LINE__, "%s(%s) = (0x%04x, 0x%04x), expected (0x%04x, 0x%04x)", op, inputs, lo, hi,
              want_lo, want_hi);
}

std::string Hex(std::initializer_list<uint16_t> values) {
  std::string s;
  char buf[16];
  for (uint16_t v : values) {
    snprintf(buf, sizeof buf, "%s0x%04x", s.empty() ? "" : ", ", v);
    s += buf;
  }
  return s;
}

int CheckConversions() {
  int checked = 0;
  // float -> half: edge values of the rounding (ties, the subnormal range,
  // overflow), every binary16 value and its midpoints with neighbours.
  std::vector<float> floats = {0.0f, -0.0f, 1.0f, -1.0f, 65504.0f, 65519.996f, 65520.0f, -65520.0f, 65536.0f,
                               1e10f, -1e10f, INFINITY, -INFINITY, NAN, -NAN, 0x1p-24f, 0x1p-25f, 0x1.000002p-25f,
                               0x3p-26f, 0x1p-26f, -0x1p-25f, 0x1p-14f, 0x1.ff8p-15f, 0x1.ffcp-15f,
                               1.0f + 0x1p-11f, 1.0f + 0x3p-11f, 1.0f + 0x1p-11f + 0x1p-20f, 1e-40f, -1e-40f, 0.1f,
                               1.0f / 3.0f, 2049.0f, 2051.0f, 4097.0f, 3.14159265f, -0x1.ffcp+15f};
  std::mt19937 rng(7);
  for (int i = 0; i < 2000; ++i) {
    const uint16_t h = RandomFinite(rng);
    const double v = RefValue(h), next = RefValue(static_cast<uint16_t>(h + 1));
    floats.push_back(static_cast<float>(v));
    if (isfinite(next)) floats.push_back(static_cast<float>((v + next) / 2));  // A tie (exact in float).
    floats.push_back(static_cast<float>(v * (1 + 0x1p-12 * ((rng() % 7) - 3.0))));
  }
  const int nf = static_cast<int>(floats.size());
  float* d_floats = ToDevice(floats);
  unsigned short* d_out = DeviceArray<unsigned short>(static_cast<size_t>(nf) * kFromFloatOps);
  hipLaunchKernelGGL(from_float, Grid(nf), dim3(kBlock), 0, 0, d_floats, nf, d_out);
  HIP_OK(hipGetLastError());
  std::vector<unsigned short> out = ToHost(d_out, static_cast<size_t>(nf) * kFromFloatOps);
  static const char* const kFromFloatNames[kFromFloatOps] = {
      "__float2half", "__float2half_rn", "__float2half_rz", "__float2half_rd", "__float2half_ru", "__half(float)",
      "__half = float", "__float2half2_rn.lo", "__float2half2_rn.hi", "__floats2half2_rn(f, -f).lo",
      "__floats2half2_rn(f, -f).hi", "__float22half2_rn(-f, f).lo", "__float22half2_rn(-f, f).hi",
      "__half(double(f))"};
  for (int i = 0; i < nf; ++i) {
    const uint16_t want = RefRound(floats[i]);
    const uint16_t neg = RefRound(-static_cast<double>(floats[i]));
    char in[48];
    snprintf(in, sizeof in, "%a", static_cast<double>(floats[i]));
    for (int op = 0; op < kFromFloatOps; ++op) {
      const bool negated = op == 10 || op == 11;
      CheckHalf(kFromFloatNames[op], in, out[static_cast<size_t>(op) * nf + i], negated ? neg : want);
      ++checked;
    }
  }
  HIP_OK(hipFree(d_floats));
  HIP_OK(hipFree(d_out));

  // double -> half: rounded once (a double just above a tie rounds up,
  // where going through float would round to the tie and then to even).
  std::vector<double> doubles = {0.0, -0.0, 1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-11 - 0x1p-40, 1.0 + 0x1p-11,
                                 65519.999999, 65520.0, 0x1p-25 + 0x1p-60, 0x1p-25, 1e300, -1e300, 1e-300,
                                 INFINITY, NAN, 0.1, 2049.0000001, 1e-8};
  for (int i = 0; i < 500; ++i) {
    const uint16_t h = RandomFinite(rng);
    const double v = RefValue(h), next = RefValue(static_cast<uint16_t>(h + 1));
    if (!isfinite(next)) continue;
    const double mid = (v + next) / 2;
    doubles.push_back(mid);
    doubles.push_back(mid + (next - v) * 0x1p-30);
    doubles.push_back(mid - (next - v) * 0x1p-30);
  }
  const int nd = static_cast<int>(doubles.size());
  double* d_doubles = ToDevice(doubles);
  d_out = DeviceArray<unsigned short>(static_cast<size_t>(nd) * kFromDoubleOps);
  hipLaunchKernelGGL(from_double, Grid(nd), dim3(kBlock), 0, 0, d_doubles, nd, d_out);
  HIP_OK(hipGetLastError());
  out = ToHost(d_out, static_cast<size_t>(nd) * kFromDoubleOps);
  for (int i = 0; i < nd; ++i) {
    char in[48];
    snprintf(in, sizeof in, "%a", doubles[i]);
    CheckHalf("__half(double)", in, out[i], RefRound(doubles[i]));
    CheckHalf("__half = double", in, out[static_cast<size_t>(nd) + i], RefRound(doubles[i]));
    checked += 2;
  }
  HIP_OK(hipFree(d_doubles));
  HIP_OK(hipFree(d_out));

  // half -> float and double: every binary16 value, exactly.
  std::vector<unsigned short> halves(65536);
  for (int i = 0; i < 65536; ++i) halves[i] = static_cast<unsigned short>(i);
  const int nh = 65536;
  unsigned short* d_halves = ToDevice(halves);
  float* d_f = DeviceArray<float>(static_cast<size_t>(nh) * kToFloatOps);
  double* d_d = DeviceArray<double>(nh);
  hipLaunchKernelGGL(to_float, Grid(nh), dim3(kBlock), 0, 0, d_halves, nh, d_f, d_d);
  HIP_OK(hipGetLastError());
  const std::vector<float> fl = ToHost(d_f, static_cast<size_t>(nh) * kToFloatOps);
  const std::vector<double> db = ToHost(d_d, nh);
  static const char* const kToFloatNames[kToFloatOps] = {"__half2float", "float(h)", "static_cast<float>(h)",
                                                         "__low2float", "__high2float", "__half22float2.x",
                                                         "__half22float2.y"};
  for (int i = 0; i < nh; ++i) {
    const float want = static_cast<float>(RefValue(static_cast<uint16_t>(i)));
    const float want_next = static_cast<float>(RefValue(static_cast<uint16_t>((i + 1) % nh)));
    for (int op = 0; op < kToFloatOps; ++op) {
      const float w = (op == 4 || op == 6) ? want_next : want;
      const float got = fl[static_cast<size_t>(op) * nh + i];
      CHECK(SameFloat(got, w), "%s(0x%04x) = %a, expected %a", kToFloatNames[op], i, static_cast<double>(got),
            static_cast<double>(w));
      ++checked;
    }
    CHECK(SameFloat(db[i], RefValue(static_cast<uint16_t>(i))), "double(0x%04x) = %a, expected %a", i, db[i],
          RefValue(static_cast<uint16_t>(i)));
    ++checked;
  }
  HIP_OK(hipFree(d_f));
  HIP_OK(hipFree(d_d));

  // Integers -> half: to nearest even in every mode (HIP 5.2), overflow to
  // infinity (65520 is the first integer that does).
  std::vector<long long> ints = {0, 1, -1, 2, 3, 7, 1023, 2047, 2048, 2049, 2050, 2051, 2052, 4097, 4098, 4099,
                                 4100, 12345, -12345, 32767, -32768, 32768, 65503, 65504, 65505, 65519, 65520,
                                 65535, 65536, 70000, -70000, 2147483647LL, -2147483647LL - 1, 4294967295LL,
                                 1LL << 40, -(1LL << 62), 9223372036854775807LL, -9223372036854775807LL - 1};
  for (int i = 0; i < 300; ++i) ints.push_back(static_cast<long long>(rng() % 140000) - 70000);
  const int ni = static_cast<int>(ints.size());
  long long* d_ints = ToDevice(ints);
  d_out = DeviceArray<unsigned short>(static_cast<size_t>(ni) * kFromIntOps);
  hipLaunchKernelGGL(from_int, Grid(ni), dim3(kBlock), 0, 0, d_ints, ni, d_out);
  HIP_OK(hipGetLastError());
  out = ToHost(d_out, static_cast<size_t>(ni) * kFromIntOps);
  static const char* const kFromIntTypes[6] = {"int", "short", "ll", "uint", "ushort", "ull"};
  static const char* const kModes[4] = {"rn", "rz", "rd", "ru"};
  for (int i = 0; i < ni; ++i) {
    const long long v = ints[i];
    const double as[6] = {static_cast<double>(static_cast<int>(v)),
                          static_cast<double>(static_cast<short>(v)),
                          static_cast<double>(v),
                          static_cast<double>(static_cast<unsigned int>(v)),
                          static_cast<double>(static_cast<unsigned short>(v)),
                          static_cast<double>(static_cast<unsigned long long>(v))};
    char in[32];
    snprintf(in, sizeof in, "%lld", v);
    for (int type = 0; type < 6; ++type) {
      for (int mode = 0; mode < 4; ++mode) {
        char op[32];
        snprintf(op, sizeof op, "__%s2half_%s", kFromIntTypes[type], kModes[mode]);
        CheckHalf(op, in, out[static_cast<size_t>(type * 4 + mode) * ni + i], RefRound(as[type]));
        ++checked;
      }
    }
    CheckHalf("__half(int)", in, out[24ull * ni + i], RefRound(as[0]));
    CheckHalf("__half(long long)", in, out[25ull * ni + i], RefRound(as[2]));
    CheckHalf("__half(unsigned long long)", in, out[26ull * ni + i], RefRound(as[5]));
    checked += 3;
  }
  HIP_OK(hipFree(d_ints));
  HIP_OK(hipFree(d_out));

  // half -> integers: truncation in every mode (HIP 5.2), for the values
  // each type holds (the others are undefined).
  std::vector<unsigned short> signed_in, unsigned_in;
  for (int i = 0; i < 65536; ++i) {
    const double v = RefValue(static_cast<uint16_t>(i));
    if (!isfinite(v)) continue;
    if (fabs(v) <= 32767) signed_in.push_back(static_cast<unsigned short>(i));
    if (v > -1) unsigned_in.push_back(static_cast<unsigned short>(i));
  }
  const int ns = static_cast<int>(signed_in.size());
  unsigned short* d_s = ToDevice(signed_in);
  long long* d_sl = DeviceArray<long long>(static_cast<size_t>(ns) * kToSignedOps);
  hipLaunchKernelGGL(to_signed, Grid(ns), dim3(kBlock), 0, 0, d_s, ns, d_sl);
  HIP_OK(hipGetLastError());
  const std::vector<long long> sl = ToHost(d_sl, static_cast<size_t>(ns) * kToSignedOps);
  for (int i = 0; i < ns; ++i) {
    const long long want = static_cast<long long>(trunc(RefValue(signed_in[i])));
    for (int op = 0; op < kToSignedOps; ++op) {
      const long long got = sl[static_cast<size_t>(op) * ns + i];
      CHECK(got == want, "half -> signed conversion #%d (__half2{int,short,ll}_{rn,rz,rd,ru}, int(h), "
            "long long(h)) of 0x%04x = %lld, expected %lld", op, signed_in[i], got, want);
      ++checked;
    }
  }
  HIP_OK(hipFree(d_s));
  HIP_OK(hipFree(d_sl));
  const int nu = static_cast<int>(unsigned_in.size());
  unsigned short* d_u = ToDevice(unsigned_in);
  unsigned long long* d_ul = DeviceArray<unsigned long long>(static_cast<size_t>(nu) * kToUnsignedOps);
  hipLaunchKernelGGL(to_unsigned, Grid(nu), dim3(kBlock), 0, 0, d_u, nu, d_ul);
  HIP_OK(hipGetLastError());
  const std::vector<unsigned long long> ul = ToHost(d_ul, static_cast<size_t>(nu) * kToUnsignedOps);
  for (int i = 0; i < nu; ++i) {
    const unsigned long long want = static_cast<unsigned long long>(trunc(fmax(RefValue(unsigned_in[i]), 0.0)));
    for (int op = 0; op < kToUnsignedOps; ++op) {
      const unsigned long long got = ul[static_cast<size_t>(op) * nu + i];
      CHECK(got == want, "half -> unsigned conversion #%d (__half2{uint,ushort,ull}_{rn,rz,rd,ru}, "
            "unsigned(h)) of 0x%04x = %llu, expected %llu", op, unsigned_in[i], got, want);
      ++checked;
    }
  }
  HIP_OK(hipFree(d_u));
  HIP_OK(hipFree(d_ul));
  HIP_OK(hipFree(d_halves));
  return checked;
}

// The expected result of an ArithOp on (a, b, c), and whether a NaN's bits
// must match exactly (sign manipulation and moves).
uint16_t RefArith(int op, uint16_t a, uint16_t b, uint16_t c, bool* exact_nan) {
  *exact_nan = false;
  const double va = RefValue(a), vb = RefValue(b);
  switch (op) {
    case kHadd: case kOpAdd: case kAddAssign: return RefRound(va + vb);
    case kHsub: case kOpSub: case kSubAssign: return RefRound(va - vb);
    case kHmul: case kOpMul: case kMulAssign: return RefRound(va * vb);
    case kHdiv: case kOpDiv: case kDivAssign: return RefDiv(a, b);
    case kHfma: return RefFma(a, b, c);
    case kHaddSat: return RefClamp01(RefRound(va + vb));
    case kHsubSat: return RefClamp01(RefRound(va - vb));
    case kHmulSat: return RefClamp01(RefRound(va * vb));
    case kHfmaSat: return RefClamp01(RefFma(a, b, c));
    case kClamp01: *exact_nan = true; return RefClamp01(a);
    case kHneg: case kOpNeg: *exact_nan = true; return a ^ 0x8000;
    case kHabs: *exact_nan = true; return a & 0x7fff;
    case kOpPlus: case kPostIncValue: case kPostDecValue: *exact_nan = true; return a;
    case kPreInc: case kPostIncAfter: return RefRound(va + 1);
    case kPreDec: case kPostDecAfter: return RefRound(va - 1);
  }
  e2e::Fail(__FILE__, __LINE__, "no reference for arithmetic op %d", op);
}

int CheckArithmetic(const Triples& t) {
  static const char* const kNames[kArithOps] = {
      "__hadd", "__hsub", "__hmul", "__hdiv", "__hfma", "__hadd_sat", "__hsub_sat", "__hmul_sat", "__hfma_sat",
      "__hneg", "__habs", "__clamp_01", "operator+", "operator-", "operator*", "operator/", "unary -", "unary +",
      "+=", "-=", "*=", "/=", "++h", "h++ (value)", "h++ (after)", "--h", "h-- (value)", "h-- (after)"};
  const int n = t.size();
  unsigned short* da = ToDevice(t.a);
  unsigned short* db = ToDevice(t.b);
  unsigned short* dc = ToDevice(t.c);
  unsigned short* d_out = DeviceArray<unsigned short>(static_cast<size_t>(n) * kArithOps);
  hipLaunchKernelGGL(arithmetic, Grid(n), dim3(kBlock), 0, 0, da, db, dc, n, d_out);
  HIP_OK(hipGetLastError());
  const std::vector<unsigned short> out = ToHost(d_out, static_cast<size_t>(n) * kArithOps);
  int checked = 0;
  for (int i = 0; i < n; ++i) {
    const std::string in = Hex({t.a[i], t.b[i], t.c[i]});
    for (int op = 0; op < kArithOps; ++op) {
      bool exact_nan = false;
      const uint16_t want = RefArith(op, t.a[i], t.b[i], t.c[i], &exact_nan);
      CheckHalf(kNames[op], in.c_str(), out[static_cast<size_t>(op) * n + i], want, 0, exact_nan);
      ++checked;
    }
  }
  HIP_OK(hipFree(d_out));

  static const char* const kNames2[kArith2Ops] = {
      "__hadd2", "__hsub2", "__hmul2", "__h2div", "__hfma2", "__hadd2_sat", "__hsub2_sat", "__hmul2_sat",
      "__hfma2_sat", "__hneg2", "__habs2", "half2 +", "half2 -", "half2 *", "half2 /", "half2 unary -",
      "half2 +=", "++half2", "half2-- (after)"};
  static const int kScalarOf[kArith2Ops] = {kHadd, kHsub, kHmul, kHdiv, kHfma, kHaddSat, kHsubSat, kHmulSat,
                                            kHfmaSat, kHneg, kHabs, kHadd, kHsub, kHmul, kHdiv, kHneg, kHadd,
                                            kPreInc, kPostDecAfter};
  unsigned int* d_out2 = DeviceArray<unsigned int>(static_cast<size_t>(n) * kArith2Ops);
  hipLaunchKernelGGL(arithmetic2, Grid(n), dim3(kBlock), 0, 0, da, db, dc, n, d_out2);
  HIP_OK(hipGetLastError());
  const std::vector<unsigned int> out2 = ToHost(d_out2, static_cast<size_t>(n) * kArith2Ops);
  for (int i = 0; i < n; ++i) {
    const std::string in = Hex({t.a[i], t.b[i], t.c[i]});
    for (int op = 0; op < kArith2Ops; ++op) {
      bool exact_nan = false;
      // Lanes: x = (a, b), y = (b, c), z = (c, a).
      const uint16_t lo = RefArith(kScalarOf[op], t.a[i], t.b[i], t.c[i], &exact_nan);
      const uint16_t hi = RefArith(kScalarOf[op], t.b[i], t.c[i], t.a[i], &exact_nan);
      CheckHalf2(kNames2[op], in.c_str(), out2[static_cast<size_t>(op) * n + i], lo, hi, 0, exact_nan);
      ++checked;
    }
  }
  HIP_OK(hipFree(d_out2));
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(db));
  HIP_OK(hipFree(dc));
  return checked;
}

// HIP 5.2's relations: ordered, the `u` forms too; != and __hne are true
// for a NaN, and so are operator<= and >= (negations of > and <).
bool RefCompare(int op, uint16_t a, uint16_t b) {
  const double x = RefValue(a), y = RefValue(b);
  switch (op) {
    case kHeq: case kHequ: case kOpEq: return x == y;
    case kHne: case kHneu: case kOpNe: return !(x == y);
    case kHle: case kHleu: return x <= y;
    case kHge: case kHgeu: return x >= y;
    case kHlt: case kHltu: case kOpLt: return x < y;
    case kHgt: case kHgtu: case kOpGt: return x > y;
    case kOpLe: return !(y < x);
    case kOpGe: return !(x < y);
    case kHisnan: return isnan(x);
    case kHisinf: return isinf(x);
  }
  e2e::Fail(__FILE__, __LINE__, "no reference for comparison %d", op);
}

int CheckComparisons(const Triples& t) {
  static const char* const kNames[kCompareOps] = {
      "__heq", "__hne", "__hle", "__hge", "__hlt", "__hgt", "__hequ", "__hneu", "__hleu", "__hgeu", "__hltu",
      "__hgtu", "==", "!=", "<", ">", "<=", ">=", "__hisnan", "__hisinf"};
  const int n = t.size();
  unsigned short* da = ToDevice(t.a);
  unsigned short* db = ToDevice(t.b);
  unsigned short* dc = ToDevice(t.c);
  unsigned char* d_out = DeviceArray<unsigned char>(static_cast<size_t>(n) * kCompareOps);
  hipLaunchKernelGGL(compare, Grid(n), dim3(kBlock), 0, 0, da, db, n, d_out);
  HIP_OK(hipGetLastError());
  const std::vector<unsigned char> out = ToHost(d_out, static_cast<size_t>(n) * kCompareOps);
  int checked = 0;
  for (int i = 0; i < n; ++i) {
    for (int op = 0; op < kCompareOps; ++op) {
      const int got = out[static_cast<size_t>(op) * n + i];
      const int want = RefCompare(op, t.a[i], t.b[i]);
      CHECK(got == want, "%s(0x%04x, 0x%04x) = %d, expected %d", kNames[op], t.a[i], t.b[i], got, want);
      ++checked;
    }
  }
  HIP_OK(hipFree(d_out));

  static const char* const kNames2[kCompare2Ops] = {
      "__heq2", "__hne2", "__hle2", "__hge2", "__hlt2", "__hgt2", "__hequ2", "__hneu2", "__hleu2", "__hgeu2",
      "__hltu2", "__hgtu2", "__hisnan2", "__hisinf2", "__hbeq2", "__hbne2", "__hble2", "__hbge2", "__hblt2",
      "__hbgt2", "__hbequ2", "__hbneu2", "__hbleu2", "__hbgeu2", "__hbltu2", "__hbgtu2", "half2 ==", "half2 !=",
      "half2 <", "half2 >", "half2 <=", "half2 >="};
  // The scalar relation each lane applies (12 relations, 2 classes, then
  // the same 12 as both-lane booleans).
  static const int kLaneOp[kHbeq2] = {kHeq, kHne, kHle, kHge, kHlt, kHgt, kHeq, kHne, kHle, kHge, kHlt, kHgt,
                                      kHisnan, kHisinf};
  unsigned int* d_out2 = DeviceArray<unsigned int>(static_cast<size_t>(n) * kCompare2Ops);
  hipLaunchKernelGGL(compare2, Grid(n), dim3(kBlock), 0, 0, da, db, dc, n, d_out2);
  HIP_OK(hipGetLastError());
  const std::vector<unsigned int> out2 = ToHost(d_out2, static_cast<size_t>(n) * kCompare2Ops);
  for (int i = 0; i < n; ++i) {
    const uint16_t x[2] = {t.a[i], t.b[i]}, y[2] = {t.b[i], t.c[i]};
    const std::string in = Hex({t.a[i], t.b[i], t.c[i]});
    for (int op = 0; op < kCompare2Ops; ++op) {
      const uint32_t got = out2[static_cast<size_t>(op) * n + i];
      if (op < kCompare2Halves) {
        const uint16_t truth = op == kHisnan2 || op == kHisinf2 ? 0xbc00 : 0x3c00;  // -1.0 : 1.0
        const uint16_t lo = RefCompare(kLaneOp[op], x[0], y[0]) ? truth : 0;
        const uint16_t hi = RefCompare(kLaneOp[op], x[1], y[1]) ? truth : 0;
        CheckHalf2(kNames2[op], in.c_str(), got, lo, hi, 0, true);
      } else {
        bool want;
        if (op <= kHbgtu2) {
          const int lane_op = kLaneOp[(op - kHbeq2) % 6];
          want = RefCompare(lane_op, x[0], y[0]) && RefCompare(lane_op, x[1], y[1]);
        } else {
          const auto both_lt = [](const uint16_t* p, const uint16_t* q) {
            return RefValue(p[0]) < RefValue(q[0]) && RefValue(p[1]) < RefValue(q[1]);
          };
          const bool eq = RefValue(x[0]) == RefValue(y[0]) && RefValue(x[1]) == RefValue(y[1]);
          switch (op) {
            case kOp2Eq: want = eq; break;
            case kOp2Ne: want = !eq; break;
            case kOp2Lt: want = both_lt(x, y); break;
            case kOp2Gt: want = both_lt(y, x); break;
            case kOp2Le: want = !both_lt(y, x); break;
            default: want = !both_lt(x, y); break;
          }
        }
        CHECK(got == static_cast<uint32_t>(want), "%s(%s) = %u, expected %d", kNames2[op], in.c_str(), got, want);
      }
      ++checked;
    }
  }
  HIP_OK(hipFree(d_out2));
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(db));
  HIP_OK(hipFree(dc));
  return checked;
}

double RefMath(int op, double v) {
  switch (op) {
    case kHtrunc: return trunc(v);
    case kHceil: return ceil(v);
    case kHfloor: return floor(v);
    case kHrint: return nearbyint(v);
    case kHsqrt: return sqrt(v);
    case kHrsqrt: return 1.0 / sqrt(v);
    case kHexp: return exp(v);
    case kHexp2: return exp2(v);
    case kHexp10: return pow(10.0, v);
    case kHlog: return log(v);
    case kHlog2: return log2(v);
    case kHlog10: return log10(v);
    case kHsin: return sin(v);
    case kHcos: return cos(v);
  }
  e2e::Fail(__FILE__, __LINE__, "no reference for math op %d", op);
}
int MathUlps(int op) {
  if (op <= kHrint) return 0;
  if (op <= kHrsqrt) return 1;
  return 2;
}

int CheckMath(int* exact_out) {
  static const char* const kNames[kMathOps] = {"htrunc", "hceil", "hfloor", "hrint", "hsqrt", "hrsqrt",
                                               "hexp", "hexp2", "hexp10", "hlog", "hlog2", "hlog10", "hsin",
                                               "hcos"};
  static const char* const kNames2[kMathOps] = {"h2trunc", "h2ceil", "h2floor", "h2rint", "h2sqrt", "h2rsqrt",
                                                "h2exp", "h2exp2", "h2exp10", "h2log", "h2log2",
                                                "h2log10", "h2sin", "h2cos"};
  std::vector<unsigned short> in(kEdges, kEdges + kEdgeCount);
  std::mt19937 rng(99);
  for (int i = 0; i < 3000; ++i) in.push_back(RandomFinite(rng));
  // Values near integers and ties (0.5, 1.5, 2.5, ...) for the rounding functions.
  for (int i = -40; i <= 40; ++i) in.push_back(RefRound(i * 0.5));
  for (int i = 0; i < 300; ++i) in.push_back(RefRound((static_cast<int>(rng() % 2001) - 1000) / 64.0));
  const int n = static_cast<int>(in.size());
  unsigned short* d_in = ToDevice(in);
  unsigned short* d_out = DeviceArray<unsigned short>(static_cast<size_t>(n) * kMathOps);
  unsigned int* d_out2 = DeviceArray<unsigned int>(static_cast<size_t>(n) * kMathOps);
  hipLaunchKernelGGL(half_math, Grid(n), dim3(kBlock), 0, 0, d_in, n, d_out, d_out2);
  HIP_OK(hipGetLastError());
  const std::vector<unsigned short> out = ToHost(d_out, static_cast<size_t>(n) * kMathOps);
  const std::vector<unsigned int> out2 = ToHost(d_out2, static_cast<size_t>(n) * kMathOps);
  int checked = 0, exact = 0;
  for (int i = 0; i < n; ++i) {
    const uint16_t x = in[i], next = in[(i + 1) % n];
    for (int op = 0; op < kMathOps; ++op) {
      // hsin/hcos: |x| <= 4 (and non-finite values), where the GPU's
      // argument reduction keeps its accuracy.
      const auto in_domain = [op](uint16_t h) {
        return !(op == kHsin || op == kHcos) || !isfinite(RefValue(h)) || fabs(RefValue(h)) <= 4;
      };
      const uint16_t want = RefRound(RefMath(op, RefValue(x)));
      const uint16_t got = out[static_cast<size_t>(op) * n + i];
      if (in_domain(x)) {
        CheckHalf(kNames[op], Hex({x}).c_str(), got, want, MathUlps(op));
        exact += Matches(got, want);
        ++checked;
      }
      if (in_domain(x) && in_domain(next)) {
        const uint16_t want_hi = RefRound(RefMath(op, RefValue(next)));
        const uint32_t got2 = out2[static_cast<size_t>(op) * n + i];
        CheckHalf2(kNames2[op], Hex({x, next}).c_str(), got2, want, want_hi, MathUlps(op));
        exact += Matches(static_cast<uint16_t>(got2), want) && Matches(static_cast<uint16_t>(got2 >> 16), want_hi);
        ++checked;
      }
    }
  }
  HIP_OK(hipFree(d_in));
  HIP_OK(hipFree(d_out));
  HIP_OK(hipFree(d_out2));
  *exact_out = exact;
  return checked;
}

int CheckMoves(const Triples& t) {
  static const char* const kNames[kMoveOps] = {
      "__halves2half2", "make_half2", "__half2(h, h)", "__half2half2", "__low2half2", "__high2half2",
      "__lows2half2", "__highs2half2", "__lowhigh2highlow", "__low2half", "__high2half", "__half_as_short",
      "__half_as_ushort", "__short_as_half", "__ushort_as_half", "__ldg(__half*)", "__ldg(__half2*)",
      "__half_raw round trip", "__half2 .x/.y"};
  const int n = t.size();
  unsigned short* da = ToDevice(t.a);
  unsigned short* db = ToDevice(t.b);
  unsigned int* d_out = DeviceArray<unsigned int>(static_cast<size_t>(n) * kMoveOps);
  hipLaunchKernelGGL(moves, Grid(n), dim3(kBlock), 0, 0, da, db, n, d_out);
  HIP_OK(hipGetLastError());
  const std::vector<unsigned int> out = ToHost(d_out, static_cast<size_t>(n) * kMoveOps);
  int checked = 0;
  for (int i = 0; i < n; ++i) {
    const uint32_t a = t.a[i], b = t.b[i], na = a ^ 0x8000;
    const uint32_t x = a | b << 16;  // (a, b)
    const uint32_t want[kMoveOps] = {x, b | a << 16, x, a | a << 16, a | a << 16, b | b << 16,
                                     a | b << 16,  // lows of (a, b) and (b, -a)
                                     b | na << 16,  // highs
                                     b | a << 16, b, na,
                                     static_cast<uint32_t>(static_cast<int>(static_cast<short>(a))), b, a, b, a, x,
                                     a | a << 16, x};
    for (int op = 0; op < kMoveOps; ++op) {
      const uint32_t got = out[static_cast<size_t>(op) * n + i];
      CHECK(got == want[op], "%s(0x%04x, 0x%04x) = 0x%08x, expected 0x%08x", kNames[op], a, b, got, want[op]);
      ++checked;
    }
  }
  HIP_OK(hipFree(d_out));
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(db));
  return checked;
}

// amd_mixed_dot on values whose dot product is exact in float, so that
// every rounding order gives the same result.
int CheckMixedDot() {
  struct Case {
    float ax, ay, bx, by, c;
  };
  const Case cases[] = {{1.5f, -2.0f, 4.0f, 0.25f, 0.5f}, {0.25f, 0.5f, 0.5f, 0.25f, 0.0f},
                        {-3.0f, 2.0f, 1.0f, 1.0f, 0.25f}, {100.0f, 100.0f, 100.0f, -99.0f, 1e6f},
                        {0.0f, 0.0f, 7.0f, 9.0f, -0.0f},  {0.125f, 0.125f, 2.0f, 2.0f, 0.125f}};
  const int n = sizeof(cases) / sizeof(cases[0]);
  std::vector<unsigned short> a, b;
  std::vector<float> c;
  for (const Case& k : cases) {
    a.push_back(RefRound(k.ax));
    a.push_back(RefRound(k.ay));
    b.push_back(RefRound(k.bx));
    b.push_back(RefRound(k.by));
    c.push_back(k.c);
  }
  unsigned short* da = ToDevice(a);
  unsigned short* db = ToDevice(b);
  float* dc = ToDevice(c);
  float* d_out = DeviceArray<float>(2 * static_cast<size_t>(n));
  hipLaunchKernelGGL(mixed_dot, Grid(n), dim3(kBlock), 0, 0, da, db, dc, n, d_out);
  HIP_OK(hipGetLastError());
  const std::vector<float> out = ToHost(d_out, 2 * static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) {
    const float want = cases[i].ax * cases[i].bx + cases[i].ay * cases[i].by + cases[i].c;
    const float sat = want < 0 ? 0.0f : (want > 1 ? 1.0f : want);
    CHECK(out[2 * i] == want, "amd_mixed_dot case %d = %g, expected %g", i, static_cast<double>(out[2 * i]),
          static_cast<double>(want));
    CHECK(out[2 * i + 1] == sat, "amd_mixed_dot(saturate) case %d = %g, expected %g", i,
          static_cast<double>(out[2 * i + 1]), static_cast<double>(sat));
  }
  HIP_OK(hipFree(da));
  HIP_OK(hipFree(db));
  HIP_OK(hipFree(dc));
  HIP_OK(hipFree(d_out));
  return 2 * n;
}

}  // namespace

int main() {
  const Triples triples = MakeTriples();
  printf("[half_ops] %d conversion results match the host reference\n", CheckConversions());
  printf("[half_ops] %d arithmetic results (__half and __half2, %d input triples) match the host reference\n",
         CheckArithmetic(triples), triples.size());
  printf("[half_ops] %d comparison results match the host reference\n", CheckComparisons(triples));
  printf("[half_ops] %d move and bit-cast results match the host reference\n", CheckMoves(triples));
  int exact = 0;
  const int math = CheckMath(&exact);
  printf("[half_ops] %d math results within tolerance (%d bit-exact; 0 ulp for rounding functions, 1 for "
         "sqrt/rsqrt, 2 for exp/log/sin/cos)\n", math, exact);
  printf("[half_ops] %d amd_mixed_dot results match\n", CheckMixedDot());
  return e2e::Finish("half_ops");
}

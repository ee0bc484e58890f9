// Twin test program: HIP's integer and bit intrinsics over a table of
// inputs (twin_bits_slots.h). sim_twin_test runs the kernel through the twin
// and compares every result with a host reference written from HIP's
// documentation and the device code HIP 5.2's headers compile to.
#include <hip/hip_runtime.h>

#include <type_traits>

#include "twin_bits_slots.h"

namespace {

template <typename T>
__device__ unsigned long long Widen(T value) {
  return static_cast<unsigned long long>(value);
}

template <typename A, typename B>
constexpr bool kSame = std::is_same<A, B>::value;

}  // namespace

__global__ void bits(const twin_bits::Case* cases, unsigned long long* out, int n) {
  using namespace twin_bits;
  // The signatures HIP 5.2 declares (hipcc checks them against HIP's
  // headers, the twin against its prelude).
  static_assert(kSame<decltype(__popc(0u)), unsigned int> && kSame<decltype(__popcll(0ull)), unsigned int>, "");
  static_assert(kSame<decltype(__clz(0)), int> && kSame<decltype(__clzll(0ll)), int>, "");
  static_assert(kSame<decltype(__ffs(0)), unsigned int> && kSame<decltype(__ffs(0u)), unsigned int>, "");
  static_assert(kSame<decltype(__ffsll(0ll)), unsigned int> && kSame<decltype(__ffsll(0ull)), unsigned int>, "");
  static_assert(kSame<decltype(__lastbit_u32_u64(0)), unsigned int>, "");
  static_assert(kSame<decltype(__fns32(0, 0, 0)), int32_t> && kSame<decltype(__fns64(0, 0, 0)), int32_t>, "");
  static_assert(kSame<decltype(__bitextract_u64(0, 0, 0)), uint64_t>, "");
  static_assert(kSame<decltype(__mul24(0, 0)), int> && kSame<decltype(__umul24(0u, 0u)), int>, "");
  static_assert(kSame<decltype(__mul64hi(0ll, 0ll)), long long>, "");
  static_assert(kSame<decltype(__umul64hi(0ull, 0ull)), unsigned long long>, "");
  static_assert(kSame<decltype(__hadd(0, 0)), unsigned int> && kSame<decltype(__rhadd(0, 0)), int>, "");
  static_assert(kSame<decltype(__sad(0, 0, 0u)), unsigned int>, "");

  const int i = static_cast<int>(blockIdx.x * blockDim.x + threadIdx.x);
  if (i >= n) return;
  const Case c = cases[i];
  const unsigned int a = static_cast<unsigned int>(c.a), b = static_cast<unsigned int>(c.b);
  const int sa = static_cast<int>(a), sb = static_cast<int>(b);
  unsigned long long* o = out + static_cast<size_t>(i) * kSlotCount;
  o[kPopc] = Widen(__popc(a));
  o[kPopcll] = Widen(__popcll(c.a));
  o[kClz] = Widen(__clz(sa));
  o[kClzll] = Widen(__clzll(static_cast<long long>(c.a)));
  o[kFfsInt] = Widen(__ffs(sa));
  o[kFfsUnsigned] = Widen(__ffs(a));
  o[kFfsllLongLong] = Widen(__ffsll(static_cast<long long>(c.a)));
  o[kFfsllUnsigned] = Widen(__ffsll(c.a));
  o[kBrev] = Widen(__brev(a));
  o[kBrevll] = Widen(__brevll(c.a));
  o[kLastbitU32U64] = Widen(__lastbit_u32_u64(c.a));
  o[kFns32] = Widen(__fns32(c.a, c.base, c.offset));
  o[kFns64] = Widen(__fns64(c.a, c.base, c.offset));
  o[kBytePerm] = Widen(__byte_perm(a, b, c.s));
  o[kBitextractU32] = Widen(__bitextract_u32(a, c.s, c.w));
  o[kBitextractU64] = Widen(__bitextract_u64(c.a, c.s, c.w));
  o[kBitinsertU32] = Widen(__bitinsert_u32(a, b, c.s, c.w));
  o[kBitinsertU64] = Widen(__bitinsert_u64(c.a, c.b, c.s, c.w));
  o[kFunnelshiftL] = Widen(__funnelshift_l(a, b, c.s));
  o[kFunnelshiftLc] = Widen(__funnelshift_lc(a, b, c.s));
  o[kFunnelshiftR] = Widen(__funnelshift_r(a, b, c.s));
  o[kFunnelshiftRc] = Widen(__funnelshift_rc(a, b, c.s));
  o[kMul24] = Widen(__mul24(sa, sb));
  o[kUmul24] = Widen(__umul24(a, b));
  o[kMulhi] = Widen(__mulhi(sa, sb));
  o[kUmulhi] = Widen(__umulhi(a, b));
  o[kMul64hi] = Widen(__mul64hi(static_cast<long long>(c.a), static_cast<long long>(c.b)));
  o[kUmul64hi] = Widen(__umul64hi(c.a, c.b));
  o[kSad] = Widen(__sad(sa, sb, c.s));
  o[kUsad] = Widen(__usad(a, b, c.s));
  o[kHadd] = Widen(__hadd(sa, sb));
  o[kRhadd] = Widen(__rhadd(sa, sb));
  o[kUhadd] = Widen(__uhadd(a, b));
  o[kUrhadd] = Widen(__urhadd(a, b));
}

int main() {
  const twin_bits::Case one = {0x0123456789ABCDEFull, 0xFEDCBA9876543210ull, 0x3210, 8, 4, 3};
  twin_bits::Case* cases = nullptr;
  unsigned long long* out = nullptr;
  if (hipMalloc(&cases, sizeof(one)) != hipSuccess || hipMalloc(&out, twin_bits::kSlotCount * 8) != hipSuccess)
    return 1;
  if (hipMemcpy(cases, &one, sizeof(one), hipMemcpyHostToDevice) != hipSuccess) return 1;
  bits<<<1, 64>>>(cases, out, 1);
  return hipDeviceSynchronize() == hipSuccess ? 0 : 1;
}

// A host reference for twin_bits.hip's kernel (sim_twin_test): what each of
// HIP's integer and bit intrinsics returns for a row of inputs.
//
// Written bit by bit from HIP's documentation of each intrinsic, not from
// the twin's code. Where the code object computes something else (HIP
// 5.2's amd_device_functions.h and the device libraries, which the twin
// follows), the reference models the device and says so.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>

#include "tests/sim_twins/twin_bits_slots.h"

namespace twin_bits {
namespace reference {

inline uint32_t Bit(uint64_t x, int i) { return static_cast<uint32_t>(x >> i) & 1; }

inline unsigned Popc(uint64_t x, int n) {
  unsigned c = 0;
  for (int i = 0; i < n; ++i) c += Bit(x, i);
  return c;
}

// Leading zeros of the n-bit x (n for 0).
inline int Clz(uint64_t x, int n) {
  int c = 0;
  for (int i = n - 1; i >= 0 && Bit(x, i) == 0; --i) ++c;
  return c;
}

// 1 + the position of the lowest set bit of the n-bit x; 0 for 0.
inline unsigned Ffs(uint64_t x, int n) {
  for (int i = 0; i < n; ++i)
    if (Bit(x, i)) return i + 1;
  return 0;
}

inline uint64_t Brev(uint64_t x, int n) {
  uint64_t r = 0;
  for (int i = 0; i < n; ++i) r |= static_cast<uint64_t>(Bit(x, i)) << (n - 1 - i);
  return r;
}

// The position of the lowest set bit; ~0 when there is none.
inline unsigned LastbitU32U64(uint64_t x) { return x == 0 ? ~0u : Ffs(x, 64) - 1; }

// __fns64(mask, base, offset): the position of the offset-th set bit
// counting up from base (offset > 0) or down from it (offset < 0), or base
// itself if its bit is set (offset 0); -1 if there is none. The device takes
// base modulo 64, and with offset 0 tests `1 << base` as a 32-bit int (bit
// base mod 32, which for 31 sign-extends to bits 31-63) at or above base mod
// 64: base 31 finds the lowest set bit from 31 up, bases 32 to 62 find none.
// HIP 5.2's __fns32 is the same function.
inline int32_t Fns(uint64_t mask, uint32_t base, int32_t offset) {
  const int from = static_cast<int>(base % 64);
  if (offset == 0) {
    const int tested = static_cast<int>(base % 32);
    for (int p = from; p < 64; ++p)
      if (Bit(mask, p) && (p == tested || (tested == 31 && p > 31))) return p;
    return -1;
  }
  int64_t n = offset > 0 ? offset : -static_cast<int64_t>(offset);
  const int step = offset > 0 ? 1 : -1;
  for (int p = from; p >= 0 && p < 64; p += step)
    if (Bit(mask, p) && --n == 0) return p;
  return -1;
}

// Byte i of the result is byte (s >> 4i) & 7 of the eight bytes y:x, x's
// lowest byte being byte 0.
inline unsigned BytePerm(uint32_t x, uint32_t y, uint32_t s) {
  uint8_t bytes[8];
  for (int i = 0; i < 4; ++i)
    bytes[i] = static_cast<uint8_t>(x >> (8 * i)), bytes[4 + i] = static_cast<uint8_t>(y >> (8 * i));
  unsigned r = 0;
  for (int i = 0; i < 4; ++i) r |= static_cast<unsigned>(bytes[(s >> (4 * i)) & 7]) << (8 * i);
  return r;
}

// `width` bits of the n-bit src from bit `offset`, both taken modulo n;
// width 0 gives 0. A field that runs past bit n-1 is, on the device, read
// n bits lower (the header's shift pair with its count modulo n): result
// bit j is src bit j + offset - n, 0 where that is below bit 0.
inline uint64_t BitExtract(uint64_t src, uint32_t offset, uint32_t width, int n) {
  const int o = static_cast<int>(offset % n), w = static_cast<int>(width % n);
  uint64_t r = 0;
  for (int j = 0; j < w; ++j) {
    const int at = o + w > n ? j + o - n : j + o;
    if (at >= 0) r |= static_cast<uint64_t>(Bit(src, at)) << j;
  }
  return r;
}

// The n-bit src0 with `width` bits from `offset` (both modulo n) replaced by
// src1's low bits; bits that would land past bit n-1 are not inserted.
inline uint64_t BitInsert(uint64_t src0, uint64_t src1, uint32_t offset, uint32_t width, int n) {
  const int o = static_cast<int>(offset % n), w = static_cast<int>(width % n);
  uint64_t r = src0;
  for (int j = 0; j < w && o + j < n; ++j)
    r = (r & ~(1ull << (o + j))) | static_cast<uint64_t>(Bit(src1, j)) << (o + j);
  return r;
}

// hi:lo shifted left by `by` (at most 32): its high half; shifted right: its low half.
inline unsigned FunnelLeft(uint32_t lo, uint32_t hi, uint32_t by) {
  return static_cast<unsigned>((((static_cast<uint64_t>(hi) << 32) | lo) << by) >> 32);
}
inline unsigned FunnelRight(uint32_t lo, uint32_t hi, uint32_t by) {
  return static_cast<unsigned>(((static_cast<uint64_t>(hi) << 32) | lo) >> by);
}

inline int64_t SignExtend24(uint32_t x) {
  return (x & 0x800000) ? static_cast<int64_t>(x & 0xFFFFFF) - 0x1000000 : x & 0xFFFFFF;
}

// The low 32 bits of the product of the low 24 bits, signed (__mul24) or
// unsigned (__umul24, which HIP declares to return int).
inline int Mul24(uint32_t x, uint32_t y) {
  return static_cast<int32_t>(static_cast<uint32_t>(SignExtend24(x) * SignExtend24(y)));
}
inline int Umul24(uint32_t x, uint32_t y) {
  return static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(x & 0xFFFFFF) * (y & 0xFFFFFF)));
}

// |x - y| + z, modulo 2^32.
inline unsigned AbsDiffAdd(int64_t x, int64_t y, uint32_t z) {
  return static_cast<unsigned>((x > y ? x - y : y - x) + z);
}

// HIP documents __hadd(x, y) as (x + y) >> 1 and __rhadd as (x + y + 1) >> 1,
// without overflow. HIP 5.2's device code returns `(z & 0x7FFFFFFF) >> 1 ||
// (z & 0x8000000)` for z the 32-bit sum (plus 1): 1 unless z's low 31 bits
// are 0 or 1. __uhadd and __urhadd add in 32 bits: the sum wraps.
inline unsigned HalfAddFlag(uint32_t z) { return (z & 0x7FFFFFFF) > 1; }

}  // namespace reference

// The row's results, slot by slot, widened to 64 bits from each intrinsic's
// return type as the kernel widens them.
inline std::array<uint64_t, kSlotCount> Expected(const Case& c) {
  using namespace reference;
  const uint32_t a = static_cast<uint32_t>(c.a), b = static_cast<uint32_t>(c.b);
  const int32_t sa = static_cast<int32_t>(a), sb = static_cast<int32_t>(b);
  std::array<uint64_t, kSlotCount> r{};
  auto widen = [](auto v) { return static_cast<uint64_t>(v); };
  r[kPopc] = widen(Popc(a, 32));
  r[kPopcll] = widen(Popc(c.a, 64));
  r[kClz] = widen(Clz(a, 32));
  r[kClzll] = widen(Clz(c.a, 64));
  r[kFfsInt] = r[kFfsUnsigned] = widen(Ffs(a, 32));
  r[kFfsllLongLong] = r[kFfsllUnsigned] = widen(Ffs(c.a, 64));
  r[kBrev] = widen(static_cast<unsigned>(Brev(a, 32)));
  r[kBrevll] = Brev(c.a, 64);
  r[kLastbitU32U64] = widen(LastbitU32U64(c.a));
  r[kFns32] = r[kFns64] = widen(Fns(c.a, c.base, c.offset));
  r[kBytePerm] = widen(BytePerm(a, b, c.s));
  r[kBitextractU32] = BitExtract(a, c.s, c.w, 32);
  r[kBitextractU64] = BitExtract(c.a, c.s, c.w, 64);
  r[kBitinsertU32] = BitInsert(a, b, c.s, c.w, 32);
  r[kBitinsertU64] = BitInsert(c.a, c.b, c.s, c.w, 64);
  r[kFunnelshiftL] = widen(FunnelLeft(a, b, c.s % 32));
  r[kFunnelshiftLc] = widen(FunnelLeft(a, b, std::min(c.s, 32u)));
  r[kFunnelshiftR] = widen(FunnelRight(a, b, c.s % 32));
  r[kFunnelshiftRc] = widen(FunnelRight(a, b, std::min(c.s, 32u)));
  r[kMul24] = widen(Mul24(a, b));
  r[kUmul24] = widen(Umul24(a, b));
  r[kMulhi] = widen(static_cast<int32_t>((static_cast<int64_t>(sa) * sb) >> 32));
  r[kUmulhi] = widen(static_cast<uint32_t>((static_cast<uint64_t>(a) * b) >> 32));
  r[kMul64hi] =
      widen(static_cast<int64_t>((static_cast<__int128>(static_cast<int64_t>(c.a)) * static_cast<int64_t>(c.b)) >> 64));
  r[kUmul64hi] = widen(static_cast<uint64_t>((static_cast<unsigned __int128>(c.a) * c.b) >> 64));
  r[kSad] = widen(AbsDiffAdd(sa, sb, c.s));
  r[kUsad] = widen(AbsDiffAdd(a, b, c.s));
  r[kHadd] = widen(HalfAddFlag(a + b));
  r[kRhadd] = widen(static_cast<int>(HalfAddFlag(a + b + 1)));
  r[kUhadd] = widen((a + b) >> 1);
  r[kUrhadd] = widen((a + b + 1) >> 1);
  return r;
}

}  // namespace twin_bits

// Integer and bit intrinsics for kernel twins (part of hipr_twin_prelude.h).
//
// Every integer intrinsic HIP 5.2 defines as a device function in
// hip/amd_detail/amd_device_functions.h, with the signature declared there
// (note the return types: __popc, __ffs and __hadd return unsigned int,
// __umul24 returns int) and the result that header, with the ROCm device
// libraries' __ockl_* functions it calls, computes on the device. Where that
// differs from what HIP's documentation says, the twin does what the code
// object does:
//   - __hadd and __rhadd return 0 or 1: the header computes
//     `(z & 0x7FFFFFFF) >> 1 || (z & 0x8000000)` for z = x + y (+ 1), not
//     the average;
//   - __uhadd and __urhadd add in 32 bits, so the sum wraps;
//   - __fns32 is __fns64 (it takes a 64-bit mask), and with offset 0 and
//     base 31 it tests bits 31 to 63: its `1 << base` is an int, which
//     sign-extends to the 64-bit mask.
// Where the header's C++ is undefined (a shift by the operand's width or
// more, a signed overflow), the twin does what the gfx90a instructions do:
// shift counts are taken modulo the width (v_lshlrev_b32/_b64, v_alignbit_b32)
// and arithmetic wraps. __lastbit_u32_u32 and the __mbcnt/__hip_ds_* lane
// functions are not here: HIP 5.2 has not got the first, the others are
// warp-level.
#ifndef HIPR_TWIN_BITS_H_
#define HIPR_TWIN_BITS_H_

#include <stdint.h>

namespace hipr_twin {

inline uint32_t Shl32(uint32_t x, uint32_t n) { return x << (n & 31); }
inline uint32_t Shr32(uint32_t x, uint32_t n) { return x >> (n & 31); }
inline uint64_t Shl64(uint64_t x, uint64_t n) { return x << (n & 63); }
inline uint64_t Shr64(uint64_t x, uint64_t n) { return x >> (n & 63); }

// __builtin_amdgcn_alignbit(hi, lo, shift): the low 32 bits of {hi:lo} >> (shift mod 32).
inline uint32_t AlignBit(uint32_t hi, uint32_t lo, uint32_t shift) {
  return static_cast<uint32_t>(((static_cast<uint64_t>(hi) << 32) | lo) >> (shift & 31));
}

// The header's z & 0x7FFFFFFF >> 1 || z & 0x8000000 (sic: bit 27).
inline uint32_t HalfAddFlag(uint32_t z) { return ((z & 0x7FFFFFFFu) >> 1) != 0 || (z & 0x8000000u) != 0; }

// __fns64: the offset-th set bit of `mask` counting up from bit `base`
// (offset > 0) or down from it (offset < 0), `base` included, or -1; offset
// 0 asks for bit `base` itself, through the int-typed one-bit mask described
// above. Out-of-range shifts are taken modulo the width, as on the device,
// and offset INT_MIN, whose count does not fit the header's int, ends at
// the last bit (0 counting down), as the device code's search does.
inline int32_t FindNthSet(uint64_t mask, uint32_t base, int32_t offset) {
  uint64_t bits;
  uint32_t n;
  if (offset >= 0) {
    bits = mask & Shl64(~0ull, base);
    if (offset == 0) bits &= static_cast<uint64_t>(static_cast<int64_t>(static_cast<int32_t>(Shl32(1, base))));
    n = offset == 0 ? 1u : static_cast<uint32_t>(offset);
  } else {
    // Counting down is counting up in the bit-reversed mask.
    bits = __builtin_bitreverse64(mask) & Shl64(~0ull, 63u - base);
    n = 0u - static_cast<uint32_t>(offset);
  }
  if (static_cast<int32_t>(n) < 0) return offset < 0 ? 0 : 63;
  if (static_cast<uint32_t>(__builtin_popcountll(bits)) < n) return -1;
  for (; n > 1; --n) bits &= bits - 1;  // Drop the lower set bits.
  const int32_t found = __builtin_ctzll(bits);
  return offset < 0 ? 63 - found : found;
}

}  // namespace hipr_twin

// ---- Counting, finding and reversing bits ------------------------------------------

inline unsigned int __popc(unsigned int x) { return static_cast<unsigned int>(__builtin_popcount(x)); }
inline unsigned int __popcll(unsigned long long x) { return static_cast<unsigned int>(__builtin_popcountll(x)); }
inline int __clz(int x) { return x == 0 ? 32 : __builtin_clz(static_cast<unsigned int>(x)); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll(static_cast<unsigned long long>(x)); }
inline unsigned int __ffs(unsigned int x) { return x == 0 ? 0u : static_cast<unsigned int>(__builtin_ctz(x)) + 1; }
inline unsigned int __ffs(int x) { return __ffs(static_cast<unsigned int>(x)); }
inline unsigned int __ffsll(unsigned long long x) {
  return x == 0 ? 0u : static_cast<unsigned int>(__builtin_ctzll(x)) + 1;
}
inline unsigned int __ffsll(long long x) { return __ffsll(static_cast<unsigned long long>(x)); }
inline unsigned int __lastbit_u32_u64(uint64_t x) {
  return x == 0 ? 0xFFFFFFFFu : static_cast<unsigned int>(__builtin_ctzll(x));
}
inline int32_t __fns64(uint64_t mask, uint32_t base, int32_t offset) {
  return ::hipr_twin::FindNthSet(mask, base, offset);
}
inline int32_t __fns32(uint64_t mask, uint32_t base, int32_t offset) {
  return ::hipr_twin::FindNthSet(mask, base, offset);
}
inline unsigned int __brev(unsigned int x) { return __builtin_bitreverse32(x); }
inline unsigned long long __brevll(unsigned long long x) { return __builtin_bitreverse64(x); }

// ---- Bit fields, byte permutes, funnel shifts -----------------------------------

inline unsigned int __bitextract_u32(unsigned int src0, unsigned int src1, unsigned int src2) {
  const uint32_t offset = src1 & 31, width = src2 & 31;
  return width == 0 ? 0 : ::hipr_twin::Shr32(::hipr_twin::Shl32(src0, 32 - offset - width), 32 - width);
}
inline uint64_t __bitextract_u64(uint64_t src0, unsigned int src1, unsigned int src2) {
  const uint64_t offset = src1 & 63, width = src2 & 63;
  return width == 0 ? 0 : ::hipr_twin::Shr64(::hipr_twin::Shl64(src0, 64 - offset - width), 64 - width);
}
inline unsigned int __bitinsert_u32(unsigned int src0, unsigned int src1, unsigned int src2, unsigned int src3) {
  const uint32_t offset = src2 & 31, width = src3 & 31;
  const uint32_t mask = (1u << width) - 1;
  return (src0 & ~(mask << offset)) | ((src1 & mask) << offset);
}
inline uint64_t __bitinsert_u64(uint64_t src0, uint64_t src1, unsigned int src2, unsigned int src3) {
  const uint64_t offset = src2 & 63, width = src3 & 63;
  const uint64_t mask = (1ull << width) - 1;
  return (src0 & ~(mask << offset)) | ((src1 & mask) << offset);
}

// Bytes 0-3 are x's, 4-7 y's; each result byte is the one the low three
// bits of a selector nibble name (s bits 0-2, 4-6, 8-10, 12-14).
inline unsigned int __byte_perm(unsigned int x, unsigned int y, unsigned int s) {
  const uint64_t bytes = (static_cast<uint64_t>(y) << 32) | x;
  unsigned int result = 0;
  for (int i = 0; i < 4; ++i)
    result |= static_cast<unsigned int>((bytes >> (8 * ((s >> (4 * i)) & 7))) & 0xFF) << (8 * i);
  return result;
}

inline unsigned int __funnelshift_l(unsigned int lo, unsigned int hi, unsigned int shift) {
  const uint32_t s = shift & 31;
  return s == 0 ? hi : ::hipr_twin::AlignBit(hi, lo, 32 - s);
}
inline unsigned int __funnelshift_lc(unsigned int lo, unsigned int hi, unsigned int shift) {
  const uint32_t s = shift >= 32 ? 32 : shift;
  return s == 0 ? hi : ::hipr_twin::AlignBit(hi, lo, 32 - s);
}
inline unsigned int __funnelshift_r(unsigned int lo, unsigned int hi, unsigned int shift) {
  return ::hipr_twin::AlignBit(hi, lo, shift);
}
inline unsigned int __funnelshift_rc(unsigned int lo, unsigned int hi, unsigned int shift) {
  return shift >= 32 ? hi : ::hipr_twin::AlignBit(hi, lo, shift);
}

// ---- Multiplies, averages, absolute differences -----------------------------------

inline int __mul24(int x, int y) {
  // Sign-extended low 24 bits; the low 32 bits of the product.
  const int64_t a = static_cast<int32_t>(static_cast<uint32_t>(x) << 8) >> 8;
  const int64_t b = static_cast<int32_t>(static_cast<uint32_t>(y) << 8) >> 8;
  return static_cast<int>(static_cast<uint32_t>(a * b));
}
inline int __umul24(unsigned int x, unsigned int y) { return static_cast<int>((x & 0xFFFFFFu) * (y & 0xFFFFFFu)); }
inline int __mulhi(int x, int y) { return static_cast<int>((static_cast<int64_t>(x) * y) >> 32); }
inline unsigned int __umulhi(unsigned int x, unsigned int y) {
  return static_cast<unsigned int>((static_cast<uint64_t>(x) * y) >> 32);
}
inline long long __mul64hi(long long x, long long y) {
  return static_cast<long long>((static_cast<__int128>(x) * y) >> 64);
}
inline unsigned long long __umul64hi(unsigned long long x, unsigned long long y) {
  return static_cast<unsigned long long>((static_cast<unsigned __int128>(x) * y) >> 64);
}

inline unsigned int __hadd(int x, int y) {
  return ::hipr_twin::HalfAddFlag(static_cast<uint32_t>(x) + static_cast<uint32_t>(y));
}
inline int __rhadd(int x, int y) {
  return static_cast<int>(::hipr_twin::HalfAddFlag(static_cast<uint32_t>(x) + static_cast<uint32_t>(y) + 1));
}
inline unsigned int __uhadd(unsigned int x, unsigned int y) { return (x + y) >> 1; }
inline unsigned int __urhadd(unsigned int x, unsigned int y) { return (x + y + 1) >> 1; }

inline unsigned int __sad(int x, int y, unsigned int z) {
  const uint32_t ux = static_cast<uint32_t>(x), uy = static_cast<uint32_t>(y);
  return x > y ? ux - uy + z : uy - ux + z;
}
inline unsigned int __usad(unsigned int x, unsigned int y, unsigned int z) { return (x > y ? x - y : y - x) + z; }

#endif  // HIPR_TWIN_BITS_H_

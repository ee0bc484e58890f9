// The inputs and result slots of twin_bits.hip's kernel, shared with
// sim_twin_test.cc (plain C++).
#pragma once

namespace twin_bits {

// One row of inputs; every intrinsic is applied to every row.
struct Case {
  unsigned long long a, b;  // Operands; the 32-bit intrinsics take the low halves.
  unsigned int s;           // Shift, bit-field offset, byte selector, __sad's addend.
  unsigned int w;           // Bit-field width.
  unsigned int base;        // __fns32/__fns64 base.
  int offset;               // __fns32/__fns64 offset.
};

// One result per intrinsic and row, widened to 64 bits from the intrinsic's
// return type (so signed results are sign-extended).
enum Slot {
  kPopc,
  kPopcll,
  kClz,
  kClzll,
  kFfsInt,
  kFfsUnsigned,
  kFfsllLongLong,
  kFfsllUnsigned,
  kBrev,
  kBrevll,
  kLastbitU32U64,
  kFns32,
  kFns64,
  kBytePerm,
  kBitextractU32,
  kBitextractU64,
  kBitinsertU32,
  kBitinsertU64,
  kFunnelshiftL,
  kFunnelshiftLc,
  kFunnelshiftR,
  kFunnelshiftRc,
  kMul24,
  kUmul24,
  kMulhi,
  kUmulhi,
  kMul64hi,
  kUmul64hi,
  kSad,
  kUsad,
  kHadd,
  kRhadd,
  kUhadd,
  kUrhadd,
  kSlotCount
};

inline constexpr const char* kSlotNames[kSlotCount] = {"__popc",
                                                       "__popcll",
                                                       "__clz",
                                                       "__clzll",
                                                       "__ffs(int)",
                                                       "__ffs(unsigned)",
                                                       "__ffsll(ll)",
                                                       "__ffsll(ull)",
                                                       "__brev",
                                                       "__brevll",
                                                       "__lastbit_u32_u64",
                                                       "__fns32",
                                                       "__fns64",
                                                       "__byte_perm",
                                                       "__bitextract_u32",
                                                       "__bitextract_u64",
                                                       "__bitinsert_u32",
                                                       "__bitinsert_u64",
                                                       "__funnelshift_l",
                                                       "__funnelshift_lc",
                                                       "__funnelshift_r",
                                                       "__funnelshift_rc",
                                                       "__mul24",
                                                       "__umul24",
                                                       "__mulhi",
                                                       "__umulhi",
                                                       "__mul64hi",
                                                       "__umul64hi",
                                                       "__sad",
                                                       "__usad",
                                                       "__hadd",
                                                       "__rhadd",
                                                       "__uhadd",
                                                       "__urhadd"};

}  // namespace twin_bits

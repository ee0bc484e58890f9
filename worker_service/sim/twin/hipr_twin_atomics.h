// HIP atomics for kernel twins (part of hipr_twin_prelude.h).
//
// Blocks run in parallel on several OS threads, so every atomic is a real
// host atomic read-modify-write (sequentially consistent; on x86-64 a
// locked instruction). Floating-point forms without a native instruction
// use a compare-and-swap loop on the bit pattern. Each returns the old value.
#ifndef HIPR_TWIN_ATOMICS_H_
#define HIPR_TWIN_ATOMICS_H_

#include <string.h>

#include <type_traits>

namespace hipr_twin {

constexpr int kOrder = __ATOMIC_SEQ_CST;

// Applies `f(old)` atomically to *p; works for any 4- or 8-byte type.
template <typename T, typename F>
inline T AtomicUpdate(T* p, F f) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "atomics on 4- and 8-byte types only");
  using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
  Bits* bits = reinterpret_cast<Bits*>(p);
  Bits expected = __atomic_load_n(bits, __ATOMIC_RELAXED);
  for (;;) {
    T old;
    memcpy(&old, &expected, sizeof(T));
    T next = f(old);
    Bits desired;
    memcpy(&desired, &next, sizeof(T));
    if (__atomic_compare_exchange_n(bits, &expected, desired, /*weak=*/true, kOrder, __ATOMIC_RELAXED))
      return old;
  }
}

}  // namespace hipr_twin

#define HIPR_TWIN_ATOMIC_INT(T)                                                                       \
  inline T atomicAdd(T* p, T v) { return __atomic_fetch_add(p, v, ::hipr_twin::kOrder); }            \
  inline T atomicSub(T* p, T v) { return __atomic_fetch_sub(p, v, ::hipr_twin::kOrder); }            \
  inline T atomicExch(T* p, T v) { return __atomic_exchange_n(p, v, ::hipr_twin::kOrder); }          \
  inline T atomicAnd(T* p, T v) { return __atomic_fetch_and(p, v, ::hipr_twin::kOrder); }            \
  inline T atomicOr(T* p, T v) { return __atomic_fetch_or(p, v, ::hipr_twin::kOrder); }              \
  inline T atomicXor(T* p, T v) { return __atomic_fetch_xor(p, v, ::hipr_twin::kOrder); }            \
  inline T atomicMin(T* p, T v) {                                                                    \
    return ::hipr_twin::AtomicUpdate(p, [v](T old) { return v < old ? v : old; });                   \
  }                                                                                                  \
  inline T atomicMax(T* p, T v) {                                                                    \
    return ::hipr_twin::AtomicUpdate(p, [v](T old) { return v > old ? v : old; });                   \
  }                                                                                                  \
  inline T atomicCAS(T* p, T compare, T v) {                                                         \
    __atomic_compare_exchange_n(p, &compare, v, false, ::hipr_twin::kOrder, ::hipr_twin::kOrder);    \
    return compare;                                                                                  \
  }
HIPR_TWIN_ATOMIC_INT(int)
HIPR_TWIN_ATOMIC_INT(unsigned int)
HIPR_TWIN_ATOMIC_INT(long long)
HIPR_TWIN_ATOMIC_INT(unsigned long long)
#undef HIPR_TWIN_ATOMIC_INT

#define HIPR_TWIN_ATOMIC_FLOAT(T)                                                                     \
  inline T atomicAdd(T* p, T v) {                                                                    \
    return ::hipr_twin::AtomicUpdate(p, [v](T old) { return old + v; });                             \
  }                                                                                                  \
  inline T atomicSub(T* p, T v) {                                                                    \
    return ::hipr_twin::AtomicUpdate(p, [v](T old) { return old - v; });                             \
  }                                                                                                  \
  inline T atomicExch(T* p, T v) {                                                                   \
    return ::hipr_twin::AtomicUpdate(p, [v](T) { return v; });                                       \
  }                                                                                                  \
  inline T atomicMin(T* p, T v) {                                                                    \
    return ::hipr_twin::AtomicUpdate(p, [v](T old) { return v < old ? v : old; });                   \
  }                                                                                                  \
  inline T atomicMax(T* p, T v) {                                                                    \
    return ::hipr_twin::AtomicUpdate(p, [v](T old) { return v > old ? v : old; });                   \
  }
HIPR_TWIN_ATOMIC_FLOAT(float)
HIPR_TWIN_ATOMIC_FLOAT(double)
#undef HIPR_TWIN_ATOMIC_FLOAT

// ((old >= limit) ? 0 : old + 1) and (((old == 0) || (old > limit)) ? limit : old - 1).
inline unsigned int atomicInc(unsigned int* p, unsigned int limit) {
  return ::hipr_twin::AtomicUpdate(p, [limit](unsigned int old) { return old >= limit ? 0u : old + 1; });
}
inline unsigned int atomicDec(unsigned int* p, unsigned int limit) {
  return ::hipr_twin::AtomicUpdate(
      p, [limit](unsigned int old) { return (old == 0 || old > limit) ? limit : old - 1; });
}

// Scoped and "no return" variants behave like the plain ones here.
#define HIPR_TWIN_ATOMIC_ALIAS(alias, plain)                          \
  template <typename... A>                                            \
  inline auto alias(A... a) -> decltype(plain(a...)) {               \
    return plain(a...);                                               \
  }
HIPR_TWIN_ATOMIC_ALIAS(atomicAdd_system, atomicAdd)
HIPR_TWIN_ATOMIC_ALIAS(atomicSub_system, atomicSub)
HIPR_TWIN_ATOMIC_ALIAS(atomicExch_system, atomicExch)
HIPR_TWIN_ATOMIC_ALIAS(atomicMin_system, atomicMin)
HIPR_TWIN_ATOMIC_ALIAS(atomicMax_system, atomicMax)
HIPR_TWIN_ATOMIC_ALIAS(atomicAnd_system, atomicAnd)
HIPR_TWIN_ATOMIC_ALIAS(atomicOr_system, atomicOr)
HIPR_TWIN_ATOMIC_ALIAS(atomicXor_system, atomicXor)
HIPR_TWIN_ATOMIC_ALIAS(atomicCAS_system, atomicCAS)
HIPR_TWIN_ATOMIC_ALIAS(atomicAddNoRet, atomicAdd)
HIPR_TWIN_ATOMIC_ALIAS(unsafeAtomicAdd, atomicAdd)
HIPR_TWIN_ATOMIC_ALIAS(safeAtomicAdd, atomicAdd)
#undef HIPR_TWIN_ATOMIC_ALIAS

#endif  // HIPR_TWIN_ATOMICS_H_

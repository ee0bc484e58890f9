// HIP vector types for kernel twins (part of hipr_twin_prelude.h).
//
// HIP_vector_type<T, N> with members x, y, z, w, the sizes and alignments
// the device compiler uses (N = 1: sizeof(T); 2 and 4: N * sizeof(T);
// 3: alignof(T), so float3 is 12 bytes), which matter because they decide
// kernel argument layouts; the template's name matches HIP's so kernel
// names mangle alike. Componentwise arithmetic with vectors and scalars,
// compound assignment, equality, and make_<type><N>() helpers.
#ifndef HIPR_TWIN_VECTOR_TYPES_H_
#define HIPR_TWIN_VECTOR_TYPES_H_

#include <stdint.h>

#include <type_traits>

#include "twin_abi.h"

template <typename T, unsigned int N>
struct HIP_vector_type;

template <typename T>
struct alignas(sizeof(T)) HIP_vector_type<T, 1> {
  T x;
  HIP_vector_type() = default;
  constexpr HIP_vector_type(T x_) : x(x_) {}
};

template <typename T>
struct alignas(2 * sizeof(T)) HIP_vector_type<T, 2> {
  T x, y;
  HIP_vector_type() = default;
  constexpr explicit HIP_vector_type(T s) : x(s), y(s) {}
  constexpr HIP_vector_type(T x_, T y_) : x(x_), y(y_) {}
};

template <typename T>
struct alignas(alignof(T)) HIP_vector_type<T, 3> {
  T x, y, z;
  HIP_vector_type() = default;
  constexpr explicit HIP_vector_type(T s) : x(s), y(s), z(s) {}
  constexpr HIP_vector_type(T x_, T y_, T z_) : x(x_), y(y_), z(z_) {}
  // uint3 t = threadIdx;
  template <typename D, typename = std::enable_if_t<std::is_same<D, HiprTwinDim3>::value &&
                                                    std::is_same<T, unsigned int>::value>>
  constexpr HIP_vector_type(const D& d) : x(d.x), y(d.y), z(d.z) {}
};

template <typename T>
struct alignas(4 * sizeof(T)) HIP_vector_type<T, 4> {
  T x, y, z, w;
  HIP_vector_type() = default;
  constexpr explicit HIP_vector_type(T s) : x(s), y(s), z(s), w(s) {}
  constexpr HIP_vector_type(T x_, T y_, T z_, T w_) : x(x_), y(y_), z(z_), w(w_) {}
};

namespace hipr_twin {

template <typename T, unsigned N, typename F>
inline HIP_vector_type<T, N> Zip(const HIP_vector_type<T, N>& a, const HIP_vector_type<T, N>& b, F f) {
  HIP_vector_type<T, N> r{};
  r.x = f(a.x, b.x);
  if constexpr (N >= 2) r.y = f(a.y, b.y);
  if constexpr (N >= 3) r.z = f(a.z, b.z);
  if constexpr (N >= 4) r.w = f(a.w, b.w);
  return r;
}

template <typename T, unsigned N>
inline HIP_vector_type<T, N> Splat(T s) {
  HIP_vector_type<T, N> r{};
  r.x = s;
  if constexpr (N >= 2) r.y = s;
  if constexpr (N >= 3) r.z = s;
  if constexpr (N >= 4) r.w = s;
  return r;
}

template <typename U>
using IfScalar = std::enable_if_t<std::is_arithmetic<U>::value, int>;

}  // namespace hipr_twin

#define HIPR_TWIN_VECTOR_OP(op)                                                                        \
  template <typename T, unsigned N>                                                                    \
  inline HIP_vector_type<T, N> operator op(const HIP_vector_type<T, N>& a, const HIP_vector_type<T, N>& b) { \
    return ::hipr_twin::Zip(a, b, [](T p, T q) { return static_cast<T>(p op q); });                    \
  }                                                                                                    \
  template <typename T, unsigned N, typename U, ::hipr_twin::IfScalar<U> = 0>                          \
  inline HIP_vector_type<T, N> operator op(const HIP_vector_type<T, N>& a, U s) {                      \
    return a op ::hipr_twin::Splat<T, N>(static_cast<T>(s));                                           \
  }                                                                                                    \
  template <typename T, unsigned N, typename U, ::hipr_twin::IfScalar<U> = 0>                          \
  inline HIP_vector_type<T, N> operator op(U s, const HIP_vector_type<T, N>& a) {                      \
    return ::hipr_twin::Splat<T, N>(static_cast<T>(s)) op a;                                           \
  }                                                                                                    \
  template <typename T, unsigned N>                                                                    \
  inline HIP_vector_type<T, N>& operator op##=(HIP_vector_type<T, N>& a, const HIP_vector_type<T, N>& b) { \
    return a = a op b;                                                                                 \
  }                                                                                                    \
  template <typename T, unsigned N, typename U, ::hipr_twin::IfScalar<U> = 0>                          \
  inline HIP_vector_type<T, N>& operator op##=(HIP_vector_type<T, N>& a, U s) {                        \
    return a = a op ::hipr_twin::Splat<T, N>(static_cast<T>(s));                                       \
  }
HIPR_TWIN_VECTOR_OP(+)
HIPR_TWIN_VECTOR_OP(-)
HIPR_TWIN_VECTOR_OP(*)
HIPR_TWIN_VECTOR_OP(/)
HIPR_TWIN_VECTOR_OP(%)
HIPR_TWIN_VECTOR_OP(&)
HIPR_TWIN_VECTOR_OP(|)
HIPR_TWIN_VECTOR_OP(^)
HIPR_TWIN_VECTOR_OP(<<)
HIPR_TWIN_VECTOR_OP(>>)
#undef HIPR_TWIN_VECTOR_OP

template <typename T, unsigned N>
inline HIP_vector_type<T, N> operator-(const HIP_vector_type<T, N>& a) {
  return ::hipr_twin::Splat<T, N>(T(0)) - a;
}
template <typename T, unsigned N>
inline bool operator==(const HIP_vector_type<T, N>& a, const HIP_vector_type<T, N>& b) {
  bool eq = a.x == b.x;
  if constexpr (N >= 2) eq = eq && a.y == b.y;
  if constexpr (N >= 3) eq = eq && a.z == b.z;
  if constexpr (N >= 4) eq = eq && a.w == b.w;
  return eq;
}
template <typename T, unsigned N>
inline bool operator!=(const HIP_vector_type<T, N>& a, const HIP_vector_type<T, N>& b) {
  return !(a == b);
}

#define HIPR_TWIN_VECTOR_FAMILY(name, T)                                                              \
  typedef HIP_vector_type<T, 1> name##1;                                                              \
  typedef HIP_vector_type<T, 2> name##2;                                                              \
  typedef HIP_vector_type<T, 3> name##3;                                                              \
  typedef HIP_vector_type<T, 4> name##4;                                                              \
  inline constexpr name##1 make_##name##1(T x) { return name##1(x); }                                 \
  inline constexpr name##2 make_##name##2(T x, T y) { return name##2(x, y); }                         \
  inline constexpr name##3 make_##name##3(T x, T y, T z) { return name##3(x, y, z); }                 \
  inline constexpr name##4 make_##name##4(T x, T y, T z, T w) { return name##4(x, y, z, w); }
HIPR_TWIN_VECTOR_FAMILY(char, char)
HIPR_TWIN_VECTOR_FAMILY(uchar, unsigned char)
HIPR_TWIN_VECTOR_FAMILY(short, short)
HIPR_TWIN_VECTOR_FAMILY(ushort, unsigned short)
HIPR_TWIN_VECTOR_FAMILY(int, int)
HIPR_TWIN_VECTOR_FAMILY(uint, unsigned int)
HIPR_TWIN_VECTOR_FAMILY(long, long)
HIPR_TWIN_VECTOR_FAMILY(ulong, unsigned long)
HIPR_TWIN_VECTOR_FAMILY(longlong, long long)
HIPR_TWIN_VECTOR_FAMILY(ulonglong, unsigned long long)
HIPR_TWIN_VECTOR_FAMILY(float, float)
HIPR_TWIN_VECTOR_FAMILY(double, double)
#undef HIPR_TWIN_VECTOR_FAMILY

#endif  // HIPR_TWIN_VECTOR_TYPES_H_

// Texture fetches for kernel twins (part of hipr_twin_prelude.h).
//
// A hipTextureObject_t on the sim is the device address of the
// HiprTwinTexture the sim wrote when the client created the texture
// (twin_abi.h); device memory is mapped at its device addresses in the
// session process, so the descriptor and the texels are read in place.
//
// What a GPU's sampler does, for the textures hipr creates (linear memory,
// pitched 2-D memory, 2-D arrays):
// - A fetch yields four 32-bit lanes: the element's channels (a float
//   channel as its bits, a half as the float it holds, an integer as its
//   sign- or zero-extended value), missing channels 0 and a missing alpha 1.
//   With read mode normalized-float, 8- and 16-bit integers become floats in
//   [0, 1] (unsigned) or [-1, 1] (signed). The requested type takes its
//   components from the lanes, reinterpreting the bits, as HIP's mapFrom.
// - tex1Dfetch reads element `x` of the texture's memory (row after row);
//   outside it every lane is 0.
// - tex1D/tex2D scale normalized coordinates by the extent, then sample the
//   nearest texel (point) or blend the four around (linear: texel centres
//   at +0.5, exact float weights where hardware uses 8-bit fractions).
//   Address modes apply per texel: clamp, border (the border colour), and,
//   with normalized coordinates only, wrap and mirror (otherwise clamp, as
//   CUDA documents).
// - Texture references (`texture<T, dim, readMode>` variables, deprecated
//   HIP): the variable holds HIP's textureReference, whose textureObject
//   the client's hipBindTexture* / hipTexRefSet* wrote into the device copy;
//   a fetch through it is a fetch through that object. As in HIP, the
//   result type is T, or float (floatN) for 8- and 16-bit integer channels
//   read as normalized floats.
// Layered, cubemap, 3-D, gather and LOD fetches are not provided: hipr does
// not create textures they could read, and a twin that calls one does not
// compile (the program then builds no twin and its kernels report
// hipErrorNoBinaryForGpu on the sim).
#ifndef HIPR_TWIN_TEXTURE_H_
#define HIPR_TWIN_TEXTURE_H_

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "hipr_twin_vector_types.h"
#include "twin_abi.h"

// As HIP's texture_types.h, so kernels taking one mangle alike.
struct __hip_texture;
typedef struct __hip_texture* hipTextureObject_t;

namespace hipr_twin {

struct TexLanes {
  uint32_t v[4];
};

inline uint32_t FloatBits(float f) {
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
}

inline float BitsFloat(uint32_t u) {
  float f;
  memcpy(&f, &u, sizeof f);
  return f;
}

inline float HalfToFloat(uint16_t h) {
  const uint32_t sign = (h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1f;
  const uint32_t man = h & 0x3ffu;
  if (exp == 0) {  // Zero or subnormal: man * 2^-24.
    const float f = ldexpf(static_cast<float>(man), -24);
    return sign ? -f : f;
  }
  if (exp == 31) return BitsFloat(sign | 0x7f800000u | (man << 13));  // Inf or NaN.
  return BitsFloat(sign | ((exp + 112) << 23) | (man << 13));
}

// The lanes of texel (x, y), which must lie inside the texture.
inline TexLanes LoadTexel(const HiprTwinTexture& t, uint64_t x, uint64_t y) {
  const uint32_t bytes = t.channel_bits / 8;
  const auto* p = reinterpret_cast<const uint8_t*>(t.address + y * t.pitch + x * bytes * t.channels);
  const bool normalize = t.read_mode == 1 && t.channel_kind != 2 && t.channel_bits < 32;
  TexLanes out{{0, 0, 0, normalize || t.channel_kind == 2 ? FloatBits(1.0f) : 1u}};
  for (uint32_t c = 0; c < t.channels; ++c) {
    const uint8_t* q = p + c * bytes;
    uint32_t lane = 0;
    if (t.channel_kind == 2) {  // Float: 16 or 32 bits.
      if (bytes == 2) {
        uint16_t h;
        memcpy(&h, q, 2);
        lane = FloatBits(HalfToFloat(h));
      } else {
        memcpy(&lane, q, 4);
      }
    } else if (t.channel_kind == 0) {  // Signed.
      int32_t s = 0;
      if (bytes == 1) s = static_cast<int8_t>(*q);
      if (bytes == 2) {
        int16_t v;
        memcpy(&v, q, 2);
        s = v;
      }
      if (bytes == 4) memcpy(&s, q, 4);
      if (normalize) {
        const float max = bytes == 1 ? 127.0f : 32767.0f;
        lane = FloatBits(fmaxf(static_cast<float>(s) / max, -1.0f));
      } else {
        lane = static_cast<uint32_t>(s);
      }
    } else {  // Unsigned.
      uint32_t u = 0;
      if (bytes == 1) u = *q;
      if (bytes == 2) {
        uint16_t v;
        memcpy(&v, q, 2);
        u = v;
      }
      if (bytes == 4) memcpy(&u, q, 4);
      lane = normalize ? FloatBits(static_cast<float>(u) / (bytes == 1 ? 255.0f : 65535.0f)) : u;
    }
    out.v[c] = lane;
  }
  return out;
}

inline const HiprTwinTexture* TextureOf(hipTextureObject_t object) {
  const auto* t = reinterpret_cast<const HiprTwinTexture*>(object);
  return t != nullptr && t->magic == HIPR_TWIN_TEXTURE_MAGIC ? t : nullptr;
}

// Where integer coordinate `i` of an axis of `n` texels reads from; false:
// outside (border).
inline bool Address(const HiprTwinTexture& t, int axis, int64_t i, uint64_t n, uint64_t* out) {
  const int64_t size = static_cast<int64_t>(n);
  int mode = t.address_mode[axis];
  if ((mode == 0 || mode == 2) && !t.normalized_coords) mode = 1;  // Wrap and mirror need normalized coordinates.
  switch (mode) {
    case 0:  // Wrap.
      i %= size;
      if (i < 0) i += size;
      break;
    case 2: {  // Mirror: period 2n, the second half reversed.
      int64_t m = i % (2 * size);
      if (m < 0) m += 2 * size;
      i = m < size ? m : 2 * size - 1 - m;
      break;
    }
    case 3:  // Border.
      if (i < 0 || i >= size) return false;
      break;
    default:  // Clamp.
      i = i < 0 ? 0 : (i >= size ? size - 1 : i);
      break;
  }
  *out = static_cast<uint64_t>(i);
  return true;
}

inline TexLanes BorderLanes(const HiprTwinTexture& t) {
  TexLanes out{};
  const bool floats = t.channel_kind == 2 || (t.read_mode == 1 && t.channel_bits < 32);
  for (int c = 0; c < 4; ++c)
    out.v[c] = floats ? FloatBits(t.border_color[c]) : static_cast<uint32_t>(static_cast<int32_t>(t.border_color[c]));
  return out;
}

inline TexLanes Texel(const HiprTwinTexture& t, int64_t x, int64_t y) {
  uint64_t ax = 0;
  uint64_t ay = 0;
  if (!Address(t, 0, x, t.width, &ax) || !Address(t, 1, y, t.height, &ay)) return BorderLanes(t);
  return LoadTexel(t, ax, ay);
}

// Samples at (u, v) (v ignored for 1-D: the texture's single row).
inline TexLanes Sample(hipTextureObject_t object, float u, float v, bool two_d) {
  const HiprTwinTexture* t = TextureOf(object);
  if (t == nullptr) return TexLanes{};
  float x = t->normalized_coords ? u * static_cast<float>(t->width) : u;
  float y = two_d ? (t->normalized_coords ? v * static_cast<float>(t->height) : v) : 0.5f;
  if (t->filter_mode != 1) return Texel(*t, static_cast<int64_t>(floorf(x)), static_cast<int64_t>(floorf(y)));
  // Linear: blend the texels whose centres surround (x, y).
  x -= 0.5f;
  y -= 0.5f;
  const float x0 = floorf(x);
  const float y0 = floorf(y);
  const float a = x - x0;
  const float b = two_d ? y - y0 : 0.0f;
  const auto ix = static_cast<int64_t>(x0);
  const auto iy = two_d ? static_cast<int64_t>(y0) : 0;
  const TexLanes t00 = Texel(*t, ix, iy);
  const TexLanes t10 = Texel(*t, ix + 1, iy);
  const TexLanes t01 = two_d ? Texel(*t, ix, iy + 1) : t00;
  const TexLanes t11 = two_d ? Texel(*t, ix + 1, iy + 1) : t10;
  TexLanes out{};
  for (int c = 0; c < 4; ++c) {
    const float f = (1 - a) * (1 - b) * BitsFloat(t00.v[c]) + a * (1 - b) * BitsFloat(t10.v[c]) +
                    (1 - a) * b * BitsFloat(t01.v[c]) + a * b * BitsFloat(t11.v[c]);
    out.v[c] = FloatBits(f);
  }
  return out;
}

inline TexLanes Fetch(hipTextureObject_t object, int x) {
  const HiprTwinTexture* t = TextureOf(object);
  if (t == nullptr || x < 0 || static_cast<uint64_t>(x) >= t->width * t->height) return TexLanes{};
  return LoadTexel(*t, static_cast<uint64_t>(x) % t->width, static_cast<uint64_t>(x) / t->width);
}

template <typename C>
inline C LaneAs(uint32_t lane) {
  if constexpr (std::is_same<C, float>::value) {
    return BitsFloat(lane);
  } else {
    return static_cast<C>(lane);
  }
}

// The channel types HIP's fetches take: char, unsigned char, short,
// unsigned short, int, unsigned int, float, and their 1-, 2- and 4-vectors.
template <typename T>
struct TexChannel {
  static constexpr bool value = std::is_same<T, char>::value || std::is_same<T, unsigned char>::value ||
                                std::is_same<T, signed char>::value || std::is_same<T, short>::value ||
                                std::is_same<T, unsigned short>::value || std::is_same<T, int>::value ||
                                std::is_same<T, unsigned int>::value || std::is_same<T, float>::value;
  static T From(const TexLanes& l) { return LaneAs<T>(l.v[0]); }
};

template <typename C, unsigned N>
struct TexChannel<HIP_vector_type<C, N>> {
  static constexpr bool value = TexChannel<C>::value && (N == 1 || N == 2 || N == 4);
  static HIP_vector_type<C, N> From(const TexLanes& l) {
    HIP_vector_type<C, N> r{};
    C* c = &r.x;
    for (unsigned i = 0; i < N; ++i) c[i] = LaneAs<C>(l.v[i]);
    return r;
  }
};

}  // namespace hipr_twin

template <typename T, typename std::enable_if<::hipr_twin::TexChannel<T>::value>::type* = nullptr>
inline T tex1Dfetch(hipTextureObject_t object, int x) {
  return ::hipr_twin::TexChannel<T>::From(::hipr_twin::Fetch(object, x));
}

template <typename T, typename std::enable_if<::hipr_twin::TexChannel<T>::value>::type* = nullptr>
inline void tex1Dfetch(T* out, hipTextureObject_t object, int x) {
  *out = tex1Dfetch<T>(object, x);
}

template <typename T, typename std::enable_if<::hipr_twin::TexChannel<T>::value>::type* = nullptr>
inline T tex1D(hipTextureObject_t object, float x) {
  return ::hipr_twin::TexChannel<T>::From(::hipr_twin::Sample(object, x, 0.0f, false));
}

template <typename T, typename std::enable_if<::hipr_twin::TexChannel<T>::value>::type* = nullptr>
inline void tex1D(T* out, hipTextureObject_t object, float x) {
  *out = tex1D<T>(object, x);
}

template <typename T, typename std::enable_if<::hipr_twin::TexChannel<T>::value>::type* = nullptr>
inline T tex2D(hipTextureObject_t object, float x, float y) {
  return ::hipr_twin::TexChannel<T>::From(::hipr_twin::Sample(object, x, y, true));
}

template <typename T, typename std::enable_if<::hipr_twin::TexChannel<T>::value>::type* = nullptr>
inline void tex2D(T* out, hipTextureObject_t object, float x, float y) {
  *out = tex2D<T>(object, x, y);
}

// ---- Texture references ----------------------------------------------------------

// HIP's enums and texture types, by value (texture_types.h,
// driver_types.h), so that a declaration `texture<uchar, hipTextureType2D,
// hipReadModeNormalizedFloat> t;` reads alike in a twin.
enum hipTextureAddressMode { hipAddressModeWrap = 0, hipAddressModeClamp = 1, hipAddressModeMirror = 2,
                             hipAddressModeBorder = 3 };
enum hipTextureFilterMode { hipFilterModePoint = 0, hipFilterModeLinear = 1 };
enum hipTextureReadMode { hipReadModeElementType = 0, hipReadModeNormalizedFloat = 1 };
enum hipChannelFormatKind { hipChannelFormatKindSigned = 0, hipChannelFormatKindUnsigned = 1,
                            hipChannelFormatKindFloat = 2, hipChannelFormatKindNone = 3 };
#define hipTextureType1D 0x01
#define hipTextureType2D 0x02
#define hipTextureType3D 0x03

struct hipChannelFormatDesc {
  int x, y, z, w;
  enum hipChannelFormatKind f;
};

// HIP's layout: the runtime copies the host's struct, byte for byte, into
// the variable's device memory.
struct textureReference {
  int normalized = 0;
  enum hipTextureReadMode readMode = hipReadModeElementType;
  enum hipTextureFilterMode filterMode = hipFilterModePoint;
  enum hipTextureAddressMode addressMode[3] = {hipAddressModeWrap, hipAddressModeWrap, hipAddressModeWrap};
  struct hipChannelFormatDesc channelDesc = {0, 0, 0, 0, hipChannelFormatKindSigned};
  int sRGB = 0;
  unsigned int maxAnisotropy = 0;
  enum hipTextureFilterMode mipmapFilterMode = hipFilterModePoint;
  float mipmapLevelBias = 0;
  float minMipmapLevelClamp = 0;
  float maxMipmapLevelClamp = 0;
  hipTextureObject_t textureObject = nullptr;
  int numChannels = 0;
  int format = 0;
};
static_assert(sizeof(textureReference) == 88 && offsetof(textureReference, textureObject) == 72,
              "textureReference must keep HIP's layout");

// The device copy's initial bytes: the twin's storage is constant-initialised
// (the host constructor's settings are the client's to copy in when binding).
template <class T, int texType = hipTextureType1D, enum hipTextureReadMode mode = hipReadModeElementType>
struct texture : public textureReference {
  constexpr texture() = default;
  constexpr texture(int, enum hipTextureFilterMode, enum hipTextureAddressMode) {}
};

namespace hipr_twin {

template <typename C>
struct NormalizedChannel {
  static constexpr bool value = std::is_same<C, char>::value || std::is_same<C, signed char>::value ||
                                std::is_same<C, unsigned char>::value || std::is_same<C, short>::value ||
                                std::is_same<C, unsigned short>::value;
  using type = float;
};

template <typename C, unsigned N>
struct NormalizedChannel<HIP_vector_type<C, N>> {
  static constexpr bool value = NormalizedChannel<C>::value;
  using type = HIP_vector_type<float, N>;
};

// HIP's __hip_tex_ret_t: what a fetch through texture<T, dim, mode> returns.
template <typename T, hipTextureReadMode M, bool = M == hipReadModeNormalizedFloat && NormalizedChannel<T>::value>
struct TexRet {
  using type = T;
};

template <typename T, hipTextureReadMode M>
struct TexRet<T, M, true> {
  using type = typename NormalizedChannel<T>::type;
};

}  // namespace hipr_twin

template <typename T, hipTextureReadMode M>
inline typename ::hipr_twin::TexRet<T, M>::type tex1Dfetch(texture<T, hipTextureType1D, M> t, int x) {
  using R = typename ::hipr_twin::TexRet<T, M>::type;
  return ::hipr_twin::TexChannel<R>::From(::hipr_twin::Fetch(t.textureObject, x));
}

template <typename T, hipTextureReadMode M>
inline typename ::hipr_twin::TexRet<T, M>::type tex1D(texture<T, hipTextureType1D, M> t, float x) {
  using R = typename ::hipr_twin::TexRet<T, M>::type;
  return ::hipr_twin::TexChannel<R>::From(::hipr_twin::Sample(t.textureObject, x, 0.0f, false));
}

template <typename T, hipTextureReadMode M>
inline typename ::hipr_twin::TexRet<T, M>::type tex2D(texture<T, hipTextureType2D, M> t, float x, float y) {
  using R = typename ::hipr_twin::TexRet<T, M>::type;
  return ::hipr_twin::TexChannel<R>::From(::hipr_twin::Sample(t.textureObject, x, y, true));
}

#endif  // HIPR_TWIN_TEXTURE_H_

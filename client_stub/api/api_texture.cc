// Texture object entry points (hipCreateTextureObject and the driver
// API's hipTexObject*); texture_objects.h keeps the objects.
#include "client_stub/api/api_common.h"
#include "client_stub/api/texture_objects.h"
#include "client_stub/textures/hip_arrays.h"

using namespace hipr;
using namespace hipr::client;


namespace {

// ---- The driver API's forms ------------------------------------------------------

hipError_t ToRuntime(const HIP_RESOURCE_DESC& d, hipResourceDesc* out) {
  *out = hipResourceDesc{};
  if (d.flags != 0) return hipErrorInvalidValue;
  switch (d.resType) {
    case HIP_RESOURCE_TYPE_ARRAY:
      out->resType = hipResourceTypeArray;
      out->res.array.array = d.res.array.hArray;
      return hipSuccess;
    case HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY:
      out->resType = hipResourceTypeMipmappedArray;
      out->res.mipmap.mipmap = d.res.mipmap.hMipmappedArray;
      return hipSuccess;
    case HIP_RESOURCE_TYPE_LINEAR:
      out->resType = hipResourceTypeLinear;
      out->res.linear.devPtr = d.res.linear.devPtr;
      out->res.linear.sizeInBytes = d.res.linear.sizeInBytes;
      return ChannelDescOf(d.res.linear.format, d.res.linear.numChannels, &out->res.linear.desc)
                 ? hipSuccess
                 : hipErrorInvalidValue;
    case HIP_RESOURCE_TYPE_PITCH2D:
      out->resType = hipResourceTypePitch2D;
      out->res.pitch2D.devPtr = d.res.pitch2D.devPtr;
      out->res.pitch2D.width = d.res.pitch2D.width;
      out->res.pitch2D.height = d.res.pitch2D.height;
      out->res.pitch2D.pitchInBytes = d.res.pitch2D.pitchInBytes;
      return ChannelDescOf(d.res.pitch2D.format, d.res.pitch2D.numChannels, &out->res.pitch2D.desc)
                 ? hipSuccess
                 : hipErrorInvalidValue;
    default: return hipErrorInvalidValue;
  }
}

void ToDriver(const hipResourceDesc& r, HIP_RESOURCE_DESC* out) {
  *out = HIP_RESOURCE_DESC{};
  size_t element = 0;
  hipArray_Format format = HIP_AD_FORMAT_UNSIGNED_INT8;
  unsigned channels = 0;
  switch (r.resType) {
    case hipResourceTypeArray:
      out->resType = HIP_RESOURCE_TYPE_ARRAY;
      out->res.array.hArray = r.res.array.array;
      break;
    case hipResourceTypeMipmappedArray:
      out->resType = HIP_RESOURCE_TYPE_MIPMAPPED_ARRAY;
      out->res.mipmap.hMipmappedArray = r.res.mipmap.mipmap;
      break;
    case hipResourceTypeLinear:
      out->resType = HIP_RESOURCE_TYPE_LINEAR;
      out->res.linear.devPtr = r.res.linear.devPtr;
      out->res.linear.sizeInBytes = r.res.linear.sizeInBytes;
      if (ChannelLayout(r.res.linear.desc, &element, &format, &channels)) {
        out->res.linear.format = format;
        out->res.linear.numChannels = channels;
      }
      break;
    default:
      out->resType = HIP_RESOURCE_TYPE_PITCH2D;
      out->res.pitch2D.devPtr = r.res.pitch2D.devPtr;
      out->res.pitch2D.width = r.res.pitch2D.width;
      out->res.pitch2D.height = r.res.pitch2D.height;
      out->res.pitch2D.pitchInBytes = r.res.pitch2D.pitchInBytes;
      if (ChannelLayout(r.res.pitch2D.desc, &element, &format, &channels)) {
        out->res.pitch2D.format = format;
        out->res.pitch2D.numChannels = channels;
      }
      break;
  }
}

constexpr unsigned kKnownTextureFlags = HIP_TRSF_READ_AS_INTEGER | HIP_TRSF_NORMALIZED_COORDINATES | HIP_TRSF_SRGB;

hipError_t ToRuntime(const HIP_TEXTURE_DESC& d, hipTextureDesc* out) {
  if ((d.flags & ~kKnownTextureFlags) != 0) return hipErrorInvalidValue;
  *out = hipTextureDesc{};
  for (int i = 0; i < 3; ++i) out->addressMode[i] = static_cast<hipTextureAddressMode>(d.addressMode[i]);
  out->filterMode = static_cast<hipTextureFilterMode>(d.filterMode);
  // The driver API reads integers as normalized floats unless told not to.
  out->readMode = (d.flags & HIP_TRSF_READ_AS_INTEGER) != 0 ? hipReadModeElementType : hipReadModeNormalizedFloat;
  out->sRGB = (d.flags & HIP_TRSF_SRGB) != 0;
  out->normalizedCoords = (d.flags & HIP_TRSF_NORMALIZED_COORDINATES) != 0;
  out->maxAnisotropy = d.maxAnisotropy;
  out->mipmapFilterMode = static_cast<hipTextureFilterMode>(d.mipmapFilterMode);
  out->mipmapLevelBias = d.mipmapLevelBias;
  out->minMipmapLevelClamp = d.minMipmapLevelClamp;
  out->maxMipmapLevelClamp = d.maxMipmapLevelClamp;
  for (int i = 0; i < 4; ++i) out->borderColor[i] = d.borderColor[i];
  return hipSuccess;
}

void ToDriver(const hipTextureDesc& t, HIP_TEXTURE_DESC* out) {
  *out = HIP_TEXTURE_DESC{};
  for (int i = 0; i < 3; ++i) out->addressMode[i] = static_cast<HIPaddress_mode>(t.addressMode[i]);
  out->filterMode = static_cast<HIPfilter_mode>(t.filterMode);
  out->flags = (t.readMode == hipReadModeElementType ? HIP_TRSF_READ_AS_INTEGER : 0u) |
               (t.normalizedCoords != 0 ? HIP_TRSF_NORMALIZED_COORDINATES : 0u) | (t.sRGB != 0 ? HIP_TRSF_SRGB : 0u);
  out->maxAnisotropy = t.maxAnisotropy;
  out->mipmapFilterMode = static_cast<HIPfilter_mode>(t.mipmapFilterMode);
  out->mipmapLevelBias = t.mipmapLevelBias;
  out->minMipmapLevelClamp = t.minMipmapLevelClamp;
  out->maxMipmapLevelClamp = t.maxMipmapLevelClamp;
  for (int i = 0; i < 4; ++i) out->borderColor[i] = t.borderColor[i];
}

// No texture has a resource view (hipr takes none): the view getters answer
// hipErrorInvalidValue for a live texture, as there is none to return.
hipError_t NoView(hipTextureObject_t object) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  TextureRecord rec;
  if (!FindTexture(object, &rec)) return hipErrorInvalidValue;
  return hipErrorInvalidValue;
}

}  // namespace

HIPR_EXPORT hipError_t hipCreateTextureObject(hipTextureObject_t* object, const hipResourceDesc* res,
                                              const hipTextureDesc* tex, const hipResourceViewDesc* view) {
  return ApiCall("hipCreateTextureObject", [&] { return CreateTextureObject(object, res, tex, view); });
}

HIPR_EXPORT hipError_t hipDestroyTextureObject(hipTextureObject_t object) {
  return ApiCall("hipDestroyTextureObject", [&] { return DestroyTextureObject(object); });
}

HIPR_EXPORT hipError_t hipGetTextureObjectResourceDesc(hipResourceDesc* out, hipTextureObject_t object) {
  return ApiCall("hipGetTextureObjectResourceDesc", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    TextureRecord rec;
    if (out == nullptr || !FindTexture(object, &rec)) return hipErrorInvalidValue;
    *out = rec.res;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGetTextureObjectTextureDesc(hipTextureDesc* out, hipTextureObject_t object) {
  return ApiCall("hipGetTextureObjectTextureDesc", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    TextureRecord rec;
    if (out == nullptr || !FindTexture(object, &rec)) return hipErrorInvalidValue;
    *out = rec.tex;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGetTextureObjectResourceViewDesc(hipResourceViewDesc* out, hipTextureObject_t object) {
  return ApiCall("hipGetTextureObjectResourceViewDesc", [&] {
    (void)out;
    return NoView(object);
  });
}

HIPR_EXPORT hipError_t hipTexObjectCreate(hipTextureObject_t* object, const HIP_RESOURCE_DESC* res,
                                          const HIP_TEXTURE_DESC* tex, const HIP_RESOURCE_VIEW_DESC* view) {
  return ApiCall("hipTexObjectCreate", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (res == nullptr || tex == nullptr) return hipErrorInvalidValue;
    hipResourceDesc r;
    hipTextureDesc t;
    if (hipError_t e = ToRuntime(*res, &r); e != hipSuccess) return e;
    if (hipError_t e = ToRuntime(*tex, &t); e != hipSuccess) return e;
    return CreateTextureObject(object, &r, &t, view);
  });
}

HIPR_EXPORT hipError_t hipTexObjectDestroy(hipTextureObject_t object) {
  return ApiCall("hipTexObjectDestroy", [&] { return DestroyTextureObject(object); });
}

HIPR_EXPORT hipError_t hipTexObjectGetResourceDesc(HIP_RESOURCE_DESC* out, hipTextureObject_t object) {
  return ApiCall("hipTexObjectGetResourceDesc", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    TextureRecord rec;
    if (out == nullptr || !FindTexture(object, &rec)) return hipErrorInvalidValue;
    ToDriver(rec.res, out);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexObjectGetTextureDesc(HIP_TEXTURE_DESC* out, hipTextureObject_t object) {
  return ApiCall("hipTexObjectGetTextureDesc", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    TextureRecord rec;
    if (out == nullptr || !FindTexture(object, &rec)) return hipErrorInvalidValue;
    ToDriver(rec.tex, out);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexObjectGetResourceViewDesc(HIP_RESOURCE_VIEW_DESC* out, hipTextureObject_t object) {
  return ApiCall("hipTexObjectGetResourceViewDesc", [&] {
    (void)out;
    return NoView(object);
  });
}

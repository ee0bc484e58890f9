// Texture objects (hipCreateTextureObject and the driver API's
// hipTexObject*): the worker makes the device's texture over this
// session's device memory (msg::TextureCreateRequest) and its handle is the
// hipTextureObject_t kernels receive. A texture reads linear memory,
// pitched 2-D memory, or a 2-D HIP array (pitched memory in hipr,
// hip_arrays.h). Textures that need image memory (1-D, 3-D, layered and
// cubemap arrays, mipmapped arrays) and resource views are
// hipErrorNotSupported, logged once. The descriptions a texture was made
// from are kept here and answer the Get functions.
#include <mutex>
#include <unordered_map>

#include "client_stub/api/api_common.h"
#include "client_stub/textures/hip_arrays.h"
#include "protocol/thread_annotations.h"

using namespace hipr;
using namespace hipr::client;

namespace {

struct TextureRecord {
  hipResourceDesc res{};
  hipTextureDesc tex{};
};

struct Textures {
  Mutex mu;
  std::unordered_map<uint64_t, TextureRecord> live HIPR_GUARDED_BY(mu);
};

Textures& Registry() {
  static auto* t = new Textures;  // Never destroyed: used from atexit paths.
  return *t;
}

bool FindTexture(hipTextureObject_t object, TextureRecord* out) {
  Textures& t = Registry();
  MutexLock lock(t.mu);
  auto it = t.live.find(reinterpret_cast<uint64_t>(object));
  if (it == t.live.end()) return false;
  *out = it->second;
  return true;
}

// The device memory a resource names, as the request's shape and region.
hipError_t TextureMemory(const hipResourceDesc& res, msg::TextureCreateRequest* r, hipChannelFormatDesc* desc) {
  switch (res.resType) {
    case hipResourceTypeArray: {
      ArrayInfo a;
      if (res.res.array.array == nullptr || !FindArray(res.res.array.array, &a)) return hipErrorInvalidValue;
      if (a.height == 0 || a.depth != 0 || (a.flags & (hipArrayLayered | hipArrayCubemap)) != 0) {
        HIPR_LOG_ONCE(kWarn, "hipCreateTextureObject: a texture over a 1-D, 3-D, layered or cubemap array needs "
                             "image memory, and hipr keeps arrays as pitched memory (2-D arrays work); returning "
                             "hipErrorNotSupported");
        return hipErrorNotSupported;
      }
      r->shape = msg::kTexturePitch2D;
      r->memory = msg::Region{reinterpret_cast<uint64_t>(a.data), a.pitch, a.row_bytes(), a.rows()};
      *desc = a.desc;
      return hipSuccess;
    }
    case hipResourceTypeLinear:
      r->shape = msg::kTextureLinear;
      r->memory = msg::Region{reinterpret_cast<uint64_t>(res.res.linear.devPtr), res.res.linear.sizeInBytes,
                              res.res.linear.sizeInBytes, 1};
      *desc = res.res.linear.desc;
      return hipSuccess;
    case hipResourceTypePitch2D: {
      size_t element = 0;
      hipArray_Format format;
      unsigned channels = 0;
      if (!ChannelLayout(res.res.pitch2D.desc, &element, &format, &channels)) return hipErrorInvalidValue;
      if (res.res.pitch2D.width > SIZE_MAX / element) return hipErrorInvalidValue;
      r->shape = msg::kTexturePitch2D;
      r->memory = msg::Region{reinterpret_cast<uint64_t>(res.res.pitch2D.devPtr), res.res.pitch2D.pitchInBytes,
                              res.res.pitch2D.width * element, res.res.pitch2D.height};
      *desc = res.res.pitch2D.desc;
      return hipSuccess;
    }
    case hipResourceTypeMipmappedArray:
      HIPR_LOG_ONCE(kWarn, "hipCreateTextureObject: mipmapped textures need image memory, which hipr does not keep; "
                           "returning hipErrorNotSupported");
      return hipErrorNotSupported;
    default: return hipErrorInvalidValue;
  }
}

}  // namespace

namespace hipr::client {

hipError_t CreateTextureObject(hipTextureObject_t* out, const hipResourceDesc* res, const hipTextureDesc* tex,
                               const void* view) {
  Session* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (out == nullptr || res == nullptr || tex == nullptr) return hipErrorInvalidValue;
  if (view != nullptr) {
    HIPR_LOG_ONCE(kWarn, "hipCreateTextureObject: resource views are not supported by hipr; returning "
                         "hipErrorNotSupported");
    return hipErrorNotSupported;
  }
  msg::TextureCreateRequest r;
  hipChannelFormatDesc desc{};
  if (hipError_t e = TextureMemory(*res, &r, &desc); e != hipSuccess) return e;
  // The memory must be this session's, on the device it is made for.
  DeviceAllocation a;
  const uint64_t extent = r.memory.height > 1 ? (r.memory.height - 1) * r.memory.pitch + r.memory.width
                                              : r.memory.width;
  if (r.memory.height > 1 && r.memory.pitch < r.memory.width) return hipErrorInvalidPitchValue;
  if (!Client::Get().allocations().FindDevice(r.memory.address, extent, &a)) return hipErrorInvalidValue;
  r.device = a.device;
  r.channel_bits = {desc.x, desc.y, desc.z, desc.w};
  r.channel_kind = desc.f;
  for (int i = 0; i < 3; ++i) r.address_mode[i] = tex->addressMode[i];
  r.filter_mode = tex->filterMode;
  r.read_mode = tex->readMode;
  r.srgb = tex->sRGB;
  for (int i = 0; i < 4; ++i) r.border_color[i] = tex->borderColor[i];
  r.normalized_coords = tex->normalizedCoords;
  r.max_anisotropy = tex->maxAnisotropy;
  r.mipmap_filter_mode = tex->mipmapFilterMode;
  r.mipmap_level_bias = tex->mipmapLevelBias;
  r.min_mipmap_level_clamp = tex->minMipmapLevelClamp;
  r.max_mipmap_level_clamp = tex->maxMipmapLevelClamp;
  msg::TextureCreateReply reply;
  if (Status st = s->Call<wire::Op::kTextureCreate>(r, &reply); !st.ok()) return ToHipError(st);
  if (reply.error != hipSuccess) return static_cast<hipError_t>(reply.error);
  Textures& t = Registry();
  {
    MutexLock lock(t.mu);
    t.live[reply.handle] = TextureRecord{*res, *tex};
  }
  *out = reinterpret_cast<hipTextureObject_t>(reply.handle);
  return hipSuccess;
}

hipError_t DestroyTextureObject(hipTextureObject_t object) {
  Session* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (object == nullptr) return hipSuccess;
  Textures& t = Registry();
  {
    MutexLock lock(t.mu);
    if (t.live.erase(reinterpret_cast<uint64_t>(object)) == 0) return hipErrorInvalidValue;
  }
  return ToHipError(s->Post<wire::Op::kTextureDestroy>(msg::TextureDestroyRequest{reinterpret_cast<uint64_t>(object)}));
}

bool TextureResource(hipTextureObject_t object, hipResourceDesc* out) {
  TextureRecord rec;
  if (!FindTexture(object, &rec)) return false;
  *out = rec.res;
  return true;
}

}  // namespace hipr::client

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

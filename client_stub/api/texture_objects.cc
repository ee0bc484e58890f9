#include "client_stub/api/texture_objects.h"

#include <unordered_map>

#include "client_stub/api/api_common.h"
#include "client_stub/textures/hip_arrays.h"
#include "protocol/thread_annotations.h"

namespace hipr::client {
namespace {

struct Textures {
  Mutex mu;
  std::unordered_map<uint64_t, TextureRecord> live HIPR_GUARDED_BY(mu);
};

Textures& Registry() {
  static auto* t = new Textures;  // Never destroyed: used from atexit paths.
  return *t;
}


// The device memory a resource names, as the request's shape and region.
hipError_t TextureMemory(const hipResourceDesc& res, msg::TextureCreateRequest* r, hipChannelFormatDesc* desc) {
  switch (res.resType) {
    case hipResourceTypeArray: {
      ArrayInfo a;
      if (res.res.array.array == nullptr || !Arrays().FindArray(res.res.array.array, &a)) return hipErrorInvalidValue;
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

bool FindTexture(hipTextureObject_t object, TextureRecord* out) {
  Textures& t = Registry();
  MutexLock lock(t.mu);
  auto it = t.live.find(reinterpret_cast<uint64_t>(object));
  if (it == t.live.end()) return false;
  *out = it->second;
  return true;
}


hipError_t CreateTextureObject(hipTextureObject_t* out, const hipResourceDesc* res, const hipTextureDesc* tex,
                               const void* view) {
  Remote* s = LiveSession();
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
    // Each worker names its own; two workers (HIPR_SERVER lists several)
    // may pick one name.
    if (!t.live.try_emplace(reply.handle, TextureRecord{*res, *tex, r.device}).second) {
      (void)s->Post<wire::Op::kTextureDestroy>(r.device, msg::TextureDestroyRequest{reply.handle});
      HIPR_LOG_ONCE(kWarn, "hipCreateTextureObject: two workers named texture objects alike; returning "
                           "hipErrorNotSupported");
      return hipErrorNotSupported;
    }
  }
  *out = reinterpret_cast<hipTextureObject_t>(reply.handle);
  return hipSuccess;
}

hipError_t DestroyTextureObject(hipTextureObject_t object) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (object == nullptr) return hipSuccess;
  Textures& t = Registry();
  int device = 0;
  {
    MutexLock lock(t.mu);
    auto it = t.live.find(reinterpret_cast<uint64_t>(object));
    if (it == t.live.end()) return hipErrorInvalidValue;
    device = it->second.device;
    t.live.erase(it);
  }
  return ToHipError(
      s->Post<wire::Op::kTextureDestroy>(device, msg::TextureDestroyRequest{reinterpret_cast<uint64_t>(object)}));
}

bool TextureResource(hipTextureObject_t object, hipResourceDesc* out) {
  TextureRecord rec;
  if (!FindTexture(object, &rec)) return false;
  *out = rec.res;
  return true;
}

}  // namespace hipr::client

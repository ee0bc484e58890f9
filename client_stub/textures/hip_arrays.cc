#include "client_stub/textures/hip_arrays.h"

#include <algorithm>
#include <cstddef>
#include <memory>
#include <new>

#include "protocol/thread_annotations.h"

namespace hipr::client {

// The record behind a hipArray_t: 5.x's struct first (its address is the
// handle), then hipr's description.
struct ArrayRegistry::ArrayRecord {
  hipArray api{};
  ArrayInfo info;
};

struct ArrayRegistry::MipmapRecord {
  hipMipmappedArray api{};
  MipmapInfo info;
};

namespace {

constexpr unsigned kKnownArrayFlags =
    hipArrayLayered | hipArraySurfaceLoadStore | hipArrayCubemap | hipArrayTextureGather;

}  // namespace

unsigned TextureTypeOf(const ArrayInfo& a) {
  const bool layered = (a.flags & hipArrayLayered) != 0;
  if ((a.flags & hipArrayCubemap) != 0) return layered ? hipTextureTypeCubemapLayered : hipTextureTypeCubemap;
  if (layered) return a.height == 0 ? hipTextureType1DLayered : hipTextureType2DLayered;
  if (a.depth != 0) return hipTextureType3D;
  return a.height != 0 ? hipTextureType2D : hipTextureType1D;
}

bool ChannelLayout(const hipChannelFormatDesc& desc, size_t* element_bytes, hipArray_Format* format,
                   unsigned* channels) {
  const int bits[4] = {desc.x, desc.y, desc.z, desc.w};
  unsigned used = 0;
  for (int b : bits) {
    if (b == 0) break;
    ++used;
  }
  if (used == 0 || used == 3) return false;  // Images have 1, 2 or 4 channels.
  for (unsigned i = 0; i < 4; ++i) {
    if (i < used ? bits[i] != bits[0] : bits[i] != 0) return false;
  }
  const int width = bits[0];
  if (width != 8 && width != 16 && width != 32) return false;
  hipArray_Format f;
  switch (desc.f) {
    case hipChannelFormatKindUnsigned:
      f = width == 8 ? HIP_AD_FORMAT_UNSIGNED_INT8 : width == 16 ? HIP_AD_FORMAT_UNSIGNED_INT16
                                                                 : HIP_AD_FORMAT_UNSIGNED_INT32;
      break;
    case hipChannelFormatKindSigned:
      f = width == 8 ? HIP_AD_FORMAT_SIGNED_INT8 : width == 16 ? HIP_AD_FORMAT_SIGNED_INT16
                                                               : HIP_AD_FORMAT_SIGNED_INT32;
      break;
    case hipChannelFormatKindFloat:
      if (width == 8) return false;
      f = width == 16 ? HIP_AD_FORMAT_HALF : HIP_AD_FORMAT_FLOAT;
      break;
    default: return false;
  }
  *element_bytes = static_cast<size_t>(width / 8) * used;
  *format = f;
  *channels = used;
  return true;
}

bool ChannelDescOf(hipArray_Format format, unsigned channels, hipChannelFormatDesc* out) {
  if (channels != 1 && channels != 2 && channels != 4) return false;
  int bits = 0;
  hipChannelFormatKind kind = hipChannelFormatKindUnsigned;
  switch (format) {
    case HIP_AD_FORMAT_UNSIGNED_INT8: bits = 8; break;
    case HIP_AD_FORMAT_UNSIGNED_INT16: bits = 16; break;
    case HIP_AD_FORMAT_UNSIGNED_INT32: bits = 32; break;
    case HIP_AD_FORMAT_SIGNED_INT8: bits = 8, kind = hipChannelFormatKindSigned; break;
    case HIP_AD_FORMAT_SIGNED_INT16: bits = 16, kind = hipChannelFormatKindSigned; break;
    case HIP_AD_FORMAT_SIGNED_INT32: bits = 32, kind = hipChannelFormatKindSigned; break;
    case HIP_AD_FORMAT_HALF: bits = 16, kind = hipChannelFormatKindFloat; break;
    case HIP_AD_FORMAT_FLOAT: bits = 32, kind = hipChannelFormatKindFloat; break;
    default: return false;
  }
  *out = hipChannelFormatDesc{bits, channels >= 2 ? bits : 0, channels >= 4 ? bits : 0, channels >= 4 ? bits : 0,
                              kind};
  return true;
}

hipError_t CheckArrayShape(ArrayInfo* a) {
  if (!ChannelLayout(a->desc, &a->element_bytes, &a->format, &a->channels)) return hipErrorInvalidValue;
  if ((a->flags & ~kKnownArrayFlags) != 0 || a->width == 0) return hipErrorInvalidValue;
  if (a->height == 0 && a->depth != 0 && (a->flags & hipArrayLayered) == 0) return hipErrorInvalidValue;
  if ((a->flags & hipArrayLayered) != 0 && a->depth == 0) return hipErrorInvalidValue;
  if ((a->flags & hipArrayCubemap) != 0 && (a->width != a->height || a->depth == 0 || a->depth % 6 != 0 ||
                                            ((a->flags & hipArrayLayered) == 0 && a->depth != 6)))
    return hipErrorInvalidValue;
  // Far beyond any GPU's image limits, and keeps every product finite.
  constexpr size_t kLimit = size_t{1} << 20;
  if (a->width > kLimit || a->height > kLimit || a->depth > kLimit) return hipErrorInvalidValue;
  return hipSuccess;
}

hipArray_t ArrayRegistry::AddArray(ArrayInfo* a) {
  static_assert(offsetof(ArrayRecord, api) == 0);  // The handle is the record's address.
  auto* r = new ArrayRecord;  // Never freed: see the header.
  r->api.data = a->data;
  r->api.desc = a->desc;
  r->api.type = a->flags;
  r->api.width = static_cast<unsigned>(a->width);
  r->api.height = static_cast<unsigned>(a->height);
  r->api.depth = static_cast<unsigned>(a->depth);
  r->api.Format = a->format;
  r->api.NumChannels = a->channels;
  r->api.isDrv = a->driver;
  r->api.textureType = TextureTypeOf(*a);
  a->handle = &r->api;
  r->info = *a;
  MutexLock lock(mu_);
  arrays_[a->handle] = r;
  return a->handle;
}

bool ArrayRegistry::FindArray(const void* handle, ArrayInfo* out) {
  MutexLock lock(mu_);
  auto it = arrays_.find(handle);
  if (it == arrays_.end()) return false;
  *out = it->second->info;
  return true;
}

bool ArrayRegistry::RemoveArray(const void* handle, ArrayInfo* removed) {
  MutexLock lock(mu_);
  auto it = arrays_.find(handle);
  if (it == arrays_.end()) return false;
  *removed = it->second->info;
  arrays_.erase(it);
  return true;
}

ArrayInfo MipLevelShape(const ArrayInfo& base, unsigned level) {
  ArrayInfo a = base;
  a.data = nullptr;
  a.handle = nullptr;
  auto halve = [level](size_t v) { return v == 0 ? size_t{0} : std::max<size_t>(1, v >> std::min(level, 63u)); };
  a.width = halve(base.width);
  a.height = halve(base.height);
  const bool layers = (base.flags & (hipArrayLayered | hipArrayCubemap)) != 0;
  a.depth = layers ? base.depth : halve(base.depth);
  if ((base.flags & hipArrayCubemap) != 0) a.height = a.width;
  return a;
}

unsigned MaxMipLevels(const ArrayInfo& base) {
  const bool layers = (base.flags & (hipArrayLayered | hipArrayCubemap)) != 0;
  size_t largest = std::max(base.width, base.height);
  if (!layers) largest = std::max(largest, base.depth);
  unsigned levels = 1;
  while (largest > 1) {
    largest >>= 1;
    ++levels;
  }
  return levels;
}

hipMipmappedArray_t ArrayRegistry::AddMipmap(MipmapInfo* m) {
  static_assert(offsetof(MipmapRecord, api) == 0);
  auto* r = new MipmapRecord;  // Never freed: see the header.
  const ArrayInfo& s = m->shape;
  r->api.data = m->levels > 0 ? const_cast<void*>(static_cast<const void*>(m->level[0])) : nullptr;
  r->api.desc = s.desc;
  r->api.type = TextureTypeOf(s);
  r->api.width = static_cast<unsigned>(s.width);
  r->api.height = static_cast<unsigned>(s.height);
  r->api.depth = static_cast<unsigned>(s.depth);
  r->api.min_mipmap_level = 0;
  r->api.max_mipmap_level = m->levels - 1;
  r->api.flags = s.flags;
  r->api.format = s.format;
  m->handle = &r->api;
  r->info = *m;
  MutexLock lock(mu_);
  mipmaps_[m->handle] = r;
  return m->handle;
}

bool ArrayRegistry::FindMipmap(const void* handle, MipmapInfo* out) {
  MutexLock lock(mu_);
  auto it = mipmaps_.find(handle);
  if (it == mipmaps_.end()) return false;
  *out = it->second->info;
  return true;
}

bool ArrayRegistry::RemoveMipmap(const void* handle, MipmapInfo* removed) {
  MutexLock lock(mu_);
  auto it = mipmaps_.find(handle);
  if (it == mipmaps_.end()) return false;
  *removed = it->second->info;
  mipmaps_.erase(it);
  return true;
}

void ArrayRegistry::LockForFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.lock(); }
void ArrayRegistry::UnlockInParent() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.unlock(); }
void ArrayRegistry::ResetInChild() HIPR_NO_THREAD_SAFETY_ANALYSIS { new (&mu_) Mutex(); }

}  // namespace hipr::client

// HIP arrays and mipmapped arrays as hipr keeps them: pitched linear device
// memory. A GPU stores an array in an image layout of its own; hipr gives
// each array an ordinary device allocation (rows of the texture pitch
// alignment, slices of `rows` rows, one slice per depth or layer) and the
// description the runtime would keep. Copies to and from arrays are then
// rectangular copies of device memory, and a texture object over a 1-D or
// 2-D array is a texture over linear or pitched memory (api_texture.cc);
// what needs image memory (surfaces, 3-D, layered and cubemap textures)
// is refused where it is asked for.
//
// hipArray_t is the address of a record whose first member is 5.x's
// `struct hipArray` (data, desc, width, ...), so a 5.x program that reads
// those fields reads the truth; to 6.x/7.x the type is opaque. Handles are
// checked against the live set before a record is read, and a record is
// never freed (a stale handle stays unknown, never someone else's).
//
// Thread-safety: every function and method may be called from any thread.
#pragma once

#include <hip/hip_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <unordered_map>

#include "protocol/thread_annotations.h"

namespace hipr::client {

// An array's shape and memory, as the registry hands it out (a copy).
struct ArrayInfo {
  hipArray_t handle = nullptr;
  void* data = nullptr;  // The device allocation (hipr's, freed with the array).
  hipChannelFormatDesc desc{};
  hipArray_Format format = HIP_AD_FORMAT_UNSIGNED_INT8;
  unsigned channels = 0;
  size_t element_bytes = 0;
  // As asked: height 0 for 1-D, depth 0 for 1-D and 2-D (layers when
  // layered; 6 or a multiple of it for a cubemap).
  size_t width = 0, height = 0, depth = 0;
  unsigned flags = 0;  // hipArrayDefault/Layered/SurfaceLoadStore/Cubemap/TextureGather.
  bool driver = false;           // Made by hipArrayCreate/hipArray3DCreate.
  bool mipmap_level = false;     // A level of a mipmapped array: freed with it.
  int device = 0;
  size_t pitch = 0;  // Bytes from one row to the next.
  size_t rows() const { return height != 0 ? height : 1; }
  size_t slices() const { return depth != 0 ? depth : 1; }
  size_t row_bytes() const { return width * element_bytes; }
  size_t bytes() const { return pitch * rows() * slices(); }
};

// hipTextureType* of an array's shape (what 5.x's hipArray::textureType holds).
unsigned TextureTypeOf(const ArrayInfo& a);

// Checks a channel format (each used channel 8, 16 or 32 bits, all alike,
// used channels first; float channels 16 or 32 bits) and gives its element
// size, format and channel count. False for anything else.
bool ChannelLayout(const hipChannelFormatDesc& desc, size_t* element_bytes, hipArray_Format* format,
                   unsigned* channels);
// The channel format of a driver-API format and channel count (1, 2 or 4);
// false when either is not one.
bool ChannelDescOf(hipArray_Format format, unsigned channels, hipChannelFormatDesc* out);

// Checks an array's shape: width > 0; a layered array has depth > 0 layers;
// a cubemap is square with 6 faces (times the layers); known flags only.
// Fills element_bytes, format, channels. hipErrorInvalidValue when not.
hipError_t CheckArrayShape(ArrayInfo* a);

// Mipmapped arrays: level 0 has the asked extent, each next level halves
// every used dimension (at least 1; layers and cube faces stay).
struct MipmapInfo {
  hipMipmappedArray_t handle = nullptr;
  ArrayInfo shape;  // Level 0's shape (data unset).
  unsigned levels = 0;
  hipArray_t level[32] = {};
};
// The shape of `level` of a mipmap whose level 0 is `base`.
ArrayInfo MipLevelShape(const ArrayInfo& base, unsigned level);
// The most levels an extent has (down to 1 x 1 x 1).
unsigned MaxMipLevels(const ArrayInfo& base);

// The live arrays and mipmapped arrays. One per process, owned by the API
// edge (api/process_state.h).
class ArrayRegistry {
 public:
  ArrayRegistry() = default;
  ArrayRegistry(const ArrayRegistry&) = delete;
  ArrayRegistry& operator=(const ArrayRegistry&) = delete;

  // Takes a filled ArrayInfo (data, pitch set) and returns the new handle
  // (also stored in it).
  hipArray_t AddArray(ArrayInfo* a);
  bool FindArray(const void* handle, ArrayInfo* out);
  // Forgets a live array; false when it is not one.
  bool RemoveArray(const void* handle, ArrayInfo* removed);

  hipMipmappedArray_t AddMipmap(MipmapInfo* m);
  bool FindMipmap(const void* handle, MipmapInfo* out);
  bool RemoveMipmap(const void* handle, MipmapInfo* removed);

  // fork(): the lock is held across it; the child's only thread re-creates it.
  void LockForFork();
  void UnlockInParent();
  void ResetInChild();

 private:
  struct ArrayRecord;  // hip_arrays.cc; never freed (see above).
  struct MipmapRecord;
  Mutex mu_;
  std::unordered_map<const void*, ArrayRecord*> arrays_ HIPR_GUARDED_BY(mu_);  // live ones.
  std::unordered_map<const void*, MipmapRecord*> mipmaps_ HIPR_GUARDED_BY(mu_);
};

}  // namespace hipr::client

// Texture references (deprecated HIP): a `texture<T, dim, mode>` variable
// holds a textureReference, in the application's memory (the host shadow
// the compiler registers with __hipRegisterTexture) and in the code
// object's memory (what kernels read). Binding one makes a texture object
// (api_texture.cc, the worker's texture) over the memory, stores its handle
// in the reference's textureObject and copies the whole reference into the
// device variable on the calling thread's device, as ROCm's runtime does;
// a kernel's fetch through the reference is then a fetch through that
// object. The hipTexRefSet* / Get* field functions act on the host struct
// only; like ROCm, settings take effect at the next bind.
//
// References come from two places: a program's own variables (the runtime
// API; the reference's address is its registered host shadow) and
// hipModuleGetTexRef (the driver API; a reference this file allocates for a
// loaded module's variable, one per module and name, kept for the life of
// the process so that a stale pointer stays harmless). Either kind works
// with either API's bind functions.
//
// What binds: linear memory, pitched 2-D memory and 2-D HIP arrays, as for
// texture objects. Mipmapped arrays are hipErrorNotSupported (logged once
// by the texture-object path). textureReference has no border colour field;
// hipTexRefSetBorderColor's colour is kept beside the reference and used
// when it is bound.
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "client_stub/abi/abi_major.h"
#include "client_stub/api/api_common.h"
#include "client_stub/api/copy_paths.h"
#include "client_stub/api/module_symbols.h"
#include "client_stub/api/texture_objects.h"
#include "client_stub/textures/hip_arrays.h"
#include "client_stub/kernels/kernel_registry.h"
#include "protocol/thread_annotations.h"

using namespace hipr;
using namespace hipr::client;

static_assert(sizeof(textureReference) == 88, "textureReference must keep HIP's layout (the device copy is bytes)");

// ROCm >= 5.3; Debian's 5.2 headers lack it.
extern "C" hipError_t hipTexRefGetBorderColor(float* pBorderColor, const textureReference* texRef);

namespace {

// ROCm 7.0's error codes (AMD's "HIP API 7.0 changes"; Debian's 5.2 header
// lacks them): 7.x callers get them where 7.0 changed a texture
// reference's null-argument error (per_major.txt).
constexpr hipError_t kInvalidChannelDescriptor7 = static_cast<hipError_t>(911);
constexpr hipError_t kInvalidTexture7 = static_cast<hipError_t>(912);

struct BorderColor {
  float rgba[4] = {0, 0, 0, 0};
};

struct ModuleRef {
  hipModule_t module = nullptr;
  std::string name;
};

struct References {
  Mutex mu;
  // hipModuleGetTexRef's references, by (module, name), and what each names.
  std::map<std::pair<hipModule_t, std::string>, std::unique_ptr<textureReference>> owned HIPR_GUARDED_BY(mu);
  std::unordered_map<const textureReference*, ModuleRef> module_refs HIPR_GUARDED_BY(mu);
  std::unordered_map<const textureReference*, BorderColor> borders HIPR_GUARDED_BY(mu);
};

References& Refs() {
  static auto* r = new References;  // Never destroyed: used from atexit paths.
  return *r;
}

// The device variable `ref` is the host side of, on the calling thread's
// device.
hipError_t DeviceVariable(const textureReference* ref, void** address) {
  ModuleRef m;
  bool from_module = false;
  {
    References& r = Refs();
    MutexLock lock(r.mu);
    auto it = r.module_refs.find(ref);
    if (it != r.module_refs.end()) {
      m = it->second;
      from_module = true;
    }
  }
  size_t size = 0;
  hipError_t e = from_module ? ModuleGlobal(m.module, m.name.c_str(), address, &size)
                             : ResolveSymbol(ref, address, &size);
  if (e != hipSuccess) {
    HIPR_LOG_INFO("texture reference %p: no device variable for it (%s)", static_cast<const void*>(ref),
                  from_module ? "its module is unloaded" : "not a registered texture<> variable");
    return e;
  }
  if (size != sizeof(textureReference)) {
    HIPR_LOG_INFO("texture reference %p: its device variable is %zu bytes, not a textureReference",
                  static_cast<const void*>(ref), size);
    return hipErrorInvalidSymbol;
  }
  return hipSuccess;
}

// What a bind samples with: the reference's settings (ROCm's
// getTextureDesc), plus the border colour kept beside it.
hipTextureDesc DescOf(const textureReference& ref) {
  hipTextureDesc d{};
  for (int i = 0; i < 3; ++i) d.addressMode[i] = ref.addressMode[i];
  d.filterMode = ref.filterMode;
  d.readMode = ref.readMode;
  d.sRGB = ref.sRGB;
  d.normalizedCoords = ref.normalized;
  d.maxAnisotropy = ref.maxAnisotropy;
  d.mipmapFilterMode = ref.mipmapFilterMode;
  d.mipmapLevelBias = ref.mipmapLevelBias;
  d.minMipmapLevelClamp = ref.minMipmapLevelClamp;
  d.maxMipmapLevelClamp = ref.maxMipmapLevelClamp;
  References& r = Refs();
  MutexLock lock(r.mu);
  auto it = r.borders.find(&ref);
  if (it != r.borders.end()) std::memcpy(d.borderColor, it->second.rgba, sizeof d.borderColor);
  return d;
}

// Drops the texture object a reference holds, when it is one of this
// process's (a reference never bound holds null or, for a host struct the
// application filled itself, anything).
void DropObject(textureReference* ref) {
  hipResourceDesc unused;
  if (ref->textureObject != nullptr && TextureResource(ref->textureObject, &unused))
    (void)DestroyTextureObject(ref->textureObject);
  ref->textureObject = nullptr;
}

// Copies the reference into its device variable (ROCm: a blocking copy on
// the null stream).
hipError_t Publish(const textureReference* ref, void* variable) {
  return CopyMemory(variable, ref, sizeof(textureReference), hipMemcpyHostToDevice, nullptr, false);
}

// Binds `ref` to `res`. On failure the reference keeps its old binding.
hipError_t Bind(const textureReference* const_ref, const hipResourceDesc& res) {
  auto* ref = const_cast<textureReference*>(const_ref);  // The application's own memory; ROCm writes it too.
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  void* variable = nullptr;
  if (hipError_t e = DeviceVariable(ref, &variable); e != hipSuccess) return e;
  const hipTextureDesc desc = DescOf(*ref);
  hipTextureObject_t object = nullptr;
  if (hipError_t e = CreateTextureObject(&object, &res, &desc, nullptr); e != hipSuccess) return e;
  DropObject(ref);
  ref->textureObject = object;
  return Publish(ref, variable);
}

hipResourceDesc Linear(const void* ptr, const hipChannelFormatDesc& desc, size_t bytes) {
  hipResourceDesc r{};
  r.resType = hipResourceTypeLinear;
  r.res.linear.devPtr = const_cast<void*>(ptr);
  r.res.linear.desc = desc;
  r.res.linear.sizeInBytes = bytes;
  return r;
}

hipResourceDesc Pitched(const void* ptr, const hipChannelFormatDesc& desc, size_t width, size_t height,
                        size_t pitch) {
  hipResourceDesc r{};
  r.resType = hipResourceTypePitch2D;
  r.res.pitch2D.devPtr = const_cast<void*>(ptr);
  r.res.pitch2D.desc = desc;
  r.res.pitch2D.width = width;
  r.res.pitch2D.height = height;
  r.res.pitch2D.pitchInBytes = pitch;
  return r;
}

hipResourceDesc OfArray(hipArray_const_t array) {
  hipResourceDesc r{};
  r.resType = hipResourceTypeArray;
  r.res.array.array = const_cast<hipArray_t>(array);
  return r;
}

hipResourceDesc OfMipmappedArray(hipMipmappedArray_const_t array) {
  hipResourceDesc r{};
  r.resType = hipResourceTypeMipmappedArray;
  r.res.mipmap.mipmap = const_cast<hipMipmappedArray_t>(array);
  return r;
}

// The element a driver-API reference's format and channel count describe.
hipError_t FormatDesc(const textureReference& ref, hipChannelFormatDesc* out) {
  if (ref.numChannels <= 0 || !ChannelDescOf(ref.format, static_cast<unsigned>(ref.numChannels), out))
    return hipErrorInvalidValue;
  return hipSuccess;
}

// The resource a reference's texture object reads (hipErrorInvalidValue:
// not bound).
hipError_t BoundResource(const textureReference* ref, hipResourceDesc* out) {
  if (ref->textureObject == nullptr || !TextureResource(ref->textureObject, out)) return hipErrorInvalidValue;
  return hipSuccess;
}

}  // namespace

// ---- The runtime API: a program's own texture<> variables ----------------------------

HIPR_EXPORT hipError_t hipBindTexture(size_t* offset, const textureReference* tex, const void* devPtr,
                                      const hipChannelFormatDesc* desc, size_t size) {
  return ApiCall("hipBindTexture", [&] {
    if (tex == nullptr || devPtr == nullptr || desc == nullptr) return hipErrorInvalidValue;
    if (offset != nullptr) *offset = 0;  // hipr's textures start where asked; no alignment offset.
    return Bind(tex, Linear(devPtr, *desc, size));
  });
}

HIPR_EXPORT hipError_t hipBindTexture2D(size_t* offset, const textureReference* tex, const void* devPtr,
                                        const hipChannelFormatDesc* desc, size_t width, size_t height,
                                        size_t pitch) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipBindTexture2D", [&] {
    if (major >= 7 && (tex == nullptr || devPtr == nullptr)) return hipErrorNotFound;
    if (tex == nullptr || devPtr == nullptr || desc == nullptr) return hipErrorInvalidValue;
    if (offset != nullptr) *offset = 0;
    return Bind(tex, Pitched(devPtr, *desc, width, height, pitch));
  });
}

HIPR_EXPORT hipError_t hipBindTextureToArray(const textureReference* tex, hipArray_const_t array,
                                             const hipChannelFormatDesc* desc) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipBindTextureToArray", [&] {
    if (tex == nullptr || array == nullptr || desc == nullptr)
      return major >= 7 ? kInvalidChannelDescriptor7 : hipErrorInvalidValue;
    return Bind(tex, OfArray(array));
  });
}

HIPR_EXPORT hipError_t hipBindTextureToMipmappedArray(const textureReference* tex,
                                                      hipMipmappedArray_const_t mipmappedArray,
                                                      const hipChannelFormatDesc* desc) {
  return ApiCall("hipBindTextureToMipmappedArray", [&] {
    if (tex == nullptr || mipmappedArray == nullptr || desc == nullptr) return hipErrorInvalidValue;
    return Bind(tex, OfMipmappedArray(mipmappedArray));
  });
}

HIPR_EXPORT hipError_t hipUnbindTexture(const textureReference* tex) {
  return ApiCall("hipUnbindTexture", [&] {
    if (tex == nullptr) return hipErrorInvalidValue;
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    auto* ref = const_cast<textureReference*>(tex);
    DropObject(ref);
    // Unlike ROCm, the device copy is cleared too, so that a kernel that
    // reads the reference after this finds no texture rather than a
    // destroyed one.
    void* variable = nullptr;
    if (DeviceVariable(ref, &variable) == hipSuccess) return Publish(ref, variable);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGetTextureReference(const textureReference** texref, const void* symbol) {
  return ApiCall("hipGetTextureReference", [&] {
    if (texref == nullptr || symbol == nullptr) return hipErrorInvalidValue;
    RegisteredVar var;
    if (!Kernels().FindRegisteredVar(symbol, &var) || var.kind != VarKind::kTexture) return hipErrorInvalidSymbol;
    *texref = static_cast<const textureReference*>(symbol);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipGetTextureAlignmentOffset(size_t* offset, const textureReference* texref) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipGetTextureAlignmentOffset", [&] {
    if (texref == nullptr && major >= 7) return kInvalidTexture7;
    if (offset == nullptr || texref == nullptr) return hipErrorInvalidValue;
    *offset = 0;
    return hipSuccess;
  });
}

// ---- The driver API ----------------------------------------------------------------

HIPR_EXPORT hipError_t hipModuleGetTexRef(textureReference** texRef, hipModule_t hmod, const char* name) {
  return ApiCall("hipModuleGetTexRef", [&] {
    if (texRef == nullptr || name == nullptr || name[0] == '\0') return hipErrorInvalidValue;
    if (hmod == nullptr) return hipErrorInvalidResourceHandle;
    void* address = nullptr;
    size_t size = 0;
    if (hipError_t e = ModuleGlobal(hmod, name, &address, &size); e != hipSuccess) return e;
    if (size != sizeof(textureReference)) return hipErrorNotFound;  // Not a texture<> variable.
    References& r = Refs();
    MutexLock lock(r.mu);
    auto& owned = r.owned[{hmod, name}];
    if (owned == nullptr) {
      owned = std::make_unique<textureReference>();
      // As ROCm: texture<char>'s defaults, then the driver API's (reads
      // normalized, one float channel).
      owned->filterMode = hipFilterModePoint;
      for (auto& m : owned->addressMode) m = hipAddressModeClamp;
      owned->channelDesc = hipCreateChannelDesc(8, 0, 0, 0, hipChannelFormatKindSigned);
      owned->readMode = hipReadModeNormalizedFloat;
      owned->format = HIP_AD_FORMAT_FLOAT;
      owned->numChannels = 1;
      r.module_refs[owned.get()] = ModuleRef{hmod, name};
    }
    *texRef = owned.get();
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefSetAddress(size_t* ByteOffset, textureReference* texRef, hipDeviceptr_t dptr,
                                           size_t bytes) {
  return ApiCall("hipTexRefSetAddress", [&] {
    if (texRef == nullptr || dptr == nullptr) return hipErrorInvalidValue;
    hipChannelFormatDesc desc{};
    if (hipError_t e = FormatDesc(*texRef, &desc); e != hipSuccess) return e;
    if (ByteOffset != nullptr) *ByteOffset = 0;
    return Bind(texRef, Linear(dptr, desc, bytes));
  });
}

HIPR_EXPORT hipError_t hipTexRefSetAddress2D(textureReference* texRef, const HIP_ARRAY_DESCRIPTOR* desc,
                                             hipDeviceptr_t dptr, size_t Pitch) {
  return ApiCall("hipTexRefSetAddress2D", [&] {
    if (texRef == nullptr || desc == nullptr || dptr == nullptr) return hipErrorInvalidValue;
    hipChannelFormatDesc element{};
    if (!ChannelDescOf(desc->Format, desc->NumChannels, &element)) return hipErrorInvalidValue;
    return Bind(texRef, Pitched(dptr, element, desc->Width, desc->Height, Pitch));
  });
}

HIPR_EXPORT hipError_t hipTexRefSetArray(textureReference* tex, hipArray_const_t array, unsigned int flags) {
  return ApiCall("hipTexRefSetArray", [&] {
    if (tex == nullptr || array == nullptr || flags != HIP_TRSA_OVERRIDE_FORMAT) return hipErrorInvalidValue;
    ArrayInfo a;
    size_t element = 0;
    hipArray_Format format;
    unsigned channels = 0;
    if (!Arrays().FindArray(array, &a) || !ChannelLayout(a.desc, &element, &format, &channels))
      return hipErrorInvalidValue;
    const hipError_t e = Bind(tex, OfArray(array));
    if (e == hipSuccess) {
      // The array's format overrides the reference's (HIP_TRSA_OVERRIDE_FORMAT).
      tex->format = format;
      tex->numChannels = static_cast<int>(channels);
    }
    return e;
  });
}

HIPR_EXPORT hipError_t hipTexRefSetMipmappedArray(textureReference* texRef, struct hipMipmappedArray* mipmappedArray,
                                                  unsigned int Flags) {
  return ApiCall("hipTexRefSetMipmappedArray", [&] {
    if (texRef == nullptr || mipmappedArray == nullptr || Flags != HIP_TRSA_OVERRIDE_FORMAT)
      return hipErrorInvalidValue;
    return Bind(texRef, OfMipmappedArray(mipmappedArray));
  });
}

HIPR_EXPORT hipError_t hipTexRefGetAddress(hipDeviceptr_t* dev_ptr, const textureReference* texRef) {
  return ApiCall("hipTexRefGetAddress", [&] {
    if (dev_ptr == nullptr || texRef == nullptr) return hipErrorInvalidValue;
    hipResourceDesc res;
    if (hipError_t e = BoundResource(texRef, &res); e != hipSuccess) return e;
    if (res.resType == hipResourceTypeLinear) *dev_ptr = res.res.linear.devPtr;
    else if (res.resType == hipResourceTypePitch2D) *dev_ptr = res.res.pitch2D.devPtr;
    else return hipErrorInvalidValue;  // Bound to an array.
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefGetArray(hipArray_t* pArray, const textureReference* texRef) {
  return ApiCall("hipTexRefGetArray", [&] {
    if (pArray == nullptr || texRef == nullptr) return hipErrorInvalidValue;
    hipResourceDesc res;
    if (hipError_t e = BoundResource(texRef, &res); e != hipSuccess) return e;
    if (res.resType != hipResourceTypeArray) return hipErrorInvalidValue;
    *pArray = res.res.array.array;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefGetMipMappedArray(hipMipmappedArray_t* pArray, const textureReference* texRef) {
  return ApiCall("hipTexRefGetMipMappedArray", [&] {
    if (pArray == nullptr || texRef == nullptr) return hipErrorInvalidValue;
    hipResourceDesc res;
    if (hipError_t e = BoundResource(texRef, &res); e != hipSuccess) return e;
    // No binding is ever to a mipmapped array (hipr refuses them).
    return hipErrorInvalidValue;
  });
}

// ---- The reference's fields (host only; used at the next bind) -------------------

HIPR_EXPORT hipError_t hipTexRefSetAddressMode(textureReference* texRef, int dim, enum hipTextureAddressMode am) {
  return ApiCall("hipTexRefSetAddressMode", [&] {
    if (texRef == nullptr || dim < 0 || dim > 2) return hipErrorInvalidValue;
    texRef->addressMode[dim] = am;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefGetAddressMode(enum hipTextureAddressMode* pam, const textureReference* texRef,
                                               int dim) {
  return ApiCall("hipTexRefGetAddressMode", [&] {
    if (pam == nullptr || texRef == nullptr || dim < 0 || dim > 2) return hipErrorInvalidValue;
    *pam = texRef->addressMode[dim];
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefSetFilterMode(textureReference* texRef, enum hipTextureFilterMode fm) {
  return ApiCall("hipTexRefSetFilterMode", [&] {
    if (texRef == nullptr) return hipErrorInvalidValue;
    texRef->filterMode = fm;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefGetFilterMode(enum hipTextureFilterMode* pfm, const textureReference* texRef) {
  return ApiCall("hipTexRefGetFilterMode", [&] {
    if (pfm == nullptr || texRef == nullptr) return hipErrorInvalidValue;
    *pfm = texRef->filterMode;
    return hipSuccess;
  });
}

// HIP_TRSF_*: read as integer (else normalized float), normalized
// coordinates, sRGB; each flag sets or clears its field.
HIPR_EXPORT hipError_t hipTexRefSetFlags(textureReference* texRef, unsigned int Flags) {
  return ApiCall("hipTexRefSetFlags", [&] {
    if (texRef == nullptr) return hipErrorInvalidValue;
    texRef->readMode = (Flags & HIP_TRSF_READ_AS_INTEGER) != 0 ? hipReadModeElementType : hipReadModeNormalizedFloat;
    texRef->normalized = (Flags & HIP_TRSF_NORMALIZED_COORDINATES) != 0;
    texRef->sRGB = (Flags & HIP_TRSF_SRGB) != 0;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefGetFlags(unsigned int* pFlags, const textureReference* texRef) {
  return ApiCall("hipTexRefGetFlags", [&] {
    if (pFlags == nullptr || texRef == nullptr) return hipErrorInvalidValue;
    *pFlags = (texRef->readMode == hipReadModeElementType ? HIP_TRSF_READ_AS_INTEGER : 0u) |
              (texRef->normalized == 1 ? HIP_TRSF_NORMALIZED_COORDINATES : 0u) |
              (texRef->sRGB == 1 ? HIP_TRSF_SRGB : 0u);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefSetFormat(textureReference* texRef, hipArray_Format fmt, int NumPackedComponents) {
  return ApiCall("hipTexRefSetFormat", [&] {
    if (texRef == nullptr) return hipErrorInvalidValue;
    hipChannelFormatDesc unused;
    if (NumPackedComponents <= 0 || !ChannelDescOf(fmt, static_cast<unsigned>(NumPackedComponents), &unused))
      return hipErrorInvalidValue;
    texRef->format = fmt;
    texRef->numChannels = NumPackedComponents;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefGetFormat(hipArray_Format* pFormat, int* pNumChannels,
                                          const textureReference* texRef) {
  return ApiCall("hipTexRefGetFormat", [&] {
    if (pFormat == nullptr || pNumChannels == nullptr || texRef == nullptr) return hipErrorInvalidValue;
    *pFormat = texRef->format;
    *pNumChannels = texRef->numChannels;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefSetMaxAnisotropy(textureReference* texRef, unsigned int maxAniso) {
  return ApiCall("hipTexRefSetMaxAnisotropy", [&] {
    if (texRef == nullptr) return hipErrorInvalidValue;
    texRef->maxAnisotropy = maxAniso;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefGetMaxAnisotropy(int* pmaxAnsio, const textureReference* texRef) {
  return ApiCall("hipTexRefGetMaxAnisotropy", [&] {
    if (pmaxAnsio == nullptr || texRef == nullptr) return hipErrorInvalidValue;
    *pmaxAnsio = static_cast<int>(texRef->maxAnisotropy);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefSetMipmapFilterMode(textureReference* texRef, enum hipTextureFilterMode fm) {
  return ApiCall("hipTexRefSetMipmapFilterMode", [&] {
    if (texRef == nullptr) return hipErrorInvalidValue;
    texRef->mipmapFilterMode = fm;
    return hipSuccess;
  });
}

// ROCm's returns hipErrorInvalidValue after writing the mode (a slip in
// hip_texture.cpp); hipr returns success.
HIPR_EXPORT hipError_t hipTexRefGetMipmapFilterMode(enum hipTextureFilterMode* pfm, const textureReference* texRef) {
  return ApiCall("hipTexRefGetMipmapFilterMode", [&] {
    if (pfm == nullptr || texRef == nullptr) return hipErrorInvalidValue;
    *pfm = texRef->mipmapFilterMode;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefSetMipmapLevelBias(textureReference* texRef, float bias) {
  return ApiCall("hipTexRefSetMipmapLevelBias", [&] {
    if (texRef == nullptr) return hipErrorInvalidValue;
    texRef->mipmapLevelBias = bias;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefGetMipmapLevelBias(float* pbias, const textureReference* texRef) {
  return ApiCall("hipTexRefGetMipmapLevelBias", [&] {
    if (pbias == nullptr || texRef == nullptr) return hipErrorInvalidValue;
    *pbias = texRef->mipmapLevelBias;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefSetMipmapLevelClamp(textureReference* texRef, float minMipMapLevelClamp,
                                                    float maxMipMapLevelClamp) {
  return ApiCall("hipTexRefSetMipmapLevelClamp", [&] {
    if (texRef == nullptr) return hipErrorInvalidValue;
    texRef->minMipmapLevelClamp = minMipMapLevelClamp;
    texRef->maxMipmapLevelClamp = maxMipMapLevelClamp;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefGetMipmapLevelClamp(float* pminMipmapLevelClamp, float* pmaxMipmapLevelClamp,
                                                    const textureReference* texRef) {
  return ApiCall("hipTexRefGetMipmapLevelClamp", [&] {
    if (pminMipmapLevelClamp == nullptr || pmaxMipmapLevelClamp == nullptr || texRef == nullptr)
      return hipErrorInvalidValue;
    *pminMipmapLevelClamp = texRef->minMipmapLevelClamp;
    *pmaxMipmapLevelClamp = texRef->maxMipmapLevelClamp;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefSetBorderColor(textureReference* texRef, float* pBorderColor) {
  return ApiCall("hipTexRefSetBorderColor", [&] {
    if (texRef == nullptr || pBorderColor == nullptr) return hipErrorInvalidValue;
    References& r = Refs();
    MutexLock lock(r.mu);
    std::memcpy(r.borders[texRef].rgba, pBorderColor, sizeof(BorderColor::rgba));
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipTexRefGetBorderColor(float* pBorderColor, const textureReference* texRef) {
  return ApiCall("hipTexRefGetBorderColor", [&] {
    if (pBorderColor == nullptr || texRef == nullptr) return hipErrorInvalidValue;
    BorderColor c;
    References& r = Refs();
    MutexLock lock(r.mu);
    if (auto it = r.borders.find(texRef); it != r.borders.end()) c = it->second;
    std::memcpy(pBorderColor, c.rgba, sizeof c.rgba);
    return hipSuccess;
  });
}

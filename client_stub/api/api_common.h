// Helpers shared by the exported HIP entry points (api_*.cc): the edge where
// Status becomes hipError_t, where exceptions stop, and where the calling
// thread's last error is recorded.
#pragma once

#include <atomic>
#include <exception>
#include <new>

#include "client_stub/api/api_result.h"
#include "client_stub/client.h"
#include "client_stub/kernels/code_module.h"
#include "client_stub/base/log.h"
#include "client_stub/base/stats.h"
#include "client_stub/managed/managed_vars.h"
#include "client_stub/allocate/device_memory.h"
#include "client_stub/session/hip_status.h"
#include "protocol/status.h"

namespace hipr::client {

// Runs `body` (returning hipError_t) and records its result as the calling
// thread's last error (Result); the round trips it waits for count against
// `name` (stats::ApiScope). No exception escapes: std::bad_alloc becomes
// hipErrorOutOfMemory, anything else hipErrorUnknown (logged).
template <class F>
hipError_t ApiCall(const char* name, F&& body) noexcept {
  stats::ApiScope scope(name);  // HIPR_STATS=1: round trips by entry point.
  try {
    return Result(body());
  } catch (const std::bad_alloc&) {
    HIPR_LOG_ERROR("%s: out of host memory", name);
    return Result(hipErrorOutOfMemory);
  } catch (const std::exception& e) {
    HIPR_LOG_ERROR("%s: internal error: %s", name, e.what());
    return Result(hipErrorUnknown);
  } catch (...) {
    HIPR_LOG_ERROR("%s: internal error", name);
    return Result(hipErrorUnknown);
  }
}

// The live session or nullptr (then the call returns hipErrorNoDevice).
inline Session* LiveSession() { return Client::Get().LiveSession(); }

// hipErrorInvalidDevice unless 0 <= device < the session's device count.
inline hipError_t CheckDevice(const Session& s, int device) {
  return device >= 0 && device < s.device_count() ? hipSuccess : hipErrorInvalidDevice;
}

// The calling thread's current device, checked against the session.
inline hipError_t CurrentDeviceOf(const Session& s, int* device) {
  if (s.device_count() == 0) return hipErrorNoDevice;
  *device = CurrentDevice();
  return CheckDevice(s, *device);
}

// The null stream (nullptr) is id 0 on the calling thread's device;
// hipStreamPerThread is the calling thread's own blocking stream on its
// device (made at first use, no round trip); any other handle must be
// live, else hipErrorInvalidHandle.
hipError_t ResolveStream(hipStream_t stream, StreamTarget* out);

// The hooks every module is made with (code_module.h): its globals are
// recorded as device memory of Client::Get(), its __managed__ variables
// attached by ManagedVars. api_common.cc.
ModuleHooks& ApiModuleHooks();

// __managed__: makes the variable's mirror (managed_vars.h), holding
// `init_value`'s `size` bytes, and writes its address to *pointer, so host
// code reading through it right after registration sees the initial value.
// Every load of the module then attaches the variable's device copy
// (ApiModuleHooks).
bool RegisterManagedVar(const void* handle, void** pointer, const void* init_value, const char* name,
                        size_t size, unsigned align);

// hipMallocPitch's row pitch for rows of `width` bytes on `device` (also
// the rows of HIP arrays). api_memory.cc.
size_t RowPitch(const Session& s, int device, size_t width);
// Frees a device allocation of the given role by its base address (hipFree
// for kPlain; an array's memory with the array). api_memory.cc.
hipError_t FreeDevice(void* ptr, AllocationRole role);
// AfterSync (session/managed_hooks.h) for the process's client and its
// managed memory.
inline hipError_t AfterSync(Session& s, int device, uint64_t stream, hipError_t result,
                            ReadBack order = ReadBack::kAfterSync) {
  return AfterSync(Client::Get(), s, ManagedVars::Get(), device, stream, result, order);
}

// hipMemcpy's path (async: hipMemcpyAsync's), for entry points that work
// out their addresses first (hipMemcpyToSymbol...). Defined in api_copy.cc.
hipError_t CopyMemory(void* dst, const void* src, size_t size, hipMemcpyKind kind, hipStream_t stream,
                      bool async);

// hipMemcpy2DAsync's path (graph replay of host copies). api_copy.cc.
hipError_t CopyMemory2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,
                             hipMemcpyKind kind, hipStream_t stream);

// One side of a box copy (CopyBox): a HIP array (hip_arrays.h; x in
// bytes), or host or device memory at `ptr` with rows `pitch` apart and
// slices `height` rows high (0: as clr, origin plus the copy's extent).
struct CopySide {
  hipArray_const_t array = nullptr;
  const void* ptr = nullptr;
  size_t x = 0, y = 0, z = 0;
  size_t pitch = 0, height = 0;
};

// Copies a box of `width` bytes by `height` rows by `depth` slices; `kind`
// says which pointer sides are host memory (hipMemcpyDefault: inferred).
// The array copies' path. api_copy.cc.
hipError_t CopyBox(const char* api, const CopySide& src, const CopySide& dst, size_t width, size_t height,
                   size_t depth, hipMemcpyKind kind, hipStream_t stream, bool async);

// HIP_MEMCPY3D (in the layout and hipMemoryType numbering of `major`, see
// per_major.txt) as hipMemcpy3DParms and back, for the driver-API graph
// memcpy nodes. Arrays are hipErrorNotSupported; an unknown memory type
// hipErrorInvalidValue. api_copy.cc.
hipError_t DrvMemcpy3DToParms(const void* drv, int major, hipMemcpy3DParms* out);
void ParmsToDrvMemcpy3D(const hipMemcpy3DParms& p, int major, void* drv);

// Texture objects (api_texture.cc): hipCreateTextureObject's path (`view`:
// a resource view, which hipr refuses), hipDestroyTextureObject's, and the
// resource a live texture object reads (false: no such texture).
hipError_t CreateTextureObject(hipTextureObject_t* out, const hipResourceDesc* res, const hipTextureDesc* tex,
                               const void* view);
hipError_t DestroyTextureObject(hipTextureObject_t object);
bool TextureResource(hipTextureObject_t object, hipResourceDesc* out);

// A registered device variable's address and size on the calling thread's
// device (its module's first use there loads it); hipErrorInvalidSymbol
// when `symbol` is no registered variable. api_module.cc.
hipError_t ResolveSymbol(const void* symbol, void** address, size_t* size);
// A loaded module's global `name` on the calling thread's device
// (hipModuleGetGlobal's path). api_module.cc.
hipError_t ModuleGlobal(hipModule_t module, const char* name, void** address, size_t* size);

}  // namespace hipr::client

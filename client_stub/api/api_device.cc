// Device management entry points: count, selection, properties and
// attributes (answered from the hello's cached DeviceInfo), versions, flags,
// synchronize/reset, and the last-error queries.
#include <dlfcn.h>
#include <hip/hip_version.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <type_traits>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "client_stub/abi/abi_major.h"
#include "client_stub/api/api_common.h"
#include "client_stub/kernels/code_module.h"
#include "client_stub/abi/device_props.h"
#include "protocol/device_properties.h"
#include "client_stub/graphs/graph.h"
#include "protocol/thread_annotations.h"

using namespace hipr;
using namespace hipr::client;

namespace {

// Addresses handed out as hipCtx_t: one per device, never dereferenced.
constinit char g_context_tokens[Client::kMaxDevices] = {};

constinit std::atomic<bool> g_attribute_logged[512] = {};

void LogUnsupportedAttributeOnce(hipDeviceAttribute_t attr) {
  int a = static_cast<int>(attr);
  int slot = a >= hipDeviceAttributeAmdSpecificBegin ? 256 + (a - hipDeviceAttributeAmdSpecificBegin) : a;
  if (slot < 0 || slot >= 512) slot = 511;
  if (!g_attribute_logged[slot].exchange(true, std::memory_order_relaxed))
    HIPR_LOG_WARN("hipDeviceGetAttribute: attribute %d is not one ROCm's runtime answers for this caller's "
                  "major, or the worker did not report it; returning hipErrorInvalidValue",
                  a);
}


}  // namespace

HIPR_EXPORT hipError_t hipInit(unsigned int flags) {
  return ApiCall("hipInit", [&] {
    if (flags != 0) return hipErrorInvalidValue;
    return LiveSession() != nullptr ? hipSuccess : hipErrorNoDevice;
  });
}

HIPR_EXPORT hipError_t hipGetDeviceCount(int* count) {
  return ApiCall("hipGetDeviceCount", [&] {
    if (count == nullptr) return hipErrorInvalidValue;
    Remote* s = LiveSession();
    *count = s != nullptr ? s->device_count() : 0;
    return *count > 0 ? hipSuccess : hipErrorNoDevice;
  });
}

HIPR_EXPORT hipError_t hipGetDevice(int* device) {
  return ApiCall("hipGetDevice", [&] {
    if (device == nullptr) return hipErrorInvalidValue;
    Remote* s = LiveSession();
    if (s == nullptr || s->device_count() == 0) return hipErrorNoDevice;
    *device = CurrentDevice();
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipSetDevice(int device) {
  return ApiCall("hipSetDevice", [&] {
    Remote* s = LiveSession();
    if (s == nullptr || s->device_count() == 0) return hipErrorNoDevice;
    if (hipError_t e = CheckDevice(*s, device); e != hipSuccess) return e;
    SetCurrentDevice(device);
    return hipSuccess;
  });
}

namespace {

// hipGetDeviceProperties / hipChooseDevice for either layout (5.x's, or 6.x's
// R0600: device_prop_r0600.h).
template <class Prop>
hipError_t GetProperties(Prop* prop, int device) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (prop == nullptr) return hipErrorInvalidValue;
  if (hipError_t e = CheckDevice(*s, device); e != hipSuccess) return e;
  const DeviceAnswers& a = s->answers(device);
  if constexpr (std::is_same_v<Prop, DevicePropR0600>)
    *prop = a.r0600;
  else
    *prop = a.r0000;
  return hipSuccess;
}

template <class Prop>
hipError_t Choose(int* device, const Prop* prop) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (device == nullptr || prop == nullptr) return hipErrorInvalidValue;
  if (s->device_count() == 0) return hipErrorNoDevice;
  *device = ChooseDevice(s->devices(), *prop);
  return hipSuccess;
}

}  // namespace

HIPR_EXPORT hipError_t hipGetDeviceProperties(hipDeviceProp_t* prop, int device) {
  return ApiCall("hipGetDeviceProperties", [&] { return GetProperties(prop, device); });
}

// 6.x and 7.x: hipGetDeviceProperties and hipChooseDevice of programs
// built against those headers, with their layout (device_prop_r0600.h);
// the R0000 forms are the unsuffixed (5.x layout) ones under another name.
HIPR_EXPORT hipError_t hipGetDevicePropertiesR0600(DevicePropR0600* prop, int device) {
  return ApiCall("hipGetDevicePropertiesR0600", [&] { return GetProperties(prop, device); });
}

HIPR_EXPORT hipError_t hipGetDevicePropertiesR0000(hipDeviceProp_t* prop, int device) {
  return ApiCall("hipGetDevicePropertiesR0000", [&] { return GetProperties(prop, device); });
}

HIPR_EXPORT hipError_t hipChooseDeviceR0600(int* device, const DevicePropR0600* prop) {
  return ApiCall("hipChooseDeviceR0600", [&] { return Choose(device, prop); });
}

HIPR_EXPORT hipError_t hipChooseDeviceR0000(int* device, const hipDeviceProp_t* prop) {
  return ApiCall("hipChooseDeviceR0000", [&] { return Choose(device, prop); });
}

HIPR_EXPORT hipError_t hipDeviceGetAttribute(int* value, hipDeviceAttribute_t attr, int device) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipDeviceGetAttribute", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (value == nullptr) return hipErrorInvalidValue;
    if (hipError_t e = CheckDevice(*s, device); e != hipSuccess) return e;
    hipError_t e = DeviceAttribute(s->answers(device), static_cast<int>(attr), major, value);
    if (e == hipErrorInvalidValue) LogUnsupportedAttributeOnce(attr);
    return e;
  });
}

HIPR_EXPORT hipError_t hipDeviceGetName(char* name, int len, hipDevice_t device) {
  return ApiCall("hipDeviceGetName", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (hipError_t e = CheckDevice(*s, device); e != hipSuccess) return e;
    if (name == nullptr || len <= 0) return hipErrorInvalidValue;
    const std::string& board = s->devices()[device].name;
    const size_t n = std::min(board.size(), static_cast<size_t>(len) - 1);
    std::memcpy(name, board.data(), n);
    name[n] = '\0';
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipDeviceGet(hipDevice_t* device, int ordinal) {
  return ApiCall("hipDeviceGet", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (device == nullptr) return hipErrorInvalidValue;
    if (hipError_t e = CheckDevice(*s, ordinal); e != hipSuccess) return e;
    *device = ordinal;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipDeviceComputeCapability(int* major, int* minor, hipDevice_t device) {
  return ApiCall("hipDeviceComputeCapability", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (hipError_t e = CheckDevice(*s, device); e != hipSuccess) return e;
    if (major == nullptr || minor == nullptr) return hipErrorInvalidValue;
    *major = s->devices()[device].major;
    *minor = s->devices()[device].minor;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipDeviceTotalMem(size_t* bytes, hipDevice_t device) {
  return ApiCall("hipDeviceTotalMem", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (hipError_t e = CheckDevice(*s, device); e != hipSuccess) return e;
    if (bytes == nullptr) return hipErrorInvalidValue;
    *bytes = s->devices()[device].total_global_mem;
    return hipSuccess;
  });
}

// From the hello; a worker too old to send it makes this unsupported.
HIPR_EXPORT hipError_t hipDeviceGetUuid(hipUUID* uuid, hipDevice_t device) {
  return ApiCall("hipDeviceGetUuid", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (uuid == nullptr) return hipErrorInvalidValue;
    if (hipError_t e = CheckDevice(*s, device); e != hipSuccess) return e;
    const std::vector<uint8_t>& bytes = s->devices()[device].uuid;
    if (bytes.size() != sizeof uuid->bytes) {
      HIPR_LOG_ONCE(kWarn, "hipDeviceGetUuid: the worker does not report device UUIDs; returning hipErrorNotSupported");
      return hipErrorNotSupported;
    }
    std::memcpy(uuid->bytes, bytes.data(), sizeof uuid->bytes);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipDeviceGetPCIBusId(char* pci_bus_id, int len, int device) {
  return ApiCall("hipDeviceGetPCIBusId", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (hipError_t e = CheckDevice(*s, device); e != hipSuccess) return e;
    if (pci_bus_id == nullptr) return hipErrorInvalidValue;
    const msg::DeviceInfo& d = s->devices()[device];
    // As the runtime: "dddd:bb:dd.f", 12 characters plus the terminator;
    // written (truncated) even when len is too small, which is then an error.
    // The PCI function is not in DeviceInfo; GPUs are function 0.
    std::snprintf(pci_bus_id, static_cast<size_t>(std::max(len, 0)), "%04x:%02x:%02x.%01x",
                  d.pci_domain_id, d.pci_bus_id, d.pci_device_id, 0);
    return len <= 12 ? hipErrorInvalidValue : hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipChooseDevice(int* device, const hipDeviceProp_t* prop) {
  return ApiCall("hipChooseDevice", [&] { return Choose(device, prop); });
}

HIPR_EXPORT hipError_t hipGetDeviceFlags(unsigned int* flags) {
  return ApiCall("hipGetDeviceFlags", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (flags == nullptr) return hipErrorInvalidValue;
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    *flags = Client::Get().device_flags(device);
    return hipSuccess;
  });
}

namespace {

// As the runtime: at most one scheduling flag, nothing unknown. The flags
// only matter to the worker's host threads; the client records them for
// hipGetDeviceFlags: the scheduling ones (hipSetDeviceFlags), or all of
// them (`keep_all`: hipCtxCreate, as clr's).
hipError_t SetDeviceFlags(int device, unsigned flags, bool keep_all = false) {
  constexpr unsigned kSupported = hipDeviceScheduleMask | hipDeviceMapHost | hipDeviceLmemResizeToMax;
  constexpr unsigned kExclusive = hipDeviceScheduleSpin | hipDeviceScheduleYield | hipDeviceScheduleBlockingSync;
  const unsigned schedule = flags & hipDeviceScheduleMask & kExclusive;
  if (schedule != 0 && schedule != hipDeviceScheduleSpin && schedule != hipDeviceScheduleYield &&
      schedule != hipDeviceScheduleBlockingSync)
    return hipErrorInvalidValue;
  if ((flags & ~kSupported) != 0) return hipErrorInvalidValue;
  Client::Get().set_device_flags(device, keep_all ? flags : flags & hipDeviceScheduleMask);
  return hipSuccess;
}

}  // namespace

HIPR_EXPORT hipError_t hipSetDeviceFlags(unsigned flags) {
  return ApiCall("hipSetDeviceFlags", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    return SetDeviceFlags(device, flags);
  });
}

HIPR_EXPORT hipError_t hipCtxGetCurrent(hipCtx_t* ctx) {
  return ApiCall("hipCtxGetCurrent", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (ctx == nullptr) return hipErrorInvalidValue;
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    if (device >= Client::kMaxDevices) return hipErrorInvalidDevice;
    *ctx = reinterpret_cast<hipCtx_t>(&g_context_tokens[device]);
    return hipSuccess;
  });
}

// Primary contexts: one per device, the token hipCtxGetCurrent hands out;
// retaining and releasing them has nothing to do here (HIP creates the
// context with the device and never destroys it).
namespace {

hipError_t ContextDevice(hipCtx_t ctx, int* device) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  const auto* token = reinterpret_cast<const char*>(ctx);
  if (token < g_context_tokens || token >= g_context_tokens + Client::kMaxDevices) return hipErrorInvalidContext;
  *device = static_cast<int>(token - g_context_tokens);
  return CheckDevice(*s, *device) == hipSuccess ? hipSuccess : hipErrorInvalidContext;
}

hipError_t PrimaryContextCall(int device) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (device >= Client::kMaxDevices) return hipErrorInvalidDevice;
  return CheckDevice(*s, device);
}

// Peer access enabled by hipDeviceEnablePeerAccess: (device, peer) pairs.
struct PeerTable {
  Mutex mu;
  std::set<std::pair<int, int>> enabled HIPR_GUARDED_BY(mu);
};
PeerTable& Peers() {
  static PeerTable* t = new PeerTable;  // Leaked: used until exit.
  return *t;
}

// Whether `device` can address `peer`'s memory, as the worker's device
// reports it (hipr.PeerAccessMask: the sim's devices all reach each other,
// the hip device's GPUs as their topology says). A worker that does not
// report it: no (peer copies still work: the worker does them). Devices of
// two workers (HIPR_SERVER lists several) never can: no kernel reaches
// another machine's memory. The mask is in the worker's own ordinals.
bool CanAccessPeer(const Remote& s, int device, int peer) {
  const auto& devices = s.devices();
  if (device == peer || device < 0 || device >= static_cast<int>(devices.size()) || peer < 0 ||
      peer >= static_cast<int>(devices.size()) || !s.SameWorker(device, peer))
    return false;
  const int local_peer = s.LocalOf(peer);
  int64_t mask = 0;
  if (local_peer >= 63 ||
      !msg::FindProperty(devices[static_cast<size_t>(device)], msg::DeviceProperty::kPeerAccessMask, &mask))
    return false;
  return (mask >> local_peer & 1) != 0;
}

}  // namespace

HIPR_EXPORT hipError_t hipDevicePrimaryCtxRetain(hipCtx_t* ctx, hipDevice_t device) {
  return ApiCall("hipDevicePrimaryCtxRetain", [&] {
    if (ctx == nullptr) return hipErrorInvalidValue;
    if (hipError_t e = PrimaryContextCall(device); e != hipSuccess) return e;
    *ctx = reinterpret_cast<hipCtx_t>(&g_context_tokens[device]);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipDevicePrimaryCtxRelease(hipDevice_t device) {
  return ApiCall("hipDevicePrimaryCtxRelease", [&] { return PrimaryContextCall(device); });
}

HIPR_EXPORT hipError_t hipDevicePrimaryCtxGetState(hipDevice_t device, unsigned int* flags, int* active) {
  return ApiCall("hipDevicePrimaryCtxGetState", [&] {
    if (flags == nullptr || active == nullptr) return hipErrorInvalidValue;
    if (hipError_t e = PrimaryContextCall(device); e != hipSuccess) return e;
    *flags = Client::Get().device_flags(device);
    *active = 1;  // Created with the device, as HIP's.
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipDevicePrimaryCtxSetFlags(hipDevice_t device, unsigned int flags) {
  return ApiCall("hipDevicePrimaryCtxSetFlags", [&] {
    if (hipError_t e = PrimaryContextCall(device); e != hipSuccess) return e;
    // As HIP: the primary context is always active, so its flags are fixed.
    return hipErrorContextAlreadyInUse;
  });
}

namespace {

// The calling thread's context stack (hipCtxPushCurrent/hipCtxPopCurrent,
// hipCtxCreate/hipCtxDestroy), as clr's: device ordinals, top last. The
// current device stays the thread's current context; the stack only
// remembers what a pop returns to.
thread_local std::vector<int> t_context_stack;

hipCtx_t ContextToken(int device) { return reinterpret_cast<hipCtx_t>(&g_context_tokens[device]); }

// Removes the top of the stack; the context below it, if any, becomes
// current again.
void PopContext() {
  t_context_stack.pop_back();
  if (!t_context_stack.empty()) SetCurrentDevice(t_context_stack.back());
}

}  // namespace

// As clr: a context replaces the top of the thread's stack (and becomes
// current); nullptr pops it and leaves the current device as it is.
HIPR_EXPORT hipError_t hipCtxSetCurrent(hipCtx_t ctx) {
  return ApiCall("hipCtxSetCurrent", [&] {
    if (ctx == nullptr) {
      if (LiveSession() == nullptr) return hipErrorNoDevice;
      if (!t_context_stack.empty()) t_context_stack.pop_back();
      return hipSuccess;
    }
    int device = 0;
    if (hipError_t e = ContextDevice(ctx, &device); e != hipSuccess) return e;
    SetCurrentDevice(device);
    if (!t_context_stack.empty()) t_context_stack.pop_back();
    t_context_stack.push_back(device);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipCtxGetDevice(hipDevice_t* device) {
  return ApiCall("hipCtxGetDevice", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (device == nullptr) return hipErrorInvalidValue;
    return CurrentDeviceOf(*s, device);
  });
}

HIPR_EXPORT hipError_t hipDeviceCanAccessPeer(int* can_access, int device, int peer) {
  return ApiCall("hipDeviceCanAccessPeer", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (can_access == nullptr) return hipErrorInvalidValue;
    if (CheckDevice(*s, device) != hipSuccess || CheckDevice(*s, peer) != hipSuccess) return hipErrorInvalidDevice;
    *can_access = CanAccessPeer(*s, device, peer) ? 1 : 0;
    return hipSuccess;
  });
}

// Peer attributes from the same answer as hipDeviceCanAccessPeer: access and
// native atomics together (sim devices share one process's memory), rank 0,
// HIP arrays not reported as accessible across devices.
HIPR_EXPORT hipError_t hipDeviceGetP2PAttribute(int* value, hipDeviceP2PAttr attr, int src, int dst) {
  return ApiCall("hipDeviceGetP2PAttribute", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (value == nullptr) return hipErrorInvalidValue;
    if (CheckDevice(*s, src) != hipSuccess || CheckDevice(*s, dst) != hipSuccess || src == dst)
      return hipErrorInvalidDevice;
    const bool peer = CanAccessPeer(*s, src, dst);
    switch (attr) {
      case hipDevP2PAttrPerformanceRank: *value = 0; return hipSuccess;
      case hipDevP2PAttrAccessSupported:
      case hipDevP2PAttrNativeAtomicSupported: *value = peer ? 1 : 0; return hipSuccess;
      case hipDevP2PAttrHipArrayAccessSupported: *value = 0; return hipSuccess;
    }
    return hipErrorInvalidValue;
  });
}

namespace {

// The current device's access to `peer`'s memory (hipDeviceEnablePeerAccess,
// and hipCtxEnablePeerAccess with the peer's context).
hipError_t EnablePeer(int peer, unsigned int flags) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  int device = 0;
  if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
  if (flags != 0) return hipErrorInvalidValue;
  if (CheckDevice(*s, peer) != hipSuccess || !CanAccessPeer(*s, device, peer)) return hipErrorInvalidDevice;
  MutexLock lock(Peers().mu);
  return Peers().enabled.insert({device, peer}).second ? hipSuccess : hipErrorPeerAccessAlreadyEnabled;
}

hipError_t DisablePeer(int peer) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  int device = 0;
  if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
  if (CheckDevice(*s, peer) != hipSuccess) return hipErrorInvalidDevice;
  MutexLock lock(Peers().mu);
  return Peers().enabled.erase({device, peer}) == 1 ? hipSuccess : hipErrorPeerAccessNotEnabled;
}

}  // namespace

HIPR_EXPORT hipError_t hipDeviceEnablePeerAccess(int peer, unsigned int flags) {
  return ApiCall("hipDeviceEnablePeerAccess", [&] { return EnablePeer(peer, flags); });
}

HIPR_EXPORT hipError_t hipDeviceDisablePeerAccess(int peer) {
  return ApiCall("hipDeviceDisablePeerAccess", [&] { return DisablePeer(peer); });
}

// Cache and shared-memory configuration: AMD GPUs have no such knobs; HIP
// accepts every setting and reports the defaults.
// (hipCtx{Set,Get}CacheConfig answer the same for the current context.)
namespace {

hipError_t SetCacheConfig(hipFuncCache_t config) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  return config >= hipFuncCachePreferNone && config <= hipFuncCachePreferEqual ? hipSuccess : hipErrorInvalidValue;
}

hipError_t GetCacheConfig(hipFuncCache_t* config) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (config == nullptr) return hipErrorInvalidValue;
  *config = hipFuncCachePreferNone;
  return hipSuccess;
}

}  // namespace

HIPR_EXPORT hipError_t hipDeviceSetCacheConfig(hipFuncCache_t config) {
  return ApiCall("hipDeviceSetCacheConfig", [&] { return SetCacheConfig(config); });
}

HIPR_EXPORT hipError_t hipDeviceGetCacheConfig(hipFuncCache_t* config) {
  return ApiCall("hipDeviceGetCacheConfig", [&] { return GetCacheConfig(config); });
}

HIPR_EXPORT hipError_t hipDeviceGetByPCIBusId(int* device, const char* pci_bus_id) {
  return ApiCall("hipDeviceGetByPCIBusId", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (device == nullptr || pci_bus_id == nullptr) return hipErrorInvalidValue;
    unsigned domain = 0, bus = 0, dev = 0, function = 0;
    if (std::sscanf(pci_bus_id, "%x:%x:%x.%x", &domain, &bus, &dev, &function) != 4) return hipErrorInvalidValue;
    for (int i = 0; i < s->device_count(); ++i) {
      const msg::DeviceInfo& d = s->devices()[i];
      if (static_cast<unsigned>(d.pci_domain_id) == domain && static_cast<unsigned>(d.pci_bus_id) == bus &&
          static_cast<unsigned>(d.pci_device_id) == dev) {
        *device = i;
        return hipSuccess;
      }
    }
    return hipErrorInvalidDevice;
  });
}

// Versions come from the worker's runtime (hello), told in the caller's
// major (abi_major.h VersionForMajor: a 6.x library never hears 5.2). Without
// a session the runtime's answer does not depend on a device, so these still
// succeed with the HIP version this stub was built against.
HIPR_EXPORT hipError_t hipDriverGetVersion(int* version) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipDriverGetVersion", [&] {
    if (version == nullptr) return hipErrorInvalidValue;
    Remote* s = LiveSession();
    *version = VersionForMajor(s != nullptr ? s->driver_version() : 0, major);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipRuntimeGetVersion(int* version) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipRuntimeGetVersion", [&] {
    if (version == nullptr) return hipErrorInvalidValue;
    Remote* s = LiveSession();
    *version = VersionForMajor(s != nullptr ? s->runtime_version() : 0, major);
    return hipSuccess;
  });
}

// HIP 5.x: the last call's return code, reset to hipSuccess by the read
// (api_result.cc). Neither query records itself as a result.
// 5.x: the last call's return code; 6.x and 7.x: the last error (abi_major.h
// picks by the caller's major).
HIPR_EXPORT hipError_t hipGetLastError() { return TakeLastError(HIPR_CALLER_MAJOR()); }

HIPR_EXPORT hipError_t hipPeekAtLastError() { return Result(PeekLastError(HIPR_CALLER_MAJOR())); }

// ROCm 6.0: the calling thread's last error (not the last call's result),
// reset, for callers of any major.
HIPR_EXPORT hipError_t hipExtGetLastError() { return TakeLastError(6); }

namespace {

// ROCm 6.1's hipDriverProcAddressQueryResult (as CUDA's
// cudaDriverEntryPointQueryResult) and HIP_GET_PROC_ADDRESS_* flags.
constexpr int kProcAddressSuccess = 0;
constexpr int kProcAddressSymbolNotFound = 1;
constexpr uint64_t kProcAddressDefault = 0;
constexpr uint64_t kProcAddressLegacyStream = 1;
constexpr uint64_t kProcAddressPerThreadStream = 2;

// The major a hipGetProcAddress version names: 601 (major*100+minor),
// 60100 (HIP_VERSION_MAJOR*10000+minor*100), or HIP_VERSION's 60140091 form.
int MajorOfVersion(int version) {
  if (version >= 10000000) return version / 10000000;
  if (version >= 10000) return version / 10000;
  return version / 100;
}

// The stub's own export `name`, found in the stub itself (never the real
// runtime's, which another library may have loaded).
void* OwnExport(const char* name) {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&OwnExport), &info) == 0 || info.dli_fname == nullptr) return nullptr;
  void* self = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
  if (self == nullptr) return nullptr;
  void* fn = dlsym(self, name);
  dlclose(self);
  return fn;
}

// The entry point a caller asking for `base` gets, as clr resolves it:
// hipGetDeviceProperties and hipChooseDevice are their R0600 forms for a 6.x
// or later caller (`r0600`) and never per-thread; any other function is its
// _spt form for a per-thread caller where one exists, else itself.
void* OwnEntryPoint(const std::string& base, bool per_thread, bool r0600) {
  if (base == "hipGetDeviceProperties" || base == "hipChooseDevice")
    return OwnExport(r0600 ? (base + "R0600").c_str() : base.c_str());
  if (per_thread)
    if (void* spt = OwnExport((base + "_spt").c_str()); spt != nullptr) return spt;
  return OwnExport(base.c_str());
}

}  // namespace

// ROCm 6.1+: a HIP function by name, for `version`, as clr answers: the
// stub's own entry points; the per-thread default-stream form (_spt) with
// HIP_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM; R0600 twins for 6.x or
// later; an unknown name, an empty one or an unknown flag is
// hipErrorInvalidValue (an unknown name also sets the status to "not found").
HIPR_EXPORT hipError_t hipGetProcAddress(const char* symbol, void** fn, int version, uint64_t flags, int* status) {
  return ApiCall("hipGetProcAddress", [&] {
    if (symbol == nullptr || *symbol == '\0' || fn == nullptr) return hipErrorInvalidValue;
    if (flags != kProcAddressDefault && flags != kProcAddressLegacyStream && flags != kProcAddressPerThreadStream)
      return hipErrorInvalidValue;
    *fn = OwnEntryPoint(symbol, flags == kProcAddressPerThreadStream, MajorOfVersion(version) >= 6);
    if (status != nullptr) *status = *fn != nullptr ? kProcAddressSuccess : kProcAddressSymbolNotFound;
    return *fn != nullptr ? hipSuccess : hipErrorInvalidValue;
  });
}

namespace {

// ROCm 7.1's hipGetDriverEntryPoint flags and its status out-parameter
// (hipDriverEntryPointQueryResult).
constexpr unsigned long long kEntryPointDefault = 0;
constexpr unsigned long long kEntryPointLegacyStream = 1;
constexpr unsigned long long kEntryPointPerThreadStream = 2;
constexpr int kEntryPointSuccess = 0;
constexpr int kEntryPointSymbolNotFound = 1;

// hipGetDriverEntryPoint(_spt): a HIP function by its base name, resolved as
// hipGetProcAddress does. Its callers are built for 7.1 or later, so a
// function with an R0600 twin resolves to the twin (the 6.x layout their
// headers use). Unknown names: hipErrorInvalidValue, as ROCm's runtime.
hipError_t DriverEntryPoint(const char* symbol, void** fn, unsigned long long flags, int* status) {
  if (symbol == nullptr || *symbol == '\0' || fn == nullptr) return hipErrorInvalidValue;
  if (flags != kEntryPointDefault && flags != kEntryPointLegacyStream && flags != kEntryPointPerThreadStream)
    return hipErrorInvalidValue;
  *fn = OwnEntryPoint(symbol, flags == kEntryPointPerThreadStream, true);
  if (status != nullptr) *status = *fn != nullptr ? kEntryPointSuccess : kEntryPointSymbolNotFound;
  return *fn != nullptr ? hipSuccess : hipErrorInvalidValue;
}

}  // namespace

HIPR_EXPORT hipError_t hipGetDriverEntryPoint(const char* symbol, void** fn, unsigned long long flags, int* status) {
  return ApiCall("hipGetDriverEntryPoint", [&] { return DriverEntryPoint(symbol, fn, flags, status); });
}

// The per-thread-stream spelling: the default flag means per-thread.
HIPR_EXPORT hipError_t hipGetDriverEntryPoint_spt(const char* symbol, void** fn, unsigned long long flags,
                                                  int* status) {
  return ApiCall("hipGetDriverEntryPoint_spt", [&] {
    return DriverEntryPoint(symbol, fn, flags == kEntryPointDefault ? kEntryPointPerThreadStream : flags, status);
  });
}

// ROCm 4.2+ (exported by the 7.x library): how many elements of `desc`'s
// format a 1-D texture over linear memory may hold on `device`: the device's
// maxTexture1DLinear (bytes) over the element size, as ROCm's runtime
// computes it.
HIPR_EXPORT hipError_t hipDeviceGetTexture1DLinearMaxWidth(size_t* max_width, const hipChannelFormatDesc* desc,
                                                           int device) {
  return ApiCall("hipDeviceGetTexture1DLinearMaxWidth", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (max_width == nullptr || desc == nullptr) return hipErrorInvalidValue;
    if (desc->x < 0 || desc->y < 0 || desc->z < 0 || desc->w < 0) return hipErrorInvalidValue;
    if (device < 0 || device >= s->device_count()) return hipErrorInvalidDevice;
    const size_t element_bytes = (static_cast<size_t>(desc->x) + desc->y + desc->z + desc->w) / 8;
    if (element_bytes == 0) return hipErrorInvalidValue;
    *max_width = static_cast<size_t>(s->devices()[device].max_texture_1d_linear) / element_bytes;
    return hipSuccess;
  });
}

namespace {

// Waits for all work of the current device (hipDeviceSynchronize,
// hipCtxSynchronize).
hipError_t SynchronizeCurrentDevice() {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  int device = 0;
  if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
  // Refused while any stream captures, in any mode (clr), which invalidates them.
  if (hipError_t e = Graphs().CheckNoCapture(); e != hipSuccess) return e;
  Client& c = Client::Get();
  if (Managed().empty() && c.ledger().Clean() && !c.handles().StreamDestroyedSinceSync(device)) {
    // As hipStreamSynchronize's rule (api_stream_event.cc), for every stream
    // of the device: nothing the host can observe is queued anywhere, so
    // later work on any stream is ordered after all of the device's by one
    // fence raised on each of its streams in turn (each waits for the fence
    // before it, so the last covers them all). No round trip. A stream
    // destroyed since the last synchronize may still run work no fence can
    // follow: then it waits.
    stats::Add(stats::Get().waits_skipped);
    HIPR_LOG_DEBUG("hipDeviceSynchronize: nothing the host can observe is queued on device %d; returning behind "
                   "a stream fence", device);
    Status st = c.fences().Raise(*s, device, 0);
    for (uint64_t stream : c.handles().StreamIdsOf(device))
      if (st.ok()) st = c.fences().Raise(*s, device, stream);
    return ToHipError(st);
  }
  msg::CallReply reply;
  const Client::SyncTicket ticket = c.BeginSync(device, Client::kWholeDevice);
  Status st = s->Call<wire::Op::kDeviceSynchronize>(msg::DeviceRequest{device}, &reply);
  const hipError_t result = AfterSync(*s, device, 0, st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st));
  Client::Get().EndSync(ticket, result);
  return result;
}

// Resets `device` (hipDeviceReset for the current one,
// hipDevicePrimaryCtxReset for any).
hipError_t ResetDevice(Remote* s, int device) {
  msg::CallReply reply;
  Status st = s->Call<wire::Op::kDeviceReset>(msg::DeviceRequest{device}, &reply);
  if (!st.ok()) return ToHipError(st);
  if (reply.error == hipSuccess) {
    // The worker freed the device's memory, streams and events.
    Client& c = Client::Get();
    c.ForgetDeviceState(device);
    c.set_device_flags(device, hipDeviceScheduleSpin);  // Back to the default, as clr's Device::Reset.
    // Managed allocations on the device are gone with its memory: inside the
    // window their mirrors' pages return to the reservation (outside it, the
    // allocation's own reservation was released with the allocation map).
    for (const auto& [address, size] : Managed().ForgetDevice(s, device))
      if (c.windows().Contains(address)) ReserveAgain(address, RoundUpToPage(size));
    // Modules are loaded again, under new ids, at their next use.
    ForgetModuleLoads(s, device);
  }
  return static_cast<hipError_t>(reply.error);
}

}  // namespace

HIPR_EXPORT hipError_t hipDeviceSynchronize() {
  return ApiCall("hipDeviceSynchronize", [&] { return SynchronizeCurrentDevice(); });
}

HIPR_EXPORT hipError_t hipDeviceReset() {
  return ApiCall("hipDeviceReset", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    return ResetDevice(s, device);
  });
}

// --- Context stack, context queries and deprecated context management -------
// Contexts are the devices' primary contexts (clr's model): hipCtxCreate
// hands out the device's primary context and pushes it, hipCtxDestroy takes
// it off the calling thread's stack; the context itself lives as long as the
// device, as clr's.

HIPR_EXPORT hipError_t hipCtxPushCurrent(hipCtx_t ctx) {
  return ApiCall("hipCtxPushCurrent", [&] {
    if (ctx == nullptr) return LiveSession() != nullptr ? hipErrorInvalidContext : hipErrorNoDevice;
    int device = 0;
    if (hipError_t e = ContextDevice(ctx, &device); e != hipSuccess) return e;
    SetCurrentDevice(device);
    t_context_stack.push_back(device);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipCtxPopCurrent(hipCtx_t* ctx) {
  return ApiCall("hipCtxPopCurrent", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (t_context_stack.empty()) return hipErrorInvalidContext;  // As clr: nothing pushed.
    if (ctx != nullptr) *ctx = ContextToken(t_context_stack.back());
    PopContext();
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipCtxCreate(hipCtx_t* ctx, unsigned int flags, hipDevice_t device) {
  return ApiCall("hipCtxCreate", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (ctx == nullptr) return hipErrorInvalidValue;
    // As clr: an unknown device is an invalid value here.
    if (device < 0 || device >= Client::kMaxDevices || CheckDevice(*s, device) != hipSuccess)
      return hipErrorInvalidValue;
    if (hipError_t e = SetDeviceFlags(device, flags, /*keep_all=*/true); e != hipSuccess) return e;
    SetCurrentDevice(device);
    t_context_stack.push_back(device);
    *ctx = ContextToken(device);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipCtxDestroy(hipCtx_t ctx) {
  return ApiCall("hipCtxDestroy", [&] {
    if (ctx == nullptr) return LiveSession() != nullptr ? hipErrorInvalidValue : hipErrorNoDevice;
    int device = 0;
    if (hipError_t e = ContextDevice(ctx, &device); e != hipSuccess) return e;
    // As clr: the context leaves the calling thread's stack if on top.
    if (!t_context_stack.empty() && t_context_stack.back() == device) PopContext();
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipCtxSynchronize() {
  return ApiCall("hipCtxSynchronize", [&] { return SynchronizeCurrentDevice(); });
}

// The current context's flags: its device's (hipSetDeviceFlags, hipCtxCreate).
HIPR_EXPORT hipError_t hipCtxGetFlags(unsigned int* flags) {
  return ApiCall("hipCtxGetFlags", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (flags == nullptr) return hipErrorInvalidValue;
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    *flags = Client::Get().device_flags(device);
    return hipSuccess;
  });
}

// The HIP version of the runtime that serves the context (the worker's, as
// hipRuntimeGetVersion).
HIPR_EXPORT hipError_t hipCtxGetApiVersion(hipCtx_t ctx, int* api_version) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipCtxGetApiVersion", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (api_version == nullptr) return hipErrorInvalidValue;
    int device = 0;
    if (hipError_t e = ContextDevice(ctx, &device); e != hipSuccess) return e;
    *api_version = VersionForMajor(s->runtime_version(), major);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipCtxSetCacheConfig(hipFuncCache_t config) {
  return ApiCall("hipCtxSetCacheConfig", [&] { return SetCacheConfig(config); });
}

HIPR_EXPORT hipError_t hipCtxGetCacheConfig(hipFuncCache_t* config) {
  return ApiCall("hipCtxGetCacheConfig", [&] { return GetCacheConfig(config); });
}

HIPR_EXPORT hipError_t hipCtxEnablePeerAccess(hipCtx_t peer_ctx, unsigned int flags) {
  return ApiCall("hipCtxEnablePeerAccess", [&] {
    int peer = 0;
    if (hipError_t e = ContextDevice(peer_ctx, &peer); e != hipSuccess) return e;
    return EnablePeer(peer, flags);
  });
}

HIPR_EXPORT hipError_t hipCtxDisablePeerAccess(hipCtx_t peer_ctx) {
  return ApiCall("hipCtxDisablePeerAccess", [&] {
    int peer = 0;
    if (hipError_t e = ContextDevice(peer_ctx, &peer); e != hipSuccess) return e;
    return DisablePeer(peer);
  });
}

// Resets `device` whichever device is current (the caller's stays current).
HIPR_EXPORT hipError_t hipDevicePrimaryCtxReset(hipDevice_t device) {
  return ApiCall("hipDevicePrimaryCtxReset", [&] {
    if (hipError_t e = PrimaryContextCall(device); e != hipSuccess) return e;
    return ResetDevice(LiveSession(), device);
  });
}

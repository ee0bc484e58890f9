// Virtual memory management: hipMemAddressReserve, hipMemCreate, hipMemMap,
// hipMemSetAccess and the rest, as PyTorch's expandable segments use them
// (reserve a large range once, map physical chunks into it as it grows).
//
// The worker chooses each reservation (inside the session window where it
// can, so the client's window already holds the pages; a `hip` worker's
// ranges outside it are reserved here as hipMalloc's are). Physical memory
// is named on the worker by an id this file picks; the hipMemGeneric-
// AllocationHandle_t handed out is a record of it that is never freed, so a
// stale handle is refused, never dereferenced. A mapping is a device
// allocation (DeviceAllocation::vmm) that copies and kernels reach like any
// other; a copy may run across adjacent mappings.
//
// References: hipMemCreate and each hipMemRetainAllocationHandle take one,
// hipMemRelease drops one. The worker lets go of the physical memory when no
// reference and no mapping is left (HIP keeps mapped memory alive after
// hipMemRelease, and the handle can be retained again from its address).
//
// Access is kept per mapping and device; hipMemSetAccess and hipMemUnmap
// name whole mappings (one or several adjacent ones), which is how PyTorch
// calls them.
//
// Shareable handles (hipMemExportToShareableHandle, POSIX file
// descriptors): the worker's name for the physical memory (64 bytes, as an
// IPC memory handle) in a memfd of this process. The descriptor travels to
// another process as any descriptor does (SCM_RIGHTS, pidfd_getfd); there
// hipMemImportFromShareableHandle reads the name and its session, on the
// same worker, imports the memory.
#include <hip/hip_runtime_api.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "client_stub/abi/abi_major.h"
#include "client_stub/api/api_common.h"
#include "client_stub/vmm/vmm_state.h"
#include "protocol/thread_annotations.h"

using namespace hipr;
using namespace hipr::client;
using namespace hipr::client::vmm;

namespace {

// Address reservations are made by device 0's worker. Where HIPR_SERVER
// lists several workers, only memory of that worker's devices maps into
// them: no worker can map another's memory.
constexpr int kReservations = 0;

hipError_t OtherWorker(const char* function) {
  HIPR_LOG_ONCE(kWarn, "%s: virtual memory reservations are device 0's worker's, and this memory or device is "
                       "another worker's (HIPR_SERVER lists several); returning hipErrorNotSupported", function);
  return hipErrorNotSupported;
}

// hipMemImportFromShareableHandle's descriptor. ROCm 7.1 and later take it,
// as CUDA does, cast to a pointer; earlier ROCm took a pointer to it, and
// callers built for those (PyTorch below ROCm 7.1) pass &fd. A major does
// not tell 7.0 from 7.1, but the value does: descriptors stay below
// fs.nr_open (2^20 by default) and nothing maps a variable there (programs
// load at 4 MiB and up), so a value from 1 MiB up is the pointer.
int DescriptorOf(void* os_handle) {
  constexpr uintptr_t kLowestPointer = uintptr_t{1} << 20;
  const uintptr_t v = reinterpret_cast<uintptr_t>(os_handle);
  if (v < kLowestPointer) return static_cast<int>(v);
  int fd = -1;
  std::memcpy(&fd, os_handle, sizeof fd);
  return fd;
}

// The session's virtual memory granularity on `device`, or 0 (an older
// worker that does not report it: virtual memory is then not supported).
uint64_t Granularity(const Remote& s, int device) {
  return device >= 0 && device < static_cast<int>(s.devices().size()) ? s.devices()[device].vmm_granularity : 0;
}

// hipMemAllocationProp changed layout with 6.0 (same 32 bytes): 5.x leads
// with compressionType, then location, requestedHandleType, type, usage and
// the Win32 metadata; 6.x/7.x with type, requestedHandleType, location and
// the metadata, then allocFlags {compressionType, gpuDirectRDMACapable,
// usage}. Entry points read and write the caller's own (abi_major.h); this
// file keeps Debian's 5.x struct.
struct MemAllocationProp6 {
  hipMemAllocationType type;
  hipMemAllocationHandleType requestedHandleType;
  hipMemLocation location;
  void* win32HandleMetaData;
  struct {
    unsigned char compressionType;
    unsigned char gpuDirectRDMACapable;
    unsigned short usage;
  } allocFlags;
};
static_assert(sizeof(MemAllocationProp6) == 32 && sizeof(hipMemAllocationProp) == 32);
static_assert(offsetof(MemAllocationProp6, location) == 8 && offsetof(MemAllocationProp6, allocFlags) == 24);
static_assert(offsetof(hipMemAllocationProp, location) == 4 && offsetof(hipMemAllocationProp, type) == 16);

hipMemAllocationProp PropFrom(const void* caller_prop, int major) {
  if (major < 6) return *static_cast<const hipMemAllocationProp*>(caller_prop);
  const auto* p6 = static_cast<const MemAllocationProp6*>(caller_prop);
  hipMemAllocationProp p{};
  p.compressionType = p6->allocFlags.compressionType;
  p.location = p6->location;
  p.requestedHandleType = p6->requestedHandleType;
  p.type = p6->type;
  p.usage = p6->allocFlags.usage;
  p.win32HandleMetaData = p6->win32HandleMetaData;
  return p;
}

void PropTo(const hipMemAllocationProp& p, int major, void* caller_prop) {
  if (major < 6) {
    *static_cast<hipMemAllocationProp*>(caller_prop) = p;
    return;
  }
  MemAllocationProp6 p6{};
  p6.type = p.type;
  p6.requestedHandleType = p.requestedHandleType;
  p6.location = p.location;
  p6.win32HandleMetaData = p.win32HandleMetaData;
  p6.allocFlags.compressionType = p.compressionType;
  p6.allocFlags.usage = p.usage;
  *static_cast<MemAllocationProp6*>(caller_prop) = p6;
}

bool ValidDeviceProp(const Remote& s, const hipMemAllocationProp* prop) {
  return prop != nullptr && prop->type == hipMemAllocationTypePinned &&
         prop->location.type == hipMemLocationTypeDevice && prop->location.id >= 0 &&
         prop->location.id < static_cast<int>(s.devices().size());
}

// hipMemLocationTypeHost, HostNuma and HostNumaCurrent (ROCm 7.1; Debian's
// 5.2 header stops at Device).
constexpr int kLocationHost = 2;
constexpr int kLocationHostNumaCurrent = 4;
bool HostLocation(int type) { return type >= kLocationHost && type <= kLocationHostNumaCurrent; }

// Host-located physical memory (hipMemCreate with a host location, ROCm
// 7.1+): pinned RAM that host code and the GPU both reach through one
// mapping. The RAM here is this client's and the GPU is the worker's, so
// hipr cannot make it; a 7.x caller (who may ask) is told so. Earlier
// majors had no host location: hipErrorInvalidValue, as ROCm answered.
hipError_t HostLocatedMemory(const char* api, int major) {
  if (major < 7) return hipErrorInvalidValue;
  HIPR_LOG_ONCE(kWarn,
                "%s: host-located virtual memory (a hipMemLocationTypeHost* location) is not supported by hipr: "
                "the GPU is on the worker, out of reach of this machine's RAM; returning hipErrorNotSupported",
                api);
  return hipErrorNotSupported;
}

hipError_t NoGranularity() {
  HIPR_LOG_ONCE(kWarn, "virtual memory: the worker does not report its granularity (an older worker); "
                       "returning hipErrorNotSupported");
  return hipErrorNotSupported;
}

}  // namespace

HIPR_EXPORT hipError_t hipMemGetAllocationGranularity(size_t* granularity, const hipMemAllocationProp* caller_prop,
                                                      hipMemAllocationGranularity_flags option) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipMemGetAllocationGranularity", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (caller_prop == nullptr) return hipErrorInvalidValue;
    const hipMemAllocationProp read = PropFrom(caller_prop, major);
    const hipMemAllocationProp* prop = &read;
    if (granularity != nullptr && prop->type == hipMemAllocationTypePinned && HostLocation(prop->location.type))
      return HostLocatedMemory("hipMemGetAllocationGranularity", major);
    if (granularity == nullptr || !ValidDeviceProp(*s, prop) ||
        (option != hipMemAllocationGranularityMinimum && option != hipMemAllocationGranularityRecommended))
      return hipErrorInvalidValue;
    const uint64_t g = Granularity(*s, prop->location.id);
    if (g == 0) return NoGranularity();
    *granularity = g;  // clr gives the same for both options.
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipMemAddressReserve(void** ptr, size_t size, size_t alignment, void* addr,
                                            unsigned long long flags) {
  return ApiCall("hipMemAddressReserve", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (ptr == nullptr || flags != 0) return hipErrorInvalidValue;
    const uint64_t g = Granularity(*s, 0);  // As clr: device 0's granularity serves all.
    if (g == 0) return NoGranularity();
    if (size == 0 || size % g != 0 || (alignment & (alignment - 1)) != 0) return hipErrorMemoryAllocation;
    *ptr = nullptr;
    Client& c = Client::Get();
    // Addresses a lease holds for hipMalloc are the program's to have.
    if (addr != nullptr && c.leases().Holds(reinterpret_cast<uint64_t>(addr), size))
      (void)ReleaseKept(c, *s, -1);
    msg::VmmReserveReply reply;
    Reservation r{size, false};
    // A range that lands on this process's memory is freed and, once the
    // device has set that memory's addresses aside, reserved again.
    for (int attempt = 0;; ++attempt) {
      Status st = s->Call<wire::Op::kVmmReserve>(
          kReservations, msg::VmmReserveRequest{size, alignment, reinterpret_cast<uint64_t>(addr)}, &reply);
      if (!st.ok()) return ToHipError(st);
      if (reply.error != hipSuccess) return static_cast<hipError_t>(reply.error);
      std::string why;
      if (PlaceAllocation(c, reply.address, size, &r.outside_window, &why)) break;
      msg::CallReply freed;
      (void)s->Call<wire::Op::kVmmFree>(kReservations, msg::VmmRangeRequest{reply.address, size}, &freed);
      if (attempt == 0 && freed.error == hipSuccess && FenceOffHostMapping(*s, kReservations, reply.address, size, reply.address))
        continue;
      HIPR_LOG_ERROR("hipMemAddressReserve: the worker reserved 0x%llx (+%zu), which collides with this process's "
                     "memory: %s", static_cast<unsigned long long>(reply.address), size, why.c_str());
      return hipErrorOutOfMemory;
    }
    VmmState& vmm = State();
    MutexLock lock(vmm.mu);
    Adopt(vmm, s);
    vmm.reservations[reply.address] = r;
    *ptr = reinterpret_cast<void*>(reply.address);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipMemAddressFree(void* dev_ptr, size_t size) {
  return ApiCall("hipMemAddressFree", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (dev_ptr == nullptr || size == 0) return hipErrorInvalidValue;
    const uint64_t base = reinterpret_cast<uint64_t>(dev_ptr);
    VmmState& vmm = State();
    MutexLock lock(vmm.mu);
    Adopt(vmm, s);
    auto it = vmm.reservations.find(base);
    if (it == vmm.reservations.end() || it->second.size != size) return hipErrorInvalidValue;
    auto mapped = vmm.mappings.lower_bound(base);
    if (mapped != vmm.mappings.end() && mapped->first < base + size) {
      HIPR_LOG_ERROR("hipMemAddressFree: memory is still mapped at 0x%llx; hipMemUnmap it first",
                     static_cast<unsigned long long>(mapped->first));
      return hipErrorInvalidValue;
    }
    msg::CallReply reply;
    Status st = s->Call<wire::Op::kVmmFree>(kReservations, msg::VmmRangeRequest{base, size}, &reply);
    if (!st.ok()) return ToHipError(st);
    if (reply.error != hipSuccess) return static_cast<hipError_t>(reply.error);
    if (it->second.outside_window) Client::Get().reservations().Release(base, size);
    vmm.reservations.erase(it);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipMemCreate(hipMemGenericAllocationHandle_t* handle, size_t size,
                                    const hipMemAllocationProp* caller_prop, unsigned long long flags) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipMemCreate", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (caller_prop == nullptr) return hipErrorInvalidValue;
    const hipMemAllocationProp read = PropFrom(caller_prop, major);
    const hipMemAllocationProp* prop = &read;
    if (handle != nullptr && size != 0 && flags == 0 && prop->type == hipMemAllocationTypePinned &&
        HostLocation(prop->location.type))
      return HostLocatedMemory("hipMemCreate", major);
    if (handle == nullptr || size == 0 || flags != 0 || !ValidDeviceProp(*s, prop)) return hipErrorInvalidValue;
    // As clr: none, or a POSIX file descriptor (what PyTorch asks for).
    if (prop->requestedHandleType != hipMemHandleTypeNone &&
        prop->requestedHandleType != hipMemHandleTypePosixFileDescriptor)
      return hipErrorNotSupported;
    const uint64_t g = Granularity(*s, prop->location.id);
    if (g == 0) return NoGranularity();
    if (size % g != 0) return hipErrorInvalidValue;
    VmmState& vmm = State();
    MutexLock lock(vmm.mu);
    Adopt(vmm, s);
    auto* p = new PhysicalRecord;
    p->session = s;
    p->id = vmm.next_id++;
    p->size = size;
    p->prop = *prop;
    p->refs = 1;
    msg::CallReply reply;
    Status st = s->Call<wire::Op::kVmmCreate>(msg::VmmCreateRequest{prop->location.id, p->id, size}, &reply);
    // Memory kept for hipMalloc is the program's to have.
    if (st.ok() && reply.error == hipErrorOutOfMemory && GiveBackKept(Client::Get(), *s, prop->location.id))
      st = s->Call<wire::Op::kVmmCreate>(msg::VmmCreateRequest{prop->location.id, p->id, size}, &reply);
    if (!st.ok() || reply.error != hipSuccess) {
      delete p;  // Never handed out.
      return st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st);
    }
    vmm.live.insert(p);
    *handle = reinterpret_cast<hipMemGenericAllocationHandle_t>(p);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipMemRelease(hipMemGenericAllocationHandle_t handle) {
  return ApiCall("hipMemRelease", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (handle == nullptr) return hipErrorInvalidValue;
    VmmState& vmm = State();
    MutexLock lock(vmm.mu);
    Adopt(vmm, s);
    PhysicalRecord* p = Live(vmm, handle);
    if (p == nullptr || p->refs == 0) return hipErrorInvalidValue;
    --p->refs;
    return MaybeRelease(vmm, *s, p);
  });
}

HIPR_EXPORT hipError_t hipMemGetAllocationPropertiesFromHandle(hipMemAllocationProp* prop,
                                                               hipMemGenericAllocationHandle_t handle) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipMemGetAllocationPropertiesFromHandle", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (prop == nullptr || handle == nullptr) return hipErrorInvalidValue;
    VmmState& vmm = State();
    MutexLock lock(vmm.mu);
    Adopt(vmm, s);
    PhysicalRecord* p = Live(vmm, handle);
    if (p == nullptr || p->refs == 0) return hipErrorInvalidValue;
    PropTo(p->prop, major, prop);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipMemRetainAllocationHandle(hipMemGenericAllocationHandle_t* handle, void* addr) {
  return ApiCall("hipMemRetainAllocationHandle", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (handle == nullptr || addr == nullptr) return hipErrorInvalidValue;
    VmmState& vmm = State();
    MutexLock lock(vmm.mu);
    Adopt(vmm, s);
    auto it = MappingAt(vmm, reinterpret_cast<uint64_t>(addr));
    if (it == vmm.mappings.end()) return hipErrorInvalidValue;
    ++it->second.physical->refs;
    *handle = reinterpret_cast<hipMemGenericAllocationHandle_t>(it->second.physical);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipMemMap(void* ptr, size_t size, size_t offset, hipMemGenericAllocationHandle_t handle,
                                 unsigned long long flags) {
  return ApiCall("hipMemMap", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (ptr == nullptr || handle == nullptr || size == 0 || offset != 0 || flags != 0) return hipErrorInvalidValue;
    const uint64_t base = reinterpret_cast<uint64_t>(ptr);
    VmmState& vmm = State();
    MutexLock lock(vmm.mu);
    Adopt(vmm, s);
    PhysicalRecord* p = Live(vmm, handle);
    if (p == nullptr || p->refs == 0 || size > p->size || base + size < base) return hipErrorInvalidValue;
    auto r = vmm.reservations.upper_bound(base);
    if (r == vmm.reservations.begin() || base + size > std::prev(r)->first + std::prev(r)->second.size) {
      HIPR_LOG_DEBUG("hipMemMap: 0x%llx (+%zu) is not inside one reservation of this process",
                     static_cast<unsigned long long>(base), size);
      return hipErrorInvalidValue;
    }
    if (!s->SameWorker(kReservations, p->prop.location.id)) return OtherWorker("hipMemMap");
    msg::CallReply reply;
    Status st = s->Call<wire::Op::kVmmMap>(kReservations, msg::VmmMapRequest{base, size, offset, p->id}, &reply);
    if (!st.ok()) return ToHipError(st);
    if (reply.error != hipSuccess) return static_cast<hipError_t>(reply.error);
    DeviceAllocation a;
    a.base = base;
    a.size = size;
    a.device = p->prop.location.id;
    a.vmm = true;  // The reservation holds the pages (outside_window stays false).
    if (!Client::Get().allocations().AddDevice(a)) {
      HIPR_LOG_ERROR("hipMemMap: the worker mapped 0x%llx (+%zu), overlapping a live allocation",
                     static_cast<unsigned long long>(base), size);
      return hipErrorUnknown;
    }
    vmm.mappings[base] = Mapping{size, p, std::vector<uint8_t>(s->devices().size(), hipMemAccessFlagsProtNone)};
    ++p->maps;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipMemUnmap(void* ptr, size_t size) {
  return ApiCall("hipMemUnmap", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (ptr == nullptr || size == 0) return hipErrorInvalidValue;
    const uint64_t base = reinterpret_cast<uint64_t>(ptr);
    VmmState& vmm = State();
    MutexLock lock(vmm.mu);
    Adopt(vmm, s);
    std::vector<uint64_t> bases;
    if (!WholeMappings(vmm, base, size, &bases)) return hipErrorInvalidValue;
    msg::CallReply reply;
    Status st = s->Call<wire::Op::kVmmUnmap>(kReservations, msg::VmmRangeRequest{base, size}, &reply);
    if (!st.ok()) return ToHipError(st);
    if (reply.error != hipSuccess) return static_cast<hipError_t>(reply.error);
    hipError_t result = hipSuccess;
    for (uint64_t b : bases) {
      DeviceAllocation removed;
      (void)Client::Get().allocations().RemoveDevice(b, &removed);
      PhysicalRecord* p = vmm.mappings.at(b).physical;
      vmm.mappings.erase(b);
      --p->maps;
      if (hipError_t e = MaybeRelease(vmm, *s, p); e != hipSuccess) result = e;
    }
    return result;
  });
}

HIPR_EXPORT hipError_t hipMemSetAccess(void* ptr, size_t size, const hipMemAccessDesc* desc, size_t count) {
  return ApiCall("hipMemSetAccess", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (ptr == nullptr || size == 0 || desc == nullptr || count == 0) return hipErrorInvalidValue;
    msg::VmmSetAccessRequest req{reinterpret_cast<uint64_t>(ptr), size, {}};
    for (size_t i = 0; i < count; ++i) {
      const hipMemAccessDesc& d = desc[i];
      if (static_cast<int>(d.location.type) == kLocationHost) {
        // ROCm 7.1+ grants host access to host-located memory only, and
        // hipr's is all on the device: refused as ROCm refuses it there.
        HIPR_LOG_ONCE(kInfo, "hipMemSetAccess: host access to device memory is refused (hipErrorInvalidValue), as "
                             "ROCm refuses it: only host-located memory takes a host location, and hipr has none");
        return hipErrorInvalidValue;
      }
      if (d.location.type != hipMemLocationTypeDevice || d.location.id < 0 ||
          d.location.id >= static_cast<int>(s->devices().size()))
        return hipErrorInvalidValue;
      if (d.flags != hipMemAccessFlagsProtNone && d.flags != hipMemAccessFlagsProtRead &&
          d.flags != hipMemAccessFlagsProtReadWrite)
        return hipErrorInvalidValue;
      req.access.push_back(msg::VmmAccess{d.location.id, static_cast<uint32_t>(d.flags)});
    }
    VmmState& vmm = State();
    MutexLock lock(vmm.mu);
    Adopt(vmm, s);
    std::vector<uint64_t> bases;
    if (!WholeMappings(vmm, req.address, size, &bases)) {
      HIPR_LOG_DEBUG("hipMemSetAccess: 0x%llx (+%zu) is not whole mappings", static_cast<unsigned long long>(req.address),
                     size);
      return hipErrorInvalidValue;
    }
    msg::VmmSetAccessRequest local = req;  // In the worker's own ordinals.
    for (msg::VmmAccess& a : local.access) {
      if (!s->SameWorker(kReservations, a.device)) return OtherWorker("hipMemSetAccess");
      a.device = s->LocalOf(a.device);
    }
    msg::CallReply reply;
    Status st = s->Call<wire::Op::kVmmSetAccess>(kReservations, local, &reply);
    if (!st.ok()) return ToHipError(st);
    if (reply.error != hipSuccess) return static_cast<hipError_t>(reply.error);
    for (uint64_t b : bases)
      for (const msg::VmmAccess& a : req.access) vmm.mappings.at(b).access[static_cast<size_t>(a.device)] = a.flags;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipMemGetAccess(unsigned long long* flags, const hipMemLocation* location, void* ptr) {
  return ApiCall("hipMemGetAccess", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (flags == nullptr || location == nullptr || ptr == nullptr || location->type != hipMemLocationTypeDevice ||
        location->id < 0 || location->id >= static_cast<int>(s->devices().size()))
      return hipErrorInvalidValue;
    VmmState& vmm = State();
    MutexLock lock(vmm.mu);
    Adopt(vmm, s);
    auto it = MappingAt(vmm, reinterpret_cast<uint64_t>(ptr));
    if (it == vmm.mappings.end()) return hipErrorInvalidValue;
    *flags = it->second.access[static_cast<size_t>(location->id)];
    return hipSuccess;
  });
}

namespace {

// The worker's device cannot share physical memory between sessions (the
// hip device: the runtime's handles are descriptors of one session process).
hipError_t NoShareableMemory(const char* function) {
  HIPR_LOG_ONCE(kWarn, "%s: the worker's device has no shareable memory handles (docs/operations.md); "
                       "returning hipErrorNotSupported", function);
  return hipErrorNotSupported;
}

}  // namespace

HIPR_EXPORT hipError_t hipMemExportToShareableHandle(void* shareable_handle, hipMemGenericAllocationHandle_t handle,
                                                     hipMemAllocationHandleType handle_type,
                                                     unsigned long long flags) {
  return ApiCall("hipMemExportToShareableHandle", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (shareable_handle == nullptr || handle == nullptr || flags != 0) return hipErrorInvalidValue;
    VmmState& vmm = State();
    MutexLock lock(vmm.mu);
    Adopt(vmm, s);
    PhysicalRecord* p = Live(vmm, handle);
    // As clr: the type asked for at hipMemCreate, and only a descriptor.
    if (p == nullptr || p->refs == 0 || handle_type != p->prop.requestedHandleType ||
        handle_type != hipMemHandleTypePosixFileDescriptor)
      return hipErrorInvalidValue;
    if (!s->HasCapability(wire::kCapabilityShareableMemory)) return NoShareableMemory("hipMemExportToShareableHandle");
    msg::IpcGetMemHandleReply reply;
    Status st = s->Call<wire::Op::kVmmExport>(p->prop.location.id, msg::VmmHandleRequest{p->id}, &reply);
    if (!st.ok()) return ToHipError(st);
    if (reply.error != hipSuccess) return static_cast<hipError_t>(reply.error);
    if (reply.handle.size() != msg::kIpcMemHandleBytes) {
      HIPR_LOG_ERROR("hipMemExportToShareableHandle: the worker sent a %zu-byte name", reply.handle.size());
      return hipErrorUnknown;
    }
    const int fd = memfd_create("hipr-shareable-memory", MFD_CLOEXEC);
    if (fd < 0) {
      HIPR_LOG_ERROR("hipMemExportToShareableHandle: memfd_create: %s", std::strerror(errno));
      return hipErrorOutOfMemory;
    }
    if (pwrite(fd, reply.handle.data(), reply.handle.size(), 0) != static_cast<ssize_t>(reply.handle.size())) {
      HIPR_LOG_ERROR("hipMemExportToShareableHandle: writing the handle: %s", std::strerror(errno));
      close(fd);
      return hipErrorOutOfMemory;
    }
    *static_cast<int*>(shareable_handle) = fd;  // The caller's to close.
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipMemImportFromShareableHandle(hipMemGenericAllocationHandle_t* handle, void* os_handle,
                                                       hipMemAllocationHandleType handle_type) {
  return ApiCall("hipMemImportFromShareableHandle", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (handle == nullptr || os_handle == nullptr || handle_type != hipMemHandleTypePosixFileDescriptor)
      return hipErrorInvalidValue;
    if (!s->HasCapability(wire::kCapabilityShareableMemory)) return NoShareableMemory("hipMemImportFromShareableHandle");
    const int fd = DescriptorOf(os_handle);
    msg::VmmImportRequest req;
    req.token.resize(msg::kIpcMemHandleBytes);
    if (pread(fd, req.token.data(), req.token.size(), 0) != static_cast<ssize_t>(req.token.size())) {
      HIPR_LOG_DEBUG("hipMemImportFromShareableHandle: descriptor %d holds no hipr handle", fd);
      return hipErrorInvalidValue;
    }
    if (hipError_t e = CurrentDeviceOf(*s, &req.device); e != hipSuccess) return e;
    VmmState& vmm = State();
    MutexLock lock(vmm.mu);
    Adopt(vmm, s);
    auto* p = new PhysicalRecord;
    p->session = s;
    p->id = vmm.next_id++;
    p->prop.type = hipMemAllocationTypePinned;
    p->prop.location.type = hipMemLocationTypeDevice;
    p->prop.location.id = req.device;
    p->prop.requestedHandleType = handle_type;
    p->refs = 1;
    req.handle = p->id;
    msg::VmmImportReply reply;
    Status st = s->Call<wire::Op::kVmmImport>(req, &reply);
    if (st.ok() && reply.error == hipErrorOutOfMemory && GiveBackKept(Client::Get(), *s, req.device))
      st = s->Call<wire::Op::kVmmImport>(req, &reply);
    if (!st.ok() || reply.error != hipSuccess) {
      delete p;  // Never handed out.
      return st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st);
    }
    p->size = reply.size;
    vmm.live.insert(p);
    *handle = reinterpret_cast<hipMemGenericAllocationHandle_t>(p);
    return hipSuccess;
  });
}

// Memory entry points: device allocation (on the worker, recorded in the
// client's allocation map), pinned host allocation (local page-aligned
// memory recorded as pinned), pointer queries and hipMemGetInfo.
#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <vector>

#include "client_stub/abi/abi_major.h"
#include "client_stub/api/api_common.h"
#include "client_stub/graphs/graph.h"
#include "client_stub/managed/managed_vars.h"

using namespace hipr;
using namespace hipr::client;

namespace {

// hipHostMallocUncached (7.x headers): clr 7.x accepts it; here pinned
// memory is the client's own either way.
constexpr unsigned kHostMallocUncached = 0x10000000;
constexpr unsigned kHostMallocFlags = hipHostMallocPortable | hipHostMallocMapped |
                                      hipHostMallocWriteCombined | hipHostMallocNumaUser |
                                      hipHostMallocCoherent | hipHostMallocNonCoherent | kHostMallocUncached;


// Tells the worker (the only one: a segment is for one) that [p, p + bytes)
// of the shm host segment now holds
// pinned memory (kHostRegister): copies may name it from then on, and a
// `hip` worker pins it for DMA. hipErrorInvalidValue when the worker
// refuses (logged once; the caller then places the memory elsewhere).
hipError_t RegisterInSegment(Remote& s, void* p, uint64_t bytes) {
  uint64_t offset = 0;
  if (!s.host_segment()->Contains(p, bytes, &offset)) return hipErrorInvalidValue;
  msg::CallReply reply;
  Status st = s.Call<wire::Op::kHostRegister>(/*device=*/0, msg::HostRangeRequest{offset, bytes}, &reply);
  if (!st.ok()) return ToHipError(st);
  if (reply.error != hipSuccess) {
    static constinit std::atomic<bool> logged{false};
    if (!logged.exchange(true))
      HIPR_LOG_WARN("the worker refused pinned memory in the shm host segment (HIP error %d): hipHostMalloc "
                    "falls back to private memory whose copies cross the rings; the worker's log says why",
                    reply.error);
    return hipErrorInvalidValue;
  }
  return hipSuccess;
}

// kHostUnregister: the worker no longer uses [p, p + bytes).
hipError_t UnregisterInSegment(Remote& s, void* p, uint64_t bytes) {
  uint64_t offset = 0;
  if (!s.host_segment()->Contains(p, bytes, &offset)) return hipErrorInvalidValue;
  msg::CallReply reply;
  Status st = s.Call<wire::Op::kHostUnregister>(/*device=*/0, msg::HostRangeRequest{offset, bytes}, &reply);
  if (!st.ok()) return ToHipError(st);
  return static_cast<hipError_t>(reply.error);
}

hipError_t HostMalloc(void** ptr, size_t size, unsigned flags) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (ptr == nullptr) return hipErrorInvalidValue;
  if (size == 0) {
    *ptr = nullptr;
    return hipSuccess;
  }
  constexpr unsigned kCoherence = hipHostMallocCoherent | hipHostMallocNonCoherent;
  if ((flags & kCoherence) == kCoherence || (flags & ~kHostMallocFlags) != 0) return hipErrorInvalidValue;
  const uint64_t mapped = RoundUpToPage(size);
  // Over shm, in the host segment the session process maps too, so copies to
  // and from it move no bytes through the rings; elsewhere (or when it is
  // full) private memory whose bytes are sent.
  Remote* s = LiveSession();
  HostSegment* segment = s->host_segment();
  void* p = segment != nullptr ? segment->Allocate(mapped) : nullptr;
  if (p != nullptr) {
    if (hipError_t e = RegisterInSegment(*s, p, mapped); e != hipSuccess) {
      segment->Free(p, mapped);
      if (e != hipErrorInvalidValue) return e;  // The session died.
      p = nullptr;  // Refused (logged): private memory instead.
    }
  }
  const bool in_segment = p != nullptr;
  if (!in_segment) p = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (p == MAP_FAILED) return hipErrorOutOfMemory;
  PinnedAllocation a;
  a.in_host_segment = in_segment;
  a.base = reinterpret_cast<uint64_t>(p);
  a.size = size;
  a.mapped_size = mapped;
  a.flags = flags;
  a.device = CurrentDevice();
  if (!Client::Get().allocations().AddPinned(a)) {
    if (in_segment) {
      (void)UnregisterInSegment(*s, p, mapped);
      segment->Free(p, mapped);
    } else {
      munmap(p, mapped);
    }
    return hipErrorUnknown;
  }
  *ptr = p;
  return hipSuccess;
}

hipError_t HostFree(void* ptr) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (ptr == nullptr) return hipSuccess;
  PinnedAllocation a;
  if (!Client::Get().allocations().FindPinned(reinterpret_cast<uint64_t>(ptr), 0, &a) || a.registered)
    return hipErrorInvalidValue;  // Registered memory is hipHostUnregister's.
  // Async copies into pinned memory may still be on their way (as natively,
  // hipHostFree waits for the device). A dead session writes nothing more.
  (void)s->AwaitAsyncCopies();
  hipError_t deferred = hipSuccess;
  if (a.in_host_segment) {
    // Async copies from segment memory read it when their stream gets there:
    // every device finishes its work before the pages go. A deferred error
    // this synchronization meets is reported here (the memory is freed all
    // the same), as natively.
    for (int d = 0; d < s->device_count() && deferred == hipSuccess; ++d) {
      msg::CallReply reply;
      Status st = s->Call<wire::Op::kDeviceSynchronize>(msg::DeviceRequest{d}, &reply);
      if (!st.ok()) return ToHipError(st);
      deferred = static_cast<hipError_t>(reply.error);
    }
  }
  if (!Client::Get().allocations().RemovePinned(reinterpret_cast<uint64_t>(ptr), &a))
    return hipErrorInvalidValue;
  // The connection lets go of the pages (rdma: their registration) first.
  s->ForgetMemory(reinterpret_cast<void*>(a.base), std::max(a.size, a.mapped_size));
  if (!a.in_host_segment) {
    munmap(reinterpret_cast<void*>(a.base), a.mapped_size);
  } else if (uint64_t off; s->host_segment() != nullptr &&
                           s->host_segment()->Contains(reinterpret_cast<void*>(a.base), a.mapped_size, &off)) {
    // The worker lets go of the pages before they can be handed out again.
    const hipError_t e = UnregisterInSegment(*s, reinterpret_cast<void*>(a.base), a.mapped_size);
    s->host_segment()->Free(reinterpret_cast<void*>(a.base), a.mapped_size);
    if (deferred == hipSuccess) deferred = e;
  }
  // Else a forked child freeing its parent's segment memory: the parent's
  // session still owns it; dropping the record is all the child may do.
  return deferred;
}

// hipHostRegisterReadOnly (6.x and 7.x headers, 0x08): the device only
// reads the memory; clr accepts it.
constexpr unsigned kHostRegisterReadOnly = 0x08;
constexpr unsigned kHostRegisterFlags =
    hipHostRegisterPortable | hipHostRegisterMapped | hipHostRegisterIoMemory | kHostRegisterReadOnly;

hipError_t MallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (ptr == nullptr || pitch == nullptr) return hipErrorInvalidValue;
  int device = 0;
  if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
  if (width == 0 || height == 0) {
    *pitch = RowPitch(*s, device, width);
    *ptr = nullptr;
    return hipSuccess;
  }
  // A row or a whole that does not fit in size_t is more memory than any
  // device has: hipErrorOutOfMemory, as clr (hip-tests hipMallocPitch).
  const size_t row = RowPitch(*s, device, width);
  if (row == 0 || height > SIZE_MAX / row) return hipErrorOutOfMemory;
  *pitch = row;
  return AllocateDevice(Client::Get(), *s, device, *pitch * height, 0, AllocationRole::kPlain, ptr);
}

}  // namespace

HIPR_EXPORT hipError_t hipMalloc(void** ptr, size_t size) {
  return ApiCall("hipMalloc", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (ptr == nullptr) return hipErrorInvalidValue;
    if (size == 0) {
      *ptr = nullptr;
      return hipSuccess;
    }
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    return AllocateDevice(Client::Get(), *s, device, size, 0, AllocationRole::kPlain, ptr);
  });
}

// hipExtMallocWithFlags' flags, as clr (hipamd/src/hip_memory.cpp) accepts
// them: exactly one value, not a mask. Older headers lack the later ones.
namespace {
constexpr unsigned kDeviceMallocDefault = 0x0;      // hipDeviceMallocDefault
constexpr unsigned kDeviceMallocFinegrained = 0x1;  // hipDeviceMallocFinegrained
constexpr unsigned kMallocSignalMemory = 0x2;       // hipMallocSignalMemory
constexpr unsigned kDeviceMallocUncached = 0x3;     // hipDeviceMallocUncached (ROCm >= 5.3 headers)
constexpr unsigned kDeviceMallocContiguous = 0x4;   // hipDeviceMallocContiguous (ROCm 6.x headers)
}  // namespace

// Device memory with an allocation flag. Natively the flags say how the
// GPU's memory is shared with the host: fine-grained and uncached memory is
// coherent with host accesses while a kernel runs (system-scope atomics, host
// polling), contiguous memory is physically contiguous, signal memory is an
// 8-byte HSA signal for hipStreamWaitValue/WriteValue. Remotely the
// application's host never touches device memory directly: every access is
// a copy the worker makes in stream order, so none of these properties is
// observable from the client, and the worker allocates ordinary device
// memory for every accepted flag (the protocol carries no coherence request;
// hipStreamWaitValue*/WriteValue* work on any device memory, signal memory
// included). Flags clr rejects are hipErrorInvalidValue, as is signal memory
// of a size other than 8.
HIPR_EXPORT hipError_t hipExtMallocWithFlags(void** ptr, size_t size, unsigned int flags) {
  return ApiCall("hipExtMallocWithFlags", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    switch (flags) {
      case kDeviceMallocDefault:
      case kDeviceMallocFinegrained:
      case kDeviceMallocUncached:
      case kDeviceMallocContiguous: break;
      case kMallocSignalMemory:
        if (size != 8) return hipErrorInvalidValue;
        break;
      default: return hipErrorInvalidValue;
    }
    if (ptr == nullptr) return hipErrorInvalidValue;
    if (size == 0) {
      *ptr = nullptr;
      return hipSuccess;
    }
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    return AllocateDevice(Client::Get(), *s, device, size, 0, AllocationRole::kPlain, ptr);
  });
}

namespace {

// clr frees either kind of memory in hipFree and in hipHostFree (one
// ihipFree): hipHostMalloc memory here too.
bool IsHostMalloced(const void* ptr) {
  PinnedAllocation h;
  return ptr != nullptr && Client::Get().allocations().FindPinned(reinterpret_cast<uint64_t>(ptr), 0, &h) &&
         !h.registered;
}

}  // namespace

HIPR_EXPORT hipError_t hipFree(void* ptr) {
  return ApiCall("hipFree", [&] { return IsHostMalloced(ptr) ? HostFree(ptr) : FreeDevice(ptr, true); });
}

namespace {

bool Capturing(const StreamTarget& target) {
  if (!Graphs().AnyCapture()) return false;
  hipStreamCaptureStatus status = hipStreamCaptureStatusNone;
  return Graphs().CaptureInfo(target.id, &status, nullptr, nullptr, nullptr, nullptr) == hipSuccess &&
         status != hipStreamCaptureStatusNone;
}

// A stream-ordered allocation on a capturing stream becomes a memory
// allocation node (graph.h GraphMemory: allocated now, owned by the graph).
// *captured: whether the stream captures (then the call is done).
hipError_t CaptureAlloc(Remote& s, const StreamTarget& target, size_t size, void** ptr, bool* captured) {
  *captured = Capturing(target);
  if (!*captured) return hipSuccess;
  if (size == 0) {
    *ptr = nullptr;
    return hipSuccess;
  }
  std::shared_ptr<GraphMemory> memory;
  if (hipError_t e = Graphs().NewGraphMemory(Client::Get(), s, target.device, size, nullptr, nullptr, 0, &memory);
      e != hipSuccess)
    return e;
  const uint64_t address = memory->address;
  hipError_t result = hipSuccess;
  if (!Graphs().CaptureNode(target.device, target.id, MemAllocNode{std::move(memory)}, &result)) return hipErrorUnknown;
  if (result == hipSuccess) *ptr = reinterpret_cast<void*>(address);
  return result;
}

// A stream-ordered free on a capturing stream: a memory free node for a
// graph's own allocation; any other memory cannot be freed in a capture
// (hipErrorStreamCaptureUnsupported, which invalidates it), as the free
// would happen now while the captured work runs later.
hipError_t CaptureFree(void* ptr, const StreamTarget& target, bool* captured) {
  *captured = Capturing(target);
  if (!*captured || ptr == nullptr) return hipSuccess;
  DeviceAllocation a;
  if (!Client::Get().allocations().FindDevice(reinterpret_cast<uint64_t>(ptr), 0, &a) || !a.graph ||
      a.base != reinterpret_cast<uint64_t>(ptr)) {
    HIPR_LOG_ONCE(kWarn, "hipFreeAsync on a capturing stream of memory no graph allocated: returning "
                         "hipErrorStreamCaptureUnsupported");
    (void)Graphs().CheckNotCapturing(target.device, target.id, false);  // Invalidates the capture.
    return hipErrorStreamCaptureUnsupported;
  }
  hipError_t result = hipSuccess;
  if (!Graphs().CaptureNode(target.device, target.id, MemFreeNode{a.base}, &result)) return hipErrorUnknown;
  return result;
}

}  // namespace

// Stream-ordered allocation: the memory is usable in the stream's order
// once the call returns (allocated at once, which is stronger), and freed
// after the work queued before the free (the worker retires an allocation
// until then, on every stream: stronger than the stream alone).
HIPR_EXPORT hipError_t hipMallocAsync(void** ptr, size_t size, hipStream_t stream) {
  return ApiCall("hipMallocAsync", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (ptr == nullptr) return hipErrorInvalidValue;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
    bool captured = false;
    if (hipError_t e = CaptureAlloc(*s, target, size, ptr, &captured); e != hipSuccess || captured) return e;
    if (size == 0) {
      *ptr = nullptr;
      return hipSuccess;
    }
    return AllocateDevice(Client::Get(), *s, target.device, size, 0, AllocationRole::kPlain, ptr);
  });
}

// From a memory pool: the pool must be live (asked of the worker, which
// holds pools), and the memory is allocated as hipMallocAsync's on the
// stream's device; the pool's usage attributes do not count it.
HIPR_EXPORT hipError_t hipMallocFromPoolAsync(void** ptr, size_t size, hipMemPool_t pool, hipStream_t stream) {
  return ApiCall("hipMallocFromPoolAsync", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (ptr == nullptr || pool == nullptr) return hipErrorInvalidValue;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
    uint64_t threshold = 0;
    if (hipError_t e = hipMemPoolGetAttribute(pool, hipMemPoolAttrReleaseThreshold, &threshold); e != hipSuccess)
      return e;
    bool captured = false;
    if (hipError_t e = CaptureAlloc(*s, target, size, ptr, &captured); e != hipSuccess || captured) return e;
    if (size == 0) {
      *ptr = nullptr;
      return hipSuccess;
    }
    return AllocateDevice(Client::Get(), *s, target.device, size, 0, AllocationRole::kPlain, ptr);
  });
}

// A null pointer is hipSuccess for 7.x callers and hipErrorInvalidValue
// before (AMD's 7.0 changes; per_major.txt).
HIPR_EXPORT hipError_t hipFreeAsync(void* ptr, hipStream_t stream) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipFreeAsync", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (ptr == nullptr && major < 7) return hipErrorInvalidValue;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
    bool captured = false;
    if (hipError_t e = CaptureFree(ptr, target, &captured); e != hipSuccess || captured) return e;
    return FreeDevice(ptr, false);
  });
}

// Pitched 3-D memory: `depth` slices of `height` rows of the pitch.
HIPR_EXPORT hipError_t hipMalloc3D(hipPitchedPtr* out, hipExtent extent) {
  return ApiCall("hipMalloc3D", [&] {
    if (out == nullptr) return hipErrorInvalidValue;
    if (extent.height != 0 && extent.depth > SIZE_MAX / extent.height) return hipErrorOutOfMemory;
    size_t pitch = 0;
    void* ptr = nullptr;
    if (hipError_t e = MallocPitch(&ptr, &pitch, extent.width, extent.height * extent.depth); e != hipSuccess)
      return e;
    *out = hipPitchedPtr{ptr, pitch, extent.width, extent.height};
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipMallocPitch(void** ptr, size_t* pitch, size_t width, size_t height) {
  return ApiCall("hipMallocPitch", [&] { return MallocPitch(ptr, pitch, width, height); });
}

HIPR_EXPORT hipError_t hipMemAllocPitch(hipDeviceptr_t* ptr, size_t* pitch, size_t width, size_t height,
                                        unsigned int element_size) {
  return ApiCall("hipMemAllocPitch", [&] {
    if (element_size != 4 && element_size != 8 && element_size != 16) return hipErrorInvalidValue;
    if (width == 0 || height == 0) return hipErrorInvalidValue;  // As clr, unlike hipMallocPitch.
    return MallocPitch(ptr, pitch, width, height);
  });
}

// The allocation containing `ptr`: its base and size.
HIPR_EXPORT hipError_t hipMemGetAddressRange(hipDeviceptr_t* base, size_t* size, hipDeviceptr_t ptr) {
  return ApiCall("hipMemGetAddressRange", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (ptr == nullptr) return hipErrorNotFound;
    const uint64_t p = reinterpret_cast<uint64_t>(ptr);
    uint64_t found_base = 0;
    uint64_t found_size = 0;
    DeviceAllocation a;
    PinnedAllocation h;
    if (Client::Get().allocations().FindDevice(p, 0, &a)) {
      found_base = a.base;
      found_size = a.size;
    } else if (Client::Get().allocations().FindPinned(p, 0, &h)) {
      // Pinned host memory (hipHostMalloc, hipHostRegister): clr knows it too.
      found_base = h.base;
      found_size = h.size;
    } else {
      return hipErrorNotFound;
    }
    if (base != nullptr) *base = reinterpret_cast<hipDeviceptr_t>(found_base);
    if (size != nullptr) *size = found_size;
    return hipSuccess;
  });
}

// Registers application memory as pinned: async copies to and from it then
// follow pinned semantics (device-to-host copies into it are fire-and-forget).
// The remote device cannot reach it: hipHostGetDevicePointer stays refused.
HIPR_EXPORT hipError_t hipHostRegister(void* ptr, size_t size, unsigned int flags) {
  return ApiCall("hipHostRegister", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (ptr == nullptr || size == 0 || (flags & ~kHostRegisterFlags) != 0) return hipErrorInvalidValue;
    const uint64_t p = reinterpret_cast<uint64_t>(ptr);
    AllocationMap& map = Client::Get().allocations();
    PinnedAllocation existing;
    if (map.FindPinned(p, 0, &existing) || map.FindPinned(p + size - 1, 0, &existing))
      return hipErrorHostMemoryAlreadyRegistered;
    if (map.TouchesDevice(p, size) || Client::Get().windows().Overlaps(p, size)) return hipErrorInvalidValue;
    PinnedAllocation a;
    a.base = p;
    a.size = size;
    a.mapped_size = size;
    a.flags = flags;
    a.device = CurrentDevice();
    a.registered = true;
    return map.AddPinned(a) ? hipSuccess : hipErrorHostMemoryAlreadyRegistered;
  });
}

HIPR_EXPORT hipError_t hipHostUnregister(void* ptr) {
  return ApiCall("hipHostUnregister", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    PinnedAllocation a;
    AllocationMap& map = Client::Get().allocations();
    if (ptr == nullptr || !map.FindPinned(reinterpret_cast<uint64_t>(ptr), 0, &a) || !a.registered ||
        a.base != reinterpret_cast<uint64_t>(ptr))
      return hipErrorHostMemoryNotRegistered;
    (void)s->AwaitAsyncCopies();  // Copies into it may be on their way.
    if (!map.RemovePinned(a.base, &a)) return hipErrorHostMemoryNotRegistered;
    // The application may free the pages once this returns.
    s->ForgetMemory(ptr, std::max(a.size, a.mapped_size));
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipHostMalloc(void** ptr, size_t size, unsigned int flags) {
  return ApiCall("hipHostMalloc", [&] { return HostMalloc(ptr, size, flags); });
}

HIPR_EXPORT hipError_t hipHostAlloc(void** ptr, size_t size, unsigned int flags) {
  return ApiCall("hipHostAlloc", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (ptr == nullptr) return hipErrorInvalidValue;
    if (flags > (hipHostMallocPortable | hipHostMallocMapped | hipHostMallocWriteCombined))
      return hipErrorInvalidValue;
    return HostMalloc(ptr, size, flags);
  });
}

HIPR_EXPORT hipError_t hipMallocHost(void** ptr, size_t size) {
  return ApiCall("hipMallocHost", [&] { return HostMalloc(ptr, size, 0); });
}

// The driver API's name for hipHostMalloc(ptr, size, 0).
HIPR_EXPORT hipError_t hipMemAllocHost(void** ptr, size_t size) {
  return ApiCall("hipMemAllocHost", [&] { return HostMalloc(ptr, size, 0); });
}

namespace {

// Device memory too, as clr (hipFree above).
hipError_t HostOrDeviceFree(void* ptr) {
  DeviceAllocation a;
  if (ptr != nullptr && Client::Get().allocations().FindDevice(reinterpret_cast<uint64_t>(ptr), 0, &a))
    return FreeDevice(ptr, true);
  return HostFree(ptr);
}

}  // namespace

HIPR_EXPORT hipError_t hipHostFree(void* ptr) {
  return ApiCall("hipHostFree", [&] { return HostOrDeviceFree(ptr); });
}

HIPR_EXPORT hipError_t hipFreeHost(void* ptr) {
  return ApiCall("hipFreeHost", [&] { return HostOrDeviceFree(ptr); });
}

HIPR_EXPORT hipError_t hipHostGetDevicePointer(void** dev_ptr, void* host_ptr, unsigned int flags) {
  return ApiCall("hipHostGetDevicePointer", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (dev_ptr == nullptr || flags != 0) return hipErrorInvalidValue;
    PinnedAllocation a;
    if (!Client::Get().allocations().FindPinned(reinterpret_cast<uint64_t>(host_ptr), 0, &a))
      return hipErrorInvalidValue;
    // Natively the device address of mapped pinned memory is its host
    // address; a remote device cannot reach this process's memory, so there
    // is no device pointer to give (shm-placed pinned memory will change that).
    HIPR_LOG_ONCE(kWarn, "hipHostGetDevicePointer: the remote device cannot access this process's "
                         "pinned memory; returning hipErrorNotSupported");
    return hipErrorNotSupported;
  });
}

HIPR_EXPORT hipError_t hipHostGetFlags(unsigned int* flags, void* host_ptr) {
  return ApiCall("hipHostGetFlags", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (flags == nullptr || host_ptr == nullptr) return hipErrorInvalidValue;
    PinnedAllocation a;
    if (!Client::Get().allocations().FindPinned(reinterpret_cast<uint64_t>(host_ptr), 0, &a))
      return hipErrorInvalidValue;
    *flags = a.flags;
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipMemPtrGetInfo(void* ptr, size_t* size) {
  return ApiCall("hipMemPtrGetInfo", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (ptr == nullptr || size == nullptr) return hipErrorInvalidValue;
    const uint64_t p = reinterpret_cast<uint64_t>(ptr);
    DeviceAllocation d;
    PinnedAllocation h;
    if (Client::Get().allocations().FindDevice(p, 0, &d)) {
      *size = d.size;
    } else if (Client::Get().allocations().FindPinned(p, 0, &h)) {
      *size = h.size;
    } else {
      return hipErrorInvalidValue;
    }
    return hipSuccess;
  });
}

namespace {

// hipMemoryType as each major numbers it (docs/architecture.md, "ABI and majors"): 5.x Host=0,
// Device=1, Array=2, Unified=3, Managed=4; 6.x and 7.x Unregistered=0,
// Host=1, Device=2, Managed=3, Array=10, Unified=11.
enum class MemoryKind { kUnregistered, kHost, kDevice, kManaged };

int MemoryTypeFor(MemoryKind kind, int major) {
  if (major >= 6) {
    switch (kind) {
      case MemoryKind::kUnregistered: return 0;
      case MemoryKind::kHost: return 1;
      case MemoryKind::kDevice: return 2;
      case MemoryKind::kManaged: return 3;
    }
  }
  switch (kind) {
    case MemoryKind::kHost: return 0;
    case MemoryKind::kManaged: return 1;  // 5.x reported managed memory as device memory.
    default: return 1;
  }
}

hipError_t PointerAttributes(hipPointerAttribute_t* attributes, const void* ptr, int major) {
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  if (attributes == nullptr || ptr == nullptr) {
    if (major < 7) return hipErrorInvalidValue;
    // 7.x, as CUDA 11+: success; a null pointer is unregistered memory.
    if (attributes != nullptr) *attributes = hipPointerAttribute_t{};
    return hipSuccess;
  }
  const uint64_t p = reinterpret_cast<uint64_t>(ptr);
  DeviceAllocation d;
  PinnedAllocation h;
  hipPointerAttribute_t out{};
  MemoryKind kind = MemoryKind::kUnregistered;
  if (const ManagedVar* v = Managed().FindMirror(ptr, 1); v != nullptr) {
    // Managed memory, addressed the same everywhere (for a __managed__
    // variable, its mirror, which kernel arguments are translated from).
    kind = MemoryKind::kManaged;
    out.device = v->allocation() ? v->device : CurrentDevice();
    out.devicePointer = const_cast<void*>(ptr);
    out.hostPointer = const_cast<void*>(ptr);
    out.isManaged = 1;
  } else if (Client::Get().allocations().FindDevice(p, 0, &d)) {
    kind = MemoryKind::kDevice;
    out.device = d.device;
    out.devicePointer = const_cast<void*>(ptr);
    out.allocationFlags = d.flags;
  } else if (Client::Get().allocations().FindPinned(p, 0, &h)) {
    kind = MemoryKind::kHost;
    out.device = h.device;
    out.devicePointer = const_cast<void*>(ptr);
    out.hostPointer = const_cast<void*>(ptr);
    out.allocationFlags = h.flags;
  } else if (major < 6) {
    return hipErrorInvalidValue;  // HIP 5.x: memory unknown to the runtime.
  }
  // 6.x: memory unknown to the runtime is hipSuccess, Unregistered (0),
  // everything else zero.
  // The first member is 5.2's `memoryType` and 6.x's `type`: an int-sized
  // enum at offset 0 either way.
  out.memoryType = static_cast<hipMemoryType>(MemoryTypeFor(kind, major));
  *attributes = out;
  return hipSuccess;
}

}  // namespace

// Answers in the numbering of the major the caller was linked against
// (abi_major.h): one process may hold a 5.x program and a 6.x library.
HIPR_EXPORT hipError_t hipPointerGetAttributes(hipPointerAttribute_t* attributes, const void* ptr) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipPointerGetAttributes", [&] { return PointerAttributes(attributes, ptr, major); });
}

namespace {

// What the client knows of the memory at a pointer, for the single-attribute
// queries.
struct PointerInfo {
  bool known = false;
  MemoryKind kind = MemoryKind::kUnregistered;
  uint64_t base = 0;
  uint64_t size = 0;
  int device = 0;
  uint32_t flags = 0;
  bool sync_memops = false;
};

PointerInfo FindPointer(const void* ptr) {
  const uint64_t p = reinterpret_cast<uint64_t>(ptr);
  DeviceAllocation d;
  PinnedAllocation h;
  if (const ManagedVar* v = Managed().FindMirror(ptr, 1); v != nullptr)
    return PointerInfo{true, MemoryKind::kManaged, reinterpret_cast<uint64_t>(v->mirror), v->size,
                       v->allocation() ? v->device : CurrentDevice(), 0};
  if (Client::Get().allocations().FindDevice(p, 0, &d))
    return PointerInfo{true, MemoryKind::kDevice, d.base, d.size, d.device, d.flags, d.sync_memops};
  if (Client::Get().allocations().FindPinned(p, 0, &h))
    return PointerInfo{true, MemoryKind::kHost, h.base, h.size, h.device, h.flags, h.sync_memops};
  return PointerInfo{};
}

template <typename T>
void Put(void* data, T value) {
  std::memcpy(data, &value, sizeof value);
}

bool IsPointerAttribute(hipPointer_attribute attribute) {
  return attribute >= HIP_POINTER_ATTRIBUTE_CONTEXT && attribute <= HIP_POINTER_ATTRIBUTE_MEMPOOL_HANDLE;
}

// One attribute of `ptr` into `data`, with clr's sizes and defaults
// (ihipPointerGetAttributes): for memory the runtime does not know (or
// device memory's host pointer) the default is written and
// hipErrorInvalidValue returned. Attributes hipr has no answer for are
// hipErrorNotSupported (logged once), nothing written. MEMORY_TYPE is
// numbered for the caller's major, as hipPointerGetAttributes' type.
hipError_t PointerAttribute(void* data, hipPointer_attribute attribute, const void* ptr, int major) {
  const PointerInfo info = FindPointer(ptr);
  const hipError_t known = info.known ? hipSuccess : hipErrorInvalidValue;
  switch (attribute) {
    case HIP_POINTER_ATTRIBUTE_MEMORY_TYPE:
      Put<uint32_t>(data, info.known ? static_cast<uint32_t>(MemoryTypeFor(info.kind, major)) : 0);
      return known;
    case HIP_POINTER_ATTRIBUTE_DEVICE_POINTER:
      Put<void*>(data, info.known ? const_cast<void*>(ptr) : nullptr);
      return known;
    case HIP_POINTER_ATTRIBUTE_HOST_POINTER: {
      // Pinned and managed memory have a host address (their own); device
      // memory has none.
      const bool host = info.known && info.kind != MemoryKind::kDevice;
      Put<void*>(data, host ? const_cast<void*>(ptr) : nullptr);
      return host ? hipSuccess : hipErrorInvalidValue;
    }
    case HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS:  // As hipPointerSetAttribute set it.
      Put<bool>(data, info.sync_memops);
      return known;
    case HIP_POINTER_ATTRIBUTE_IS_MANAGED:
      Put<bool>(data, info.known && info.kind == MemoryKind::kManaged);
      return known;
    case HIP_POINTER_ATTRIBUTE_DEVICE_ORDINAL:
      Put<int>(data, info.known ? info.device : -2);  // -2 for unknown host memory, as clr.
      return known;
    case HIP_POINTER_ATTRIBUTE_RANGE_START_ADDR:
      Put<void*>(data, info.known ? reinterpret_cast<void*>(info.base) : nullptr);
      return known;
    case HIP_POINTER_ATTRIBUTE_RANGE_SIZE:  // 32 bits, as clr writes it.
      Put<uint32_t>(data, info.known ? static_cast<uint32_t>(info.size) : 0);
      return known;
    case HIP_POINTER_ATTRIBUTE_MAPPED:
      Put<bool>(data, info.known);
      return known;
    case HIP_POINTER_ATTRIBUTE_ACCESS_FLAGS:  // The allocation's flags; 0 (and success) for unknown memory.
      Put<uint32_t>(data, info.known ? info.flags : 0);
      return hipSuccess;
    case HIP_POINTER_ATTRIBUTE_CONTEXT:
    case HIP_POINTER_ATTRIBUTE_P2P_TOKENS:
    case HIP_POINTER_ATTRIBUTE_BUFFER_ID:
    case HIP_POINTER_ATTRIBUTE_IS_LEGACY_HIP_IPC_CAPABLE:
    case HIP_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES:
    case HIP_POINTER_ATTRIBUTE_IS_GPU_DIRECT_RDMA_CAPABLE:
    case HIP_POINTER_ATTRIBUTE_MEMPOOL_HANDLE:
      // clr refuses most of these too; hipr keeps no buffer ids, contexts
      // per allocation, IPC or RDMA handles, or pools.
      HIPR_LOG_ONCE(kWarn, "hipPointerGetAttribute: attribute %d is not supported by hipr; "
                           "returning hipErrorNotSupported",
                    static_cast<int>(attribute));
      return hipErrorNotSupported;
  }
  return hipErrorInvalidValue;  // Not an attribute.
}

}  // namespace

HIPR_EXPORT hipError_t hipPointerGetAttribute(void* data, hipPointer_attribute attribute, hipDeviceptr_t ptr) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipPointerGetAttribute", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (data == nullptr || ptr == nullptr) return hipErrorInvalidValue;
    return PointerAttribute(data, attribute, ptr, major);
  });
}

// ROCm 6.x: the one settable attribute is SYNC_MEMOPS (an int/bool: make
// synchronous memory operations on the allocation synchronous). hipr's
// synchronous copies and memsets already return only when done, so the
// setting is recorded for hipPointerGetAttribute(s) and changes nothing
// else. Any other attribute is hipErrorInvalidValue, as in clr.
HIPR_EXPORT hipError_t hipPointerSetAttribute(const void* value, hipPointer_attribute attribute, hipDeviceptr_t ptr) {
  return ApiCall("hipPointerSetAttribute", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (value == nullptr || ptr == nullptr || attribute != HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS)
      return hipErrorInvalidValue;
    // Read as one byte: 0 or 1 in a bool or a (little-endian) unsigned int.
    const bool on = *static_cast<const unsigned char*>(value) != 0;
    if (!Client::Get().allocations().SetSyncMemops(reinterpret_cast<uint64_t>(ptr), on)) return hipErrorInvalidValue;
    return hipSuccess;
  });
}

// Several attributes at once. As clr, memory the runtime does not know is
// not an error here (each attribute gets its default). Unlike clr, an
// attribute hipr cannot answer (its output is left as it was), one that
// does not exist, or a null output is reported: the first such error,
// after every attribute was tried.
HIPR_EXPORT hipError_t hipDrvPointerGetAttributes(unsigned int count, hipPointer_attribute* attributes, void** data,
                                                  hipDeviceptr_t ptr) {
  const int major = HIPR_CALLER_MAJOR();
  return ApiCall("hipDrvPointerGetAttributes", [&] {
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    if (count == 0 || attributes == nullptr || data == nullptr || ptr == nullptr) return hipErrorInvalidValue;
    hipError_t result = hipSuccess;
    for (unsigned i = 0; i < count; ++i) {
      hipError_t e = hipSuccess;
      if (data[i] == nullptr || !IsPointerAttribute(attributes[i])) {
        e = hipErrorInvalidValue;
      } else if (PointerAttribute(data[i], attributes[i], ptr, major) == hipErrorNotSupported) {
        e = hipErrorNotSupported;
      }
      if (result == hipSuccess) result = e;
    }
    return result;
  });
}

HIPR_EXPORT hipError_t hipMemGetInfo(size_t* free, size_t* total) {
  return ApiCall("hipMemGetInfo", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (free == nullptr && total == nullptr) return hipSuccess;
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    // Memory kept for reuse (memory/free_blocks.h) is the program's to
    // have: given back first, so the answer is the worker's own.
    (void)ReleaseKept(Client::Get(), *s, device);
    msg::MemInfoReply reply;
    Status st = s->Call<wire::Op::kMemGetInfo>(msg::DeviceRequest{device}, &reply);
    if (!st.ok()) return ToHipError(st);
    if (reply.error != hipSuccess) return static_cast<hipError_t>(reply.error);
    if (free != nullptr) *free = reply.free_bytes;
    if (total != nullptr) *total = reply.total_bytes;
    return hipSuccess;
  });
}

// Managed memory (hipMallocManaged and its hints). The allocation is device
// memory of the worker (msg::kMallocManaged) whose address the client also
// maps as host memory, the mirror; managed_vars.h keeps the two coherent at
// the points where HIP makes the other side's writes visible on a device
// without concurrent managed access (hipr reports
// hipDeviceAttributeConcurrentManagedAccess 0): host code may use managed
// memory while no device work that uses it runs, as CUDA required before
// Pascal.
//
// The hints are recorded for the whole allocation that holds the range
// (hipMemRangeGetAttribute reports them): hipr has no pages to migrate.
// hipMemPrefetchAsync to a device sends the host's changes now (what a
// prefetch is for: the data is in place before the kernel); to the host it
// reads back what that stream's work wrote, once the stream gets there (at
// its next synchronisation, as every read-back).
#include <algorithm>
#include <cstring>

#include "client_stub/memory/address_window.h"
#include "client_stub/api/api_common.h"
#include "client_stub/kernels/code_module.h"
#include "client_stub/graphs/graph.h"
#include "client_stub/managed/managed_vars.h"

using namespace hipr;
using namespace hipr::client;

// ROCm 7.1's location forms (hipMemLocation as in 5.2's header; its host
// types are 7.x's).
extern "C" {
hipError_t hipMemPrefetchAsync_v2(const void* dev_ptr, size_t count, hipMemLocation location, unsigned int flags,
                                  hipStream_t stream);
hipError_t hipMemAdvise_v2(const void* dev_ptr, size_t count, hipMemoryAdvise advice, hipMemLocation location);
}

namespace {

constexpr int kLocationHost = 2;             // hipMemLocationTypeHost
constexpr int kLocationHostNumaCurrent = 4;  // ... HostNuma (3), HostNumaCurrent (4): the host too.

// A 7.x location as the device number the older forms take (hipCpuDeviceId
// for the host); false for an invalid type.
bool LocationDevice(const hipMemLocation& location, int* device) {
  const int type = static_cast<int>(location.type);
  if (type == hipMemLocationTypeDevice) {
    *device = location.id;
    return true;
  }
  if (type >= kLocationHost && type <= kLocationHostNumaCurrent) {
    *device = hipCpuDeviceId;
    return true;
  }
  return false;
}

// The device of `device` as a hint names it: a device of the session or
// the host (hipCpuDeviceId).
hipError_t CheckLocation(const Remote& s, int device) {
  if (device == hipCpuDeviceId) return hipSuccess;
  return device >= 0 && device < s.device_count() ? hipSuccess : hipErrorInvalidDevice;
}

hipError_t MallocManaged(void** ptr, size_t size, unsigned flags) {
  if (ptr == nullptr || size == 0 || (flags != hipMemAttachGlobal && flags != hipMemAttachHost))
    return hipErrorInvalidValue;
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  int device = 0;
  if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
  // As ROCm: not while the device captures in global mode (the device copy
  // is cleared with a device synchronisation).
  if (Graphs().AnyCapture()) {
    if (hipError_t e = Graphs().CheckNotCapturing(device, 0, true); e != hipSuccess) return e;
  }
  if (!s->devices()[device].managed_memory) {
    HIPR_LOG_ONCE(kWarn, "hipMallocManaged: the worker's device has no managed memory; returning "
                         "hipErrorNotSupported");
    return hipErrorNotSupported;
  }
  // Whole pages: the mirror is mapped at the same address.
  const uint64_t bytes = RoundUpToPage(size);
  if (bytes < size) return hipErrorOutOfMemory;
  void* p = nullptr;
  if (hipError_t e = AllocateDevice(Client::Get(), *s, device, bytes, msg::kMallocManaged, AllocationRole::kPlain, &p);
      e != hipSuccess)
    return e;
  const auto address = reinterpret_cast<uint64_t>(p);
  // Both copies start as zeros: the mirror is fresh anonymous memory, the
  // device copy is cleared before any later work can read it.
  msg::MemsetRequest clear;
  clear.device = device;
  clear.stream = 0;
  clear.dst = msg::Region{address, bytes, bytes, 1};
  clear.value = 0;
  clear.element_size = 1;
  msg::CallReply reply;
  Status st = s->Post<wire::Op::kMemset>(clear);
  if (st.ok()) st = s->Call<wire::Op::kDeviceSynchronize>(msg::DeviceRequest{device}, &reply);
  if (st.ok() && reply.error != hipSuccess) st = HipStatus(reply.error, "clearing the device copy failed");
  if (st.ok()) st = MapHostPages(address, bytes);
  if (st.ok()) st = Managed().AddAllocation(*s, device, address, size);
  if (!st.ok()) {
    HIPR_LOG_ERROR("hipMallocManaged(%zu bytes): %s", size, st.message().c_str());
    (void)FreeDevice(p, true);
    return st.code() == StatusCode::kResourceExhausted ? hipErrorOutOfMemory : ToHipError(st);
  }
  *ptr = p;
  return hipSuccess;
}

hipError_t Prefetch(const void* ptr, size_t count, int device, hipStream_t stream) {
  if (ptr == nullptr || count == 0) return hipErrorInvalidValue;
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  if (hipError_t e = CheckLocation(*s, device); e != hipSuccess) return e;
  StreamTarget target;
  if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return AsDestroyedStream(e);
  if (!Managed().WithAllocation(ptr, count, [&](ManagedVar& v) { v.advice.last_prefetch = device; }))
    return hipErrorInvalidValue;
  ManagedVars& managed = Managed();
  if (device == hipCpuDeviceId) {
    // What the stream's work wrote is read back at its synchronisation.
    managed.MarkWritten(*s, target.device, target.id, ptr, count);
    return hipSuccess;
  }
  return ToHipError(managed.Push(Client::Get(), *s, target.device, target.id, ptr, count));
}

hipError_t Advise(const void* ptr, size_t count, int advice, int device) {
  if (ptr == nullptr || count == 0) return hipErrorInvalidValue;
  Remote* s = LiveSession();
  if (s == nullptr) return hipErrorNoDevice;
  const bool needs_device = advice != hipMemAdviseSetReadMostly && advice != hipMemAdviseUnsetReadMostly &&
                            advice != hipMemAdviseSetCoarseGrain && advice != hipMemAdviseUnsetCoarseGrain;
  if (needs_device) {
    if (hipError_t e = CheckLocation(*s, device); e != hipSuccess) return e;
  }
  bool known = true;
  const bool found = Managed().WithAllocation(ptr, count, [&](ManagedVar& v) {
    ManagedAdvice& a = v.advice;
    switch (advice) {
      case hipMemAdviseSetReadMostly:
        a.read_mostly = true;
        break;
      case hipMemAdviseUnsetReadMostly:
        a.read_mostly = false;
        break;
      case hipMemAdviseSetPreferredLocation:
        a.preferred_location = device;
        break;
      case hipMemAdviseUnsetPreferredLocation:
        a.preferred_location = hipInvalidDeviceId;
        break;
      case hipMemAdviseSetAccessedBy:
        if (std::find(a.accessed_by.begin(), a.accessed_by.end(), device) == a.accessed_by.end())
          a.accessed_by.push_back(device);
        break;
      case hipMemAdviseUnsetAccessedBy:
        a.accessed_by.erase(std::remove(a.accessed_by.begin(), a.accessed_by.end(), device), a.accessed_by.end());
        break;
      case hipMemAdviseSetCoarseGrain:
        a.coarse_grain = true;
        break;
      case hipMemAdviseUnsetCoarseGrain:
        a.coarse_grain = false;
        break;
      default:
        known = false;
        break;
    }
  });
  return found && known ? hipSuccess : hipErrorInvalidValue;
}

// One attribute into `data` (`size` bytes), as clr lays them out: ints; the
// accessed-by list fills the array and pads it with hipInvalidDeviceId.
hipError_t RangeAttribute(void* data, size_t size, int attribute, const void* ptr, size_t count) {
  if (data == nullptr || size == 0 || ptr == nullptr || count == 0) return hipErrorInvalidValue;
  if (LiveSession() == nullptr) return hipErrorNoDevice;
  ManagedAdvice advice;
  if (!Managed().WithAllocation(ptr, count, [&](ManagedVar& v) { advice = v.advice; })) return hipErrorInvalidValue;
  auto put_int = [&](int value) {
    if (size != sizeof(int)) return hipErrorInvalidValue;  // Exactly 4 bytes, as clr's GetSvmAttributes.
    std::memcpy(data, &value, sizeof value);
    return hipSuccess;
  };
  switch (attribute) {
    case hipMemRangeAttributeReadMostly: return put_int(advice.read_mostly ? 1 : 0);
    case hipMemRangeAttributePreferredLocation: return put_int(advice.preferred_location);
    case hipMemRangeAttributeLastPrefetchLocation: return put_int(advice.last_prefetch);
    case hipMemRangeAttributeCoherencyMode:
      return put_int(advice.coarse_grain ? hipMemRangeCoherencyModeCoarseGrain : hipMemRangeCoherencyModeFineGrain);
    case hipMemRangeAttributeAccessedBy: {
      if (size % sizeof(int) != 0) return hipErrorInvalidValue;
      const size_t slots = size / sizeof(int);
      for (size_t i = 0; i < slots; ++i) {
        const int value = i < advice.accessed_by.size() ? advice.accessed_by[i] : hipInvalidDeviceId;
        std::memcpy(static_cast<char*>(data) + i * sizeof(int), &value, sizeof value);
      }
      return hipSuccess;
    }
    default: return hipErrorInvalidValue;
  }
}

}  // namespace

HIPR_EXPORT hipError_t hipMallocManaged(void** dev_ptr, size_t size, unsigned int flags) {
  return ApiCall("hipMallocManaged", [&] { return MallocManaged(dev_ptr, size, flags); });
}

HIPR_EXPORT hipError_t hipMemPrefetchAsync(const void* dev_ptr, size_t count, int device, hipStream_t stream) {
  return ApiCall("hipMemPrefetchAsync", [&] { return Prefetch(dev_ptr, count, device, stream); });
}

HIPR_EXPORT hipError_t hipMemAdvise(const void* dev_ptr, size_t count, hipMemoryAdvise advice, int device) {
  return ApiCall("hipMemAdvise", [&] { return Advise(dev_ptr, count, advice, device); });
}

HIPR_EXPORT hipError_t hipMemPrefetchAsync_v2(const void* dev_ptr, size_t count, hipMemLocation location,
                                              unsigned int flags, hipStream_t stream) {
  return ApiCall("hipMemPrefetchAsync_v2", [&] {
    int device = 0;
    if (flags != 0 || !LocationDevice(location, &device)) return hipErrorInvalidValue;
    return Prefetch(dev_ptr, count, device, stream);
  });
}

HIPR_EXPORT hipError_t hipMemAdvise_v2(const void* dev_ptr, size_t count, hipMemoryAdvise advice,
                                       hipMemLocation location) {
  return ApiCall("hipMemAdvise_v2", [&] {
    int device = 0;
    if (!LocationDevice(location, &device)) return hipErrorInvalidValue;
    return Advise(dev_ptr, count, advice, device);
  });
}

HIPR_EXPORT hipError_t hipMemRangeGetAttribute(void* data, size_t data_size, hipMemRangeAttribute attribute,
                                               const void* dev_ptr, size_t count) {
  return ApiCall("hipMemRangeGetAttribute",
                 [&] { return RangeAttribute(data, data_size, attribute, dev_ptr, count); });
}

HIPR_EXPORT hipError_t hipMemRangeGetAttributes(void** data, size_t* data_sizes, hipMemRangeAttribute* attributes,
                                                size_t num_attributes, const void* dev_ptr, size_t count) {
  return ApiCall("hipMemRangeGetAttributes", [&] {
    if (data == nullptr || data_sizes == nullptr || attributes == nullptr || num_attributes == 0) {
      return hipErrorInvalidValue;
    }
    for (size_t i = 0; i < num_attributes; ++i) {
      if (hipError_t e = RangeAttribute(data[i], data_sizes[i], attributes[i], dev_ptr, count); e != hipSuccess)
        return e;
    }
    return hipSuccess;
  });
}

// Attaching changes nothing in hipr's model (every synchronisation reads
// back what the synchronised work wrote, whatever the attachment); the
// arguments are checked as clr checks them.
HIPR_EXPORT hipError_t hipStreamAttachMemAsync(hipStream_t stream, void* dev_ptr, size_t length,
                                               unsigned int flags) {
  return ApiCall("hipStreamAttachMemAsync", [&] {
    if (dev_ptr == nullptr) return hipErrorInvalidValue;
    if (LiveSession() == nullptr) return hipErrorNoDevice;
    StreamTarget target;
    if (hipError_t e = ResolveStream(stream, &target); e != hipSuccess) return e;
    if (flags != hipMemAttachGlobal && flags != hipMemAttachHost && flags != hipMemAttachSingle)
      return hipErrorInvalidValue;
    if (flags == hipMemAttachSingle && stream == nullptr) return hipErrorInvalidValue;
    size_t size = 0;
    if (!Managed().WithAllocation(dev_ptr, 1, [&](ManagedVar& v) {
          size = v.size - (reinterpret_cast<uint64_t>(dev_ptr) - reinterpret_cast<uint64_t>(v.mirror));
        }))
      return hipErrorInvalidValue;
    // As clr: the whole allocation (length 0 or its size).
    if (length != 0 && length != size) return hipErrorInvalidValue;
    return hipSuccess;
  });
}

// IPC memory handles: a device allocation exported by one process and
// opened by another, as PyTorch's multiprocessing shares CUDA/HIP tensors.
// Each process has its own session (a process of its own on the worker),
// so the handle is the worker device's: the exporting session hands back 64
// opaque bytes, and a session of the same worker maps that allocation
// (sim: its memfd; hip: hipIpcOpenMemHandle). Event handles work the same
// way: an event created with hipEventInterprocess is exported by its
// session, and opening the handle makes it an event of the opening session
// (a new id) that its streams can wait for. Handles do not cross workers.
#include <cstring>
#include <string>
#include <vector>

#include "client_stub/api/api_common.h"

using namespace hipr;
using namespace hipr::client;

HIPR_EXPORT hipError_t hipIpcGetMemHandle(hipIpcMemHandle_t* handle, void* dev_ptr) {
  return ApiCall("hipIpcGetMemHandle", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (handle == nullptr || dev_ptr == nullptr) return hipErrorInvalidValue;
    DeviceAllocation a;
    const uint64_t p = reinterpret_cast<uint64_t>(dev_ptr);
    if (!Client::Get().allocations().FindDevice(p, 1, &a) || a.module_global || a.ipc_opened || a.vmm)
      return hipErrorInvalidValue;  // Not an allocation of this process's own (mappings: hipMemExportToShareableHandle).
    // A blocking memset that returned at once has run before another
    // process can map the memory (session/stream_fences.h).
    if (Status drained = Client::Get().fences().Drain(*s, a.device); !drained.ok()) return ToHipError(drained);
    msg::IpcGetMemHandleReply reply;
    Status st = s->Call<wire::Op::kIpcGetMemHandle>(a.device, msg::IpcGetMemHandleRequest{p}, &reply);
    if (!st.ok()) return ToHipError(st);
    if (reply.error != hipSuccess) return static_cast<hipError_t>(reply.error);
    if (reply.handle.size() != sizeof *handle) {
      HIPR_LOG_ERROR("hipIpcGetMemHandle: the worker sent a %zu-byte handle", reply.handle.size());
      return hipErrorUnknown;
    }
    std::memcpy(handle, reply.handle.data(), sizeof *handle);
    (void)Client::Get().allocations().MarkIpcExported(p);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipIpcOpenMemHandle(void** dev_ptr, hipIpcMemHandle_t handle, unsigned int flags) {
  return ApiCall("hipIpcOpenMemHandle", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    // hipIpcMemLazyEnablePeerAccess is 0 in 5.x's headers and 1 in 6.x's:
    // either is the one flag there is.
    if (dev_ptr == nullptr || flags > 1u) return hipErrorInvalidValue;
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    msg::IpcOpenMemHandleRequest req;
    req.device = device;
    req.handle.assign(reinterpret_cast<const uint8_t*>(&handle), reinterpret_cast<const uint8_t*>(&handle) + sizeof handle);
    req.flags = flags;
    Client& c = Client::Get();
    msg::IpcOpenMemHandleReply reply;
    // A mapping that lands on this process's memory is closed and, once the
    // device has set that memory's addresses aside, opened again.
    for (int attempt = 0;; ++attempt) {
      Status st = s->Call<wire::Op::kIpcOpenMemHandle>(req, &reply);
      // Memory kept for hipMalloc is the program's to have.
      if (st.ok() && reply.error == hipErrorOutOfMemory && GiveBackKept(c, *s, device))
        st = s->Call<wire::Op::kIpcOpenMemHandle>(req, &reply);
      if (!st.ok()) return ToHipError(st);
      if (reply.error != hipSuccess) return static_cast<hipError_t>(reply.error);
      DeviceAllocation a;
      a.base = reply.base;
      a.size = reply.size;
      a.device = device;
      a.ipc_opened = true;
      const bool sane = reply.address >= reply.base && reply.address - reply.base < reply.size;
      std::string why = sane ? "it overlaps a live allocation" : "the address is outside the range";
      const bool placed = sane && PlaceAllocation(c, a.base, a.size, &a.outside_window, &why);
      if (placed && c.allocations().AddDevice(a)) break;
      if (placed && a.outside_window) c.reservations().Release(a.base, a.size);
      msg::CallReply closed;
      (void)s->Call<wire::Op::kIpcCloseMemHandle>(device, msg::IpcCloseMemHandleRequest{reply.base}, &closed);
      if (sane && !placed && attempt == 0 && closed.error == hipSuccess &&
          FenceOffHostMapping(*s, device, a.base, a.size, a.base))
        continue;
      HIPR_LOG_ERROR("hipIpcOpenMemHandle: the worker mapped it at 0x%llx (+%llu), where this process cannot use it: %s",
                     static_cast<unsigned long long>(a.base), static_cast<unsigned long long>(a.size), why.c_str());
      return hipErrorOutOfMemory;
    }
    *dev_ptr = reinterpret_cast<void*>(reply.address);
    return hipSuccess;
  });
}

HIPR_EXPORT hipError_t hipIpcCloseMemHandle(void* dev_ptr) {
  return ApiCall("hipIpcCloseMemHandle", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    Client& c = Client::Get();
    DeviceAllocation a;
    const uint64_t p = reinterpret_cast<uint64_t>(dev_ptr);
    if (dev_ptr == nullptr || !c.allocations().FindDevice(p, 1, &a) || !a.ipc_opened) return hipErrorInvalidValue;
    if (!c.allocations().RemoveDevice(p, &a)) return hipErrorInvalidValue;
    msg::CallReply reply;
    Status st = s->Call<wire::Op::kIpcCloseMemHandle>(a.device, msg::IpcCloseMemHandleRequest{a.base}, &reply);
    if (a.outside_window) c.reservations().Release(a.base, a.size);
    if (!st.ok()) return ToHipError(st);
    return static_cast<hipError_t>(reply.error);
  });
}

HIPR_EXPORT hipError_t hipIpcGetEventHandle(hipIpcEventHandle_t* handle, hipEvent_t event) {
  return ApiCall("hipIpcGetEventHandle", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (handle == nullptr) return hipErrorInvalidValue;
    EventRecord e;
    if (!Client::Get().handles().FindEvent(event, &e)) return hipErrorInvalidHandle;
    // As clr: only an event created for it (hipEventInterprocess, which
    // requires hipEventDisableTiming).
    if ((e.flags & hipEventInterprocess) == 0) return hipErrorInvalidConfiguration;
    msg::IpcGetMemHandleReply reply;
    Status st = s->Call<wire::Op::kIpcGetEventHandle>(e.device, msg::EventRequest{e.id}, &reply);
    if (!st.ok()) return ToHipError(st);
    if (reply.error != hipSuccess) return static_cast<hipError_t>(reply.error);
    if (reply.handle.size() != sizeof *handle) {
      HIPR_LOG_ERROR("hipIpcGetEventHandle: the worker sent a %zu-byte handle", reply.handle.size());
      return hipErrorUnknown;
    }
    std::memcpy(handle, reply.handle.data(), sizeof *handle);
    return hipSuccess;
  });
}

// The opened event is an event of this session like any other (wait on it,
// query it, synchronize with it, record it, destroy it), created with
// hipEventDisableTiming | hipEventInterprocess on the current device. Its
// records are made by other processes too, so its completion is always
// asked of the worker.
HIPR_EXPORT hipError_t hipIpcOpenEventHandle(hipEvent_t* event, hipIpcEventHandle_t handle) {
  return ApiCall("hipIpcOpenEventHandle", [&] {
    Remote* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    if (event == nullptr) return hipErrorInvalidValue;
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    HandleTable& handles = Client::Get().handles();
    EventRecord record;
    hipEvent_t opened = handles.NewEvent(device, hipEventDisableTiming | hipEventInterprocess, &record);
    msg::IpcOpenEventHandleRequest req;
    req.device = device;
    req.event = record.id;
    req.handle.assign(reinterpret_cast<const uint8_t*>(&handle),
                      reinterpret_cast<const uint8_t*>(&handle) + sizeof handle);
    msg::CallReply reply;
    Status st = s->Call<wire::Op::kIpcOpenEventHandle>(req, &reply);
    const hipError_t result = st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st);
    if (result != hipSuccess) {
      handles.RemoveEvent(opened, &record);
      return result;
    }
    *event = opened;
    return hipSuccess;
  });
}

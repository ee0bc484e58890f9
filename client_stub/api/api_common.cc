#include "client_stub/api/api_common.h"

#include "client_stub/managed/managed_vars.h"

#include <vector>

namespace hipr::client {

namespace {

// How many addresses AllocateDevice accepts from a `hip` worker before
// giving up when each collides with this process's own memory.
constexpr int kMallocPlacementAttempts = 8;

}  // namespace

// Decides whether a new allocation at [address, address + size) can be used
// here: inside the session window, or outside it with its pages reserved
// now. False when the range collides with this process's memory.
bool PlaceAllocation(Client& c, uint64_t address, uint64_t size, bool* outside_window) {
  const AddressRange window = c.window();
  if (!window.empty() && window.Contains(address) && size <= window.end() - address) {
    *outside_window = false;
    return true;
  }
  if (window.Overlaps(address, size)) return false;  // Straddles the window edge.
  Status st = c.reservations().Reserve(address, size);
  if (!st.ok()) {
    HIPR_LOG_DEBUG("device allocation at 0x%llx (+%llu) collides with host memory: %s",
                   static_cast<unsigned long long>(address), static_cast<unsigned long long>(size),
                   st.message().c_str());
    return false;
  }
  *outside_window = true;
  return true;
}

hipError_t AllocateDevice(Session& s, int device, size_t size, uint32_t flags, AllocationRole role, void** out) {
  Client& c = Client::Get();
  std::vector<uint64_t> rejected;  // Colliding allocations, kept until placed.
  hipError_t result = hipErrorOutOfMemory;
  for (int attempt = 0; attempt < kMallocPlacementAttempts; ++attempt) {
    msg::MallocReply reply;
    Status st = s.Call<wire::Op::kMalloc>(msg::MallocRequest{device, size, flags}, &reply);
    if (!st.ok()) return ToHipError(st);  // The session is dead: nothing to free.
    if (reply.error != hipSuccess) {
      result = static_cast<hipError_t>(reply.error);
      break;
    }
    DeviceAllocation a;
    a.base = reply.address;
    a.size = size;
    a.device = device;
    a.flags = flags;
    a.module_global = role == AllocationRole::kModuleGlobal;
    a.array = role == AllocationRole::kArray;
    a.graph = role == AllocationRole::kGraph;
    if (!PlaceAllocation(c, a.base, a.size, &a.outside_window)) {
      rejected.push_back(a.base);
      continue;
    }
    if (!c.allocations().AddDevice(a)) {
      HIPR_LOG_ERROR("hipMalloc: the worker returned 0x%llx (+%zu), overlapping a live allocation",
                     static_cast<unsigned long long>(a.base), size);
      if (a.outside_window) c.reservations().Release(a.base, a.size);
      result = hipErrorUnknown;
      break;
    }
    *out = reinterpret_cast<void*>(a.base);
    result = hipSuccess;
    break;
  }
  for (uint64_t address : rejected) (void)s.Post<wire::Op::kFree>(msg::FreeRequest{address});
  if (result == hipErrorOutOfMemory && !rejected.empty())
    HIPR_LOG_ERROR("hipMalloc: %zu device addresses in a row collided with this process's memory",
                   rejected.size());
  return result;
}

hipError_t AfterSync(Session& s, int device, uint64_t stream, hipError_t result, ReadBack order) {
  if (result != hipSuccess) return result;
  // A failed async copy into pinned memory is a deferred error.
  if (int32_t async = s.TakeAsyncError(); async != 0) return static_cast<hipError_t>(async);
  ManagedVars& managed = ManagedVars::Get();
  if (managed.empty()) return result;
  return ToHipError(managed.AfterSync(s, device, stream, order));
}

hipError_t ToHipError(const Status& st) {
  if (st.ok()) return hipSuccess;
  if (st.native() != 0) return static_cast<hipError_t>(st.native());
  switch (st.scope()) {
    case StatusScope::kSession:
    case StatusScope::kLink:
      return hipErrorNoDevice;
    default:
      break;
  }
  switch (st.code()) {
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange:
      return hipErrorInvalidValue;
    case StatusCode::kNotFound: return hipErrorNotFound;
    case StatusCode::kResourceExhausted: return hipErrorOutOfMemory;
    case StatusCode::kNotSupported: return hipErrorNotSupported;
    case StatusCode::kNotReady: return hipErrorNotReady;
    case StatusCode::kInvalidDevice: return hipErrorInvalidDevice;
    case StatusCode::kInvalidHandle: return hipErrorInvalidHandle;
    case StatusCode::kInvalidDevicePointer: return hipErrorInvalidDevicePointer;
    default: return hipErrorUnknown;
  }
}

namespace {

// The calling thread's per-thread default streams, one per device it used,
// each an ordinary blocking stream created (fire-and-forget, client-named)
// at first use. Kept per session: a forked child's new session makes its
// own; one forgotten by hipDeviceReset is made again.
struct PerThreadStream {
  const Session* session = nullptr;
  int device = 0;
  hipStream_t handle = nullptr;
};
constinit thread_local std::vector<PerThreadStream> t_per_thread_streams;

hipError_t PerThreadStreamOf(Session& s, int device, StreamTarget* out) {
  HandleTable& handles = Client::Get().handles();
  StreamRecord record;
  for (PerThreadStream& p : t_per_thread_streams) {
    if (p.session != &s || p.device != device) continue;
    if (handles.FindStream(p.handle, &record)) {
      *out = StreamTarget{record.id, record.device};
      return hipSuccess;
    }
    p.session = nullptr;  // Forgotten (hipDeviceReset): make a new one.
  }
  hipStream_t handle = handles.NewStream(device, hipStreamDefault, 0, &record);
  Status st = s.Post<wire::Op::kStreamCreate>(msg::StreamCreateRequest{device, record.id, hipStreamDefault, 0, {}});
  if (!st.ok()) {
    handles.RemoveStream(handle, &record);
    return ToHipError(st);
  }
  std::erase_if(t_per_thread_streams, [](const PerThreadStream& p) { return p.session == nullptr; });
  t_per_thread_streams.push_back(PerThreadStream{&s, device, handle});
  *out = StreamTarget{record.id, device};
  return hipSuccess;
}

}  // namespace

hipError_t ResolveStream(hipStream_t stream, StreamTarget* out) {
  if (stream == nullptr) {
    *out = StreamTarget{0, CurrentDevice()};
    return hipSuccess;
  }
  if (stream == hipStreamPerThread) {
    Session* s = LiveSession();
    if (s == nullptr) return hipErrorNoDevice;
    int device = 0;
    if (hipError_t e = CurrentDeviceOf(*s, &device); e != hipSuccess) return e;
    return PerThreadStreamOf(*s, device, out);
  }
  StreamRecord record;
  if (!Client::Get().handles().FindStream(stream, &record)) return hipErrorInvalidHandle;
  *out = StreamTarget{record.id, record.device};
  return hipSuccess;
}

}  // namespace hipr::client

#include "client_stub/memory/device_memory.h"

#include <vector>

#include "client_stub/base/log.h"
#include "client_stub/session/hip_status.h"

namespace hipr::client {

namespace {

// How many addresses AllocateDevice accepts from a `hip` worker before
// giving up when each collides with this process's own memory.
constexpr int kMallocPlacementAttempts = 8;

}  // namespace

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

hipError_t AllocateDevice(Client& c, Session& s, int device, size_t size, uint32_t flags, AllocationRole role,
                          void** out) {
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

}  // namespace hipr::client

#include "client_stub/allocate/device_memory.h"

#include <chrono>
#include <map>
#include <thread>
#include <vector>

#include "client_stub/base/log.h"
#include "client_stub/memory/address_window.h"
#include "client_stub/session/hip_status.h"
#include "protocol/thread_annotations.h"

namespace hipr::client {

namespace {

// How many addresses AllocateDevice accepts from a `hip` worker before
// giving up when each collides with this process's own memory.
constexpr int kMallocPlacementAttempts = 8;

// The device ranges FenceOffHostMapping set aside, for one session at a
// time (sessions are never destroyed, so a pointer names one for good; a
// new session, as after fork, starts afresh).
struct Fences {
  Mutex mu;
  const Remote* owner HIPR_GUARDED_BY(mu) = nullptr;
  std::map<uint64_t, uint64_t> ranges HIPR_GUARDED_BY(mu);  // base -> end.
};

Fences& SessionFences() {
  static Fences* fences = new Fences;  // Leaked: used until exit.
  return *fences;
}

// Narrows [*start, *end) to its first part that no fence of `s` covers.
void SkipFencesLocked(Fences& f, const Remote& s, uint64_t* start, uint64_t* end) HIPR_REQUIRES(f.mu) {
  if (f.owner != &s) {
    f.owner = &s;
    f.ranges.clear();
  }
  auto it = f.ranges.upper_bound(*start);
  if (it != f.ranges.begin() && std::prev(it)->second > *start) *start = std::prev(it)->second;
  it = f.ranges.upper_bound(*start);
  if (it != f.ranges.end() && it->first < *end) *end = it->first;
}

}  // namespace

bool FenceOffHostMapping(Remote& s, int device, uint64_t collided, uint64_t size, uint64_t from) {
  const uint64_t g = device >= 0 && device < static_cast<int>(s.devices().size())
                         ? s.devices()[device].vmm_granularity
                         : 0;
  if (g == 0 || (g & (g - 1)) != 0 || size > UINT64_MAX / 4) return false;  // No bare address space to reserve.
  // The host mappings from the collision up to the first gap that holds
  // `size` bytes at the granularity: a library's segments, a thread's stack
  // and guard, one after another.
  AddressRange span;
  const uint64_t need = ((size + g - 1) & ~(g - 1)) + g;
  if (!FindHostSpan(collided, size, need, &span)) return false;  // Nothing there now: a plain retry will do.
  uint64_t start = (from + g - 1) & ~(g - 1);
  uint64_t end = span.end() > UINT64_MAX - (g - 1) ? 0 : (span.end() + g - 1) & ~(g - 1);
  if (start < from || end <= start) return false;
  // What is set aside already needs no second reservation. The lock is not
  // held across the call (a fork meanwhile would leave the child's copy
  // held): two threads fencing at once may overlap, and the second's hint
  // then fails, which costs it only the fence.
  Fences& fences = SessionFences();
  {
    MutexLock lock(fences.mu);
    SkipFencesLocked(fences, s, &start, &end);
  }
  if (end <= start) return false;
  HostMapping first;
  const bool named = FindHostMapping(collided, size, &first);
  const std::string what = named ? first.Describe() : "host memory";
  msg::VmmReserveReply reply;
  Status st = s.Call<wire::Op::kVmmReserve>(device, msg::VmmReserveRequest{end - start, 0, start}, &reply);
  if (!st.ok() || reply.error != hipSuccess) {
    HIPR_LOG_DEBUG("the device could not reserve [0x%llx, 0x%llx) to keep clear of %s: %s",
                   static_cast<unsigned long long>(start), static_cast<unsigned long long>(end), what.c_str(),
                   st.ok() ? "it refused" : st.message().c_str());
    return false;
  }
  if (reply.address != start) {  // Reserved elsewhere: the hint was taken.
    msg::CallReply freed;
    (void)s.Call<wire::Op::kVmmFree>(device, msg::VmmRangeRequest{reply.address, end - start}, &freed);
    HIPR_LOG_DEBUG("the device has addresses in use in [0x%llx, 0x%llx); cannot keep it clear of %s",
                   static_cast<unsigned long long>(start), static_cast<unsigned long long>(end), what.c_str());
    return false;
  }
  {
    MutexLock lock(fences.mu);
    if (fences.owner == &s) fences.ranges[start] = end;
  }
  HIPR_LOG_INFO("device addresses [0x%llx, 0x%llx) set aside for this session: this process maps memory there (%s%s)",
                static_cast<unsigned long long>(start), static_cast<unsigned long long>(end), what.c_str(),
                named && span.end() > first.range.end() ? " and what follows it" : "");
  return true;
}

bool PlaceAllocation(Client& c, uint64_t address, uint64_t size, bool* outside_window, std::string* why) {
  const Windows window = c.windows();
  if (window.Holds(address, size)) {
    *outside_window = false;
    return true;
  }
  if (window.Overlaps(address, size)) {
    if (why != nullptr) *why = "it straddles the edge of the session window";
    return false;
  }
  Status st = c.reservations().Reserve(address, size);
  if (!st.ok()) {
    if (why != nullptr) *why = st.message();
    HIPR_LOG_DEBUG("device allocation at 0x%llx (+%llu) collides with host memory: %s",
                   static_cast<unsigned long long>(address), static_cast<unsigned long long>(size),
                   st.message().c_str());
    return false;
  }
  *outside_window = true;
  return true;
}

namespace {

// A block the program freed, handed out again (memory/free_blocks.h).
bool ReuseKept(Client& c, Remote& s, int device, size_t size, void** out) {
  KeptBlock b;
  if (!c.free_blocks().Take(device, size, &b)) return false;
  DeviceAllocation a;
  a.base = b.base;
  a.size = size;
  a.device = device;
  // Outside the window its pages were given back while kept: reserved
  // again, unless the process has mapped memory there meanwhile.
  std::string why;
  if (!PlaceAllocation(c, a.base, a.size, &a.outside_window, &why)) {
    (void)s.Post<wire::Op::kFree>(device, msg::FreeRequest{a.base});
    HIPR_LOG_DEBUG("hipMalloc: the freed block at 0x%llx collides with host memory now (%s); not reused",
                   static_cast<unsigned long long>(a.base), why.c_str());
    return false;
  }
  if (!c.allocations().AddDevice(a)) {  // Cannot happen: it was removed when kept.
    if (a.outside_window) c.reservations().Release(a.base, a.size);
    HIPR_LOG_ERROR("hipMalloc: kept block 0x%llx overlaps a live allocation", static_cast<unsigned long long>(a.base));
    return false;
  }
  HIPR_LOG_DEBUG("hipMalloc: reusing the freed block at 0x%llx (%zu bytes) on device %d: no round trip",
                 static_cast<unsigned long long>(a.base), size, device);
  *out = reinterpret_cast<void*>(a.base);
  return true;
}

// Plain memory placed in the device's lease (memory/memory_leases.h), with
// no round trip but the one that renews the lease when it is used up. False
// when the worker has no leases, the allocation is too large for one, or the
// worker could not grant one (out of memory: the caller asks for exactly
// this allocation, after giving back what is kept).
bool PlaceInLease(Client& c, Remote& s, int device, size_t size, void** out) {
  if (c.leases().lease_bytes() == 0 || !s.ListsCapability(wire::kCapabilityMemoryLease)) return false;
  const Windows window = c.windows();
  hipError_t refused = hipSuccess;
  auto ask = [&](uint64_t need, uint64_t want, LeaseGrant* g) {
    msg::MemLeaseReply reply;
    Status st = s.Call<wire::Op::kMemLease>(msg::MemLeaseRequest{device, need, want}, &reply);
    if (!st.ok() || reply.error != hipSuccess) {
      refused = st.ok() ? static_cast<hipError_t>(reply.error) : ToHipError(st);
      return false;
    }
    if (!window.Holds(reply.base, reply.size)) {
      // Leases are of the session window; a worker that leases elsewhere is
      // not used for this.
      (void)s.Post<wire::Op::kMemLeaseReturn>(msg::DeviceRequest{device});
      HIPR_LOG_DEBUG("hipMalloc: the worker leased memory outside the session window; not used");
      return false;
    }
    *g = LeaseGrant{reply.base, reply.size, reply.granularity};
    HIPR_LOG_DEBUG("device %d: %llu bytes leased at 0x%llx for allocations with no round trip", device,
                   static_cast<unsigned long long>(reply.size), static_cast<unsigned long long>(reply.base));
    return true;
  };
  auto place = [&](uint64_t address, uint64_t bytes) {
    return s.Post<wire::Op::kMemLeasePlace>(msg::MemLeasePlaceRequest{device, address, bytes}).ok();
  };
  uint64_t address = 0;
  if (!c.leases().Allocate(device, size, ask, place, &address)) {
    if (refused != hipSuccess && refused != hipErrorOutOfMemory)
      HIPR_LOG_DEBUG("hipMalloc: lease on device %d refused (HIP error %d)", device, static_cast<int>(refused));
    return false;
  }
  DeviceAllocation a;
  a.base = address;
  a.size = size;
  a.device = device;
  if (!c.allocations().AddDevice(a)) {  // Cannot happen: the lease was no one's.
    HIPR_LOG_ERROR("hipMalloc: leased 0x%llx overlaps a live allocation", static_cast<unsigned long long>(address));
    (void)s.Post<wire::Op::kFree>(device, msg::FreeRequest{address});
    return false;
  }
  *out = reinterpret_cast<void*>(address);
  return true;
}

}  // namespace

// Out of memory with blocks kept on `device`, or part of its lease unplaced:
// gives both back and waits (up to 2 s) until the worker has released the
// blocks, which it does once the work queued before has run, so that the
// retry sees their memory (a lease goes back at once). Polls the free memory
// rather than synchronising: a synchronising call would take an earlier
// kernel's error, which the program must get from its own. False when
// nothing was kept or leased.
bool GiveBackKept(Client& c, Remote& s, int device) {
  msg::MemInfoReply before;
  Status st = s.Call<wire::Op::kMemGetInfo>(msg::DeviceRequest{device}, &before);
  const uint64_t released = ReleaseKept(c, s, device);
  if (released == 0) return false;
  HIPR_LOG_DEBUG("hipMalloc: out of memory on device %d; gave back %llu bytes kept or leased, asking again", device,
                 static_cast<unsigned long long>(released));
  for (int i = 0; st.ok() && before.error == hipSuccess && i < 200; ++i) {
    msg::MemInfoReply now;
    st = s.Call<wire::Op::kMemGetInfo>(msg::DeviceRequest{device}, &now);
    if (!st.ok() || now.error != hipSuccess || now.free_bytes >= before.free_bytes + released) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return true;
}

uint64_t ReleaseKept(Client& c, Remote& s, int device) {
  uint64_t bytes = c.leases().Forget(
      device, [&](int d) { (void)s.Post<wire::Op::kMemLeaseReturn>(msg::DeviceRequest{d}); });
  for (const KeptBlock& b : c.free_blocks().TakeAll(device)) {
    (void)s.Post<wire::Op::kFree>(b.device, msg::FreeRequest{b.base});
    bytes += b.size;
  }
  return bytes;
}

hipError_t AllocateDevice(Client& c, Remote& s, int device, size_t size, uint32_t flags, AllocationRole role,
                          void** out) {
  const bool plain = flags == 0 && role == AllocationRole::kPlain;
  if (plain && ReuseKept(c, s, device, size, out)) return hipSuccess;
  if (plain && PlaceInLease(c, s, device, size, out)) return hipSuccess;
  hipError_t result = AllocateFromWorker(c, s, device, size, flags, role, out);
  if (result == hipErrorOutOfMemory && GiveBackKept(c, s, device))
    result = AllocateFromWorker(c, s, device, size, flags, role, out);
  return result;
}

hipError_t AllocateFromWorker(Client& c, Remote& s, int device, size_t size, uint32_t flags, AllocationRole role,
                              void** out) {
  std::vector<uint64_t> rejected;  // Colliding allocations, kept until placed.
  std::string why;                 // What the last of them collided with.
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
    if (!PlaceAllocation(c, a.base, a.size, &a.outside_window, &why)) {
      // Kept, so the worker's allocator moves on; and the rest of the host
      // mapping it landed in is reserved on the device, so that the next
      // address is past it however large it is.
      rejected.push_back(a.base);
      (void)FenceOffHostMapping(s, device, a.base, a.size, a.base + a.size);
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
  for (uint64_t address : rejected) (void)s.Post<wire::Op::kFree>(device, msg::FreeRequest{address});
  if (result == hipErrorOutOfMemory && !rejected.empty())
    HIPR_LOG_ERROR("hipMalloc: %zu device addresses in a row collided with this process's memory; the last: %s",
                   rejected.size(), why.c_str());
  return result;
}

size_t RowPitch(const Remote& s, int device, size_t width) {
  const uint64_t align = s.devices()[device].texture_alignment != 0 ? s.devices()[device].texture_alignment : 256;
  if (width > SIZE_MAX - (align - 1)) return 0;  // No such row.
  return static_cast<size_t>((width + align - 1) / align * align);
}

}  // namespace hipr::client

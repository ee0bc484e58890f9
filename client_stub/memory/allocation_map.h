// AllocationMap: the client's record of the device allocations of its
// session and of its pinned (hipHostMalloc'd) host allocations, as interval
// maps keyed by base address. It answers "which allocation holds
// [p, p + n)?" for hipMemcpyDefault direction, bounds checks before anything
// is sent, hipPointerGetAttributes, hipMemPtrGetInfo and hipFree/hipHostFree.
//
// Thread-safety: every method may be called from any thread (one
// shared_mutex: lookups share it, changes take it exclusively). Lookups return
// copies, valid after the lock is released.
#pragma once

#include <cstdint>
#include <new>
#include <map>
#include <shared_mutex>
#include <vector>

#include "protocol/thread_annotations.h"


namespace hipr::client {

struct DeviceAllocation {
  uint64_t base = 0;
  uint64_t size = 0;
  int device = 0;
  uint32_t flags = 0;
  // True when the allocation lies outside the session window and its pages
  // are held in the client's DeviceReservations (a `hip` worker).
  bool outside_window = false;
  // A module's __device__/__constant__ variable (recorded when the module
  // is loaded): copies may reach it, hipFree may not.
  bool module_global = false;
  // Another process's allocation opened with hipIpcOpenMemHandle: closed
  // with hipIpcCloseMemHandle, never freed.
  bool ipc_opened = false;
  // The memory of a HIP array (hip_arrays.h): freed with the array, never
  // by hipFree.
  bool array = false;
  // HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS, as hipPointerSetAttribute set it.
  bool sync_memops = false;
  // A hipMemMap mapping (api_vmm.cc): unmapped, never freed; a range may run
  // on into the adjacent mapping. Its reservation holds its pages.
  bool vmm = false;
  // A graph's memory allocation node's memory (graph.h GraphMemory): the
  // graph owns it; hipFree(Async) of it ends only the application's use.
  bool graph = false;
  // Exported with hipIpcGetMemHandle: another process may map it, so its
  // memory is never kept for reuse after hipFree (memory/free_blocks.h).
  bool ipc_exported = false;
};

// Memory that only this process's device work reaches and whose use only
// the client checks: not a virtual-memory mapping (the worker enforces its
// access), not memory another process maps (opened or exported through
// IPC), not a pointer that asks for synchronous memory operations. Filling
// or copying into it is work the host cannot observe except through later
// device work (session/stream_ledger.h).
inline bool PlainDeviceMemory(const DeviceAllocation& a) {
  return !a.vmm && !a.ipc_opened && !a.ipc_exported && !a.sync_memops;
}

struct PinnedAllocation {
  uint64_t base = 0;
  uint64_t size = 0;         // As requested.
  uint64_t mapped_size = 0;  // Whole pages actually mapped.
  uint32_t flags = 0;        // hipHostMalloc (or hipHostRegister) flags.
  int device = 0;            // Current device when allocated.
  bool registered = false;   // hipHostRegister'ed application memory, not ours to free.
  bool in_host_segment = false;  // Placed in the session's shm host segment, not mmap'ed.
  bool sync_memops = false;      // HIP_POINTER_ATTRIBUTE_SYNC_MEMOPS.
};

class AllocationMap {
 public:
  // False (nothing changed) when the range is empty or overlaps a recorded
  // device allocation.
  bool AddDevice(const DeviceAllocation& a);
  // The device allocation that contains every byte of [p, p + n); for n == 0,
  // the one that contains p. A range over adjacent hipMemMap mappings gets
  // their union (the first mapping's other fields).
  bool FindDevice(uint64_t p, uint64_t n, DeviceAllocation* out) const;
  // Removes the device allocation containing p (as HIP, an interior pointer
  // frees the whole allocation).
  bool RemoveDevice(uint64_t p, DeviceAllocation* removed);
  // True when [p, p + n) touches any recorded device allocation (the
  // session window and reserved pages are checked by callers).
  bool TouchesDevice(uint64_t p, uint64_t n) const;
  // Removes and returns every device allocation of `device` but its
  // mappings, which outlive hipDeviceReset, or every allocation of all
  // devices when device < 0 (a forked child abandons them).
  std::vector<DeviceAllocation> RemoveDevicesOf(int device);

  bool AddPinned(const PinnedAllocation& a);
  bool FindPinned(uint64_t p, uint64_t n, PinnedAllocation* out) const;
  bool RemovePinned(uint64_t p, PinnedAllocation* removed);

  // Sets sync_memops of the device or pinned allocation containing p; false
  // when there is none.
  bool SetSyncMemops(uint64_t p, bool value);
  // Marks the device allocation containing p as exported for IPC; false
  // when there is none.
  bool MarkIpcExported(uint64_t p);

  size_t device_count() const;
  size_t pinned_count() const;

  // fork() support (client.cc): the lock is held across fork() so the child
  // inherits consistent contents; the parent then unlocks it, the child
  // re-creates it (its copy is owned by a thread that does not exist there,
  // and a glibc rwlock cannot be unlocked by another thread id).
  void LockForFork() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.lock(); }
  void UnlockInParent() HIPR_NO_THREAD_SAFETY_ANALYSIS { mu_.unlock(); }
  void ResetLockInChild() HIPR_NO_THREAD_SAFETY_ANALYSIS { new (&mu_) decltype(mu_)(); }

 private:
  mutable SharedMutex mu_;
  std::map<uint64_t, DeviceAllocation> device_ HIPR_GUARDED_BY(mu_);  // keyed by base.
  std::map<uint64_t, PinnedAllocation> pinned_ HIPR_GUARDED_BY(mu_);  // keyed by base.
};

}  // namespace hipr::client

// SimMemory: device memory of the sim device, mapped in the session process
// at the addresses of the window agreed in the hello, so device pointers are
// real pointers here (and never valid in the client, which keeps the same
// range reserved PROT_NONE).
//
// The window is reserved PROT_NONE; an allocation maps fresh zeroed pages
// over its part, a free maps PROT_NONE back (returning the pages). Each sim
// device has its own budget, reported as its total memory. An allocation
// exported for IPC is moved into a memfd that other sessions (processes)
// of the worker map (Export / Import).
//
// Virtual memory management (Reserve ... SetAccess): a reservation is a
// range taken from the window and left PROT_NONE; physical memory is a
// memfd; a mapping maps part of one into a reservation (MAP_SHARED, so two
// mappings of one handle alias) and is an allocation of its own, marked
// `vmm`, that hipFree refuses and that Check lets a region run across into
// the adjacent mapping.
//
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <span>
#include <string>
#include <vector>

#include "protocol/messages.h"
#include "protocol/status.h"
#include "protocol/thread_annotations.h"
#include "worker_service/device/memory_account.h"

namespace hipr::worker::sim {

class SimMemory {
 public:
  SimMemory(int device_count, uint64_t budget_per_device);
  ~SimMemory();
  SimMemory(const SimMemory&) = delete;
  SimMemory& operator=(const SimMemory&) = delete;

  // Maps the window at exactly `offer` (MAP_FIXED_NOREPLACE); where that
  // fails, maps an equal-sized window elsewhere and reports it in `used`.
  Status Attach(const msg::AddressWindow& offer, msg::AddressWindow* used);

  Status Allocate(int device, uint64_t size, uint64_t* address);
  // hipFree in two steps: Retire() at once (a second free of the address,
  // or a copy into it, fails from then on), Release() once the work queued
  // before the free has run.
  Status Retire(uint64_t address);
  Status Release(uint64_t address, int* device);
  // Frees every allocation of `device`.
  void ReleaseAll(int device);
  // Retires (as Retire) every allocation of `device` not retired yet,
  // imported ones too; returns their bases, for Release once no queued
  // work can touch them.
  std::vector<uint64_t> RetireAll(int device);
  uint64_t Used(int device) const;
  uint64_t budget() const { return budget_; }
  // Charged with every byte of this session's device memory besides
  // `budget` (the worker's and the tenant's limits); null: nothing. Set
  // before the first allocation.
  void set_account(MemoryAccount* account) { account_ = account; }

  // Leases (MemoryLeaseFacet): a range of the window taken and charged for
  // `device` ahead of use but left PROT_NONE and out of allocations_, so
  // that nothing reaches it; Place maps part of it as an allocation of its
  // own. One lease per device; Lease first returns the device's previous
  // one, and ReleaseAll and RetireAll (a device reset) return it too.
  Status Lease(int device, uint64_t need, uint64_t want, uint64_t* base, uint64_t* size);
  Status Place(int device, uint64_t address, uint64_t size);
  void ReturnLease(int device);

  // IPC (hipIpc*MemHandle; the handle itself is SimDevice's). Export backs
  // the allocation holding `address` with a memfd named `hipr-ipc-<secret>`
  // (once: its bytes are copied there and the memfd mapped over them, so
  // REQUIRES that nothing touches the allocation meanwhile) and returns the
  // descriptor, which the allocation keeps until it is released. Import
  // maps such a memfd (`size` bytes) into a free part of the window, owned
  // by `device` but counted against no budget; Retire refuses it, and
  // CloseImport retires it for Release to unmap.
  struct Exported {
    int fd = -1;
    uint64_t base = 0;
    uint64_t size = 0;
    std::array<uint8_t, 16> secret{};
  };
  Status Export(uint64_t address, Exported* out);
  Status Import(int device, int fd, uint64_t size, uint64_t* base);
  Status CloseImport(uint64_t base);
  // The memfd name of an export: "hipr-ipc-" and the secret in hex.
  static std::string IpcName(const std::array<uint8_t, 16>& secret);

  // Virtual memory (Device::Vmm* says what each does). Unmap is immediate:
  // the caller first retires the mappings (Check and SetAccess refuse them
  // from then on) and waits for queued work.
  Status Reserve(uint64_t size, uint64_t alignment, uint64_t hint, uint64_t* base);
  Status FreeReservation(uint64_t base, uint64_t size);
  Status CreatePhysical(int device, uint64_t handle, uint64_t size);
  Status ReleasePhysical(uint64_t handle);
  // Shareable handles: the memfd of physical memory `handle` (named
  // IpcName(secret), kept until the memory goes); importing takes
  // ownership of `fd` (`size` bytes) as physical memory `handle` of
  // `device`, counted against no budget.
  Status ExportPhysical(uint64_t handle, Exported* out);
  Status ImportPhysical(int device, uint64_t handle, int fd, uint64_t size);
  Status Map(uint64_t address, uint64_t size, uint64_t offset, uint64_t handle);
  Status RetireMappings(uint64_t address, uint64_t size);
  Status Unmap(uint64_t address, uint64_t size);
  // Access is kept per device; the pages get the widest any device has
  // (the sim's devices share one address space).
  Status SetAccess(uint64_t address, uint64_t size, std::span<const msg::VmmAccess> access);

  // The device owning the allocation that contains the whole region (or,
  // for virtual memory, the first of the adjacent accessible mappings that
  // cover it), or kInvalidDevicePointer.
  // `write`: the region is written, so read-only mappings refuse it.
  Status Check(const msg::Region& region, int* device, bool write = false) const;

  // Whether [p, p + n) lies inside the device address window (each page
  // of it stays mapped until the forget hook is told otherwise).
  bool InWindow(const void* p, size_t n) const;
  // Called with every range of the window before its pages are replaced
  // (allocation, free, IPC export and import, virtual memory maps) or their
  // protection changes, mu_ held. Set once, before any allocation.
  void set_forget_hook(std::function<void(const void* addr, size_t bytes)> hook) { forget_ = std::move(hook); }

  static constexpr uint64_t kGranularity = 4096;
  // The window lies in [kMinWindowBase, kMaxWindowEnd): never at or near 0,
  // inside x86-64's 47-bit user address range. An offer outside is
  // counter-offered.
  static constexpr uint64_t kMinWindowBase = uint64_t{1} << 32;
  static constexpr uint64_t kMaxWindowEnd = uint64_t{1} << 47;

 private:
  struct Allocation {
    static Allocation Of(uint64_t size, int device) {
      Allocation a;
      a.size = size;
      a.device = device;
      return a;
    }
    uint64_t size = 0;  // Rounded to kGranularity.
    int device = 0;
    bool retired = false;
    bool imported = false;  // Another session's export (Import).
    int ipc_fd = -1;        // Export's memfd, once exported.
    std::array<uint8_t, 16> secret{};
    bool vmm = false;       // A mapping of physical memory `physical`.
    uint64_t physical = 0;
    int prot = 0;           // Of a mapping (PROT_*): the widest of `access`.
    std::vector<uint8_t> access;  // Of a mapping: hipMemAccessFlags per device.
  };
  struct Physical {
    int fd = -1;
    std::array<uint8_t, 16> secret{};  // In the memfd's name (IpcName).
    uint64_t size = 0;  // Rounded to kGranularity.
    int device = 0;
    bool released = false;
    bool imported = false;  // Another session's export, charged here while held.
    int maps = 0;  // Mappings of it; its memory goes once released and unmapped.
  };
  // The reservation holding all of [address, address + size), or nullptr.
  const std::pair<const uint64_t, uint64_t>* ReservationOf(uint64_t address, uint64_t size) const
      HIPR_REQUIRES(mu_);
  // The pages of [address, address + size) are about to change: forget_.
  void Remapping(uint64_t address, uint64_t size) const;
  // Whether [address, address + size) is exactly a run of adjacent mappings
  // (retired ones only where `retired_too`); their bases in `bases`.
  bool WholeMappings(uint64_t address, uint64_t size, std::vector<uint64_t>* bases, bool retired_too = false) const
      HIPR_REQUIRES(mu_);
  // Closes a released physical memory with no mappings.
  void MaybeDropPhysical(uint64_t handle) HIPR_REQUIRES(mu_);
  Status MapRange(uint64_t address, uint64_t size, bool accessible);
  // A free range of `size` bytes from the window, aligned to `alignment` (a
  // power of two, kGranularity at least), at `hint` when that range is free.
  bool TakeRange(uint64_t size, uint64_t* base, uint64_t alignment = kGranularity, uint64_t hint = 0)
      HIPR_REQUIRES(mu_);
  // Back to the free list, merged with its neighbours.
  void ReturnRange(uint64_t base, uint64_t size) HIPR_REQUIRES(mu_);
  // Gives back the unplaced ranges of `device`'s lease.
  void ReturnLeaseLocked(int device) HIPR_REQUIRES(mu_);
  // The account's share of used_'s changes.
  Status ChargeLocked(uint64_t bytes) HIPR_REQUIRES(mu_);
  void RefundLocked(uint64_t bytes) HIPR_REQUIRES(mu_);

  const uint64_t budget_;
  MemoryAccount* account_ = nullptr;
  mutable Mutex mu_;
  msg::AddressWindow window_ HIPR_GUARDED_BY(mu_);
  std::function<void(const void*, size_t)> forget_;  // Set once, before use.
  std::map<uint64_t, Allocation> allocations_ HIPR_GUARDED_BY(mu_);  // by base address.
  std::map<uint64_t, uint64_t> free_ HIPR_GUARDED_BY(mu_);  // base -> size.
  std::vector<uint64_t> used_ HIPR_GUARDED_BY(mu_);  // per device.
  std::map<uint64_t, uint64_t> reservations_ HIPR_GUARDED_BY(mu_);  // base -> size.
  std::map<uint64_t, Physical> physical_ HIPR_GUARDED_BY(mu_);  // by handle.
  struct LeaseRange {
    uint64_t size = 0;
    int device = 0;
  };
  std::map<uint64_t, LeaseRange> leased_ HIPR_GUARDED_BY(mu_);  // Unplaced lease ranges by base.
};

}  // namespace hipr::worker::sim

// SimMemory: device memory of the sim device, mapped in the session process
// at the addresses of the window agreed in the hello, so device pointers are
// real pointers here (and never valid in the client, which keeps the same
// range reserved PROT_NONE).
//
// The window is reserved PROT_NONE; an allocation maps fresh zeroed pages
// over its part, a free maps PROT_NONE back (returning the pages). Each sim
// device has its own budget, reported as its total memory.
//
// Thread-safety: all methods may be called from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <vector>

#include "protocol/messages.h"
#include "protocol/status.h"

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
  uint64_t Used(int device) const;
  uint64_t budget() const { return budget_; }

  // The device owning the allocation that contains the whole region, or
  // kInvalidDevicePointer.
  Status Check(const msg::Region& region, int* device) const;

  static constexpr uint64_t kGranularity = 4096;

 private:
  struct Allocation {
    uint64_t size;  // Rounded to kGranularity.
    int device;
    bool retired = false;
  };
  Status MapRange(uint64_t address, uint64_t size, bool accessible);

  const uint64_t budget_;
  mutable std::mutex mu_;
  msg::AddressWindow window_;                   // GUARDED_BY(mu_)
  std::map<uint64_t, Allocation> allocations_;  // GUARDED_BY(mu_), by base address.
  std::map<uint64_t, uint64_t> free_;           // GUARDED_BY(mu_), base -> size.
  std::vector<uint64_t> used_;                  // GUARDED_BY(mu_), per device.
};

}  // namespace hipr::worker::sim
